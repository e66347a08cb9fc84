package greedy

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// shrink moves every new node to the cheapest offering that still holds its pods and changes nothing any
// rule looks at: every group on it may use the offering, it lies in the same domain of every topology key,
// it counts for exactly the same spread constraints, and its NodePool's limits allow it. Nodes that first
// fit filled only partly (the last of a group, or one sized for pods that went elsewhere) get smaller.
func (s *solver) shrink() {
	byPrice := make([]int, len(s.p.Offerings))
	for o := range byPrice {
		byPrice[o] = o
	}
	slices.SortStableFunc(byPrice, func(a, b int) int {
		return cmp.Compare(s.p.Offerings[a].Price, s.p.Offerings[b].Price)
	})
	use := make([]int64, s.dims)
	low := s.lowPlacements()
	cache := map[string]int{}
	var sb strings.Builder
	for _, b := range s.bins[s.nExisting:] {
		if len(b.pods) == 0 {
			continue
		}
		cur := b.off
		for k := range use {
			use[k] = s.alloc[cur][k] - b.free[k]
		}
		sb.Reset()
		sb.WriteString(strconv.Itoa(cur))
		for _, gc := range b.pods {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(gc.Group))
			sb.WriteByte(':')
			sb.WriteString(strconv.Itoa(gc.Count))
		}
		key := sb.String()
		if o, ok := cache[key]; ok && (o < 0 || s.tierSwap(b, o, use, low)) {
			continue
		}
		found := -1
		for _, o := range byPrice {
			if s.p.Offerings[o].Price >= s.p.Offerings[cur].Price {
				break
			}
			if s.canHold(b, cur, o, use, s.spreadOwners) && s.tierSwap(b, o, use, low) {
				found = o
				break
			}
		}
		cache[key] = found
	}
}

// canHold reports whether offering o may replace cur under bin b's pods (use) without changing any rule.
func (s *solver) canHold(b *bin, cur, o int, use []int64, owners []int) bool {
	for k, u := range use {
		if u > 0 && u > s.alloc[o][k] {
			return false
		}
	}
	for k, d := range s.topo.offDom[o] {
		if k != s.topo.host && d != s.topo.offDom[cur][k] {
			return false
		}
	}
	for _, gc := range b.pods {
		if !s.usableOffering(gc.Group, o) {
			return false
		}
	}
	for _, h := range owners {
		if s.eligibleOffering(h, o) != s.eligibleOffering(h, cur) {
			return false
		}
	}
	return true
}

// swap moves bin b to offering o if o's pool limits allow it, and reports whether it did.
func (s *solver) swap(b *bin, o int, use []int64) bool {
	cur := b.off
	if o == cur {
		return true
	}
	s.charge(cur, -1)
	if ok, _ := s.poolFits(o); !ok {
		s.charge(cur, 1)
		return false
	}
	s.charge(o, 1)
	b.off = o
	for k := range b.free {
		b.free[k] = s.alloc[o][k] - use[k]
	}
	s.skip = s.skip[:0] // the bin may have room again
	return true
}
