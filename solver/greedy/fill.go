package greedy

import (
	"fmt"
	"math"
	"slices"
)

// allow is how many pods of group g, up to want, may go to bin b now: capacity, host ports, every topology
// rule, and prep's per-node cap.
func (s *solver) allow(g int, b *bin, want int) (int, failure) {
	k, d := s.fitCount(g, b.free, want)
	if k <= 0 {
		return 0, failure{kind: failResource, idx: d}
	}
	k, f := s.checkRules(g, b, k)
	if k <= 0 {
		return 0, f
	}
	if cp := s.c.Groups[g].Cap; cp >= 0 {
		if k = min(k, cp-b.count(g)); k <= 0 {
			return 0, failure{kind: failCap, idx: cp}
		}
	}
	return k, failure{}
}

// potential returns the scratch bin standing for a node of offering o that is not open yet. Its free
// vector is the offering's allocatable, shared: it must not be written.
func (s *solver) potential(o int) *bin {
	b := &s.scratch
	b.id, b.off, b.node, b.free, b.pods = len(s.bins), o, -1, s.alloc[o], nil
	if b.dom == nil {
		b.dom = make([]int32, len(s.topo.keys))
	}
	copy(b.dom, s.topo.offDom[o])
	if s.topo.host >= 0 {
		b.dom[s.topo.host] = int32(b.id)
	}
	return b
}

// offerRules caps fit, the pods of group g a new node of offering o holds by capacity, by the pool limits
// and the rules.
func (s *solver) offerRules(g, o, fit int) (int, failure) {
	if !s.countFits(o) {
		return 0, failure{kind: failUsedUp, idx: o}
	}
	if ok, r := s.poolFits(o); !ok {
		return 0, failure{kind: failPool, pool: s.offPool[o], res: r}
	}
	s.sizing = s.driving
	fit, f := s.allow(g, s.potential(o), fit)
	s.sizing = nil
	if fit <= 0 {
		return 0, f
	}
	if r := s.opensBadDomain(o); r != nil {
		return 0, failure{kind: failOpenSpread, rule: r}
	}
	return fit, failure{}
}

// candidate is an offering a group may use, with how many of its pods a fresh node holds by capacity alone.
type candidate struct {
	off   int
	fit   int
	price float64
}

// candidatesFor returns group g's candidates, computed once per group: usability and a fresh node's
// capacity fit do not change while placing, so only the pool limits and the rules are checked per choice.
func (s *solver) candidatesFor(g int) []candidate {
	if s.candGroup == g {
		return s.cands
	}
	if s.tiered {
		// higherTakes asks about other groups than the one being placed: keep every group's list.
		if s.candCache == nil {
			s.candCache = make([][]candidate, len(s.p.Groups))
		}
		if s.candCache[g] == nil {
			s.candCache[g] = s.buildCandidates(g)
		}
		s.candGroup, s.cands = g, s.candCache[g]
		return s.cands
	}
	s.candGroup, s.cands = g, s.cands[:0]
	s.cands = s.appendCandidates(g, s.cands)
	return s.cands
}

// buildCandidates is candidatesFor's list for group g in a new slice, sorted by weight.
func (s *solver) buildCandidates(g int) []candidate {
	out := s.appendCandidates(g, make([]candidate, 0, len(s.c.Groups[g].Offerings)))
	s.sortByWeight(out)
	return out
}

// appendCandidates appends group g's usable offerings that hold one of its pods.
func (s *solver) appendCandidates(g int, out []candidate) []candidate {
	for _, o := range s.c.Groups[g].Offerings {
		if !s.usableOffering(g, o) {
			continue
		}
		fit, d := s.fitCount(g, s.alloc[o], math.MaxInt32)
		if fit <= 0 {
			s.note(g, failure{kind: failResource, idx: d})
			continue
		}
		out = append(out, candidate{off: o, fit: fit, price: s.p.Offerings[o].Price})
	}
	return out
}

