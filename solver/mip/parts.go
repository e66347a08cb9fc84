package mip

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Repacking parts is the repack (repack.go) for plans of too many nodes to repack whole: a few of the plan's
// new nodes at a time, the rest of the plan held as it is. The residual problem (model.NewResidual) holds the
// rest as running nodes whose pods are bound, so spread, anti-affinity and NodePool limits count them, and the
// repack's neighbourhood over the freed nodes is solved exactly; a cheaper part makes the plan cheaper. The
// held nodes are full in the residual problem (their room would add a column per group and node, too many for
// milliseconds); the running nodes keep the room the plan leaves them, and every other part also frees what
// the plan puts on a few of them. On spread/kwok/100 at 1 s the column master's best plan is $0.6955/h, and a
// wide part of three nodes (each slot as dear as the part's dearest node) finds $0.6899/h in 22 ms, which
// neither the master's zone copies nor 20 s of the whole MIP improve on.

// partsNodes is the number of nodes freed at first; partsMinNodes and partsMaxNodes bound it as it adapts to
// how quickly HiGHS solves the parts.
const (
	partsNodes    = 8
	partsMinNodes = 4
	partsMaxNodes = repackSlotsMax
)

// partsGap is how far above the bound a plan must be for its parts to be repacked: nearer, the time is better
// spent proving it (gpu/aws/100 at 1 s, 1.5% above the LP bound: the listed patterns' master lifts the bound
// from $56.03/h to $56.45/h, where repacking its 34 nodes' parts found nothing cheaper), while spread's plans,
// 4-5% above bounds that proving does not lift in a second, are where the parts find cheaper plans.
const partsGap = 0.02

// partsMaxPods is the number of pods from which parts are not repacked: a part of a larger plan takes HiGHS
// 20-60 ms, so in a second only a few are tried, and on the 1,000-pod benchmarks (where the portfolio's local
// search runs beside the MIP) they made no plan cheaper at 1 s, though 3 s of them take spread/kwok/1000's
// 1 s plan from $7.0155/h to $6.9157/h.
const partsMaxPods = 500

// partsStall is the number of parts in a row that find nothing cheaper after which the search stops and leaves
// the rest of its time to the proof: with a deadline of several seconds, spread/kwok/100's search found its
// one cheaper plan by the third part and nothing in the next 160.
const partsStall = 40

// partsShare is the share of the MIP's time that the integer master leaves for repacking parts of a plan too
// large to repack whole; partsRound is the most one part gets.
const (
	partsShare = 0.2
	partsRound = 60 * time.Millisecond
)

// repackParts repacks parts of best until ctx ends and returns the cheapest valid plan found, or nil when
// none is cheaper than best, with a note for the status. seed makes the choice of parts repeatable.
func (m *master) repackParts(ctx context.Context, best *model.Plan, seed uint64) (*model.Plan, string) {
	if best == nil || len(best.NewNodes) <= partsMinNodes || !m.placesAll(best) || !m.compactApplies() {
		return nil, ""
	}
	src := m.c.Src
	rng := rand.New(rand.NewPCG(seed, uint64(len(best.NewNodes))))
	start := best
	var found *model.Plan
	k := partsNodes
	rounds, better, since := 0, 0, 0
	var slowest time.Duration
	for ctx.Err() == nil && since < partsStall {
		d, ok := ctx.Deadline()
		if ok && time.Until(d) < max(slowest, 10*time.Millisecond) {
			break
		}
		rounds++
		free := m.choosePart(best, min(k, len(best.NewNodes)), rng)
		// Every other part also frees the pods the plan puts on a few running nodes, and every third lets each
		// slot take a class as dear as the part's dearest node (two small nodes may become one larger).
		freeRunning := rng.IntN(2) == 0
		wide := rng.IntN(3) == 0
		partial := &model.Plan{Solver: best.Solver}
		sub := &model.Plan{}
		var running []int
		if freeRunning {
			running = rng.Perm(len(best.Existing))[:min(3, len(best.Existing))]
		}
		for j, ep := range best.Existing {
			if slices.Contains(running, j) {
				sub.Existing = append(sub.Existing, ep)
			} else {
				partial.Existing = append(partial.Existing, ep)
			}
		}
		for j, nn := range best.NewNodes {
			if slices.Contains(free, j) {
				sub.NewNodes = append(sub.NewNodes, nn)
				sub.Cost += src.Offerings[nn.Offering].Price
			} else {
				partial.NewNodes = append(partial.NewNodes, nn)
			}
		}
		began := time.Now()
		plan, solved, err := m.repackPart(ctx, partial, sub, wide)
		took := time.Since(began)
		slowest = max(slowest, took)
		if err != nil {
			return found, fmt.Sprintf("; parts: %d rounds, %d better, stopped: %v", rounds, better, err)
		}
		// Grow the part while HiGHS solves it with time to spare, shrink it when it does not finish.
		switch {
		case !solved:
			k = max(partsMinNodes, k-2)
		case took < partsRound/3:
			k = min(partsMaxNodes, k+1)
		}
		since++
		if plan != nil && plan.Cost < best.Cost-1e-9 && plan.Validate(src) == nil {
			best, found = plan, plan
			better, since = better+1, 0
		}
	}
	note := fmt.Sprintf("; parts: %d rounds, %d better", rounds, better)
	if found != nil {
		note += fmt.Sprintf(" ($%.4f/h -> $%.4f/h)", start.Cost, found.Cost)
	}
	return found, note
}

