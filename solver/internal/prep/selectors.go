package prep

import "github.com/packwright/packwright/model"

// Selector matching over all groups is quadratic in the groups (a spread workload of 20,000 pods has 2,000
// groups, each with a selector): the label index narrows each selector to the groups carrying one of its
// MatchLabels pairs, the least common one. It is built once at Compile, so a compiled problem shared by the
// greedy and the MIP is never written. The bound pods' kinds have an index of their own: the greedy's
// completion (greedy.Complete, behind the local search) compiles a problem whose placed pods are bound pods, one
// kind per group, and testing every group against every kind took 7 s on 50,000 spread pods.

// LabelIndex narrows a label selector to the items (groups, kinds of bound pod) carrying the least common of its
// MatchLabels pairs. It is read-only once built.
type LabelIndex struct {
	byPair map[string][]int // "key\x00value" to the items with that label, in increasing order
	all    []int
}

// NewLabelIndex indexes items 0..n-1 by the label pairs labels(i) returns.
func NewLabelIndex(n int, labels func(i int) map[string]string) *LabelIndex {
	x := &LabelIndex{byPair: make(map[string][]int), all: make([]int, n)}
	for i := range n {
		x.all[i] = i
		for k, v := range labels(i) {
			x.byPair[k+"\x00"+v] = append(x.byPair[k+"\x00"+v], i)
		}
	}
	return x
}

// Candidates returns, in increasing order, the items that selector s may match: a superset that the caller
// still checks with s.Matches (or PodAffinityTerm.MatchesPod). A nil selector matches nothing; one without
// MatchLabels may match every item. The slice is shared: do not modify it.
func (x *LabelIndex) Candidates(s *model.LabelSelector) []int {
	if s == nil {
		return nil
	}
	if len(s.MatchLabels) == 0 {
		return x.all
	}
	var best []int
	first := true
	for k, v := range s.MatchLabels {
		if list := x.byPair[k+"\x00"+v]; first || len(list) < len(best) {
			best, first = list, false
		}
	}
	return best
}

// Candidates returns, in increasing order, the groups that selector s may match (LabelIndex.Candidates).
func (c *Problem) Candidates(s *model.LabelSelector) []int { return c.groupIndex.Candidates(s) }

// buildKindIndex indexes the bound pods' kinds by label pair and lists, for each group, the kinds whose hostname
// anti-affinity may select it (through the groups' label index).
func (c *Problem) buildKindIndex() {
	c.kindIndex = NewLabelIndex(len(c.kinds), func(k int) map[string]string { return c.kinds[k].Labels })
	c.repelledBy = make([][]int, len(c.Src.Groups))
	c.kindMark = make([]int, len(c.kinds))
	for k, bp := range c.kinds {
		for _, t := range bp.PodAntiAffinity {
			if t.TopologyKey != model.LabelHostname {
				continue
			}
			for _, g := range c.Candidates(t.Selector) {
				if r := c.repelledBy[g]; len(r) == 0 || r[len(r)-1] != k {
					c.repelledBy[g] = append(r, k)
				}
			}
		}
	}
}

// hostnameKinds calls visit once for each kind that may share a hostname anti-affinity rule with group gi, in
// either direction: a superset of the kinds that repels reports, which visit still checks.
func (c *Problem) hostnameKinds(gi int, visit func(k int)) {
	g := &c.Src.Groups[gi]
	mark := gi + 1
	once := func(k int) {
		if c.kindMark[k] != mark {
			c.kindMark[k] = mark
			visit(k)
		}
	}
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == model.LabelHostname {
			for _, k := range c.kindIndex.Candidates(t.Selector) {
				once(k)
			}
		}
	}
	for _, k := range c.repelledBy[gi] {
		once(k)
	}
}

// zoneKinds calls visit once for each kind that group gi's zone spread or zone anti-affinity may count: a
// superset of the kinds that countsForZone reports, which visit still checks.
func (c *Problem) zoneKinds(gi int, visit func(k int)) {
	g := &c.Src.Groups[gi]
	mark := -(gi + 1) // not hostnameKinds' marks
	once := func(k int) {
		if c.kindMark[k] != mark {
			c.kindMark[k] = mark
			visit(k)
		}
	}
	for _, s := range g.TopologySpread {
		if s.WhenUnsatisfiable == model.DoNotSchedule && s.TopologyKey == model.LabelZone {
			for _, k := range c.kindIndex.Candidates(s.Selector) {
				once(k)
			}
		}
	}
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == model.LabelZone {
			for _, k := range c.kindIndex.Candidates(t.Selector) {
				once(k)
			}
		}
	}
}
