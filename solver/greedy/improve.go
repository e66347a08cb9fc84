package greedy

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/packwright/packwright/model"
)

// LocalSearch is the Solver of the plans Improve finds.
const LocalSearch = "local-search"

// Improve searches for a plan cheaper than start by ruin and recreate: each step takes a few of the current
// plan's new nodes out, and sometimes a few of its placements on running nodes, and lets Complete place those
// pods again, on the room left in the other nodes first. A step that costs no more and places as many pods is
// kept, so the search drifts across plans of equal cost. It stops at ctx's deadline, and does not begin a step
// that the slowest step so far says would overrun it.
//
// start must be a plan of p (normally the greedy plan). The result is start or a plan built by Complete; like
// every plan it must be checked with model.Plan.Validate. seed makes the search repeatable. found, when not
// nil, is called with each cheaper plan as it is found (from Improve's goroutine).
//
// It suits plans of many small decisions that the greedy got slightly wrong: on the benchmark's mixed/kwok/1000,
// 0.9 s of it takes the greedy plan from $24.15/h to $23.58/h.
func Improve(ctx context.Context, p *model.Problem, start *model.Plan, seed uint64, found func(*model.Plan)) *model.Plan {
	return ImproveWith(ctx, p, start, seed, found, nil)
}

// ImproveWith is Improve that also takes plans found elsewhere while it runs: before each step it asks offered
// (when not nil) for a plan to go on from instead of its current one, cur, and goes on from the plan it returns
// (nil: none) when that places as many pods. The portfolio offers the MIP's rounded LP when it is cheaper:
// ruin and recreate from there ends well below where it ends from the greedy plan (existing/kwok/1000, 0.35 s:
// $5.59/h against $5.90/h). It returns the cheapest plan it went through, which may be an offered one, and
// calls found with each new cheapest one, made or offered (a caller that cannot wait for the last step takes
// the last one found). Offered plans must be valid plans of p; the result is
// start when nothing cheaper came up.
func ImproveWith(ctx context.Context, p *model.Problem, start *model.Plan, seed uint64, found func(*model.Plan), offered func(cur *model.Plan) *model.Plan) *model.Plan {
	deadline, ok := ctx.Deadline()
	if !ok || start == nil || len(start.NewNodes) < 2 {
		return start
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(p.Groups))))
	zoneOf := offeringZones(p)
	cur, best, placed := start, start, start.Placed()
	var slowest time.Duration
	for ctx.Err() == nil && time.Until(deadline) > slowest {
		if offered != nil {
			if o := offered(cur); o != nil && o.Placed() >= placed && len(o.NewNodes) >= 2 {
				cur, placed = o, o.Placed()
				if o.Cost < best.Cost-1e-9 {
					best = o
					if found != nil {
						found(o)
					}
				}
			}
		}
		began := time.Now()
		next, err := Complete(p, ruin(cur, rng, zoneOf))
		slowest = max(slowest, time.Since(began))
		if err != nil {
			continue // the ruined plan cannot be completed as it is: try other nodes
		}
		if next.Cost <= cur.Cost+1e-9 && next.Placed() >= placed {
			cur = next
			if next.Cost < best.Cost-1e-9 {
				best = next
				if found != nil {
					found(next)
				}
			}
		}
	}
	return best
}

// ruinOffering caps the nodes of one offering that a ruin takes away. On spread/kwok/1000 the plans kept twelve
// 4-CPU nodes in one zone where one 48-CPU node was cheaper per CPU: recreating the pods of a few of them never
// filled the larger node well enough to pay. Every third ruin takes away every node of one offering, and the
// search at 1 s went from $6.8297/h to $6.7542/h there (spread/aws/1000: $5.5887/h to $5.5566/h). 350 ms from
// the same start with six seeds, caps of 16 / 32 / 64: spread/aws/1000 mean $5.5707/h / $5.5653/h / $5.5660/h,
// spread/kwok/1000 $6.772/h / $6.772/h / $6.767/h (without: $6.797/h), spread at 5,000 pods within 0.05%.
const ruinOffering = 32

