package solver

import (
	"context"
	"fmt"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
	"github.com/packwright/packwright/solver/mip"
)

// A zone spread of maxSkew 1 fixes each zone's share of a group's pods up to which zones take the remainder
// (greedy.SplitZones). Under zone rows the master's column generation seldom converges in a second, and its
// integer master then starts from little: on spread/kwok/1000 the MIP's 1 s plan was greedy's ($7.0155/h, the
// local search beside it $6.97/h). With the split made up front the groups are zone-pinned and the zone rows
// go: the MIP's 1 s plan is $6.90/h (spread/aws/1000: $5.591/h against $5.594/h). The split is a restriction,
// so the bound is proven on the original problem beside it (mip.Bound, on the core the local search leaves
// free until column generation ends). At 5,000 pods (over 1,000 split groups) the split master gets only a few
// rounds of column generation in the second and its plan was no better than greedy's (kwok) or dearer (AWS),
// so the split is only planned between splitMinPods and splitMaxGroups.
const (
	// splitMinPods: below it the MIP on the original problem with its class program proves the optimum
	// (spread/kwok/100: $0.6899/h), which the split can miss (its plan there is dearer).
	splitMinPods = LocalSearchPods
	// splitMaxGroups caps the groups of the split problem.
	splitMaxGroups = 500
	// splitBoundShare is the share of the MIP's time the original's bound may take (its shape LP converges in
	// 50-100 ms at 1,000 pods).
	splitBoundShare = 0.5
)

// zoneSplitFor returns z, c's zone split (greedy.SplitZones; the greedy made it already), when the MIP plans it
// instead of c, or nil when c is planned as it is.
func zoneSplitFor(c *prep.Problem, z *greedy.ZoneSplit, residents bool) *greedy.ZoneSplit {
	if residents || c.Tiered || c.Placeable() < splitMinPods || z == nil || len(z.Problem.Groups) > splitMaxGroups {
		return nil
	}
	return z
}

// solveSplit runs the MIP on zone split z of c's problem p until ctx ends, with the original's bound proven
// beside it. Its plan is mapped back to p's groups and must still be validated against p (as every MIP plan);
// its LowerBound holds for p. The local search, if any, is offered the MIP's plans mapped back. ctx carries the
// deadline (without one the bound gets no time for its LPs).
func solveSplit(ctx context.Context, c *prep.Problem, z *greedy.ZoneSplit, opts mip.Options, search *localSearch) (*mip.Result, error) {
	p := c.Src
	type bound struct {
		v   float64
		err error
	}
	// The bound is proven aside; if the split fails it ends with ctx, which the caller cancels at once.
	bounds := make(chan bound, 1)
	deadline, _ := ctx.Deadline() // the portfolio's MIP always has one
	until := time.Now().Add(time.Duration(splitBoundShare * float64(time.Until(deadline))))
	safe.Go(func() {
		var nodes func([]int)
		if search != nil {
			nodes = func(n []int) { search.restartFromNodes(ctx, p, n) }
		}
		v, err := mip.Bound(ctx, c, until, mip.BoundOptions{Nodes: nodes, NodesLimit: fluidLimit})
		// The split's own bound is not reported, so the search need not leave its column generation the core:
		// it begins once the bound is proven (spread/kwok/1000: 270 ms after the start, against 550 ms when
		// the split's column generation ended, and $6.8297/h in 4 runs of 4 at 1 s, against $6.84-6.87/h).
		search.lpEnded()
		bounds <- bound{v, err}
	}, func(p *safe.Panic) {
		search.lpEnded()
		bounds <- bound{0, p}
	})
	sc, warm, err := z.Planned()
	if err != nil {
		return nil, fmt.Errorf("zone split: %w", err)
	}
	if search != nil {
		opts.AfterLP = search.lpEnded
		opts.Incumbent = nil // the search's plans are of p; the split's zone counts may not hold for them
		opts.Found = func(sp *model.Plan) {
			if op := z.PlanOf(sp); op.Validate(p) == nil {
				search.offer(op)
			}
		}
	}
	res, err := mip.Solve(ctx, sc, warm, opts)
	if err != nil {
		return nil, fmt.Errorf("zone split: %w", err)
	}
	res.MasterStatus = "zone split: " + res.MasterStatus
	if res.Plan != nil {
		res.Plan = z.PlanOf(res.Plan)
	}
	// The split's own bound is of the restriction, not of p.
	b := <-bounds
	res.LowerBound = b.v
	if b.err != nil && ctx.Err() == nil {
		res.MasterStatus += "; " + b.err.Error()
	}
	return res, nil
}
