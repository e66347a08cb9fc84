// Package greedy computes Packwright's fast plan: first-fit decreasing over pod groups. It is the plan that is
// always ready (the MIP's warm start and its fallback when the deadline passes), so it must be quick and it
// must be valid.
//
// It works with counts per group and node, never per pod: how many of a group's pods fit on a node is the
// least over resources of free/request, capped by the rules. Groups go largest first (co-located and
// per-node-capped groups before the rest); each fills the existing nodes, then the nodes opened so far, then
// opens nodes of the offering with the lowest price per pod it would hold. For groups without placement
// rules a new node is planned whole instead (pattern.go): the group's pods beside those of the other such
// groups still to come, on the offering whose planned pods are worth most per dollar. Finally every new node
// is moved to the cheapest offering that still holds its pods.
//
// Every scheduling rule that Plan.Validate checks is checked here directly against the model's semantics —
// capacity (a pod always takes a "pods" slot), compatibility, host ports, required pod anti-affinity and
// affinity and DoNotSchedule topology spread on any key, NodePool limits — so a plan built here validates.
// prep's compiled form supplies the vectors and compatibility lists; the rules it relaxes are enforced here.
package greedy

import (
	"errors"
	"fmt"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Name is the plan's Solver field.
const Name = "greedy"

// Solve compiles p and plans it greedily; see SolveCompiled.
func Solve(p *model.Problem) (*model.Plan, error) {
	began := time.Now()
	if p == nil {
		return nil, errors.New("greedy: nil problem")
	}
	c, err := prep.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("greedy: compile: %w", err)
	}
	plan, err := SolveCompiled(c)
	if err != nil {
		return nil, err
	}
	plan.Duration = time.Since(began)
	return plan, nil
}

// SolveCompiled plans the compiled problem c (so that a portfolio compiles once). Every pod is either placed
// or reported in Plan.Unschedulable with a reason naming the resource, rule or NodePool limit that stopped
// it. The plan's LowerBound is a proven bound on the cost of new nodes for placing the pods it places. An
// error means c is inconsistent with its source problem.
//
// When the free space of existing nodes was filled by value (see fillExisting), the plan of the placement order
// alone is made too and the cheaper of the two is returned (one that places fewer pods never wins): neither
// fill is better on every cluster. On the existing workload (AWS, 5,000 pods) the order alone gave $25.68/h
// against $30.44/h, on kwok at 20,000 pods the value fill won.
func SolveCompiled(c *prep.Problem) (*model.Plan, error) {
	best, _, err := SolveCompiledPair(c)
	return best, err
}

// SolveCompiledPair returns SolveCompiled's plan and the plan of the placement order alone (the same plan when
// the value fill placed nothing). The latter is a different starting point for a MIP, which on some clusters
// finds a cheaper plan from it.
func SolveCompiledPair(c *prep.Problem) (best, inOrder *model.Plan, err error) {
	best, inOrder, _, err = SolveCompiledWithSplit(c)
	return best, inOrder, err
}

// SolveCompiledWithSplit is SolveCompiledPair, also returning the zone split it planned (SplitZones; nil when no
// group has such a spread), whose Planned then costs nothing more: a MIP that plans the split starts from it.
func SolveCompiledWithSplit(c *prep.Problem) (best, inOrder *model.Plan, z *ZoneSplit, err error) {
	return solveWithSplit(c, true)
}

// solveWithSplit is SolveCompiledWithSplit, with the plans' lower bounds only when bound is set (see solvePair).
func solveWithSplit(c *prep.Problem, bound bool) (best, inOrder *model.Plan, z *ZoneSplit, err error) {
	began := time.Now()
	if best, inOrder, err = solvePair(c, bound); err != nil {
		return nil, nil, nil, err
	}
	if z = SplitZones(c); z != nil {
		z.noBound = !bound
	}
	if sp := z.planOf(c); sp != nil && sp.Placed() >= best.Placed() && sp.Cost < best.Cost-1e-9 {
		// The split problem is a restriction of c, so its own bound is no bound on c: best's stays.
		sp.LowerBound = min(best.LowerBound, sp.Cost)
		if inOrder == best {
			inOrder = sp
		}
		best = sp
	}
	best.Duration = time.Since(began)
	return best, inOrder, z, nil
}

// solvePair is SolveCompiledPair without the zone split. Without bound the plans' LowerBound is 0: the bound
// takes a tenth of a plan's time, which the local search, whose plans' bounds nobody reads, saves at every step.
func solvePair(c *prep.Problem, bound bool) (best, inOrder *model.Plan, err error) {
	filled, valued, err := solveCompiled(c, false, bound)
	if err != nil {
		return nil, nil, err
	}
	best, inOrder = filled, filled
	if valued {
		if inOrder, _, err = solveCompiled(c, true, bound); err != nil {
			return nil, nil, err
		}
		if inOrder.Placed() >= filled.Placed() && inOrder.Cost < filled.Cost-1e-9 {
			best = inOrder
		}
		// Both bounds hold for placing the same pods; the better one goes with the plan.
		if inOrder.Placed() == filled.Placed() {
			best.LowerBound = min(max(filled.LowerBound, inOrder.LowerBound), best.Cost)
		}
	}
	return best, inOrder, nil
}

// SolveCompiledInOrder is SolveCompiled without the fill of existing nodes by value (see fillExisting): the
// placement order alone decides.
func SolveCompiledInOrder(c *prep.Problem) (*model.Plan, error) {
	p, _, err := solveCompiled(c, true, true)
	return p, err
}

// solveCompiled makes one greedy plan, with its lower bound when bound is set; valued says the value fill of
// existing nodes placed pods.
func solveCompiled(c *prep.Problem, inOrder, bound bool) (*model.Plan, bool, error) {
	began := time.Now()
	if c == nil || c.Src == nil {
		return nil, false, errors.New("greedy: nil compiled problem")
	}
	s, err := newSolver(c)
	if err != nil {
		return nil, false, fmt.Errorf("greedy: %w", err)
	}
	s.inOrder = inOrder
	var initFree [][]int64
	if bound {
		initFree = make([][]int64, s.nExisting)
		for i := range initFree {
			initFree[i] = append([]int64(nil), s.bins[i].free...)
		}
	}
	s.run()
	plan := s.plan()
	if bound {
		plan.LowerBound = min(s.lowerBound(initFree), plan.Cost)
	}
	plan.Duration = time.Since(began)
	return plan, s.filled, nil
}

// plan turns the bins into a Plan.
func (s *solver) plan() *model.Plan {
	pl := &model.Plan{Status: model.StatusGreedy, Solver: Name}
	for _, b := range s.bins[:s.nExisting] {
		if len(b.pods) > 0 {
			pl.Existing = append(pl.Existing, model.ExistingPlacement{Node: b.node, Pods: b.pods})
		}
	}
	for _, b := range s.bins[s.nExisting:] {
		if len(b.pods) > 0 {
			pl.NewNodes = append(pl.NewNodes, model.NewNode{Offering: b.off, Pods: b.pods})
			pl.Cost += s.p.Offerings[b.off].Price
		}
	}
	for g := range s.p.Groups {
		if s.left[g] > 0 {
			pl.Unschedulable = append(pl.Unschedulable, model.Unschedulable{Group: g, Count: s.left[g], Reason: s.reason(g)})
		}
	}
	return pl
}
