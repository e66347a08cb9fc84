package mip

import (
	"context"
	"fmt"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Bound is a proven lower bound on the hourly cost of new nodes for placing every placeable pod of c, from the
// bounds that need no column generation of the master: under zone rules the zone fluid LP (zonefluid.go) and
// the shape LP (shapebound.go), and on small problems the class program (classip.go). It is 0 when none
// applies. It is what the portfolio proves when the MIP plans a restriction of c (a zone split), whose own
// bounds do not hold for c. until bounds the shape LP and the class program; ctx's end stops everything.
func Bound(ctx context.Context, c *prep.Problem, until time.Time) (float64, error) {
	m, err := newMaster(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("bound: %w", err)
	}
	if len(m.groups) == 0 {
		return 0, nil
	}
	// The bounds read the master's zone rows, which building its LP lays out.
	inst, err := highs.New(ctx, highs.Options{Presolve: "off"})
	if err != nil {
		return 0, fmt.Errorf("bound: %w", err)
	}
	defer inst.Release()
	m.inst = inst
	if err := m.build(ctx); err != nil {
		return 0, fmt.Errorf("bound: build master: %w", err)
	}
	best, err := m.zoneFluidBound(ctx)
	if err != nil {
		return 0, fmt.Errorf("bound: %w", err)
	}
	if m.zones {
		sb, err := m.shapeBound(ctx, until)
		if err != nil {
			return best, fmt.Errorf("bound: %w", err)
		}
		best = max(best, sb)
	}
	d := time.Until(until)
	if dl, ok := ctx.Deadline(); ok {
		d = time.Until(dl)
	}
	if lp := m.classIPModel(d >= classIPLongTime); lp != nil && time.Now().Before(until) {
		cb, err := solveClassIP(ctx, lp, until)
		if err != nil {
			return best, fmt.Errorf("bound: %w", err)
		}
		best = max(best, cb)
	}
	return best, nil
}
