package greedy

import (
	"cmp"
	"math"
	"slices"

	"github.com/packwright/packwright/model"
)

// dualPrices returns resource prices pi >= 0 (per unit of each dim) such that a_o . pi <= p_o for every
// offering in offs, chosen to make demand . pi large: the dual of "buy capacity covering the aggregate
// demand" restricted to mixes of cpu and memory (the resources that decide nearly every plan; others get 0).
// Any such pi values a node at no more than its price, which is what both the lower bound and the offering
// choice rely on; the search only has to find a good one, not the best.
func (s *solver) dualPrices(offs []int, demand []float64) []float64 {
	pi := make([]float64, s.dims)
	cpu, mem := -1, -1
	for k, r := range s.c.Res {
		switch r {
		case model.CPU:
			cpu = k
		case model.Memory:
			mem = k
		}
	}
	if len(offs) == 0 || (cpu < 0 && mem < 0) {
		return pi
	}
	// Scale each resource by its largest allocatable, so the mixing angle is in comparable units.
	scale := func(k int) float64 {
		if k < 0 {
			return 0
		}
		m := 0.0
		for _, o := range offs {
			m = max(m, float64(s.alloc[o][k]))
		}
		if m == 0 {
			return 0
		}
		return 1 / m
	}
	sc, sm := scale(cpu), scale(mem)
	weights := func(theta float64) (wc, wm float64) { return math.Cos(theta) * sc, math.Sin(theta) * sm }
	// value is the bound for direction theta: the largest t with t*w feasible, times demand . w.
	value := func(theta float64) (float64, float64) {
		wc, wm := weights(theta)
		t := math.Inf(1)
		for _, o := range offs {
			a := 0.0
			if cpu >= 0 {
				a += float64(s.alloc[o][cpu]) * wc
			}
			if mem >= 0 {
				a += float64(s.alloc[o][mem]) * wm
			}
			if a > 0 {
				t = min(t, s.p.Offerings[o].Price/a)
			}
		}
		if math.IsInf(t, 1) {
			return 0, 0
		}
		d := 0.0
		if cpu >= 0 {
			d += demand[cpu] * wc
		}
		if mem >= 0 {
			d += demand[mem] * wm
		}
		return t * d, t
	}
	const samples = 48
	bestTheta, bestVal := 0.0, -1.0
	for i := 0; i <= samples; i++ {
		theta := math.Pi / 2 * float64(i) / samples
		if v, _ := value(theta); v > bestVal {
			bestTheta, bestVal = theta, v
		}
	}
	// Golden-section refinement around the best sample (the value is unimodal near its peak).
	lo, hi := max(bestTheta-math.Pi/2/samples, 0), min(bestTheta+math.Pi/2/samples, math.Pi/2)
	const phi = 0.6180339887498949
	for range 30 {
		a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
		va, _ := value(a)
		vb, _ := value(b)
		if va >= vb {
			hi = b
		} else {
			lo = a
		}
	}
	if v, _ := value((lo + hi) / 2); v > bestVal {
		bestTheta = (lo + hi) / 2
	}
	_, t := value(bestTheta)
	wc, wm := weights(bestTheta)
	// Shade the prices a hair so that rounding can never make a_o . pi exceed p_o.
	t *= 1 - 1e-9
	if cpu >= 0 {
		pi[cpu] = t * wc
	}
	if mem >= 0 {
		pi[mem] = t * wm
	}
	return pi
}

// dot is v . pi over dims.
func dot(v []int64, pi []float64) float64 {
	d := 0.0
	for k, x := range v {
		d += float64(x) * pi[k]
	}
	return d
}

// dualHull returns the offerings of offs that can bound dualPrices for some demand: with prices only on cpu
// and memory, a_o . pi <= p_o binds only for offerings whose allocatable per dollar is a vertex of the upper
// right convex hull of all of them (the others are dominated by a mix of two), plus any free offering. Asking
// dualPrices about these alone gives as good prices at a fraction of the cost, which is what lets the
// planned nodes re-price the demand left as they go (pattern.go).
func (s *solver) dualHull(offs []int) []int {
	cpu, mem := s.resDim(model.CPU), s.resDim(model.Memory)
	if cpu < 0 || mem < 0 {
		return offs // one price at most: nothing to gain
	}
	type point struct {
		x, y float64
		o    int
	}
	var pts []point
	var free []int
	for _, o := range offs {
		p := s.p.Offerings[o].Price
		if p <= 0 {
			free = append(free, o)
			continue
		}
		pts = append(pts, point{float64(s.alloc[o][cpu]) / p, float64(s.alloc[o][mem]) / p, o})
	}
	// Upper hull by Andrew's monotone chain, x ascending (y descending on ties, so that the top point of a
	// column comes first and the others are popped).
	slices.SortFunc(pts, func(a, b point) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(b.y, a.y)
	})
	var hull []point
	for _, p := range pts {
		for len(hull) >= 2 {
			a, b := hull[len(hull)-2], hull[len(hull)-1]
			// Pop b when it lies on or below the segment a-p.
			if (b.x-a.x)*(p.y-a.y)-(b.y-a.y)*(p.x-a.x) < 0 {
				break
			}
			hull = hull[:len(hull)-1]
		}
		hull = append(hull, p)
	}
	// Only the chain from the highest point to the rightmost one faces pi >= 0.
	top := 0
	for i, p := range hull {
		if p.y > hull[top].y || (p.y == hull[top].y && p.x > hull[top].x) {
			top = i
		}
	}
	out := free
	for _, p := range hull[top:] {
		out = append(out, p.o)
	}
	return out
}

// resDim is the dim of resource r, -1 when no group requests it.
func (s *solver) resDim(r model.ResourceName) int {
	for k, name := range s.c.Res {
		if name == r {
			return k
		}
	}
	return -1
}
