package greedy

import (
	"math"

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
