package greedy

import (
	"cmp"
	"math"
	"slices"
)

// Patterns: how new nodes are opened for the groups without placement rules.
//
// Opening a node for one group at a time (chooseOffering) sizes it for that group alone and leaves the rest of
// the node to whichever later group fits first. On the mixed workload (AWS, 5,000 pods) that put the CPU-heavy
// groups on c6a nodes with 62% of their memory unused and the memory-heavy ones on r6a nodes with 45% of their
// CPU unused: 20% above the bound. So for these groups a new node is planned whole before it opens: the group
// whose turn it is gives the first pod, and the rest of the node is filled from every such group still to be
// placed, always with the pod whose requests best match the node's free space (the dot product of the two,
// each resource scaled by the node's allocatable: Panigrahy et al., "Heuristics for Vector Bin Packing").
// Every offering the group may use is planned like that, and the one whose pods are worth most per dollar
// at the dual prices wins; the plan is then repeated as long as the pods it takes last. Groups with rules keep
// the per-group choice, since a plan made for them could not check their rules as their pods arrive.

// initPatterns marks the groups that new nodes may be planned for: those of first without rules, host
// ports, per-node caps or co-location, in problems where the dual prices value their pods and every offering
// has the same weight (a planned node could otherwise put a group below a pool that would take it).
func (s *solver) initPatterns(first []int) {
	s.plain, s.pending = nil, nil
	if s.tiered || s.pi == nil {
		return
	}
	plain := make([]bool, len(s.p.Groups))
	any := false
	for _, g := range first {
		cg := &s.c.Groups[g]
		if s.rule[g].any || len(s.rule[g].ports) > 0 || cg.Cap >= 0 || cg.CoLocate || cg.Impossible != "" ||
			s.left[g] == 0 || s.podValue[g] <= 0 {
			continue
		}
		plain[g], any = true, true
	}
	if !any {
		return
	}
	s.plain, s.pending, s.first = plain, slices.Clone(plain), first
	s.turned = make([]bool, len(s.p.Groups))
	s.hull = s.dualHull(s.priceOffs)
	s.byValue = make([]int, len(s.p.Offerings))
	for o := range s.byValue {
		s.byValue[o] = o
	}
	s.offEff = make([]float64, len(s.p.Offerings))
	s.sortByValue()
	s.pricedValue = s.remValue
	s.pat = patternScratch{res: make([]int64, s.dims), inv: make([]float64, s.dims)}
}

// sortByValue orders byValue by the offerings' value per dollar at the current prices.
func (s *solver) sortByValue() {
	for o := range s.offEff {
		s.offEff[o] = efficiency(s.offValue[o], s.p.Offerings[o].Price)
	}
	slices.SortStableFunc(s.byValue, func(a, b int) int { return cmp.Compare(s.offEff[b], s.offEff[a]) })
	if s.bestEff == nil {
		s.bestEff = make([]float64, len(s.p.Groups))
	}
	for h, ok := range s.plain {
		if !ok || s.left[h] == 0 {
			continue
		}
		s.bestEff[h] = 0
		for _, o := range s.byValue {
			if s.c.Groups[h].OfferingOK[o] {
				if f, _ := s.fitCount(h, s.alloc[o], 1); f > 0 {
					s.bestEff[h] = s.offEff[o]
					break
				}
			}
		}
	}
}

// repriceStep is the share of its value the demand left must lose before it is priced again: re-pricing
// sorts every offering, and smaller steps gave the same plans on the benchmark workloads.
const repriceStep = 0.01

// reprice sets the dual prices for the demand still to be placed: that of group g (whose turn it is) and of
// the groups whose turn has not come. Planned nodes use up the groups they draw on unevenly, and prices for
// the whole demand keep valuing a resource that is no longer scarce: on the mixed workload (AWS, 20,000
// pods) memory-heavy pods went onto r6a nodes beside the CPU-heavy ones until none were left for the t3a
// nodes, whose memory then stayed unused: 11.6% above the bound, 5.4% when re-priced.
func (s *solver) reprice(g int) {
	demand := make([]float64, s.dims)
	for h := range s.c.Groups {
		if s.left[h] == 0 || s.c.Groups[h].Impossible != "" || (s.turned[h] && h != g) {
			continue
		}
		for k, q := range s.req[h] {
			demand[k] += float64(s.left[h]) * float64(q)
		}
	}
	s.setPrices(s.dualPrices(s.hull, demand))
	s.sortByValue()
	s.pricedValue = s.remValue
}

// efficiency is value per dollar; a free node is worth any price.
func efficiency(value, price float64) float64 {
	switch {
	case price > 0:
		return value / price
	case value > 0:
		return math.Inf(1)
	}
	return 0
}

// patterned reports whether new nodes for group g are planned by pattern.
func (s *solver) patterned(g, key int) bool {
	return s.plain != nil && s.plain[g] && key < 0
}

