package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
)

// Consolidation defaults.
const (
	// DefaultMoveCost is the tie-breaking cost of moving one pod, in USD per hour: keeping a node is worth this
	// much per pod it keeps in place, so a plan moves pods only for a saving larger than that.
	DefaultMoveCost = 0.0001
	// DefaultMinSaving is the least hourly saving (USD) for which a consolidation acts.
	DefaultMinSaving = 0.01
	// MinSpotToSpotTypes is how many spot instance types cheaper than the spot nodes it replaces a spot-to-spot
	// replacement needs (as Karpenter): choosing among few cheap types would land on the pools most likely to
	// be interrupted.
	MinSpotToSpotTypes = 15
)

// excludedTaintKey marks, in the problem a consolidation solves, offerings the plan may not use (no pod
// tolerates it). Tainting keeps the offerings' indices, which the decision's NewNodes refer to.
const excludedTaintKey = "packwright.dev/excluded-by-consolidation"

// ConsolidationInput is a cluster prepared for consolidation. Problem holds the nodes that stay whatever
// happens (with their pods bound), the offerings that may be launched, the pools and zones, and, as Groups,
// the movable pods of the candidate nodes. Candidates are the nodes that may be removed or replaced; their
// Pods are the pods that go with the node (DaemonSet pods), never moved. Origin maps every movable pod to
// the index of the candidate it runs on. Forced names the candidates that must go whatever it saves (expired
// or drifted nodes), each with why.
type ConsolidationInput struct {
	Problem    model.Problem
	Candidates []model.ExistingNode
	Origin     map[model.PodRef]int
	Forced     map[string]string
	// chosen are candidates an earlier round removed, which a re-solve may not keep (see Consolidate).
	chosen map[string]bool
}

// ConsolidationOptions configure Consolidate.
type ConsolidationOptions struct {
	Solve Options
	// MoveCost is USD per hour per moved pod (default DefaultMoveCost; negative means 0).
	MoveCost float64
	// MinSaving is the least hourly saving in USD for which the plan acts (default DefaultMinSaving; negative 0).
	MinSaving float64
	// MaxRemoved caps, per NodePool name, how many of its candidates one consolidation may remove (missing:
	// no cap). It is enforced by re-solving: the removed candidates beyond the cap that save least (the
	// cheapest) are pinned, kept as they are, and the rest is solved again, up to maxBudgetRounds times.
	MaxRemoved map[string]int
	// SpotToSpot allows replacing spot nodes by new spot nodes (Karpenter's SpotToSpotConsolidation). Without
	// it, a plan that launches spot nodes must remove at least one on-demand node (on-demand to spot is always
	// allowed); with it, a spot-only replacement also needs MinSpotToSpotTypes spot instance types cheaper
	// than the spot nodes it removes. A plan that breaks the rule is solved again without spot launches.
	SpotToSpot bool
}

// maxBudgetRounds bounds the re-solves that disruption budgets, the spot-to-spot rule and churn cause.
const maxBudgetRounds = 6

// Move is one pod that the plan moves: from a candidate node to a kept node or a new one.
type Move struct {
	Pod  model.PodRef
	From string
	// To is a node name, or "new-N" for the plan's N-th new node.
	To string
}

// Consolidation is Consolidate's answer. When Act is false the cluster stays as it is (Reason says why) and
// CostAfter equals CostBefore.
type Consolidation struct {
	Act    bool
	Reason string
	// Kept and Removed name the candidate nodes; NewNodes are launched (offerings of Model, whose first
	// offerings are the input's, possibly tainted to exclude them).
	Kept, Removed []string
	NewNodes      []model.NewNode
	// Forced maps the removed candidates that had to go (ConsolidationInput.Forced) to why.
	Forced map[string]string
	Moves  []Move
	// Costs are hourly USD over the whole cluster (candidates and the nodes that stay). LowerBound is a proven
	// lower bound on CostAfter over every valid consolidation of these candidates.
	CostBefore, CostAfter, Saving, LowerBound float64
	Status                                    model.Status
	Duration                                  time.Duration
	// Model and Plan are the problem actually solved (candidates as one-off offerings after the input's
	// offerings) and its validated plan.
	Model *model.Problem
	Plan  *model.Plan
}

// Gap is (CostAfter-LowerBound)/CostAfter.
func (c *Consolidation) Gap() float64 {
	if c.CostAfter <= 0 {
		return 0
	}
	return math.Max(0, (c.CostAfter-c.LowerBound)/c.CostAfter)
}

