package mip

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// shapeMax is the most pod shapes for which shapeBound runs: its pricing knapsacks have one item per shape.
const shapeMax = 64

// shapeBound is the converged value of a configuration LP over pod shapes, a relaxation of the master that
// column generation converges in milliseconds where the master's does not (zone spread; see zoneFluidBound).
// Groups with the same requests and the same classes ("a shape") share one cover row per zone, each group's
// units are split between zones as its zone rows demand, and a pattern holds whole pods of shapes (at most
// the summed per-node caps of the shape's groups). A group of at most c units per node with x units in a zone
// needs x/c nodes there, whatever else they hold (on kwok, where few large nodes are cheapest, that lifts the
// bound at 1,000 pods by 0.2%). Anti-affinity between different groups, pool limits and MaxCounts are
// dropped, so every valid plan is still a solution and the bound holds. Unlike the
// fluid LP it knows that pods are whole: on spread/aws/1000 the best fill of a node at the fluid prices is
// 99.5%, but there are not enough small pods to fill every node that well, and the converged master is 2.9%
// above the fluid LP ($5.5295/h against $5.3728/h).
//
// Without zone rules every class counts as one zone. It returns 0 when it does not apply (running nodes, more
// than shapeMax shapes) and the best bound it proved when until comes first.
func (m *master) shapeBound(ctx context.Context, until time.Time) (float64, error) {
	if m.fillings || len(m.groups) == 0 {
		return 0, nil
	}
	// When zones do not matter every class is in "zone" 0.
	Z := 1
	zoneOf := func(ci int) int { return 0 }
	if m.zones {
		Z = len(m.c.Zones)
		zoneOf = func(ci int) int { return m.classes[ci].zone }
	}
	// Classes per mgroup, and the shapes.
	compat := make([][]int, len(m.groups))
	for ci := range m.classes {
		cl := &m.classes[ci]
		if z := zoneOf(ci); z < 0 || z >= Z || cl.resident != nil {
			return 0, nil
		}
		if cl.dominated || cl.price <= 0 {
			continue
		}
		for _, g := range cl.groups {
			if i, ok := m.mgOf[g]; ok {
				compat[i] = append(compat[i], ci)
			}
		}
	}
	shapeOf := make([]int, len(m.groups))
	type shape struct {
		req     prep.Vec
		classes []int // sorted
		units   int   // all its groups' units
		perNode int   // the most units of it one node may hold: its groups' caps summed
	}
	var shapes []shape
	byKey := map[string]int{}
	for i, mg := range m.groups {
		var sb strings.Builder
		fmt.Fprint(&sb, mg.req, "|", compat[i])
		key := sb.String()
		s, ok := byKey[key]
		if !ok {
			if len(shapes) == shapeMax {
				return 0, nil
			}
			s = len(shapes)
			byKey[key] = s
			shapes = append(shapes, shape{req: mg.req, classes: compat[i]})
		}
		shapeOf[i] = s
		shapes[s].units += mg.units
		shapes[s].perNode += min(mg.maxUnits, mg.units)
	}

	inst, err := highs.New(ctx, highs.Options{Presolve: "off"})
	if err != nil {
		return 0, fmt.Errorf("shape bound: %w", err)
	}
	defer inst.Release()
	// Rows: each group's units; its zone rows; a cover row per shape and zone.
	var lo, hi []float64
	for _, mg := range m.groups {
		lo, hi = append(lo, float64(mg.units)), append(hi, float64(mg.units))
	}
	zoneRow0 := len(lo)
	for _, zr := range m.zoneRows {
		lo, hi = append(lo, m.rowLo[zr.row]), append(hi, m.rowHi[zr.row])
	}
	coverRow0 := len(lo)
	cover := func(s, z int) int { return coverRow0 + s*Z + z }
	for range len(shapes) * Z {
		lo, hi = append(lo, 0), append(hi, highs.Inf)
	}
	// Node counts: a group of at most c units per node puts x units in a zone on at least x/c of its nodes.
	// countRow(z) says the zone's patterns add up to at least N_z; spreadRow[i][z] that N_z >= x_iz/c_i.
	countRow0 := len(lo)
	countRow := func(z int) int { return countRow0 + z }
	for range Z {
		lo, hi = append(lo, 0), append(hi, highs.Inf)
	}
	spreadRow := make([][]int, len(m.groups))
	for i, mg := range m.groups {
		if mg.maxUnits >= mg.units {
			continue
		}
		spreadRow[i] = make([]int, Z)
		for z := range Z {
			spreadRow[i][z] = len(lo)
			lo, hi = append(lo, 0), append(hi, highs.Inf)
		}
	}
	if err := inst.Pass(ctx, &highs.Model{RowLower: lo, RowUpper: hi, RowStart: make([]int, len(lo)+1)}); err != nil {
		return 0, fmt.Errorf("shape bound: %w", err)
	}
	// Columns: the units of each group in each zone where it has a class.
	var b colBatch
	has := make([]bool, Z)
	for i, mg := range m.groups {
		clear(has)
		for _, ci := range compat[i] {
			has[zoneOf(ci)] = true
		}
		any := false
		for z := range Z {
			if !has[z] {
				continue
			}
			any = true
			rows, vals := []int{i}, []float64{1}
			per := float64(mg.ppu)
			for a, zr := range m.groupZoneRows(i) {
				if zr.plus == z {
					rows, vals = append(rows, zoneRow0+m.zoneSpan[i][0]+a), append(vals, per)
				} else if zr.minus == z {
					rows, vals = append(rows, zoneRow0+m.zoneSpan[i][0]+a), append(vals, -per)
				}
			}
			rows, vals = append(rows, cover(shapeOf[i], z)), append(vals, -1)
			if spreadRow[i] != nil {
				rows, vals = append(rows, spreadRow[i][z]), append(vals, -1/float64(mg.maxUnits))
			}
			b.add(0, 0, float64(mg.units), rows, vals, column{})
		}
		if !any {
			return 0, nil // a group no class takes: the master's slack says so
		}
	}
	for z := range Z {
		rows, vals := []int{countRow(z)}, []float64{-1}
		for i := range m.groups {
			if spreadRow[i] != nil {
				rows, vals = append(rows, spreadRow[i][z]), append(vals, 1)
			}
		}
		b.add(0, 0, highs.Inf, rows, vals, column{})
	}
	// Patterns: counts per shape on one node of a class.
	seen := map[string]bool{}
	addPattern := func(ci int, counts []int) {
		var sb strings.Builder
		fmt.Fprint(&sb, ci, counts)
		if seen[sb.String()] {
			return
		}
		seen[sb.String()] = true
		z := zoneOf(ci)
		rows, vals := []int{countRow(z)}, []float64{1}
		for s, n := range counts {
			if n > 0 {
				rows, vals = append(rows, cover(s, z)), append(vals, float64(n))
			}
		}
		b.add(m.classes[ci].price, 0, highs.Inf, rows, vals, column{})
	}
	// byClass[ci]: the shapes class ci takes.
	byClass := make([][]int, len(m.classes))
	for s := range shapes {
		for _, ci := range shapes[s].classes {
			byClass[ci] = append(byClass[ci], s)
		}
	}
	for ci, ss := range byClass {
		for _, s := range ss {
			it := item{req: shapes[s].req, max: min(shapes[s].perNode, shapes[s].units)}
			if n := maxFit(&it, m.classes[ci].alloc); n > 0 {
				counts := make([]int, len(shapes))
				counts[s] = n
				addPattern(ci, counts)
			}
		}
	}
	flush := func() error {
		if len(b.cost) == 0 {
			return nil
		}
		err := inst.AddCols(ctx, b.cost, b.lo, b.hi, b.start, b.index, b.value, false)
		b = colBatch{}
		return err
	}
	if err := flush(); err != nil {
		return 0, fmt.Errorf("shape bound: %w", err)
	}

	best := 0.0
	for time.Now().Before(until) {
		lctx, cancel := context.WithDeadline(ctx, until)
		lp, err := inst.Run(lctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil || !time.Now().Before(until) {
				return best, nil
			}
			return best, fmt.Errorf("shape bound: %w", err)
		}
		if lp.Status != highs.StatusOptimal || lp.RowDuals == nil {
			return best, nil
		}
		rho := 0.0
		added := 0
		for ci, ss := range byClass {
			if len(ss) == 0 {
				continue
			}
			if !time.Now().Before(until) {
				return best, nil // not every class priced: this round bounds nothing
			}
			cl := &m.classes[ci]
			var items []item
			var of []int
			for _, s := range ss {
				if w := lp.RowDuals[cover(s, zoneOf(ci))]; w > 1e-12 {
					items = append(items, item{w: w, req: shapes[s].req, max: min(shapes[s].perNode, shapes[s].units)})
					of = append(of, s)
				}
			}
			// Every node of the zone counts towards its node count, whatever it holds.
			target := cl.price - math.Max(0, lp.RowDuals[countRow(zoneOf(ci))])
			var cnt []int
			var val, upper float64
			if len(items) > 0 {
				cnt, val, upper = knapsack(items, cl.alloc, 20000, target, byDensity)
				if limit := min(100*time.Millisecond, time.Until(until)); limit > 0 && upper > target+1e-7*cl.price &&
					val <= target+1e-7*cl.price {
					// The search ran out of budget with a pattern still possible: HiGHS settles it.
					if c2, v2, u2, ok := exactKnapsack(ctx, items, cl.alloc, limit, false, target); ok {
						upper = math.Min(upper, u2)
						if v2 > val {
							cnt, val = c2, v2
						}
					}
				}
			}
			rho = math.Min(rho, (target-upper)/cl.price)
			if val > target+1e-7*cl.price {
				counts := make([]int, len(shapes))
				for a, n := range cnt {
					counts[of[a]] = n
				}
				addPattern(ci, counts)
				added++
			}
		}
		best = math.Max(best, farley(lp.Objective, rho))

		if added == 0 {
			break
		}
		if err := flush(); err != nil {
			return best, fmt.Errorf("shape bound: %w", err)
		}
	}
	// Rounding in the simplex must not push the bound above what it bounds.
	return math.Max(0, best*(1-1e-7)), nil
}
