package mip

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
)

// diveRounds caps the column-generation rounds after each fixing step of a dive.
const diveRounds = 2

// diveUp is how near its next integer a column must be for a dive step to round it up beside the nearest one.
const diveUp = 0.6

// residents reports classes with residents: the master plans a consolidation.
func (m *master) residents() bool {
	return slices.ContainsFunc(m.classes, func(cl class) bool { return cl.resident != nil })
}

// dive is a price-and-dive heuristic over the LP solution x: it fixes every column's whole part (its lower bound
// becomes the floor of its value), or, when nothing new is whole, rounds up the column closest to its next
// integer, re-solves the LP with a few rounds of column generation for what is left, and repeats until the LP
// is integral. Each step leaves a smaller residual problem, and the columns priced for it pack that residual
// rather than the whole. The plan of the integral LP is returned, or nil when time ran out first; the bounds are
// restored either way, so the integer master that follows searches every column again.
func (m *master) dive(ctx context.Context, x []float64, opts Options, until time.Time) (*model.Plan, error) {
	fixed := map[int]bool{}
	defer func() {
		// In one call: one column at a time, restoring 2,050 columns took 90-160 ms at 20,000 spread pods (AWS),
		// past the deadline. Restoring is best effort: an error here leaves the master restricted, never wrong.
		_ = m.setLower(context.WithoutCancel(ctx), slices.Sorted(maps.Keys(fixed)), make([]float64, len(m.cols)))
	}()
	lower := make([]float64, len(m.cols))
	banned := map[int]bool{} // columns whose rounding up made the LP infeasible
	var ups []int            // the columns the last step rounded up
	single := false          // round up one column a step (rounding up several broke the LP once)
	for time.Now().Before(until) {
		up, upFrac := -1, 0.0
		changed, integral, patternsIntegral := false, true, true
		use := m.fixedUse(lower)
		var raised []int // columns whose lower bound rose to their whole part, set in one call after the loop
		for j, col := range m.cols {
			if col.kind != colPattern && col.kind != colNode {
				continue
			}
			v := 0.0
			if j < len(x) {
				v = x[j]
			}
			f := math.Floor(v + 1e-6)
			if j >= len(lower) {
				lower = append(lower, make([]float64, j+1-len(lower))...)
			}
			if f > lower[j] {
				lower[j], changed, fixed[j] = f, true, true
				raised = append(raised, j)
			}
			if frac := v - f; frac > 1e-6 {
				integral = false
				if col.kind == colPattern {
					patternsIntegral = false
				}
				if !banned[j] && f+1 <= col.hi && frac > upFrac && use.room(col) {
					up, upFrac = j, frac
				}
			}
		}
		if err := m.setLower(ctx, raised, lower); err != nil {
			return nil, err
		}
		if integral {
			if m.slackUsed(x) {
				return nil, nil // the fixings left pods out: no plan worth having
			}
			return m.plan(x), nil
		}
		if patternsIntegral && !changed {
			// Only running nodes' shares are fractional: the greedy places those pods, on the nodes first.
			if p, err := m.roundAndComplete(x); err == nil {
				return p, nil
			}
			return nil, nil
		}
		if !changed {
			if up < 0 {
				return nil, nil
			}
			// Round up the column nearest its next integer and, unless that broke the LP before, every other
			// one at least diveUp of the way there that still has room: one column a step is too slow.
			ups = ups[:0]
			take := func(j int) error {
				lower[j]++
				fixed[j] = true
				ups = append(ups, j)
				use.add(m.cols[j])
				return m.inst.SetColBounds(ctx, j, lower[j], m.cols[j].hi)
			}
			if err := take(up); err != nil {
				return nil, err
			}
			for j := 0; j < len(m.cols) && !single && j < len(x); j++ {
				col := m.cols[j]
				if j == up || banned[j] || (col.kind != colPattern && col.kind != colNode) {
					continue
				}
				if f := math.Floor(x[j] + 1e-6); x[j]-f >= diveUp && f+1 <= col.hi && use.room(col) {
					if err := take(j); err != nil {
						return nil, err
					}
				}
			}
		} else {
			ups = ups[:0]
		}
		for round := 0; round < diveRounds; round++ {
			lpCtx, cancel := context.WithDeadline(ctx, until)
			r, err := m.inst.Run(lpCtx)
			cancel()
			if err != nil {
				if ctx.Err() == nil && !time.Now().Before(until) {
					return nil, nil
				}
				return nil, err
			}
			if r.Status == highs.StatusInfeasible && len(ups) > 0 && round == 0 {
				// Rounding up broke a row without slack: take it back, and from now on round one column at a
				// time, another one if that one alone broke it.
				if len(ups) == 1 {
					banned[ups[0]] = true
				}
				for _, j := range ups {
					lower[j]--
					if err := m.inst.SetColBounds(ctx, j, lower[j], m.cols[j].hi); err != nil {
						return nil, err
					}
				}
				ups, single = ups[:0], true
				break
			}
			if r.Status != highs.StatusOptimal || r.RowDuals == nil {
				return nil, nil
			}
			x = r.ColValues
			if round == diveRounds-1 {
				break
			}
			cols, _ := m.price(ctx, r.RowDuals, opts, until)
			if len(cols) == 0 {
				break
			}
			if err := m.addPatterns(ctx, cols); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// setLower gives the columns cols their lower bound in lower (and their own upper bound) in one call.
func (m *master) setLower(ctx context.Context, cols []int, lower []float64) error {
	lo, hi := make([]float64, len(cols)), make([]float64, len(cols))
	for i, j := range cols {
		lo[i], hi[i] = lower[j], m.cols[j].hi
	}
	return m.inst.SetColsBounds(ctx, cols, lo, hi)
}

// diveUse is what a dive's fixed lower bounds take of the rows without slack: class count limits (candidate
// nodes, offerings with a MaxCount), NodePool limits and running nodes' room. A column is rounded up only when
// one more of it stays within them.
type diveUse struct {
	m       *master
	inClass []float64
	pool    map[[2]int]float64 // (pool, resource)
	node    map[[2]int]float64 // (node, resource)
}

func (m *master) fixedUse(lower []float64) *diveUse {
	u := &diveUse{m: m, inClass: make([]float64, len(m.classes)), pool: map[[2]int]float64{}, node: map[[2]int]float64{}}
	for j, col := range m.cols {
		if j < len(lower) && lower[j] > 0 && (col.kind == colPattern || col.kind == colNode) {
			u.addN(col, lower[j])
		}
	}
	return u
}

func (u *diveUse) add(col column) { u.addN(col, 1) }

func (u *diveUse) addN(col column, n float64) {
	if col.kind == colNode {
		for k, v := range u.m.groups[col.mg].req {
			u.node[[2]int{col.node, k}] += n * float64(v)
		}
		return
	}
	cl := &u.m.classes[col.class]
	u.inClass[col.class] += n
	if cl.pool >= 0 {
		for k, v := range cl.capacity {
			u.pool[[2]int{cl.pool, k}] += n * float64(v)
		}
	}
}

// room reports whether one more of col stays within the limits.
func (u *diveUse) room(col column) bool {
	m := u.m
	if col.kind == colNode {
		for k, v := range m.groups[col.mg].req {
			if v > 0 && u.node[[2]int{col.node, k}]+float64(v) > float64(m.c.Nodes[col.node].Residual[k]) {
				return false
			}
		}
		return true
	}
	cl := &m.classes[col.class]
	if cl.limit > 0 && u.inClass[col.class]+1 > float64(cl.limit) {
		return false
	}
	for _, pr := range m.poolRows {
		if pr.pool == cl.pool && u.pool[[2]int{pr.pool, pr.k}]+float64(cl.capacity[pr.k]) > float64(m.c.Pools[pr.pool].Limit[pr.k]) {
			return false
		}
	}
	return true
}
