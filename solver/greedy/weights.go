package greedy

import "slices"

// NodePool weights (Karpenter's meaning): a pod goes to a pool of lower weight only when no pool of higher
// weight can take it. Only problems whose offerings differ in weight are "tiered"; on the others nothing here
// runs. Three places decide: chooseOffering tries the candidates by decreasing weight and stops at the first
// weight with one that takes pods; fill passes over an open node of lower weight while a higher-weight
// offering in the node's zone would take a pod; shrink and grow move a node only to an offering of its own
// weight, and not when the capacity it releases lets a higher-weight pool take a pod that sits lower. Together they
// keep the rule that Plan.Validate checks (a one-pod move test on the final plan).

// initWeights records the offerings' pool weights.
func (s *solver) initWeights() {
	s.weight, s.tiered = s.p.OfferingWeights()
}

// sortByWeight orders a group's candidates by decreasing weight, keeping their order within a weight.
func (s *solver) sortByWeight(cands []candidate) {
	if !s.tiered {
		return
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return int(s.weight[b.off]) - int(s.weight[a.off]) })
}

// higherTakes reports whether, right now, a new node of an offering of higher weight than bin b's, in b's
// zone, would take a pod of group g (limits and rules included). Plan.Validate looks for such an offering in
// the same domain of every topology key its rules use; asking only for the zone finds at least as many, so a
// pod this lets onto b passes that check.
func (s *solver) higherTakes(g int, b *bin) bool {
	if !s.tiered || b.off < 0 {
		return false
	}
	w, zone := s.weight[b.off], s.c.Offerings[b.off].Zone
	cands := s.candidatesFor(g)
	for i := range cands {
		o := cands[i].off
		if s.weight[o] <= w {
			break // sorted by decreasing weight
		}
		if s.c.Offerings[o].Zone != zone {
			continue
		}
		if k, _ := s.offerRules(g, o, 1); k > 0 {
			return true
		}
	}
	return false
}

// lowPlacement is a group on a new node below the highest weight, which shrink must not give a way up.
type lowPlacement struct {
	g int
	b *bin
}

// lowPlacements lists the groups on new nodes that a higher-weight pool cannot take now: the placements a
// swap that releases pool capacity could put in the wrong.
func (s *solver) lowPlacements() []lowPlacement {
	if !s.tiered {
		return nil
	}
	var out []lowPlacement
	for _, b := range s.bins[s.nExisting:] {
		for _, gc := range b.pods {
			if !s.higherTakes(gc.Group, b) {
				out = append(out, lowPlacement{gc.Group, b})
			}
		}
	}
	return out
}

// tierSwap moves bin b from its offering cur to o if the weights allow it: o has cur's weight, and
// when the move releases capacity of a limited pool, no placement of lower weight becomes one that a
// higher-weight pool could take. It reports whether it moved b (otherwise b is as it was).
func (s *solver) tierSwap(b *bin, o int, use []int64, low []lowPlacement) bool {
	if !s.tiered {
		return s.swap(b, o, use)
	}
	cur := b.off
	if s.weight[o] != s.weight[cur] {
		return false
	}
	if !s.swap(b, o, use) {
		return false
	}
	if s.offPool[cur] < 0 && s.p.Offerings[cur].MaxCount <= 0 {
		return true // nothing was released that a limit counts
	}
	for _, lp := range low {
		if s.weight[lp.b.off] < s.weight[cur] && s.higherTakes(lp.g, lp.b) {
			s.swap(b, cur, use)
			return false
		}
	}
	return true
}
