package mip

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/packwright/packwright/solver/highs"
)

// classIPModel builds a small integer program that relaxes the master, the class program: whole nodes are
// bought per class, each group's whole units are split between the classes that take it, and a class's nodes
// hold its units as a fluid (their summed room), except that one node holds at most as many units of a group
// as fit (and as its hostname rules allow), and at most q units that each take more than 1/(q+1) of its room
// in some resource (q = 1, 2, 3; across groups). The units per zone keep the zone rows.
//
// Why an integer program. The LP bounds count nodes fractionally; with few nodes that is what they miss
// (gpu/aws/100: the LPs prove $56.03/h, this program $56.84/h, the plan is $56.87/h; mixed/kwok/100 it proves
// optimal). What it drops is how a class's units sit on its individual nodes beyond those counts,
// anti-affinity between different groups, and pool limits. Every valid plan is a solution (nodes counted per
// class, units per class), so HiGHS's dual bound holds whenever it stops.
//
// It is nil when the program does not apply (running nodes, residents, a group no class takes) or is too large
// to be worth it: classIPMaxPods pods or more, classIPMaxCols columns.
func (m *master) classIPModel() *highs.Model {
	if len(m.groups) == 0 || len(m.running) > 0 || m.fillings || m.c.Placeable() >= classIPMaxPods {
		return nil
	}
	Z := 1
	zoneOf := func(ci int) int { return 0 }
	if m.zones {
		Z = len(m.c.Zones)
		zoneOf = func(ci int) int { return m.classes[ci].zone }
	}
	var lp highs.Model
	addCol := func(cost, hi float64) int {
		lp.ColCost, lp.ColLower, lp.ColUpper = append(lp.ColCost, cost), append(lp.ColLower, 0), append(lp.ColUpper, hi)
		lp.Integrality = append(lp.Integrality, true)
		return len(lp.ColCost) - 1
	}
	lp.RowStart = []int{0}
	addRow := func(lo, hi float64, idx []int, val []float64) {
		lp.RowLower, lp.RowUpper = append(lp.RowLower, lo), append(lp.RowUpper, hi)
		lp.RowIndex, lp.RowValue = append(lp.RowIndex, idx...), append(lp.RowValue, val...)
		lp.RowStart = append(lp.RowStart, len(lp.RowIndex))
	}
	dims := len(m.c.Res)
	nodeCol := make([]int, len(m.classes))
	// unitCols[i]: the columns of mgroup i's units, one per class that takes it.
	type unitCol struct{ col, ci int }
	unitCols := make([][]unitCol, len(m.groups))
	for ci := range m.classes {
		cl := &m.classes[ci]
		nodeCol[ci] = -1
		if z := zoneOf(ci); z < 0 || z >= Z || cl.resident != nil {
			return nil
		}
		if cl.dominated || cl.price <= 0 {
			continue
		}
		var takes []int
		for _, g := range cl.groups {
			if i, ok := m.mgOf[g]; ok {
				it := item{req: m.groups[i].req, max: min(m.groups[i].maxUnits, m.groups[i].units)}
				if maxFit(&it, cl.alloc) > 0 {
					takes = append(takes, i)
				}
			}
		}
		if len(takes) == 0 {
			continue
		}
		hi := highs.Inf
		if cl.limit > 0 {
			hi = float64(cl.limit)
		}
		nodeCol[ci] = addCol(cl.price, hi)
		for _, i := range takes {
			mg := &m.groups[i]
			it := item{req: mg.req, max: min(mg.maxUnits, mg.units)}
			per := maxFit(&it, cl.alloc)
			c := addCol(0, float64(mg.units))
			unitCols[i] = append(unitCols[i], unitCol{c, ci})
			if per < mg.units {
				// At most per units on each node of the class: whole pods, and hostname caps.
				addRow(-highs.Inf, 0, []int{c, nodeCol[ci]}, []float64{1, -float64(per)})
			}
		}
		// Room: the class's units use no more than its nodes hold, in every resource.
		for k := range dims {
			idx, val := []int{nodeCol[ci]}, []float64{-float64(cl.alloc[k])}
			for _, u := range takes {
				if r := m.groups[u].req[k]; r > 0 {
					uc := unitCols[u][len(unitCols[u])-1]
					idx, val = append(idx, uc.col), append(val, float64(r))
				}
			}
			if len(idx) > 1 {
				addRow(-highs.Inf, 0, idx, val)
			}
		}
		// Whole units across groups: no node holds more than q units each above 1/(q+1) of its room in some
		// resource. This is what the fluid room misses most where nodes are small (four 1-CPU pods of different
		// groups do not share a 2-CPU node, though their CPU would).
		seen := map[string]bool{}
		for q := 1; q <= 3; q++ {
			for k := range dims {
				var idx []int
				var val []float64
				for _, u := range takes {
					if r := m.groups[u].req[k]; r*int64(q+1) > cl.alloc[k] {
						idx, val = append(idx, unitCols[u][len(unitCols[u])-1].col), append(val, 1)
					}
				}
				key := fmt.Sprint(q, idx)
				if len(idx) < 2 || seen[key] {
					continue
				}
				seen[key] = true
				addRow(-highs.Inf, 0, append(idx, nodeCol[ci]), append(val, -float64(q)))
			}
		}
	}
	for i, mg := range m.groups {
		if len(unitCols[i]) == 0 {
			return nil // a group no class takes: the master's slack says so, not this
		}
		var idx []int
		var val []float64
		for _, u := range unitCols[i] {
			idx, val = append(idx, u.col), append(val, 1)
		}
		addRow(float64(mg.units), float64(mg.units), idx, val)
	}
	for _, zr := range m.zoneRows {
		per := float64(m.groups[zr.mg].ppu)
		var idx []int
		var val []float64
		for _, u := range unitCols[zr.mg] {
			switch zoneOf(u.ci) {
			case zr.plus:
				idx, val = append(idx, u.col), append(val, per)
			case zr.minus:
				idx, val = append(idx, u.col), append(val, -per)
			}
		}
		addRow(m.rowLo[zr.row], m.rowHi[zr.row], idx, val)
	}
	if len(lp.ColCost) > classIPMaxCols {
		return nil
	}
	return &lp
}

