package mip

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
)

// classIPModel builds a small integer program that relaxes the master, the class program: whole nodes are
// bought per class, each group's units are split between the classes (and running nodes) that take it, and a
// class's nodes hold its units as a fluid (their summed room) under two whole-pod rules: one node holds at
// most as many units of a group as fit (and as its hostname rules allow), and, across groups, the units' sizes
// under dual-feasible functions sum to at most one per node. The units per zone keep the zone rows.
//
// Why an integer program. The LP bounds count nodes fractionally; with few nodes that is what they miss. In
// the 1 s decision it lifts spread/kwok/100 from $0.6607/h to $0.6883/h (the plan: $0.6899/h), gpu/aws/100
// from $56.45/h to $56.66/h, and proves spread/aws/100 and mixed/*/100 optimal. What it drops is how a
// class's units sit on its individual nodes beyond those rules, anti-affinity between different groups, and
// pool limits. Every valid plan is a solution (nodes counted per class, units per class and running node), so
// HiGHS's dual bound holds whenever it stops.
//
// It is nil when the program does not apply (consolidation's residents, a group nothing takes) or is too
// large to be worth it: more than classIPMaxCols columns, or classIPMaxPods pods or more unless long (a
// deadline of classIPLongTime or more, as in offline what-if solves).
func (m *master) classIPModel(long bool) *highs.Model {
	if len(m.groups) == 0 || (m.c.Placeable() >= classIPMaxPods && !long) {
		return nil
	}
	Z := 1
	zoneOf := func(z int) int { return 0 }
	if m.zones {
		Z = len(m.c.Zones)
		zoneOf = func(z int) int { return z }
	}
	var lp highs.Model
	addCol := func(cost, hi float64, integer bool) int {
		lp.ColCost, lp.ColLower, lp.ColUpper = append(lp.ColCost, cost), append(lp.ColLower, 0), append(lp.ColUpper, hi)
		lp.Integrality = append(lp.Integrality, integer)
		return len(lp.ColCost) - 1
	}
	lp.RowStart = []int{0}
	addRow := func(lo, hi float64, idx []int, val []float64) {
		lp.RowLower, lp.RowUpper = append(lp.RowLower, lo), append(lp.RowUpper, hi)
		lp.RowIndex, lp.RowValue = append(lp.RowIndex, idx...), append(lp.RowValue, val...)
		lp.RowStart = append(lp.RowStart, len(lp.RowIndex))
	}
	dims := len(m.c.Res)
	// unitCols[i]: the columns of mgroup i's units, one per class (or running node) that takes it. They are
	// continuous: whole units would bound a little more (gpu/aws/100: $56.85/h against $56.66/h) but make
	// HiGHS's search far slower where it matters most (spread/kwok/100: 0.8 s against 0.4 s).
	type unitCol struct{ col, zone int }
	unitCols := make([][]unitCol, len(m.groups))
	// addNodes adds the units of the groups takes on nodes of room alloc in zone z: as many as the integer
	// column nodes says, or one running node when nodes is -1.
	addNodes := func(alloc prep.Vec, nodes, z int, takes []int) {
		// cap adds the row sum(val*idx) <= v per node.
		cap := func(idx []int, val []float64, v float64) {
			if nodes >= 0 {
				addRow(-highs.Inf, 0, append(idx, nodes), append(val, -v))
			} else {
				addRow(-highs.Inf, v, idx, val)
			}
		}
		cols := make([]int, len(takes))
		for a, i := range takes {
			mg := &m.groups[i]
			it := item{req: mg.req, max: min(mg.maxUnits, mg.units)}
			per := maxFit(&it, alloc)
			hi := float64(mg.units)
			if nodes < 0 {
				hi = float64(min(per, mg.units))
			}
			cols[a] = addCol(0, hi, false)
			unitCols[i] = append(unitCols[i], unitCol{cols[a], z})
			if nodes >= 0 && per < mg.units {
				// At most per units on each node: whole pods, and hostname caps.
				cap([]int{cols[a]}, []float64{1}, float64(per))
			}
		}
		// Room: the units use no more than the nodes hold, in every resource, as shares of a node's room
		// (in bytes the coefficients span eleven orders of magnitude, and HiGHS's MIP fails on mixed/aws/1000).
		for k := range dims {
			var idx []int
			var val []float64
			for a, i := range takes {
				if r := m.groups[i].req[k]; r > 0 && alloc[k] > 0 {
					idx, val = append(idx, cols[a]), append(val, float64(r)/float64(alloc[k]))
				}
			}
			if len(idx) > 0 {
				cap(idx, val, 1)
			}
		}
		// Whole units across groups, by the dual-feasible functions u_k of Fekete and Schepers: whatever units
		// share a node, their sizes x (a share of its room in one resource) have u_k(x) summing to at most 1,
		// where u_k(x) = x when (k+1)x is whole and floor((k+1)x)/k otherwise. So the units, so weighted,
		// number at most the nodes. This is what the fluid room misses most where nodes are small: a 4-CPU node
		// holds three 1-CPU pods and three of 0.25 CPU, not 3.7.
		seen := map[string]bool{}
		for k := 1; k <= dffMax; k++ {
			for d := range dims {
				if alloc[d] <= 0 {
					continue
				}
				var idx []int
				var val []float64
				var sb strings.Builder
				for a, i := range takes {
					r := m.groups[i].req[d]
					var w float64
					if n := int64(k+1) * r; n%alloc[d] == 0 {
						w = float64(r) / float64(alloc[d])
					} else {
						w = float64(n/alloc[d]) / float64(k)
					}
					if w > 0 {
						idx, val = append(idx, cols[a]), append(val, w)
						fmt.Fprint(&sb, a, ":", w, " ")
					}
				}
				if len(idx) < 2 || seen[sb.String()] {
					continue // one group's units per node are capped above
				}
				seen[sb.String()] = true
				cap(idx, val, 1)
			}
		}
	}
	fits := func(i int, alloc prep.Vec) bool {
		it := item{req: m.groups[i].req, max: min(m.groups[i].maxUnits, m.groups[i].units)}
		return maxFit(&it, alloc) > 0
	}
	for ci := range m.classes {
		cl := &m.classes[ci]
		z := zoneOf(cl.zone)
		if z < 0 || z >= Z || cl.resident != nil {
			return nil
		}
		if cl.dominated || cl.price <= 0 {
			continue
		}
		var takes []int
		for _, g := range cl.groups {
			if i, ok := m.mgOf[g]; ok && fits(i, cl.alloc) {
				takes = append(takes, i)
			}
		}
		if len(takes) == 0 {
			continue
		}
		hi := highs.Inf
		if cl.limit > 0 {
			hi = float64(cl.limit)
		}
		addNodes(cl.alloc, addCol(cl.price, hi, true), z, takes)
	}
	// Running nodes: their free room, for the groups that may use them.
	for _, e := range m.running {
		n := &m.c.Nodes[e]
		z := zoneOf(n.Zone)
		if z < 0 || z >= Z {
			return nil // its pods count in no zone row, which this program cannot say
		}
		free := make(prep.Vec, dims)
		for k := range dims {
			free[k] = max(0, n.Residual[k])
		}
		var takes []int
		for _, i := range m.onNode[e] {
			if fits(i, free) {
				takes = append(takes, i)
			}
		}
		if len(takes) > 0 {
			addNodes(free, -1, z, takes)
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
			switch u.zone {
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

// classIPMaxPods, classIPMaxCols and classIPLongTime bound the problems the class program runs on. From 500
// pods the portfolio's local search needs the second core in a 1 s decision, and at 1,000 pods the program
// proves more than the LPs only on mixed/aws ($17.854/h in 0.5 s against $17.82/h); with a deadline of 5 s or
// more it runs there too. Beyond classIPMaxCols columns (spread/*/1000: 7,800) HiGHS's root alone takes most
// of a second and bounds no more than the LPs ($6.67/h and $5.53/h).
const (
	// dffMax is the largest k of the dual-feasible cuts: spread/kwok/100 needs 16 (a 4-CPU node holds three
	// 1-CPU pods and three of 0.25 CPU, not 3.7), for $0.6883/h against $0.6646/h with 8.
	dffMax          = 16
	classIPMaxPods  = 500
	classIPMaxCols  = 1200
	classIPLongTime = 5 * time.Second
)

// solveClassIP returns HiGHS's proven bound on the class program by until (0 for none).
func solveClassIP(ctx context.Context, lp *highs.Model, until time.Time) (float64, error) {
	left := time.Until(until)
	if left <= time.Millisecond {
		return 0, nil
	}
	// Without restarts: the root's cuts and bound are most of the proof (spread/kwok/100: 0.24 s to $0.6883/h
	// against 0.55 s with four restarts; gpu/aws/100 0.08 s against 0.04 s).
	r, err := highs.Solve(ctx, lp, highs.Options{TimeLimit: left, MIPNoRestart: true}, nil)
	if err != nil {
		return 0, fmt.Errorf("class IP bound: %w", err)
	}
	switch r.Status {
	case highs.StatusOptimal, highs.StatusTimeLimit, highs.StatusInterrupt:
	case highs.StatusInfeasible, highs.StatusUnboundedOrInfeasible:
		return 0, nil // some pods cannot be placed at all: the master's slack says so, not this
	default:
		return 0, fmt.Errorf("class IP bound: HiGHS stopped with %v", r.Status)
	}
	if math.IsInf(r.MIPDualBound, 0) || math.IsNaN(r.MIPDualBound) {
		return 0, nil
	}
	// Rounding in HiGHS must not push the bound above what it bounds.
	return math.Max(0, r.MIPDualBound*(1-1e-7)), nil
}

// classBound is the class program solved aside while the MIP goes on (on HiGHS's one solver thread, so the MIP's
// own HiGHS runs wait for it). A nil *classBound is a program that was not started: its methods do nothing.
type classBound struct {
	cancel context.CancelFunc
	done   chan classBoundResult
}

type classBoundResult struct {
	v   float64
	err error
}

// startClassBound solves lp aside until until (or ctx's end).
func startClassBound(ctx context.Context, lp *highs.Model, until time.Time) *classBound {
	ctx, cancel := context.WithCancel(ctx)
	b := &classBound{cancel: cancel, done: make(chan classBoundResult, 1)}
	safe.Go(func() {
		v, err := solveClassIP(ctx, lp, until)
		b.done <- classBoundResult{v, err}
	}, func(p *safe.Panic) { b.done <- classBoundResult{0, p} })
	return b
}

// poll raises res.LowerBound to the program's bound if it has ended (and notes its error in res.MasterStatus);
// it returns at once either way. The bound is taken once.
func (b *classBound) poll(res *Result) { b.take(res, false) }

// finish waits for the program's bound and takes it, unless proven says there is nothing left to prove: then
// the program is stopped and only a bound already there is taken.
func (b *classBound) finish(res *Result, proven bool) {
	if b != nil {
		b.take(res, !proven)
		b.cancel()
	}
}

func (b *classBound) take(res *Result, wait bool) {
	if b == nil || b.done == nil {
		return
	}
	var r classBoundResult
	if wait {
		r = <-b.done
	} else {
		select {
		case r = <-b.done:
		default:
			return
		}
	}
	b.done = nil
	if r.err != nil {
		res.MasterStatus += r.err.Error() + "; "
	} else if r.v > res.LowerBound {
		res.LowerBound = r.v
	}
}