// prefillPending puts the pods of every pending plain group that fit on the nodes already there (existing ones
// first), in the placement order, before the first planned node opens: a planned node takes pods of groups
// whose turn has not come, and these should have the free room of running nodes first, which costs nothing
// (on the existing workload, AWS, 50,000 pods: 12.9% above the bound with it, 15.6% without).
func (s *solver) prefillPending() {
	if s.prefilled {
		return
	}
	s.prefilled = true
	for _, h := range s.first {
		if s.pending[h] && s.left[h] > 0 {
			cursor := 0
			s.fillOpen(h, -1, 0, s.left[h], &cursor)
		}
	}
}

// pattern is a new node planned before it opens: an offering and how many pods of each group it holds.
type pattern struct {
	off    int
	groups []int
	counts []int
}

// patternScratch is bestPattern's working memory, reused across calls.
type patternScratch struct {
	groups []int // candidate groups: the seed, then the pending plain groups with pods left
	lim    []int // per candidate: most pods the node may take
	cnt    []int // per candidate: pods planned on the node
	kept   []int // cnt of the better of an offering's two plans
	best   []int // cnt of the best plan so far
	live   []int // candidates that may still take a pod on the node being planned
	score  []float64
	res    []int64
	inv    []float64
}

// openPatterns opens planned nodes for up to want pods of group g (whose turn it is) and returns how many of
// g's pods they took; the other groups' pods they hold are placed too. After each run of identical nodes the
// demand left is priced again (reprice). It stops early when no offering takes a pod of g, leaving the rest
// to the per-group choice, which notes why.
func (s *solver) openPatterns(g, want int) int {
	s.prefillPending()
	got := 0
	for got < want {
		pat, ok := s.bestPattern(g, want-got)
		if !ok {
			break
		}
		before := got
		copies := s.patternCopies(pat, g, want-got)
		for c := 0; c < copies; c++ {
			if c > 0 {
				if k, _ := s.offerRules(g, pat.off, 1); k <= 0 {
					break // a limit ran out: plan again
				}
			}
			b := s.open(pat.off)
			for i, h := range pat.groups {
				k, _ := s.allow(h, b, pat.counts[i])
				s.place(h, b, k)
				if h == g {
					got += k
				}
			}
			if len(b.pods) == 0 {
				s.discardLast() // cannot happen: the plan was checked against the same rules
				break
			}
		}
		if got == before {
			break // no progress: leave the rest to the per-group choice
		}
		if s.remValue < (1-repriceStep)*s.pricedValue {
			s.reprice(g)
		}
	}
	return got
}

// patternCopies is how many nodes of pat the pods left allow (at least one): g may use want more.
func (s *solver) patternCopies(pat pattern, g, want int) int {
	n := math.MaxInt
	for i, h := range pat.groups {
		left := s.left[h]
		if h == g {
			left = want
		}
		n = min(n, left/pat.counts[i])
	}
	return max(n, 1)
}

// bestPattern plans a new node for at most want pods of group g, beside pods of the pending plain groups, on
// every offering g may use that could beat the best plan so far (its whole allocatable valued at the dual
// prices, per dollar, is an upper bound on any plan's value per dollar), and returns the plan worth most per
// dollar. ok is false when no offering takes a pod of g.
//
// Each offering is planned twice, starting from one pod of g and from as many as fit, and the plan worth more
// is kept. Starting from one lets the fill pair g with complementary groups; starting from all suits a group
// shaped like the node: on the existing workload (kwok, 50,000 pods) the fill from one pod put memory-heavy
// pods on c-32x nodes first, whose CPU then stayed unused, and the plan was 20% above the bound instead of 11%.
func (s *solver) bestPattern(g, want int) (pat pattern, ok bool) {
	sc := &s.pat
	sc.groups = append(sc.groups[:0], g)
	for h, p := range s.pending {
		if p && h != g && s.left[h] > 0 {
			sc.groups = append(sc.groups, h)
		}
	}
	n := len(sc.groups)
	sc.lim, sc.cnt, sc.kept, sc.best = resize(sc.lim, n), resize(sc.cnt, n), resize(sc.kept, n), resize(sc.best, n)
	sc.score = resize(sc.score, n)
	for i, h := range sc.groups {
		sc.lim[i] = s.left[h]
	}
	sc.lim[0] = want
	bestOff, bestEff := -1, 0.0
	for _, o := range s.byValue {
		if bestOff >= 0 && s.offEff[o] <= bestEff*(1+1e-9) {
			break // no plan on o or any later offering can be worth more per dollar
		}
		if !s.usableOffering(g, o) {
			continue
		}
		most, _ := s.fitCount(g, s.alloc[o], want)
		if most <= 0 {
			continue
		}
		if k, _ := s.offerRules(g, o, 1); k <= 0 {
			continue
		}
		value := s.planNode(o, 1)
		copy(sc.kept, sc.cnt)
		if most > 1 {
			if v := s.planNode(o, most); v > value {
				value = v
				copy(sc.kept, sc.cnt)
			}
		}
		if eff := efficiency(value, s.p.Offerings[o].Price); bestOff < 0 || eff > bestEff*(1+1e-9) {
			bestOff, bestEff = o, eff
			copy(sc.best, sc.kept)
		}
	}
	if bestOff < 0 {
		return pattern{}, false
	}
	pat.off = bestOff
	for i, h := range sc.groups {
		if sc.best[i] > 0 {
			pat.groups = append(pat.groups, h)
			pat.counts = append(pat.counts, sc.best[i])
		}
	}
	return pat, true
}