// choosePart picks k of plan's new nodes: the one whose unused share of its dearest resource costs most (or a
// random one, every other round), and the others at random among those it could share pods with (of its zone
// when zones matter, for slots keep their node's zone).
func (m *master) choosePart(plan *model.Plan, k int, rng *rand.Rand) []int {
	src := m.c.Src
	n := len(plan.NewNodes)
	seed := rng.IntN(n)
	if rng.IntN(2) == 0 {
		worst := -1.0
		for j, nn := range plan.NewNodes {
			if w := waste(src, nn) * (0.5 + rng.Float64()); w > worst {
				seed, worst = j, w
			}
		}
	}
	zone := src.Offerings[plan.NewNodes[seed].Offering].Zone
	var others []int
	for j, nn := range plan.NewNodes {
		if j != seed && (!m.zones || src.Offerings[nn.Offering].Zone == zone) {
			others = append(others, j)
		}
	}
	rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
	part := append([]int{seed}, others[:min(k-1, len(others))]...)
	slices.Sort(part)
	return part
}

// waste is the price of the share of nn's allocatable that its pods leave unused, in the resource they use
// most of.
func waste(p *model.Problem, nn model.NewNode) float64 {
	o := &p.Offerings[nn.Offering]
	used := 0.0
	for r, a := range o.Allocatable {
		if a <= 0 || r == model.Pods {
			continue
		}
		var sum int64
		for _, gc := range nn.Pods {
			sum += p.Groups[gc.Group].Requests[r] * int64(gc.Count)
		}
		used = max(used, float64(sum)/float64(a))
	}
	return o.Price * max(0, 1-used)
}

// repackPart repacks sub's nodes in the residual problem of partial (with its new nodes full) and returns the
// whole plan when the repack found a cheaper part, and whether HiGHS finished. An error means the parts
// cannot be repacked at all.
func (m *master) repackPart(ctx context.Context, partial, sub *model.Plan, wide bool) (*model.Plan, bool, error) {
	res, err := model.NewResidual(m.c.Src, partial)
	if err != nil {
		return nil, false, err
	}
	// The held nodes full: their allocatable is what their pods request.
	for e := res.First; e < len(res.Problem.Nodes); e++ {
		n := &res.Problem.Nodes[e]
		full := make(model.Resources, len(n.Allocatable))
		for r := range n.Allocatable {
			for _, bp := range n.Pods {
				full[r] += bp.Requests[r]
			}
		}
		if _, ok := n.Allocatable[model.Pods]; ok {
			full[model.Pods] = int64(len(n.Pods))
		}
		n.Allocatable = full
	}
	c, err := prep.Compile(res.Problem)
	if err != nil {
		return nil, false, fmt.Errorf("residual problem: %w", err)
	}
	sm, err := newMaster(ctx, c)
	if err != nil {
		return nil, false, err
	}
	sm.repackWide = wide
	if !sm.fewRepackSlots(sub) {
		return nil, false, nil
	}
	rctx, cancel := context.WithTimeout(ctx, partsRound)
	defer cancel()
	rp, _, solved := sm.repack(rctx, sub)
	if rp == nil {
		return nil, solved, nil
	}
	plan := res.Merge(rp)
	plan.Solver = "mip"
	return plan, solved, nil
}