// Consolidate decides which candidate nodes to keep, which to remove and what to launch instead, in one solve:
// every candidate becomes an offering with MaxCount 1 (keeping it is "launching" it once) at its own price
// less MoveCost per movable pod on it (the moves its removal forces), and its movable pods become pending.
// The portfolio's plan, validated, says which candidates are kept; its lower bound, plus the cost of the
// nodes that stay, bounds the cost after. Forced candidates get no such offering: their pods must move. Below
// MinSaving the answer is no action, unless a forced candidate goes.
func Consolidate(ctx context.Context, in *ConsolidationInput, opts ConsolidationOptions) (*Consolidation, error) {
	began := time.Now()
	if in == nil {
		return nil, errors.New("consolidate: nil input")
	}
	for name := range in.Forced {
		if !slices.ContainsFunc(in.Candidates, func(n model.ExistingNode) bool { return n.Name == name }) {
			return nil, fmt.Errorf("consolidate: forced node %s is not a candidate", name)
		}
	}
	// The deadline bounds the whole decision, re-solves included.
	if opts.Solve.Deadline <= 0 {
		opts.Solve.Deadline = DefaultDeadline
	}
	ctx, cancel := context.WithDeadline(ctx, began.Add(opts.Solve.Deadline))
	defer cancel()
	original := in
	end := began.Add(opts.Solve.Deadline)
	// The first solve leaves some of the deadline to the re-solves the rules below may call for.
	opts.Solve.Deadline = opts.Solve.Deadline * 85 / 100
	var firstBound float64
	noSpot := false
	// fallback is the cheapest decision so far that keeps every rule, from a MIP plan the portfolio did not
	// choose: the greedy plan it preferred may move pods off kept nodes, and re-placing them costs.
	var fallback *Consolidation
	// done returns the cheaper of res and fallback.
	done := func(res *Consolidation) (*Consolidation, error) {
		if fallback != nil && fallback.CostAfter < res.CostAfter-1e-9 {
			res = fallback
		}
		res.Duration = time.Since(began)
		return keptOf(original, res), nil
	}
	for round := 0; ; round++ {
		if round > 0 {
			opts.Solve.Deadline = max(time.Until(end), 10*time.Millisecond)
		}
		res, alt, err := consolidateOnce(ctx, in, opts, noSpot)
		if err != nil {
			return nil, err
		}
		// Pinning and excluding offerings only restrict the problem: the first round's bound holds for every
		// later one.
		if round == 0 {
			firstBound = res.LowerBound
		}
		res.LowerBound = math.Min(firstBound, res.CostAfter)
		// broken says which rules a decision breaks: the spot-to-spot rule, the budgets (the candidates to
		// pin) and no churn (the kept candidates it moves pods off).
		broken := func(c *Consolidation) (spot bool, pinned, churn map[string]bool) {
			return !noSpot && spotToSpot(in, c, opts.SpotToSpot), overBudget(in, c, opts.MaxRemoved), churned(c)
		}
		if alt != nil && alt.Act && (fallback == nil || alt.CostAfter < fallback.CostAfter) {
			if spot, pinned, churn := broken(alt); !spot && len(pinned) == 0 && len(churn) == 0 {
				alt.LowerBound = math.Min(firstBound, alt.CostAfter)
				fallback = alt
			}
		}
		spot, pinned, churn := broken(res)
		if !spot && len(pinned) == 0 && len(churn) == 0 {
			return done(res)
		}
		if round+1 >= maxBudgetRounds {
			if !spot && len(pinned) == 0 {
				// Valid and within the rules; only some of its moves are not carried out as planned.
				return done(res)
			}
			if fallback != nil {
				return done(fallback)
			}
			return nil, fmt.Errorf("consolidate: disruption budgets or the spot-to-spot rule still broken after %d solves", maxBudgetRounds)
		}
		if spot {
			noSpot = true // the budgets are checked again on the plan without spot launches
			continue
		}
		if len(pinned) > 0 {
			in = pin(in, pinned)
			continue
		}
		// Churn: keep every kept candidate as it is, with its pods, and place the removed candidates' pods
		// again, on the room the kept nodes really have and on new nodes; the removed ones stay removed, so
		// no candidate is left to churn.
		keep := map[string]bool{}
		for _, n := range res.Kept {
			keep[n] = true
		}
		in = pin(in, keep)
		in.chosen = map[string]bool{}
		for _, n := range res.Removed {
			in.chosen[n] = true
		}
	}
}

// keptOf sets res.Kept to every candidate of in that res does not remove, those pinned by re-solves included.
func keptOf(in *ConsolidationInput, res *Consolidation) *Consolidation {
	res.Kept = nil
	for _, n := range in.Candidates {
		if !slices.Contains(res.Removed, n.Name) {
			res.Kept = append(res.Kept, n.Name)
		}
	}
	return res
}

