package greedy

import (
	"cmp"
	"slices"
)

// order returns the groups in first-fit-decreasing order, split in two: first the groups whose rules do not
// depend on other pending groups being placed, then those with required pod affinity to other pending groups,
// which must follow the pods they are drawn to.
//
// Within each part: co-located groups first (all their pods form one item, the largest there is), then groups
// capped per node (each pod opens or claims a node that later groups fill), then the rest; inside a class,
// by decreasing normalised size, the dominant share of a pod's requests in the largest offering's allocatable.
func (s *solver) order() (first, later []int) {
	scale := make([]float64, s.dims)
	for o := range s.alloc {
		for k, a := range s.alloc[o] {
			scale[k] = max(scale[k], float64(a))
		}
	}
	size := make([]float64, len(s.req))
	class := make([]int, len(s.req))
	for g, r := range s.req {
		for k, q := range r {
			if scale[k] > 0 {
				size[g] = max(size[g], float64(q)/scale[k])
			}
		}
		switch gr := &s.rule[g]; {
		case s.c.Groups[g].CoLocate || (gr.aff != nil && gr.aff.self && s.hostAffinity(gr.aff)):
			class[g] = 0
			size[g] *= float64(s.left[g])
		case s.c.Groups[g].Cap >= 0 || len(gr.ports) > 0 || s.selfHostAnti(g):
			class[g] = 1
		default:
			class[g] = 2
		}
		if af := s.rule[g].aff; af != nil && len(af.anchors) > 0 {
			later = append(later, g)
		} else {
			first = append(first, g)
		}
	}
	by := func(a, b int) int {
		if c := cmp.Compare(class[a], class[b]); c != 0 {
			return c
		}
		if c := cmp.Compare(size[b], size[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	slices.SortFunc(first, by)
	slices.SortFunc(later, by)
	return first, later
}

// hostAffinity reports whether af has a term on the hostname key.
func (s *solver) hostAffinity(af *affRule) bool {
	return s.topo.host >= 0 && slices.Contains(af.keys, s.topo.host)
}

// selfHostAnti reports whether group g's hostname anti-affinity selects its own pods (one per node).
func (s *solver) selfHostAnti(g int) bool {
	for _, a := range s.rule[g].anti {
		if a.key == s.topo.host && a.self {
			return true
		}
	}
	return false
}

// run places every group, then shrinks the new nodes.
func (s *solver) run() {
	s.placeAll()
	s.shrink()
}

// placeAll places the first part of the order once and the later part in passes until a pass places nothing,
// since an affinity group may be drawn to another that is itself waiting for a third.
func (s *solver) placeAll() {
	s.initPrices()
	first, later := s.order()
	for _, g := range first {
		s.placeGroup(g)
	}
	for pass := 0; pass <= len(later); pass++ {
		progress := false
		for _, g := range later {
			before := s.left[g]
			s.placeGroup(g)
			progress = progress || s.left[g] < before
		}
		if !progress {
			break
		}
	}
}

// initPrices computes the dual prices over every offering some group may use, for the whole demand.
func (s *solver) initPrices() {
	in := make([]bool, len(s.p.Offerings))
	var offs []int
	demand := make([]float64, s.dims)
	for g := range s.c.Groups {
		if s.left[g] == 0 || s.c.Groups[g].Impossible != "" {
			continue
		}
		for _, o := range s.c.Groups[g].Offerings {
			if !in[o] {
				in[o] = true
				offs = append(offs, o)
			}
		}
		for k, q := range s.req[g] {
			demand[k] += float64(s.left[g]) * float64(q)
		}
	}
	s.pi = s.dualPrices(offs, demand)
	s.offValue = make([]float64, len(s.alloc))
	for o, a := range s.alloc {
		s.offValue[o] = dot(a, s.pi)
	}
	s.podValue = make([]float64, len(s.req))
	s.remValue, s.remCount, s.remDemand = 0, 0, make([]float64, s.dims)
	for g := range s.req {
		s.podValue[g] = dot(s.req[g], s.pi)
		if s.c.Groups[g].Impossible == "" {
			s.remValue += float64(s.left[g]) * s.podValue[g]
			s.remCount += float64(s.left[g])
			for k, q := range s.req[g] {
				s.remDemand[k] += float64(s.left[g]) * float64(q)
			}
		}
	}
}