// ruinZone caps the nodes of one zone that a ruin takes away when zones matter (offeringZones). Under zone
// spreads the pods of one zone are tied to each other, and nodes drawn at random across zones seldom free a
// zone's pods together. On spread/kwok/1000, 600 ms from the zone fluid program's start with ten seeds, the
// search ended at $6.7673/h on average without zone ruins, $6.7503/h / $6.7302/h / $6.7408/h / $6.7528/h with
// caps of 3 / 4 / 5 / 8; in the portfolio at 1 s with six seeds, $6.7618/h became $6.7348/h. Where no group
// has a zone rule they only cost steps (mixed/aws/1000: $17.926/h became $17.945/h), so they are made only
// under zone rules.
const ruinZone = 4

// offeringZones numbers the zones of p's offerings (one number per zone name) when some group has a zone rule
// (a DoNotSchedule zone spread or a zone anti-affinity term), for ruin to take away nodes of one zone; nil
// otherwise.
func offeringZones(p *model.Problem) []int {
	zoned := false
	for gi := range p.Groups {
		g := &p.Groups[gi]
		for _, s := range g.TopologySpread {
			zoned = zoned || (s.TopologyKey == model.LabelZone && s.WhenUnsatisfiable == model.DoNotSchedule)
		}
		for _, t := range g.PodAntiAffinity {
			zoned = zoned || t.TopologyKey == model.LabelZone
		}
	}
	if !zoned {
		return nil
	}
	ids := map[string]int{}
	out := make([]int, len(p.Offerings))
	for o := range p.Offerings {
		z := p.Offerings[o].Zone
		if _, ok := ids[z]; !ok {
			ids[z] = len(ids)
		}
		out[o] = ids[z]
	}
	return out
}

// ruin is the partial plan that is plan without 2 to 5 random new nodes (every third time, first every node of
// one random node's offering, up to ruinOffering; when zoneOf numbers the offerings' zones, half the other
// times first up to ruinZone random nodes of one random node's zone) and, every other time, without as many
// random placements on running nodes.
func ruin(plan *model.Plan, rng *rand.Rand, zoneOf []int) *model.Plan {
	n := len(plan.NewNodes)
	k := 2 + rng.IntN(min(4, n-1))
	drop := make(map[int]bool, k)
	if rng.IntN(3) == 0 {
		// Every node of one offering (up to ruinOffering of them): many small nodes that one larger node could
		// replace are seldom drawn together at random (see ruinOffering).
		off := plan.NewNodes[rng.IntN(n)].Offering
		for i, nn := range plan.NewNodes {
			if nn.Offering == off && len(drop) < ruinOffering {
				drop[i] = true
			}
		}
		if len(drop) == n {
			clear(drop) // a plan of one offering: taking every node away only makes the greedy plan again
		}
	}
	if len(drop) == 0 && zoneOf != nil && rng.IntN(2) == 0 {
		z := zoneOf[plan.NewNodes[rng.IntN(n)].Offering]
		var in []int
		for i, nn := range plan.NewNodes {
			if zoneOf[nn.Offering] == z {
				in = append(in, i)
			}
		}
		rng.Shuffle(len(in), func(a, b int) { in[a], in[b] = in[b], in[a] })
		for _, i := range in[:min(len(in), ruinZone)] {
			drop[i] = true
		}
		if len(drop) == n {
			clear(drop) // as above
		}
	}
	for len(drop) < k {
		drop[rng.IntN(n)] = true
	}
	partial := &model.Plan{Solver: LocalSearch, Existing: plan.Existing}
	for i, nn := range plan.NewNodes {
		if !drop[i] {
			partial.NewNodes = append(partial.NewNodes, nn)
		}
	}
	if e := len(plan.Existing); e > 0 && rng.IntN(2) == 0 {
		off := make(map[int]bool, k)
		for range k {
			off[rng.IntN(e)] = true
		}
		partial.Existing = nil
		for i, ep := range plan.Existing {
			if !off[i] {
				partial.Existing = append(partial.Existing, ep)
			}
		}
	}
	return partial
}