// churned names the kept candidates that the plan moves pods off. Carrying out a decision evicts pods from
// the removed nodes only, so a plan that counts on room freed on a kept node would leave pods pending.
func churned(res *Consolidation) map[string]bool {
	if !res.Act {
		return nil
	}
	var out map[string]bool
	for _, m := range res.Moves {
		if slices.Contains(res.Kept, m.From) {
			if out == nil {
				out = map[string]bool{}
			}
			out[m.From] = true
		}
	}
	return out
}

// spotToSpot reports whether res breaks the spot-to-spot rule (see ConsolidationOptions.SpotToSpot).
func spotToSpot(in *ConsolidationInput, res *Consolidation, allowed bool) bool {
	if !res.Act {
		return false
	}
	pools := map[string]bool{}
	for _, nn := range res.NewNodes {
		if o := &res.Model.Offerings[nn.Offering]; o.CapacityType == model.Spot {
			pools[o.NodePool] = true
		}
	}
	if len(pools) == 0 {
		return false
	}
	removedPrice := 0.0
	for _, n := range in.Candidates {
		if !slices.Contains(res.Removed, n.Name) {
			continue
		}
		if n.CapacityType != model.Spot {
			return false // on-demand to spot
		}
		removedPrice += n.Price
	}
	if !allowed {
		return true
	}
	cheaper := map[string]bool{}
	for _, o := range in.Problem.Offerings {
		if o.CapacityType == model.Spot && pools[o.NodePool] && o.Price < removedPrice {
			cheaper[o.InstanceType] = true
		}
	}
	return len(cheaper) < MinSpotToSpotTypes
}

