package greedy

import (
	"fmt"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Complete places the pods a partial plan leaves out: it builds the residual problem (model.NewResidual), in
// which the partial plan's pods are bound pods and its new nodes are existing nodes, solves it with the greedy
// and merges the two. The plan carries no LowerBound: its callers (the local search, the MIP's rounding) never
// read one, and the bound was a tenth of the step.
func Complete(p *model.Problem, partial *model.Plan) (*model.Plan, error) {
	r, err := model.NewResidual(p, partial)
	if err != nil {
		return nil, err
	}
	c, err := prep.Compile(r.Problem)
	if err != nil {
		return nil, fmt.Errorf("complete the partial plan: compile: %w", err)
	}
	// Merge drops the residual plan's bound, so none is made.
	rest, _, _, err := solveWithSplit(c, false)
	if err != nil {
		return nil, fmt.Errorf("complete the partial plan: %w", err)
	}
	return r.Merge(rest), nil
}

// CompleteOnto is the plan of p that launches new nodes of the given offerings (indices into p.Offerings) and
// lets the greedy place every pod, on them first (as running nodes, in the order given) and on nodes of its
// own choosing for what they cannot take; the given nodes it leaves empty are dropped. The MIP's zone fluid
// program chooses such nodes for zones as a whole, which the greedy, opening nodes one group at a time, does
// not (mip.BoundOptions.Nodes). The plan's Solver is solver.
func CompleteOnto(p *model.Problem, offerings []int, solver string) (*model.Plan, error) {
	partial := &model.Plan{Solver: solver}
	for _, o := range offerings {
		if o < 0 || o >= len(p.Offerings) {
			return nil, fmt.Errorf("complete onto offering %d: no such offering (%d)", o, len(p.Offerings))
		}
		partial.NewNodes = append(partial.NewNodes, model.NewNode{Offering: o})
	}
	full, err := Complete(p, partial)
	if err != nil {
		return nil, err
	}
	plan := &model.Plan{Solver: full.Solver, Existing: full.Existing, Unschedulable: full.Unschedulable}
	for _, nn := range full.NewNodes {
		if len(nn.Pods) > 0 {
			plan.NewNodes = append(plan.NewNodes, nn)
			plan.Cost += p.Offerings[nn.Offering].Price
		}
	}
	return plan, nil
}