// fillerFloor keeps a group's pods off planned nodes worth much less per dollar than the best offering it
// could use: the fill counts them at their value, as if they cost nothing there, but they would be cheaper
// elsewhere. On the 50,000-pod benchmark, groups pinned to on-demand (offerings worth 0.3 of their price at
// the dual prices, spot being 2-3 times cheaper) filled their large nodes with other groups' pods, and the
// plan cost $1,139/h, 3% more than before planned nodes; with the floor it costs $1,086/h, 2% less.
const fillerFloor = 0.8

// planNode fills a fresh node of offering o with the scratch's candidate groups, seed pods of the first one
// first (at least one), into sc.cnt, and returns the value of its pods at the dual prices. Each step takes the
// group whose request has the largest dot product with the node's free space (resources scaled by the
// allocatable), and as many of its pods in a row as taking them one at a time would: until another group's
// product overtakes it (products fall linearly as pods are taken), the node is full for it, or its pods run
// out.
func (s *solver) planNode(o, seed int) float64 {
	sc := &s.pat
	alloc := s.alloc[o]
	copy(sc.res, alloc)
	for d, a := range alloc {
		sc.inv[d] = 0
		if a > 0 {
			sc.inv[d] = 1 / float64(a)
		}
	}
	clear(sc.cnt)
	sc.live = append(sc.live[:0], 0) // the seed first, so that it wins ties
	for i, h := range sc.groups[1:] {
		if s.offEff[o] >= fillerFloor*s.bestEff[h] && s.usableOffering(h, o) {
			sc.live = append(sc.live, i+1)
		}
	}
	value := 0.0
	take := func(i, k int) {
		h := sc.groups[i]
		sc.cnt[i] += k
		for d, q := range s.req[h] {
			sc.res[d] -= int64(k) * q
		}
		value += float64(k) * s.podValue[h]
	}
	k, _ := s.fitCount(sc.groups[0], sc.res, min(seed, sc.lim[0]))
	take(0, max(k, 1))
	for {
		best := -1
		live := sc.live[:0]
		for _, i := range sc.live {
			// Free space only shrinks: a group that no longer fits, or has no pods left, is done.
			if sc.cnt[i] >= sc.lim[i] {
				continue
			}
			if !s.fits(sc.groups[i], sc.res) {
				continue
			}
			live = append(live, i)
			sc.score[i] = s.alignment(sc.groups[i], sc.res, sc.inv)
			if best < 0 || sc.score[i] > sc.score[best] {
				best = i
			}
		}
		sc.live = live
		if best < 0 {
			return value
		}
		hb := sc.groups[best]
		k, _ := s.fitCount(hb, sc.res, sc.lim[best]-sc.cnt[best])
		self := s.overlap(hb, hb, sc.inv)
		for _, i := range sc.live {
			if i == best {
				continue
			}
			// After j more pods of hb, hb's product is score[best] - j*self and i's score[i] - j*cross:
			// hb stays first for floor(gap/closing)+1 pods.
			if closing := self - s.overlap(hb, sc.groups[i], sc.inv); closing > 0 {
				if run := (sc.score[best]-sc.score[i])/closing + 1; run < float64(k) {
					k = max(1, int(run))
				}
			}
		}
		take(best, k)
	}
}

// fits reports whether one pod of group g fits in free.
func (s *solver) fits(g int, free []int64) bool {
	for d, q := range s.req[g] {
		if q > 0 && q > free[d] {
			return false
		}
	}
	return true
}

// alignment is the dot product of group g's request with free, each resource scaled by inv.
func (s *solver) alignment(g int, free []int64, inv []float64) float64 {
	a := 0.0
	for d, q := range s.req[g] {
		if q > 0 {
			a += float64(q) * inv[d] * float64(free[d]) * inv[d]
		}
	}
	return a
}

// overlap is the dot product of groups g's and h's requests, each resource scaled by inv: how much one pod of
// g lowers h's alignment.
func (s *solver) overlap(g, h int, inv []float64) float64 {
	a := 0.0
	rh := s.req[h]
	for d, q := range s.req[g] {
		if q > 0 && rh[d] > 0 {
			a += float64(q) * float64(rh[d]) * inv[d] * inv[d]
		}
	}
	return a
}

// resize returns v with length n, reusing its storage (the old values stay; new room is zero).
func resize[T any](v []T, n int) []T { return slices.Grow(v[:0], n)[:n] }
