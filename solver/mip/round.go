package mip

import (
	"math"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
)

// roundAndComplete turns an LP solution into a plan: the whole nodes of the LP (every column's value rounded
// down) are kept, and the greedy places what is left, on those nodes first. Near the LP's value when the LP
// uses many nodes, and cheap, it is the integer master's incumbent and a candidate of its own.
func (m *master) roundAndComplete(x []float64) (*model.Plan, error) {
	floor := make([]float64, len(x))
	for j, v := range x {
		floor[j] = math.Floor(v + 1e-9)
	}
	partial := m.plan(floor)
	partial.Unschedulable = nil
	return greedy.Complete(m.c.Src, partial)
}

// roundUpShares are the fractions at or above which bestRounding rounds a pattern up instead of down, one
// candidate plan each: the floor alone leaves the greedy a residual it packs a node or so worse than the LP,
// and rounding the nearly whole patterns up often covers that residual for less.
var roundUpShares = []float64{0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2}

// bestRounding is the cheapest valid plan among roundAndComplete of x and of x with the patterns whose
// fractional part is at least each of roundUpShares rounded up (pods they cover twice are dropped by plan, and
// a rounding that breaks a count or pool limit fails validation), preferring plans that place more pods. It
// stops early, keeping what it has, once until has passed or a plan is within 0.2% of the LP's value lp (at
// 5,000 pods each candidate costs some 20 ms); nil when no candidate is valid.
func (m *master) bestRounding(x []float64, lp float64, until time.Time) *model.Plan {
	var best *model.Plan
	try := func(y []float64) {
		p, err := m.roundAndComplete(y)
		if err != nil || p.Validate(m.c.Src) != nil {
			return
		}
		if best == nil || p.Placed() > best.Placed() || (p.Placed() == best.Placed() && p.Cost < best.Cost-1e-9) {
			best = p
		}
	}
	try(x)
	var last []float64 // the previous candidate: shares that round up the same patterns give the same plan
	for _, share := range roundUpShares {
		if !time.Now().Before(until) || (best != nil && best.Cost <= lp*1.002) {
			break
		}
		y := append([]float64(nil), x...)
		up := false
		for j, v := range x {
			if j >= len(m.cols) || m.cols[j].kind != colPattern {
				continue
			}
			if f := math.Floor(v + 1e-9); v-f >= share && f+1 <= m.cols[j].hi {
				y[j], up = f+1, true
			}
		}
		if up && !slices.Equal(y, last) {
			try(y)
			last = y
		}
	}
	return best
}
