package greedy

import (
	"fmt"

	"github.com/packwright/packwright/model"
)

// Complete places the pods a partial plan leaves out: it builds the residual problem (model.NewResidual), in
// which the partial plan's pods are bound pods and its new nodes are existing nodes, solves it with the greedy
// and merges the two.
func Complete(p *model.Problem, partial *model.Plan) (*model.Plan, error) {
	r, err := model.NewResidual(p, partial)
	if err != nil {
		return nil, err
	}
	rest, err := Solve(r.Problem)
	if err != nil {
		return nil, fmt.Errorf("complete the rounded plan: %w", err)
	}
	return r.Merge(rest), nil
}