// chooseOffering picks the offering for a new node holding pods of group g, in domain dom of key (key -1:
// anywhere), when about n pods remain: the lowest price per pod it would take, min(fit, n); ties go to the
// larger node. With needAll it prefers the cheapest offering that takes all n, else the one taking most.
//
// Capacity alone gives an optimistic fit, so the pool limits and rules (the costly part) are checked only for
// a candidate that would beat the best so far even with that optimistic fit. Price per pod only falls as the
// fit grows, so this skips no better candidate; with the leftover credit (effective) that holds nearly but
// not always, and a miss costs a little money, never validity.
func (s *solver) chooseOffering(g, key int, dom int32, n int, needAll bool) (int, int, failure) {
	best, bestFit, bestScore, bestPrice := -1, 0, math.Inf(1), math.Inf(1)
	off := -1
	cr := s.creditFor(g)
	better := func(fit int, price float64) bool {
		if needAll {
			// Taking all n beats taking fewer; then cheaper; then (when none takes all) more pods.
			all, bestAll := fit >= n, bestFit >= n
			switch {
			case best < 0:
				return true
			case all != bestAll:
				return all
			case all:
				return price < bestPrice
			}
			return fit > bestFit || (fit == bestFit && price < bestPrice)
		}
		// Equal price per pod: the larger node, which leaves room that later groups can share (and
		// shrink trims what stays unused), then the cheaper one.
		score := s.effective(&cr, g, off, fit, price) / float64(fit)
		switch {
		case best < 0 || score < bestScore*(1-1e-9):
			return true
		case score <= bestScore*(1+1e-9):
			return fit > bestFit || (fit == bestFit && price < bestPrice)
		}
		return false
	}
	var why failure
	cands := s.candidatesFor(g)
	for i := range cands {
		c := &cands[i]
		if s.tiered && best >= 0 && s.weight[c.off] < s.weight[best] {
			break // a pool of higher weight takes the pods: lower weights are not considered (weights.go)
		}
		if key >= 0 && s.topo.offDom[c.off][key] != dom {
			continue
		}
		capFit := min(c.fit, n)
		if !needAll && best >= 0 && s.scoreFloor(&cr, g, c, capFit) > bestScore*(1+1e-9) {
			continue // cheap test first: it cannot win even with the most credit it could get
		}
		off = c.off
		if !better(capFit, c.price) {
			continue
		}
		fit, f := s.offerRules(g, c.off, capFit)
		if fit <= 0 {
			why = why.worse(f)
			continue
		}
		if better(fit, c.price) {
			best, bestFit, bestScore, bestPrice = c.off, fit, s.effective(&cr, g, c.off, fit, c.price)/float64(fit), c.price
		}
	}
	if best < 0 {
		if why.kind == failNone {
			why = failure{kind: failNoOffering, idx: key, dom: dom}
		}
		return -1, 0, why
	}
	return best, bestFit, failure{}
}

// fill places up to want pods of group g first-fit: on the bins from *cursor on (existing nodes, then new
// nodes in opening order), then on new nodes it opens, restricted to domain dom of key unless key is -1.
// nEst is how many pods will probably follow in this domain, which sizes the new nodes. A bin passed
// without taking all that was asked is not revisited: within one group's placement capacity only shrinks
// (a spread minimum that rises later is the one exception, and is only a missed opportunity).
func (s *solver) fill(g, key int, dom int32, want, nEst int, cursor *int) int {
	got := s.fillOpen(g, key, dom, want, cursor)
	if af := s.rule[g].aff; got < want && af != nil && s.hostAffinity(af) && !s.canSeed(g) {
		got += s.grow(g, key, dom, want-got)
	}
	if got < want && s.patterned(g, key) {
		got += s.openPatterns(g, want-got)
	}
	for got < want {
		o, _, f := s.chooseOffering(g, key, dom, max(nEst-got, want-got), false)
		if o < 0 {
			s.note(g, f)
			break
		}
		b := s.open(o)
		k, f := s.allow(g, b, want-got)
		if k <= 0 {
			// Cannot happen when opening only adds a domain (see opensBadDomain); undo rather than keep an
			// empty node.
			s.discardLast()
			s.note(g, f)
			break
		}
		s.place(g, b, k)
		got += k
		*cursor = b.id
		if got < want {
			*cursor = len(s.bins)
		}
	}
	return got
}

