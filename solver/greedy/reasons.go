package greedy

import (
	"fmt"

	"github.com/packwright/packwright/model"
)

// failKind says why pods could not go somewhere, most specific last: the most specific failure seen while
// placing a group becomes its Unschedulable reason.
type failKind uint8

const (
	failNone failKind = iota
	failResource
	failNoOffering
	failPorts
	failCap
	failAffinity
	failAnti
	failSpread
	failGuard
	failOpenSpread
	failPool
	failUsedUp
)

// failure is one reason a node or offering was refused.
type failure struct {
	kind failKind
	idx  int   // resource dim (failResource), anti rule (failAnti), key (failNoOffering, -1: any), cap (failCap)
	dom  int32 // domain of idx (failNoOffering)
	rule *spreadRule
	pool int
	res  model.ResourceName
}

// worse returns the more specific of f and o, f on a tie.
func (f failure) worse(o failure) failure {
	if o.kind > f.kind {
		return o
	}
	return f
}

// note remembers f for group g if it is the most specific failure so far.
func (s *solver) note(g int, f failure) {
	s.fails[g] = s.fails[g].worse(f)
}

// resName names dim d.
func (s *solver) resName(d int) model.ResourceName {
	if d >= 0 && d < len(s.c.Res) {
		return s.c.Res[d]
	}
	return model.Pods
}

// domainName names domain d of key k, e.g. "topology.kubernetes.io/zone=us-east-1a".
func (s *solver) domainName(k int, d int32) string {
	if k < 0 || k == s.topo.host || d < 0 || int(d) >= len(s.topo.names[k]) {
		return "a node"
	}
	return s.topo.keys[k] + "=" + s.topo.names[k][d]
}

// describe turns a failure of group g into an Unschedulable reason.
func (s *solver) describe(g int, f failure) string {
	switch f.kind {
	case failResource:
		name := s.resName(f.idx)
		return fmt.Sprintf("insufficient %s: no compatible node has room for another pod (each requests %s) and no compatible offering can launch one that does",
			name, model.FormatQuantity(name, s.req[g][f.idx]))
	case failNoOffering:
		where := ""
		if f.idx >= 0 {
			where = " in " + s.domainName(f.idx, f.dom)
		}
		return fmt.Sprintf("no compatible offering%s can launch a node for it, and the compatible existing nodes are full", where)
	case failPorts:
		return fmt.Sprintf("host port %d: every node with room already uses it", s.rule[g].ports[0])
	case failCap:
		return fmt.Sprintf("at most %d of its pods per node: every node with room already holds that many", f.idx)
	case failAffinity:
		return s.rule[g].aff.desc + ": no node with room lies in a domain holding a matching pod"
	case failAnti:
		return s.rule[g].anti[f.idx].desc() + ": every domain with room already holds a conflicting pod"
	case failSpread:
		return f.rule.desc + ": no domain with room can take another pod without exceeding the skew"
	case failGuard:
		return fmt.Sprintf("%s of group %q counts these pods: another one in a domain with room would exceed its skew",
			f.rule.desc, s.p.Groups[f.rule.owner].Name)
	case failOpenSpread:
		return fmt.Sprintf("%s of group %q: a node in a new domain would drop its minimum to 0",
			f.rule.desc, s.p.Groups[f.rule.owner].Name)
	case failPool:
		return fmt.Sprintf("nodepool %s: %s limit reached", s.pools[f.pool].name, f.res)
	case failUsedUp:
		return fmt.Sprintf("offering %s: all %d nodes it may launch are in use", s.p.Offerings[f.idx].ID, s.p.Offerings[f.idx].MaxCount)
	}
	return "no node or offering can take another pod"
}

// noteSpread explains why group g's spread by rule r stopped short.
func (s *solver) noteSpread(g int, r *spreadRule, candidate []bool) {
	least := r.least()
	leastDom := int32(-1)
	for d, ok := range r.isDom {
		if ok && r.count[d] == least && (leastDom < 0 || !candidate[d]) {
			leastDom = int32(d)
		}
	}
	why := fmt.Sprintf("%s: the least loaded domain (%s, %d matching pods) can take no more, so no other domain may exceed %d",
		r.desc, s.domainName(r.key, leastDom), least, least+r.maxSkew)
	switch {
	case leastDom < 0:
		why = fmt.Sprintf("%s: no domain can take another pod without exceeding the skew", r.desc)
	case r.ndom < r.minDomains:
		why = fmt.Sprintf("%s: only %d domains, fewer than minDomains %d, so the minimum counts as 0 and no domain may exceed %d",
			r.desc, r.ndom, r.minDomains, r.maxSkew)
	case !candidate[leastDom]:
		why = fmt.Sprintf("%s: domain %s counts (%d matching pods) but no compatible node or offering there can take its pods, so no other domain may exceed %d",
			r.desc, s.domainName(r.key, leastDom), least, least+r.maxSkew)
	}
	if s.fails[g].kind > failResource {
		why += " (" + s.describe(g, s.fails[g]) + ")"
	}
	s.why[g] = why
}

// colocateReason explains a co-located group that did not fit on one node.
func (s *solver) colocateReason(g, n int) string {
	why := fmt.Sprintf("%s puts all %d pods on the first one's node, and the largest node that may hold them takes %d",
		s.rule[g].aff.desc, n, n-s.left[g])
	if s.fails[g].kind > failResource {
		why += " (" + s.describe(g, s.fails[g]) + ")"
	}
	return why
}

// reason is the final Unschedulable reason of group g.
func (s *solver) reason(g int) string {
	if s.why[g] != "" {
		return s.why[g]
	}
	return s.describe(g, s.fails[g])
}
