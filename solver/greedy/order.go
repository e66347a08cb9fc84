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
	first, later := s.order()
	s.initPrices()
	if s.nExisting > 0 && !s.inOrder && s.fillExisting(first) {
		s.filled = true
		s.initPrices() // price what is left for new nodes
	}
	s.initPatterns(first)
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
	s.priceOffs = offs
	// The hull gives the prices of all of offs (dualHull) in a fraction of the time: on the AWS catalog the
	// prices over every offering were a fifth of a completion's time (mixed/aws/1000).
	s.setPrices(s.dualPrices(s.dualHull(offs), demand))
}

// setPrices makes pi the dual prices and values the offerings, the pods and what is left to place at them.
func (s *solver) setPrices(pi []float64) {
	s.pi = pi
	if len(s.offValue) != len(s.alloc) {
		s.offValue = make([]float64, len(s.alloc))
	}
	for o, a := range s.alloc {
		s.offValue[o] = dot(a, s.pi)
	}
	if len(s.podValue) != len(s.req) {
		s.podValue = make([]float64, len(s.req))
	}
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

// fillExisting may put pods of the groups without rules on the existing nodes before any node is opened, and
// reports whether it placed any. Free space on running nodes costs nothing, so it should hold the pods that
// would cost most elsewhere. The placement order (largest first, existing nodes first) can strand it: on the
// existing workload (20,000 pods) it let CPU-heavy pods use up the free CPU and left 54% of the free memory
// unused. So two fills of the existing nodes are compared on copies, placement order and by value density
// (node by node, the pod with the highest value at the dual prices per share of the node's free space it
// takes, the sum over resources of request / free, one at a time), and the density fill is made only when the
// pods it places are worth more; otherwise nothing is placed here and the placement order decides as before.
func (s *solver) fillExisting(order []int) bool {
	onNode := make([][]int, s.nExisting)
	var plain []int
	for _, g := range order {
		cg := &s.c.Groups[g]
		if s.rule[g].any || len(s.rule[g].ports) > 0 || cg.Cap >= 0 || cg.CoLocate || cg.Impossible != "" || s.left[g] == 0 {
			continue
		}
		plain = append(plain, g)
		for _, n := range cg.Nodes {
			if n < s.nExisting && s.usable(g, s.bins[n]) {
				onNode[n] = append(onNode[n], g)
			}
		}
	}
	if len(plain) == 0 {
		return false
	}
	free := make([][]int64, s.nExisting)
	reset := func() []int {
		for n := range free {
			free[n] = append(free[n][:0], s.bins[n].free...)
		}
		return slices.Clone(s.left)
	}
	// Placement order: each group first-fit over its existing nodes.
	left := reset()
	inOrder := 0.0
	for _, g := range plain {
		for _, n := range s.c.Groups[g].Nodes {
			if n >= s.nExisting || left[g] == 0 || !s.usable(g, s.bins[n]) {
				continue
			}
			k, _ := s.fitCount(g, free[n], left[g])
			s.take(g, free[n], k)
			left[g] -= k
			inOrder += float64(k) * s.podValue[g]
		}
	}
	// Value density, node by node.
	type placement struct{ g, n, k int }
	var moves []placement
	left = reset()
	dense := 0.0
	for n, groups := range onNode {
		for {
			best, bestScore := -1, 0.0
			for _, g := range groups {
				if left[g] == 0 {
					continue
				}
				share, fits := 0.0, true
				for k, q := range s.req[g] {
					if q <= 0 {
						continue
					}
					if q > free[n][k] {
						fits = false
						break
					}
					share += float64(q) / float64(free[n][k])
				}
				if fits && share > 0 {
					if score := s.podValue[g] / share; best < 0 || score > bestScore {
						best, bestScore = g, score
					}
				}
			}
			if best < 0 {
				break
			}
			s.take(best, free[n], 1)
			left[best]--
			dense += s.podValue[best]
			if m := len(moves) - 1; m >= 0 && moves[m].g == best && moves[m].n == n {
				moves[m].k++
			} else {
				moves = append(moves, placement{best, n, 1})
			}
		}
	}
	if dense <= inOrder*(1+1e-9) {
		return false
	}
	for _, mv := range moves {
		if k, f := s.allow(mv.g, s.bins[mv.n], mv.k); k > 0 {
			s.place(mv.g, s.bins[mv.n], k)
		} else {
			s.note(mv.g, f)
		}
	}
	return true
}

// take subtracts k pods of group g from free.
func (s *solver) take(g int, free []int64, k int) {
	for d, q := range s.req[g] {
		free[d] -= int64(k) * q
	}
}