// overBudget returns the candidates (by name) to pin so that no pool loses more than its budget: in each pool
// over budget, the cheapest removed candidates beyond it.
func overBudget(in *ConsolidationInput, res *Consolidation, budget map[string]int) map[string]bool {
	if !res.Act || len(budget) == 0 {
		return nil
	}
	byName := map[string]*model.ExistingNode{}
	for i := range in.Candidates {
		byName[in.Candidates[i].Name] = &in.Candidates[i]
	}
	perPool := map[string][]*model.ExistingNode{}
	for _, name := range res.Removed {
		if _, forced := in.Forced[name]; forced {
			continue // forced removals are outside the consolidation budget (cluster counts drift in)
		}
		n := byName[name]
		perPool[n.NodePool] = append(perPool[n.NodePool], n)
	}
	pinned := map[string]bool{}
	for pool, nodes := range perPool {
		b, ok := budget[pool]
		if !ok || len(nodes) <= b {
			continue
		}
		slices.SortStableFunc(nodes, func(a, c *model.ExistingNode) int { return cmpFloat(c.Price, a.Price) })
		for _, n := range nodes[max(b, 0):] {
			pinned[n.Name] = true
		}
	}
	return pinned
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// pin returns in with the named candidates turned into nodes that stay, their movable pods bound to them.
func pin(in *ConsolidationInput, names map[string]bool) *ConsolidationInput {
	out := &ConsolidationInput{Problem: in.Problem, Origin: map[model.PodRef]int{}, Forced: in.Forced, chosen: in.chosen}
	out.Problem.Nodes = slices.Clone(in.Problem.Nodes)
	newIdx := make([]int, len(in.Candidates))
	nodeOf := make([]int, len(in.Candidates))
	for ci, n := range in.Candidates {
		newIdx[ci], nodeOf[ci] = -1, -1
		if names[n.Name] {
			n.Pods = slices.Clone(n.Pods)
			nodeOf[ci] = len(out.Problem.Nodes)
			out.Problem.Nodes = append(out.Problem.Nodes, n)
			continue
		}
		newIdx[ci] = len(out.Candidates)
		out.Candidates = append(out.Candidates, n)
	}
	out.Problem.Groups = slices.Clone(in.Problem.Groups)
	for g := range out.Problem.Groups {
		grp := &out.Problem.Groups[g]
		var stay []model.PodRef
		for _, ref := range grp.Pods {
			ci := in.Origin[ref]
			if e := nodeOf[ci]; e >= 0 {
				n := &out.Problem.Nodes[e]
				n.Pods = append(n.Pods, model.BoundPod{Ref: ref, Labels: grp.Labels, Requests: grp.Requests,
					HostPorts: grp.HostPorts, PodAntiAffinity: grp.PodAntiAffinity})
				continue
			}
			stay = append(stay, ref)
			out.Origin[ref] = newIdx[ci]
		}
		grp.Pods = stay
	}
	// Groups left without pods are dropped: a plan cannot place zero pods.
	out.Problem.Groups = slices.DeleteFunc(out.Problem.Groups, func(g model.PodGroup) bool { return len(g.Pods) == 0 })
	return out
}

// consolidateOnce is one solve of Consolidate, without budgets; noSpot excludes spot launches. alt is the
// decision of the MIP's plan when the portfolio kept a cheaper greedy plan (nil otherwise): the greedy's may move
// pods off nodes it keeps, which the MIP's does not.
func consolidateOnce(ctx context.Context, in *ConsolidationInput, opts ConsolidationOptions, noSpot bool) (res, alt *Consolidation, err error) {
	if opts.MoveCost == 0 {
		opts.MoveCost = DefaultMoveCost
	}
	if opts.MinSaving == 0 {
		opts.MinSaving = DefaultMinSaving
	}
	opts.MoveCost, opts.MinSaving = math.Max(0, opts.MoveCost), math.Max(0, opts.MinSaving)

	p := in.Problem
	p.Offerings = slices.Clone(in.Problem.Offerings)
	if noSpot {
		for i := range p.Offerings {
			if o := &p.Offerings[i]; o.CapacityType == model.Spot {
				o.Taints = append(slices.Clone(o.Taints), model.Taint{Key: excludedTaintKey, Value: "spot-to-spot", Effect: model.NoSchedule})
			}
		}
	}
	// NodePool weights decide where new pods go, not which running nodes stay: a kept candidate of a
	// low-weight pool is not wrong. Consolidation solves without them (replacements ignore them too).
	p.Pools = slices.Clone(in.Problem.Pools)
	for i := range p.Pools {
		p.Pools[i].Weight = 0
	}
	movable := make([]int, len(in.Candidates))
	for ref, ci := range in.Origin {
		if ci < 0 || ci >= len(in.Candidates) {
			return nil, nil, fmt.Errorf("consolidate: pod %s: candidate index %d out of range", ref, ci)
		}
		movable[ci]++
	}
	// resident[ci] are candidate ci's movable pods by group: the MIP keeps a candidate only with them.
	resident := make([][]model.GroupCount, len(in.Candidates))
	for g := range p.Groups {
		for _, ref := range p.Groups[g].Pods {
			ci, ok := in.Origin[ref]
			if !ok {
				continue
			}
			if r := resident[ci]; len(r) > 0 && r[len(r)-1].Group == g {
				r[len(r)-1].Count++
			} else {
				resident[ci] = append(r, model.GroupCount{Group: g, Count: 1})
			}
		}
	}
	staying := 0.0
	for _, n := range in.Problem.Nodes {
		staying += n.Price
	}
	before := staying
	candidateOffering := make([]int, len(in.Candidates))
	for ci := range in.Candidates {
		n := &in.Candidates[ci]
		before += n.Price
		candidateOffering[ci] = -1
		if _, forced := in.Forced[n.Name]; forced || in.chosen[n.Name] {
			continue // it cannot be kept
		}
		candidateOffering[ci] = len(p.Offerings)
		alloc := n.Allocatable.Clone()
		for _, bp := range n.Pods { // pods that go with the node take their room on it
			for k, v := range bp.Requests {
				if k != model.Pods {
					alloc[k] -= v
				}
			}
			alloc[model.Pods] -= max(1, bp.Requests[model.Pods])
		}
		for k, v := range alloc {
			alloc[k] = max(v, 0)
		}
		labels := make(map[string]string, len(n.Labels))
		for k, v := range n.Labels {
			if k != model.LabelHostname {
				labels[k] = v
			}
		}
		// The stay bonus is at most half the price, so a kept node always costs something.
		price := math.Max(n.Price-opts.MoveCost*float64(movable[ci]), n.Price/2)
		p.Offerings = append(p.Offerings, model.Offering{ID: "node/" + n.Name, NodePool: n.NodePool,
			InstanceType: n.InstanceType, Zone: n.Zone, CapacityType: n.CapacityType, Price: price,
			Capacity: n.Capacity, Allocatable: alloc, Labels: labels, Taints: n.Taints, MaxCount: 1, Resident: resident[ci]})
	}
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("consolidate: %w", err)
	}
	plan, altPlan, err := solve(ctx, &p, opts.Solve)
	if err != nil {
		return nil, nil, fmt.Errorf("consolidate: %w", err)
	}
	res, err = interpret(in, &p, plan, candidateOffering, staying, before, opts)
	if err != nil || altPlan == nil {
		return res, nil, err
	}
	alt, err = interpret(in, &p, altPlan, candidateOffering, staying, before, opts)
	return res, alt, err
}

