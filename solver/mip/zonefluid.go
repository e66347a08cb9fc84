package mip

import (
	"context"
	"fmt"
	"math"
	"time"

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
	f := m.zoneFluidModel(false)
	if f == nil {
		return 0, nil
	}
	r, err := highs.Solve(ctx, &f.lp, highs.Options{}, nil)
	if err != nil {
		return 0, fmt.Errorf("zone fluid bound: %w", err)
	}
	if r.Status != highs.StatusOptimal {
		return 0, nil // infeasible means some pods cannot be placed at all: the master's slack says so, not this
	}
	// Rounding in the simplex must not push the bound above what it bounds.
	return math.Max(0, r.Objective*(1-1e-7)), nil
}

// zoneFluid is the zone fluid program: its model, and the node column of each class it uses.
type zoneFluid struct {
	lp      highs.Model
	classes []int // master classes with a node column
	nodeCol []int // nodeCol[a]: the column of classes[a]'s new nodes
}

// zoneFluidModel builds the zone fluid LP, or nil when it does not apply (no zone rules, a group no class
// takes, a class or running node without a zone). With nodes, each zone also has, for every group of at most
// maxUnits units per node, a row that its units there fit on the zone's nodes (running ones included): the
// nodes that a group with hostname anti-affinity needs, which is what fixes the node count of a zone of few
// large nodes.
func (m *master) zoneFluidModel(nodes bool) *zoneFluid {
	if !m.zones || len(m.groups) == 0 {
		return nil
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
			return nil
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
	// Free room on running nodes, and their number, per zone.
	free := make([][]float64, Z)
	for z := range free {
		free[z] = make([]float64, dims)
	}
	running := make([]float64, Z)
	for _, e := range m.running {
		n := &m.c.Nodes[e]
		if !zoneOf(n.Zone) {
			return nil // its pods count in no zone row, which this LP cannot say
		}
		running[n.Zone]++
		for k := range dims {
			free[n.Zone][k] += math.Max(0, float64(n.Residual[k]))
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
			return nil // a group no class takes: the master leaves it to the slack, and so no bound
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
	if nodes {
		for i, mg := range m.groups {
			if mg.maxUnits <= 0 || mg.maxUnits >= mg.units {
				continue // the zone's room decides
			}
			per := float64(mg.maxUnits)
			for z := range Z {
				c := unitCol[i][z]
				if c < 0 {
					continue
				}
				idx, val := []int{c}, []float64{-1}
				for a, ci := range classes {
					if m.classes[ci].zone == z {
						idx, val = append(idx, nodeCol[a]), append(val, per)
					}
				}
				addRow(-running[z]*per, highs.Inf, idx, val)
			}
		}
	}
	return &zoneFluid{lp: lp, classes: classes, nodeCol: nodeCol}
}

// zoneFluidNodes are the new nodes of the zone fluid program in whole numbers (nodes per class, each group's
// units still a fluid within its zone, and the rows of the nodes its hostname rules need): the offering of each
// node, cheapest member of its class. Filling those nodes first (greedy.CompleteOnto) gives a plan that the
// local search improves on far more than the greedy's: on spread/kwok/1000 the greedy opens nodes as it
// balances zones and ends 5% above the bound, and ruin and recreate does not undo that shape (400 ms: $6.93-6.97/h
// from the greedy plan, $6.75-6.84/h from these nodes; the bound is $6.66/h). It is nil when the program does
// not apply or HiGHS finds no solution by ctx's end or within limit.
func (m *master) zoneFluidNodes(ctx context.Context, limit time.Duration) ([]int, error) {
	return m.fluidNodesModel().solve(ctx, limit)
}

// fluidNodes is the zone fluid program with whole node counts, built from the master but solved apart from it
// (it keeps no reference to the master, so it may be solved beside column generation).
type fluidNodes struct {
	lp   highs.Model
	cols []int // the node columns
	// nodes[a] are the offerings (indices into the source problem) of column a's nodes in turn: for a class
	// without a count limit its cheapest member, repeated; for a limited class its members, each as often as its
	// MaxCount allows.
	nodes   [][]int
	limited []bool
}

// fluidNodesModel builds the program, or nil when the zone fluid LP does not apply.
func (m *master) fluidNodesModel() *fluidNodes {
	f := m.zoneFluidModel(true)
	if f == nil {
		return nil
	}
	fn := &fluidNodes{lp: f.lp, cols: f.nodeCol}
	fn.lp.Integrality = make([]bool, len(fn.lp.ColCost))
	for a, ci := range f.classes {
		fn.lp.Integrality[f.nodeCol[a]] = true
		cl := &m.classes[ci]
		if cl.limit == 0 {
			fn.nodes, fn.limited = append(fn.nodes, []int{m.c.Offerings[cl.rep].Index}), append(fn.limited, false)
			continue
		}
		var members []int
		for _, oi := range cl.members {
			idx := m.c.Offerings[oi].Index
			for range m.c.Src.Offerings[idx].MaxCount {
				members = append(members, idx)
			}
		}
		fn.nodes, fn.limited = append(fn.nodes, members), append(fn.limited, true)
	}
	return fn
}

// solve solves the program with HiGHS for at most limit and returns its nodes (nil for a nil program or no
// solution).
func (f *fluidNodes) solve(ctx context.Context, limit time.Duration) ([]int, error) {
	if f == nil {
		return nil, nil
	}
	// A start needs no proof, but 1% is too loose: on spread/aws/1000 HiGHS then stops at $5.3962/h (0.3% above
	// the optimum it reaches at 0.1% in 47 ms), and the plan over its nodes is $5.6101/h instead of $5.5887/h.
	r, err := highs.Solve(ctx, &f.lp, highs.Options{TimeLimit: limit, MIPRelGap: 1e-3}, nil)
	if err != nil {
		return nil, fmt.Errorf("zone fluid nodes: %w", err)
	}
	if !r.HasSolution {
		return nil, nil
	}
	var nodes []int
	for a, col := range f.cols {
		n := int(math.Round(r.ColValues[col]))
		if f.limited[a] {
			nodes = append(nodes, f.nodes[a][:min(n, len(f.nodes[a]))]...)
			continue
		}
		for range n {
			nodes = append(nodes, f.nodes[a][0])
		}
	}
	return nodes, nil
}