// fillOpen is fill's first fit over the bins already there, from *cursor on; it opens no node.
func (s *solver) fillOpen(g, key int, dom int32, want int, cursor *int) int {
	got := 0
	for got < want && *cursor < len(s.bins) {
		if *cursor = s.nextRoom(*cursor); *cursor >= len(s.bins) {
			break
		}
		b := s.bins[*cursor]
		if (key < 0 || b.dom[key] == dom) && s.usable(g, b) {
			k, f := s.allow(g, b, want-got)
			if k > 0 && s.higherTakes(g, b) {
				*cursor++ // a pool of higher weight takes the pods (weights.go): not a failure
				continue
			}
			if k > 0 {
				s.place(g, b, k)
				if got += k; got == want {
					break // the bin may have room left for the next request
				}
			} else {
				s.note(g, f)
			}
		}
		*cursor++
	}
	return got
}

// discardLast removes the last opened bin, which holds no pods. Domains it added to spread rules stay
// counted, which only makes those rules stricter.
func (s *solver) discardLast() {
	b := s.bins[len(s.bins)-1]
	s.bins = s.bins[:len(s.bins)-1]
	s.skip = s.skip[:min(len(s.skip), len(s.bins))]
	s.charge(b.off, -1)
}

// placeGroup places as many pods of group g as it can.
func (s *solver) placeGroup(g int) {
	if s.pending != nil {
		s.pending[g] = false // its turn: later planned nodes must not count on its pods
		s.turned[g] = true
	}
	if s.left[g] <= 0 {
		return
	}
	if why := s.c.Groups[g].Impossible; why != "" {
		s.why[g] = why
		return
	}
	if af := s.rule[g].aff; af != nil && s.hostAffinity(af) && s.canSeed(g) {
		s.placeColocated(g)
		return
	}
	if r := s.primarySpread(g); r != nil {
		s.placeSpread(g, r)
		return
	}
	cursor := 0
	s.fill(g, -1, 0, s.left[g], s.left[g], &cursor)
}

// primarySpread is the spread constraint that drives a group's placement domain by domain: one of its own,
// on a key other than hostname, that counts its own pods; the smallest maxSkew wins, the zone key first.
func (s *solver) primarySpread(g int) *spreadRule {
	var best *spreadRule
	for _, r := range s.rule[g].own {
		if r.key == s.topo.host || !r.sel[g] {
			continue
		}
		if best == nil || r.maxSkew < best.maxSkew || (r.maxSkew == best.maxSkew && r.key == s.topo.zone) {
			best = r
		}
	}
	return best
}

// placeSpread water-fills group g over the domains of spread rule r: in each round every domain still able
// to take pods is filled up to the round's level, least + maxSkew, lowest count first. Every pod placed
// keeps count - least <= maxSkew with the least as it was when the round began, and the least never drops
// within the group's placement, so the rule holds at every step and no placement is ever undone. A domain
// that falls short of its level is full for this group and stops receiving.
func (s *solver) placeSpread(g int, r *spreadRule) {
	s.driving = r
	defer func() { s.driving = nil }()
	D := len(r.isDom)
	cursors := make([]int, D)
	full := make([]bool, D)
	candidate := s.domainsWithCandidates(g, r.key)
	order := make([]int32, 0, D)
	skewBound := false // the last round left a domain that has room but is at the level
	for s.left[g] > 0 {
		least := r.least()
		order = order[:0]
		for d := 0; d < D; d++ {
			// A domain not counted yet (a key other than the zone, where only nodes make domains) becomes
			// one when a node opens there; opensBadDomain and the rules keep that safe.
			if candidate[d] && !full[d] {
				order = append(order, int32(d))
			}
		}
		skewBound = false
		if len(order) == 0 {
			break
		}
		slices.SortStableFunc(order, func(a, b int32) int {
			switch {
			case r.count[a] < r.count[b]:
				return -1
			case r.count[a] > r.count[b]:
				return 1
			}
			return 0
		})
		est := (s.left[g] + len(order) - 1) / len(order)
		progress := 0
		for _, d := range order {
			want := min(least+r.maxSkew-r.count[d], int64(s.left[g]))
			if want <= 0 {
				skewBound = true
				continue
			}
			got := s.fill(g, r.key, d, int(want), max(int(want), est), &cursors[d])
			progress += got
			if r.least() < least {
				// A node opened in a domain not counted before, whose count is the new minimum: the
				// level was too high, not the domain full. Start the next round from the new minimum.
				break
			}
			if int64(got) < want {
				full[d] = true
			}
			if s.left[g] == 0 {
				break
			}
		}
		if progress == 0 {
			break
		}
	}
	switch {
	case s.left[g] == 0:
	case skewBound:
		s.noteSpread(g, r, candidate)
	case s.fails[g].kind == failNone:
		s.why[g] = fmt.Sprintf("%s: no compatible node with room and no compatible offering has the %s label",
			r.desc, s.topo.keys[r.key])
	}
	// Otherwise every domain filled up, and the failure noted there says why.
}

