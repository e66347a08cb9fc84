package mip

import (
	"context"
	"fmt"
	"math"

	"github.com/packwright/packwright/solver/highs"
)

// zoneFluidBound is the value of a small LP that relaxes the master: every zone's new nodes are a pool of
// resources that its pods share as a fluid (as if any pod could take any part of any node of the zone), and each
// group's units are split between zones as its zone rows demand. Any valid plan gives a solution of that LP
// (its nodes counted per class, its units per zone), so the LP's optimum bounds the plan's cost.
//
// Why it is worth an LP. Column generation's bound holds only once it converges, and under zone spread the
// restricted master is so degenerate that it does not in a second (spread/aws/5000: 24 rounds in 20 s leave
// the LP where the first round put it). The greedy's zone bound prices each zone for a guessed split of the
// pods; this LP chooses the split, so a group that must put a third of its pods in the dearest zone pays for
// it there.
//
// It relaxes, so it stays valid: a pod is valued as a fluid, compatibility is pooled per zone (a group may
// use any class of a zone where it has one), pool limits are dropped, and running nodes' free room counts in
// full in their zone. It is 0 (no bound) when zones do not matter or some class has no zone.
func (m *master) zoneFluidBound(ctx context.Context) (float64, error) {
	if !m.zones || len(m.groups) == 0 {
		return 0, nil
	}
	Z, dims := len(m.c.Zones), len(m.c.Res)
	zoneOf := func(z int) bool { return z >= 0 && z < Z }
	// has[i][z]: some class of zone z takes mgroup i.
	has := make([][]bool, len(m.groups))
	for i := range has {
		has[i] = make([]bool, Z)
	}
	var classes []int
	for ci := range m.classes {
		cl := &m.classes[ci]
		if !zoneOf(cl.zone) {
			return 0, nil
		}
		for _, g := range cl.groups {
			if i, ok := m.mgOf[g]; ok {
				has[i][cl.zone] = true
			}
		}
		// A dominated class is no cheaper per node than the one that dominates it, which has at least its room.
		if !cl.dominated && cl.price > 0 {
			classes = append(classes, ci)
		}
	}
	// Free room on running nodes, per zone.
	free := make([][]float64, Z)
	for z := range free {
		free[z] = make([]float64, dims)
	}
	for _, e := range m.running {
		n := &m.c.Nodes[e]
		if !zoneOf(n.Zone) {
			return 0, nil // its pods count in no zone row, which this LP cannot say
		}
		for z := range Z {
			if n.Zone == z {
				for k := range dims {
					free[z][k] += math.Max(0, float64(n.Residual[k]))
				}
			}
		}
	}

	var lp highs.Model
	addCol := func(cost, hi float64) int {
		lp.ColCost, lp.ColLower, lp.ColUpper = append(lp.ColCost, cost), append(lp.ColLower, 0), append(lp.ColUpper, hi)
		return len(lp.ColCost) - 1
	}
	nodeCol := make([]int, len(classes))
	for a, ci := range classes {
		hi := highs.Inf
		if l := m.classes[ci].limit; l > 0 {
			hi = float64(l)
		}
		nodeCol[a] = addCol(m.classes[ci].price, hi)
	}
	unitCol := make([][]int, len(m.groups)) // -1 where the group has no class in the zone
	for i, mg := range m.groups {
		unitCol[i] = make([]int, Z)
		for z := range Z {
			unitCol[i][z] = -1
			if has[i][z] {
				unitCol[i][z] = addCol(0, float64(mg.units))
			}
		}
	}
	// Rows, built row-wise.
	lp.RowStart = []int{0}
	addRow := func(lo, hi float64, idx []int, val []float64) {
		lp.RowLower, lp.RowUpper = append(lp.RowLower, lo), append(lp.RowUpper, hi)
		lp.RowIndex, lp.RowValue = append(lp.RowIndex, idx...), append(lp.RowValue, val...)
		lp.RowStart = append(lp.RowStart, len(lp.RowIndex))
	}
	for i, mg := range m.groups {
		var idx []int
		var val []float64
		for z := range Z {
			if c := unitCol[i][z]; c >= 0 {
				idx, val = append(idx, c), append(val, 1)
			}
		}
		if len(idx) == 0 {
			return 0, nil // a group no class takes: the master leaves it to the slack, and so no bound
		}
		addRow(float64(mg.units), float64(mg.units), idx, val)
	}
	for _, zr := range m.zoneRows {
		per := float64(m.groups[zr.mg].ppu)
		var idx []int
		var val []float64
		if zoneOf(zr.plus) {
			if c := unitCol[zr.mg][zr.plus]; c >= 0 {
				idx, val = append(idx, c), append(val, per)
			}
		}
		if zoneOf(zr.minus) {
			if c := unitCol[zr.mg][zr.minus]; c >= 0 {
				idx, val = append(idx, c), append(val, -per)
			}
		}
		addRow(m.rowLo[zr.row], m.rowHi[zr.row], idx, val)
	}
	for z := range Z {
		for k := range dims {
			var idx []int
			var val []float64
			for i, mg := range m.groups {
				if c := unitCol[i][z]; c >= 0 && mg.req[k] > 0 {
					idx, val = append(idx, c), append(val, -float64(mg.req[k]))
				}
			}
			if len(idx) == 0 {
				continue
			}
			for a, ci := range classes {
				if cl := &m.classes[ci]; cl.zone == z && cl.alloc[k] > 0 {
					idx, val = append(idx, nodeCol[a]), append(val, float64(cl.alloc[k]))
				}
			}
			addRow(-free[z][k], highs.Inf, idx, val)
		}
	}
	r, err := highs.Solve(ctx, &lp, highs.Options{}, nil)
	if err != nil {
		return 0, fmt.Errorf("zone fluid bound: %w", err)
	}
	if r.Status != highs.StatusOptimal {
		return 0, nil // infeasible means some pods cannot be placed at all: the master's slack says so, not this
	}
	// Rounding in the simplex must not push the bound above what it bounds.
	return math.Max(0, r.Objective*(1-1e-7)), nil
}
