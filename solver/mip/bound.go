package mip

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packwright/packwright/solver/internal/prep"
)

// BoundOptions are Bound's options.
type BoundOptions struct {
	// Nodes, when not nil, is called before the bounds with the new nodes of the zone fluid program in whole
	// numbers (offering indices into c.Src; nil when it does not apply): nodes chosen for every zone at once,
	// which greedy.CompleteOnto fills into a start for plans.
	Nodes func(offerings []int)
	// NodesLimit caps HiGHS's time for those nodes.
	NodesLimit time.Duration
}

// Bound is a proven lower bound on the hourly cost of new nodes for placing every placeable pod of c, from the
// bounds that need no column generation of the master: under zone rules the zone fluid LP (zonefluid.go) and
// the shape LP (shapebound.go), and on small problems the class program (classip.go). It is 0 when none
// applies. It is what the portfolio proves when the MIP plans a restriction of c (a zone split), whose own
// bounds do not hold for c. until bounds the shape LP and the class program; ctx's end stops everything.
func Bound(ctx context.Context, c *prep.Problem, until time.Time, opts BoundOptions) (float64, error) {
	m, err := newMaster(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("bound: %w", err)
	}
	if len(m.groups) == 0 {
		return 0, nil
	}
	// The bounds read the master's zone rows, which building its LP lays out.
	if err := m.open(ctx); err != nil {
		return 0, fmt.Errorf("bound: %w", err)
	}
	defer m.inst.Release()
	var nerr error
	if opts.Nodes != nil {
		// First, since a start is worth most early; a failure costs the start, not the bound.
		var nodes []int
		nodes, nerr = m.zoneFluidNodes(ctx, opts.NodesLimit)
		opts.Nodes(nodes)
	}
	best, err := m.zoneBounds(ctx, until)
	if err = errors.Join(nerr, err); err != nil {
		return best, fmt.Errorf("bound: %w", err)
	}
	if lp := m.classIPModel(time.Until(deadlineOr(ctx)) >= classIPLongTime); lp != nil {
		cb, err := solveClassIP(ctx, lp, until)
		if err != nil {
			return best, fmt.Errorf("bound: %w", err)
		}
		best = max(best, cb)
	}
	return best, nil
}

// zoneBounds is the largest of the zone fluid LP's bound and, under zone rules, the shape LP's (which stops
// by until). Under zone rules column generation seldom converges in a second (the restricted master is
// degenerate), so its bound is weak: the small LP over zones gives one first, and the configuration LP over
// pod shapes converges where the master does not. Without zone rules the master converges in the time on
// every benchmark workload (gpu/aws/1000: the same bound, 120 ms later). A failure of either costs its own
// bound only; err joins the failures.
func (m *master) zoneBounds(ctx context.Context, until time.Time) (float64, error) {
	fluid, ferr := m.zoneFluidBound(ctx)
	if ferr != nil {
		fluid = 0
	}
	if !m.zones {
		return fluid, ferr
	}
	shape, serr := m.shapeBound(ctx, until)
	if serr != nil {
		shape = 0
	}
	return max(fluid, shape), errors.Join(ferr, serr)
}