// domainsWithCandidates marks the domains of key in which group g has a usable existing node or offering.
func (s *solver) domainsWithCandidates(g, key int) []bool {
	out := make([]bool, s.topo.ndom[key])
	for _, n := range s.c.Groups[g].Nodes {
		if d := s.bins[n].dom[key]; d >= 0 && s.usableNode(g, n) {
			out[d] = true
		}
	}
	for _, o := range s.c.Groups[g].Offerings {
		if d := s.topo.offDom[o][key]; d >= 0 && s.usableOffering(g, o) {
			out[d] = true
		}
	}
	// New nodes opened for other groups can take pods too.
	for _, b := range s.bins[s.nExisting:] {
		if d := b.dom[key]; d >= 0 && s.usableOffering(g, b.off) {
			out[d] = true
		}
	}
	return out
}

// placeColocated places a group whose required hostname affinity makes all its pods share the node of the
// first (it matches its own term and nothing else does): on one node that takes them all if there is one,
// an existing or open one first, else the cheapest new node that does; otherwise on the node that takes
// most, the rest unschedulable.
func (s *solver) placeColocated(g int) {
	n := s.left[g]
	var bestBin *bin
	bestK := 0
	for _, b := range s.bins {
		if !s.usable(g, b) {
			continue
		}
		k, f := s.allow(g, b, n)
		if k <= 0 {
			s.note(g, f)
			continue
		}
		if k == n {
			s.place(g, b, k)
			return
		}
		if k > bestK {
			bestBin, bestK = b, k
		}
	}
	o, fit, f := s.chooseOffering(g, -1, 0, n, true)
	if o < 0 {
		s.note(g, f)
	}
	switch {
	case o >= 0 && fit >= bestK:
		b := s.open(o)
		k, f := s.allow(g, b, n)
		if k <= 0 {
			s.discardLast()
			s.note(g, f)
			return
		}
		s.place(g, b, k)
	case bestBin != nil:
		s.place(g, bestBin, bestK)
	default:
		return
	}
	if s.left[g] > 0 {
		s.why[g] = s.colocateReason(g, n)
	}
}

// grow makes room for up to want pods of group g (in domain dom of key, unless key is -1), whose required
// hostname affinity ties it to nodes that already hold its anchors, by moving such new nodes to larger
// offerings: for each node the rules admit g on, the offering with the least extra price per added pod of g
// that changes nothing any rule looks at (as in shrink). New nodes of their own would not be anchored, so
// this is the only way to place these pods.
func (s *solver) grow(g, key int, dom int32, want int) int {
	got := 0
	use := make([]int64, s.dims)
	for _, b := range s.bins[s.nExisting:] {
		if got >= want {
			break
		}
		if key >= 0 && b.dom[key] != dom {
			continue
		}
		kr, _ := s.checkRules(g, b, want-got)
		if kr <= 0 {
			continue
		}
		cur := b.off
		for k := range use {
			use[k] = s.alloc[cur][k] - b.free[k]
		}
		free := make([]int64, s.dims)
		best, bestScore := -1, math.Inf(1)
		for _, o := range s.c.Groups[g].Offerings {
			extra := s.p.Offerings[o].Price - s.p.Offerings[cur].Price
			if extra <= 0 || (s.tiered && s.weight[o] != s.weight[cur]) || !s.usableOffering(g, o) ||
				!s.canHold(b, cur, o, use, s.spreadOwners) {
				continue
			}
			if ok, _ := s.poolFitsAfterSwap(cur, o); !ok {
				continue
			}
			for k := range free {
				free[k] = s.alloc[o][k] - use[k]
			}
			if fit, _ := s.fitCount(g, free, kr); fit > 0 && extra/float64(fit) < bestScore {
				best, bestScore = o, extra/float64(fit)
			}
		}
		if best < 0 || !s.tierSwap(b, best, use, s.lowPlacements()) {
			continue
		}
		if k, _ := s.allow(g, b, want-got); k > 0 {
			s.place(g, b, k)
			got += k
		}
	}
	return got
}