// interpret turns a plan of the consolidation model p into a decision: the candidates whose offerings it
// launches are kept, the others removed, and the pods named (kept nodes keep their own first).
func interpret(in *ConsolidationInput, p *model.Problem, plan *model.Plan, candidateOffering []int, staying, before float64,
	opts ConsolidationOptions) (*Consolidation, error) {
	if err := plan.Validate(p); err != nil {
		return nil, fmt.Errorf("consolidate: plan rejected by validation: %w", err)
	}
	out := &Consolidation{CostBefore: before, Status: plan.Status, Model: p, Plan: plan}
	// The solved objective prices kept candidates at or below their price, so its bound bounds the real cost.
	out.LowerBound = staying + plan.LowerBound
	kept := make([]bool, len(in.Candidates))
	after := staying
	type placement struct {
		name string
		ci   int
		pods []model.GroupCount
	}
	var places []placement
	candidateOf := map[int]int{}
	for ci, o := range candidateOffering {
		if o >= 0 {
			candidateOf[o] = ci
		}
	}
	for _, nn := range plan.NewNodes {
		if ci, ok := candidateOf[nn.Offering]; ok {
			kept[ci] = true
			after += in.Candidates[ci].Price
			places = append(places, placement{in.Candidates[ci].Name, ci, nn.Pods})
		} else {
			after += p.Offerings[nn.Offering].Price
			out.NewNodes = append(out.NewNodes, nn)
			places = append(places, placement{fmt.Sprintf("new-%d", len(out.NewNodes)-1), -1, nn.Pods})
		}
	}
	for _, ep := range plan.Existing {
		places = append(places, placement{p.Nodes[ep.Node].Name, -1, ep.Pods})
	}
	// Name the pods: first every kept candidate keeps as many of its own pods of each group as the plan puts
	// there, then the remaining counts take the pods left over, which are the moves.
	assigned := map[model.PodRef]bool{}
	need := make([][]model.GroupCount, len(places))
	for i, pl := range places {
		for _, gc := range pl.pods {
			left := gc.Count
			if pl.ci >= 0 {
				for _, ref := range p.Groups[gc.Group].Pods {
					if left > 0 && !assigned[ref] && in.Origin[ref] == pl.ci {
						assigned[ref] = true
						left--
					}
				}
			}
			if left > 0 {
				need[i] = append(need[i], model.GroupCount{Group: gc.Group, Count: left})
			}
		}
	}
	next := make([]int, len(p.Groups))
	for i, pl := range places {
		for _, gc := range need[i] {
			pods := p.Groups[gc.Group].Pods
			for left := gc.Count; left > 0 && next[gc.Group] < len(pods); next[gc.Group]++ {
				ref := pods[next[gc.Group]]
				if assigned[ref] {
					continue
				}
				assigned[ref] = true
				left--
				out.Moves = append(out.Moves, Move{Pod: ref, From: in.Candidates[in.Origin[ref]].Name, To: pl.name})
			}
		}
	}
	for ci, n := range in.Candidates {
		if kept[ci] {
			out.Kept = append(out.Kept, n.Name)
		} else {
			out.Removed = append(out.Removed, n.Name)
			if why, ok := in.Forced[n.Name]; ok {
				if out.Forced == nil {
					out.Forced = map[string]string{}
				}
				out.Forced[n.Name] = why
			}
		}
	}
	out.CostAfter = after
	out.Saving = before - after
	out.LowerBound = math.Min(out.LowerBound, after)
	switch {
	case len(plan.Unschedulable) > 0:
		out.Reason = fmt.Sprintf("the plan leaves %d groups' pods without a node", len(plan.Unschedulable))
	case out.Saving < opts.MinSaving && len(out.Forced) == 0:
		out.Reason = fmt.Sprintf("saving $%.4f/h is below the threshold $%.4f/h", out.Saving, opts.MinSaving)
	default:
		out.Act = true
	}
	if !out.Act {
		out.Kept, out.Removed, out.NewNodes, out.Moves, out.Forced = candidateNames(in.Candidates), nil, nil, nil, nil
		out.CostAfter, out.Saving = before, 0
		out.LowerBound = math.Min(out.LowerBound, before)
	}
	return out, nil // Consolidate sets Duration, which covers every solve
}

func candidateNames(ns []model.ExistingNode) []string {
	out := make([]string, len(ns))
	for i := range ns {
		out[i] = ns[i].Name
	}
	return out
}
