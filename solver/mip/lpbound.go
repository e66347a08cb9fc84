package mip

import (
	"math"

	"github.com/packwright/packwright/solver/internal/prep"
)

// lpMultipliers solves the LP relaxation of the pricing knapsack (clashes dropped): max sum w_i n_i subject to
// sum n_i r_i <= alloc and 0 <= n_i <= max_i, by a bounded-variable primal simplex over one row per resource.
// It returns the optimal basis's dual prices per unit of each resource (clipped at 0), which give the
// Lagrangian bound lambda.alloc + sum max_i (w_i - lambda.r_i)^+: the LP relaxation's value at the optimum, and a
// valid upper bound for any multipliers, so rounding in the simplex can weaken the bound but never make it
// wrong. The coordinate and subgradient search of lagrange can stall at a corner of this piecewise-linear
// function several times above its minimum (seen on mixed cpu- and memory-heavy groups, where it held
// Farley's bound at a third of the LP); the simplex does not.
func lpMultipliers(items []item, alloc prep.Vec) []float64 {
	dims := len(alloc)
	var rows []int // resources with room and some item using them
	for k := 0; k < dims; k++ {
		used := false
		for i := range items {
			if items[i].req[k] > 0 {
				used = true
				break
			}
		}
		if used && alloc[k] > 0 {
			rows = append(rows, k)
		}
	}
	m, n := len(rows), len(items)
	lambda := make([]float64, dims)
	if m == 0 || n == 0 {
		return lambda
	}
	// Columns 0..n-1 are the items, n..n+m-1 the slacks; rows are scaled to a capacity of 1.
	col := func(j, r int) float64 {
		if j >= n {
			if j-n == r {
				return 1
			}
			return 0
		}
		return float64(items[j].req[rows[r]]) / float64(alloc[rows[r]])
	}
	cost := func(j int) float64 {
		if j >= n {
			return 0
		}
		return items[j].w
	}
	upper := func(j int) float64 {
		if j >= n {
			return math.Inf(1)
		}
		return float64(items[j].max)
	}
	atUpper := make([]bool, n+m)
	basis := make([]int, m)
	isBasic := make([]int, n+m) // row+1 when basic, 0 otherwise
	binv := make([][]float64, m)
	xb := make([]float64, m)
	for r := range basis {
		basis[r] = n + r
		isBasic[n+r] = r + 1
		binv[r] = make([]float64, m)
		binv[r][r] = 1
		xb[r] = 1
	}
	y := make([]float64, m)
	alpha := make([]float64, m)
	const eps = 1e-9
	for iter := 0; iter < 20*(n+m); iter++ {
		// Duals y = c_B B^-1.
		for c := range y {
			y[c] = 0
			for r := range basis {
				y[c] += cost(basis[r]) * binv[r][c]
			}
		}
		enter, best := -1, eps
		for j := 0; j < n+m; j++ {
			if isBasic[j] > 0 {
				continue
			}
			d := cost(j)
			for r := 0; r < m; r++ {
				d -= y[r] * col(j, r)
			}
			if atUpper[j] {
				d = -d // decreasing it pays when its reduced cost is negative
			}
			if d > best {
				enter, best = j, d
			}
		}
		if enter < 0 {
			break
		}
		// alpha = B^-1 a_enter; moving the entering variable by t (up, or down from its bound) changes the basic
		// values by -sign*t*alpha.
		sign := 1.0
		if atUpper[enter] {
			sign = -1
		}
		for r := range alpha {
			alpha[r] = 0
			for c := 0; c < m; c++ {
				alpha[r] += binv[r][c] * col(enter, c)
			}
		}
		t, leave, leaveUp := upper(enter), -1, false
		for r := range basis {
			d := sign * alpha[r]
			switch {
			case d > eps:
				if lim := xb[r] / d; lim < t {
					t, leave, leaveUp = lim, r, false
				}
			case d < -eps:
				if u := upper(basis[r]); !math.IsInf(u, 1) {
					if lim := (u - xb[r]) / -d; lim < t {
						t, leave, leaveUp = lim, r, true
					}
				}
			}
		}
		if math.IsInf(t, 1) {
			break // unbounded cannot happen with every item capped; stop rather than loop
		}
		for r := range xb {
			xb[r] -= sign * t * alpha[r]
		}
		if leave < 0 {
			atUpper[enter] = !atUpper[enter] // a bound flip
			continue
		}
		// Pivot: the entering variable takes row leave.
		enterValue := t
		if atUpper[enter] {
			enterValue = upper(enter) - t
		}
		old := basis[leave]
		isBasic[old] = 0
		atUpper[old] = leaveUp
		basis[leave] = enter
		isBasic[enter] = leave + 1
		atUpper[enter] = false
		xb[leave] = enterValue
		p := alpha[leave]
		for c := 0; c < m; c++ {
			binv[leave][c] /= p
		}
		for r := 0; r < m; r++ {
			if r == leave || alpha[r] == 0 {
				continue
			}
			f := alpha[r]
			for c := 0; c < m; c++ {
				binv[r][c] -= f * binv[leave][c]
			}
		}
	}
	for r := range basis {
		y[r] = 0
		for c := range basis {
			y[r] += cost(basis[c]) * binv[c][r]
		}
	}
	for r, k := range rows {
		lambda[k] = math.Max(0, y[r]) / float64(alloc[k])
	}
	return lambda
}

// lagrangeValue is the Lagrangian bound of the knapsack for multipliers lambda >= 0,
// lambda.alloc + sum max_i (w_i - lambda.r_i)^+; with grad non-nil it also stores there the bound's subgradient.
func lagrangeValue(items []item, alloc prep.Vec, lambda, grad []float64) float64 {
	b := 0.0
	for k, l := range lambda {
		b += l * float64(alloc[k])
		if grad != nil {
			grad[k] = float64(alloc[k])
		}
	}
	for i := range items {
		it := &items[i]
		v := it.w
		for k, l := range lambda {
			v -= l * float64(it.req[k])
		}
		if v > 0 {
			b += v * float64(it.max)
			if grad != nil {
				for k := range lambda {
					grad[k] -= float64(it.max) * float64(it.req[k])
				}
			}
		}
	}
	return b
}
