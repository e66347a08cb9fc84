package prep

import "github.com/packwright/packwright/model"

// Selector matching over all groups is quadratic in the groups (a spread workload of 20,000 pods has 2,000
// groups, each with a selector): the label index narrows each selector to the groups carrying one of its
// MatchLabels pairs, the least common one. It is built once at Compile, so a compiled problem shared by the
// greedy and the MIP is never written.

// buildLabelIndex indexes the groups by label pair.
func (c *Problem) buildLabelIndex() {
	c.labelIndex = make(map[string][]int)
	c.allGroups = make([]int, len(c.Src.Groups))
	for g := range c.Src.Groups {
		c.allGroups[g] = g
		for k, v := range c.Src.Groups[g].Labels {
			c.labelIndex[k+"\x00"+v] = append(c.labelIndex[k+"\x00"+v], g)
		}
	}
}

// Candidates returns, in increasing order, the groups that selector s may match: a superset that the caller
// still checks with s.Matches (or PodAffinityTerm.MatchesPod). A nil selector matches nothing; one without
// MatchLabels may match every group. The slice is shared: do not modify it.
func (c *Problem) Candidates(s *model.LabelSelector) []int {
	if s == nil {
		return nil
	}
	if len(s.MatchLabels) == 0 {
		return c.allGroups
	}
	var best []int
	first := true
	for k, v := range s.MatchLabels {
		if list := c.labelIndex[k+"\x00"+v]; first || len(list) < len(best) {
			best, first = list, false
		}
	}
	return best
}
