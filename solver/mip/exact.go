package mip

import (
	"context"
	"math"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// exactKnapsack solves the pricing knapsack as a small MIP with HiGHS (or, with relax, only its LP relaxation,
// whose value is an upper bound), for the classes where the branch-and-bound search ran out of budget. It returns
// the best pattern, its value and HiGHS's proven upper bound (the dual bound of the maximisation), valid even
// when stopped by the limit. Only patterns worth at least target are searched (a row; -Inf for none): an
// infeasible knapsack proves that none is, often much sooner than the optimum would be, and the bound is then
// target. (HiGHS's feasibility tolerance only admits more patterns, so "infeasible" errs on the safe side.)
func exactKnapsack(ctx context.Context, items []item, alloc prep.Vec, limit time.Duration, relax bool, target float64) ([]int, float64, float64, bool) {
	n := len(items)
	// Columns: n_i for each item, then y_i (binary) for items that clash with another.
	yOf := make([]int, n)
	ncol := n
	for i := range items {
		yOf[i] = -1
		if len(items[i].clash) > 0 {
			yOf[i] = ncol
			ncol++
		}
	}
	m := &highs.Model{Sense: highs.Maximize, ColCost: make([]float64, ncol), ColLower: make([]float64, ncol),
		ColUpper: make([]float64, ncol), Integrality: make([]bool, ncol), RowStart: []int{0}}
	for i := range items {
		m.ColCost[i] = items[i].w
		m.ColUpper[i] = float64(items[i].max)
		m.Integrality[i] = true
		if y := yOf[i]; y >= 0 {
			m.ColUpper[y] = 1
			m.Integrality[y] = true
		}
	}
	addRow := func(hi float64, idx []int, val []float64) {
		m.RowLower, m.RowUpper = append(m.RowLower, -highs.Inf), append(m.RowUpper, hi)
		m.RowIndex, m.RowValue = append(m.RowIndex, idx...), append(m.RowValue, val...)
		m.RowStart = append(m.RowStart, len(m.RowIndex))
	}
	for k := range alloc {
		var idx []int
		var val []float64
		for i := range items {
			if r := items[i].req[k]; r != 0 {
				idx, val = append(idx, i), append(val, float64(r))
			}
		}
		if len(idx) > 0 {
			addRow(float64(alloc[k]), idx, val)
		}
	}
	for i := range items {
		y := yOf[i]
		if y < 0 {
			continue
		}
		addRow(0, []int{i, y}, []float64{1, -float64(items[i].max)}) // n_i <= max_i y_i
		for _, j := range items[i].clash {
			if j > i {
				addRow(1, []int{y, yOf[j]}, []float64{1, 1}) // not both
			}
		}
	}
	if !math.IsInf(target, -1) {
		idx, val := make([]int, n), make([]float64, n)
		for i := range items {
			idx[i], val[i] = i, items[i].w
		}
		m.RowLower, m.RowUpper = append(m.RowLower, target), append(m.RowUpper, highs.Inf)
		m.RowIndex, m.RowValue = append(m.RowIndex, idx...), append(m.RowValue, val...)
		m.RowStart = append(m.RowStart, len(m.RowIndex))
	}
	if relax {
		m.Integrality = nil
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := highs.Solve(ctx, m, highs.Options{MIPRelGap: 1e-9}, nil)
	if err != nil || res.Abandoned {
		return nil, 0, 0, false
	}
	upper := math.Inf(1)
	if res.Status == highs.StatusInfeasible && !math.IsInf(target, -1) {
		return nil, 0, target, true
	}
	if res.Status == highs.StatusOptimal {
		upper = res.Objective
		if !relax && !math.IsNaN(res.MIPDualBound) {
			// "Optimal" is within HiGHS's gaps (mip_abs_gap is 1e-6): the dual bound is the one that holds.
			upper = math.Max(upper, res.MIPDualBound)
		}
	} else if !math.IsNaN(res.MIPDualBound) {
		upper = res.MIPDualBound
	}
	if !math.IsInf(target, -1) {
		upper = math.Max(upper, target) // the optimum may lie below target, outside the row
	}
	if !res.HasSolution || relax {
		return nil, 0, upper, true
	}
	cnt := make([]int, n)
	val := 0.0
	for i := range items {
		cnt[i] = count(res.ColValues[i])
		val += float64(cnt[i]) * items[i].w
	}
	return cnt, val, math.Max(upper, val), true
}