// leftoverCredit is the share of the leftover value that effective credits. Crediting it all (1) assumes every
// leftover gets filled, which opens too many nodes sized for pods that go elsewhere; none (0) ignores that
// later groups share nodes. On the 50k benchmark workloads 0.8 gave the lowest cost (gap to the dual bound
// about 11% against 16% without credit) with fewer nodes than 1.
const leftoverCredit = 0.8

// cappedCredit is the share for a group capped per node (hostname anti-affinity, host ports) or spread over
// zones: every node it opens holds few of its pods, so without full credit it opens the smallest nodes one by
// one and later groups cannot share them. Full credit cut the spread workloads' cost by 20-24% (kwok, 1,000
// and 5,000 pods) and left the others unchanged.
const cappedCredit = 1.0

// creditShare is the leftover credit share for group g.
func (s *solver) creditShare(g int) float64 {
	if g := &s.c.Groups[g]; g.Cap > 0 || g.ZoneSkew > 0 || g.ZoneCap > 0 {
		return cappedCredit
	}
	return leftoverCredit
}

// credit holds what effective needs about the demand still to come after one group, computed once per
// choice: the average later pod (as reciprocals, per dim; 0 where it requests nothing) and its value.
type credit struct {
	on       bool
	invNeed  []float64
	avgValue float64
	later    float64
}

// creditFor prepares the leftover credit for choosing a node for group g.
func (s *solver) creditFor(g int) credit {
	cr := credit{invNeed: s.invNeed}
	if s.pi == nil {
		return cr
	}
	cr.later = s.remValue - float64(s.left[g])*s.podValue[g]
	count := s.remCount - float64(s.left[g])
	if cr.later <= 0 || count <= 0 {
		return cr
	}
	for k := range cr.invNeed {
		need := (s.remDemand[k] - float64(s.left[g])*float64(s.req[g][k])) / count
		cr.invNeed[k] = 0
		if need > 0 {
			cr.invNeed[k] = 1 / need
			cr.avgValue += need * s.pi[k]
		}
	}
	cr.on = cr.avgValue > 0
	return cr
}

// scoreFloor is a lower bound on candidate c's price per pod at fit pods: the credit never exceeds the value
// of the whole leftover at the dual prices.
func (s *solver) scoreFloor(cr *credit, g int, c *candidate, fit int) float64 {
	price := c.price
	if cr.on {
		price -= s.creditShare(g) * min(cr.later, max(0, s.offValue[c.off]-float64(fit)*s.podValue[g]))
	}
	return price / float64(fit)
}

// effective is the price of a new node of offering o holding fit pods of group g, less a credit for the
// capacity it leaves over: as many "average" pods of the demand still to come after g as fit in the leftover,
// valued at the dual prices, and never more than that demand is worth. A node whose leftover matches the
// shape of what is coming is worth more than one left with only memory (or only cpu) to spare; this is what
// steers a cpu-heavy group onto a node that later memory-heavy groups will fill.
func (s *solver) effective(cr *credit, g, o, fit int, price float64) float64 {
	if !cr.on {
		return price
	}
	m := math.Inf(1)
	req := s.req[g]
	for k, a := range s.alloc[o] {
		if inv := cr.invNeed[k]; inv > 0 {
			m = min(m, float64(a-int64(fit)*req[k])*inv)
		}
	}
	if m <= 0 {
		return price
	}
	return price - s.creditShare(g)*min(m*cr.avgValue, cr.later)
}