// classIPMaxPods and classIPMaxCols bound the problems the class program runs on. With many nodes rounding
// them up matters little and the LPs bound more than the program proves in the time (1,000 pods: gpu/aws
// $608.96/h against the shape LP's $610.40/h, mixed/aws $17.11/h against $17.83/h, in 0.3–1.9 s); from 500
// pods the portfolio's local search needs the second core. gpu/aws/100 has 508 columns and HiGHS solves it
// in 170 ms.
const (
	classIPMaxPods = 500
	classIPMaxCols = 1200
)

// solveClassIP returns HiGHS's proven bound on the class program by until (0 for none).
func solveClassIP(ctx context.Context, lp *highs.Model, until time.Time) (float64, error) {
	left := time.Until(until)
	if left <= time.Millisecond {
		return 0, nil
	}
	r, err := highs.Solve(ctx, lp, highs.Options{TimeLimit: left}, nil)
	if err != nil {
		return 0, fmt.Errorf("class IP bound: %w", err)
	}
	switch r.Status {
	case highs.StatusOptimal, highs.StatusTimeLimit, highs.StatusInterrupt:
	default:
		return 0, nil // infeasible means some pods cannot be placed at all: the master's slack says so
	}
	if math.IsInf(r.MIPDualBound, 0) || math.IsNaN(r.MIPDualBound) {
		return 0, nil
	}
	// Rounding in HiGHS must not push the bound above what it bounds.
	return math.Max(0, r.MIPDualBound*(1-1e-7)), nil
}
