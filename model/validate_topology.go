package model

import (
	"fmt"
	"slices"
	"strings"
)

// checkTopology checks required pod anti-affinity, required pod affinity and DoNotSchedule topology spread
// with the semantics documented on Plan.Validate.
func (c *planCheck) checkTopology() {
	for g := range c.p.Groups {
		if len(c.groupNodes[g]) == 0 {
			continue
		}
		c.checkAntiAffinity(g)
		c.checkAffinity(g)
		c.checkSpread(g)
	}
	c.checkBoundAntiAffinity()
	c.checkSeeds()
}

// topology holds the domain indexes and the bound-pod classes, built on demand.
type topology struct {
	indexes map[string]*domainIndex

	classesBuilt bool
	classes      []podClass
	nodeClasses  [][]classCount // per node of the unified numbering
	classNodes   [][]nodeCount  // per class
	classScratch []int

	offeringsByZone map[string][]int
	zoneOK          map[groupZone]bool
	eligible        map[string][]bool
	seeds           []seed
	labelIndex      map[string][]int // "key\x00value" -> groups with that label
}

// podClass is a set of bound pods with one namespace and identical labels: every selector treats them alike.
type podClass struct {
	ns      string
	labels  map[string]string
	example PodRef
}

type classCount struct{ class, count int }

type groupZone struct {
	group int
	zone  string
}

// seed records a group whose first pod starts its own affinity domain.
type seed struct {
	group int
	node  int
	match []bool // per group: matches all of the seeded group's affinity terms
}

// domainIndex partitions the nodes by their value of one topology key.
type domainIndex struct {
	key       string
	values    []string
	ids       map[string]int32
	nodeDom   []int32        // per node; -1 when the node has no value for the key
	members   [][]int32      // per domain: its nodes
	groups    [][]GroupCount // per domain: placed pods per group, merged
	groupDoms [][]domCount   // per group: the domains holding its placed pods
	classes   [][]classCount // per domain: bound pods per class, filled by domainClasses
	classDone []bool
}

type domCount struct {
	dom   int32
	count int
}

// memo caches a predicate over small indices.
type memo struct {
	state []int8 // 0 unknown, 1 true, 2 false
	f     func(int) bool
}

func newMemo(n int, f func(int) bool) *memo { return &memo{state: make([]int8, n), f: f} }

func (m *memo) get(i int) bool {
	switch m.state[i] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := m.f(i)
	m.state[i] = 2
	if ok {
		m.state[i] = 1
	}
	return ok
}

// groupsMatching returns, per group, whether pred holds. pred must imply that s matches the group's labels:
// it is then evaluated only on the groups carrying every MatchLabels pair of s, found through an index of
// the groups' labels, which keeps selector matching linear in the answer rather than in the groups.
func (c *planCheck) groupsMatching(s *LabelSelector, pred func(h int) bool) []bool {
	out := make([]bool, len(c.p.Groups))
	if s == nil {
		return out // a nil selector matches nothing
	}
	var candidates []int
	all := true
	if len(s.MatchLabels) > 0 {
		if c.topo.labelIndex == nil {
			c.topo.labelIndex = make(map[string][]int)
			for h := range c.p.Groups {
				for k, v := range c.p.Groups[h].Labels {
					key := k + "\x00" + v
					c.topo.labelIndex[key] = append(c.topo.labelIndex[key], h)
				}
			}
		}
		all = false
		first := true
		for k, v := range s.MatchLabels {
			if list := c.topo.labelIndex[k+"\x00"+v]; first || len(list) < len(candidates) {
				candidates, first = list, false
			}
		}
	}
	if all {
		for h := range out {
			out[h] = pred(h)
		}
		return out
	}
	for _, h := range candidates {
		out[h] = pred(h)
	}
	return out
}

// topoValue is node n's domain value for key, if any.
func (c *planCheck) topoValue(n int, key string) (string, bool) {
	node := &c.nodes[n]
	if node.off < 0 && node.ex < 0 {
		return "", false // a new node with a bad offering index: not a node at all
	}
	if key == LabelHostname {
		return c.hostname(n), true
	}
	if v, ok := node.labels[key]; ok {
		return v, true
	}
	if key == LabelZone {
		zone := ""
		if node.off >= 0 {
			zone = c.p.Offerings[node.off].Zone
		} else {
			zone = c.p.Nodes[node.ex].Zone
		}
		if zone != "" {
			return zone, true
		}
	}
	return "", false
}

// index returns the domain index of key, building it on first use.
func (c *planCheck) index(key string) *domainIndex {
	if dix, ok := c.topo.indexes[key]; ok {
		return dix
	}
	if c.topo.indexes == nil {
		c.topo.indexes = make(map[string]*domainIndex)
	}
	N, G := len(c.nodes), len(c.p.Groups)
	dix := &domainIndex{key: key, ids: make(map[string]int32), nodeDom: make([]int32, N)}
	intern := func(v string) int32 {
		id, ok := dix.ids[v]
		if !ok {
			id = int32(len(dix.values))
			dix.ids[v] = id
			dix.values = append(dix.values, v)
		}
		return id
	}
	for n := range c.nodes {
		if key == LabelHostname && n < c.nNew && c.nodes[n].off >= 0 {
			// A new node is a domain of its own: no need to hash its synthetic name.
			dix.nodeDom[n] = int32(len(dix.values))
			dix.values = append(dix.values, hostnameLabel(n))
			continue
		}
		v, ok := c.topoValue(n, key)
		if !ok {
			dix.nodeDom[n] = -1
			continue
		}
		dix.nodeDom[n] = intern(v)
	}
	if key == LabelZone {
		for _, z := range c.p.Zones {
			intern(z)
		}
	}
	D := len(dix.values)

	// Members, by counting sort into one backing array.
	size := make([]int32, D)
	for _, d := range dix.nodeDom {
		if d >= 0 {
			size[d]++
		}
	}
	flat := make([]int32, 0, N)
	dix.members = make([][]int32, D)
	for d := range dix.members {
		dix.members[d] = flat[len(flat) : len(flat) : len(flat)+int(size[d])]
		flat = flat[:len(flat)+int(size[d])]
	}
	for n, d := range dix.nodeDom {
		if d >= 0 {
			dix.members[d] = append(dix.members[d], int32(n))
		}
	}

	// Placed pods per domain, merged across its nodes.
	dix.groups = make([][]GroupCount, D)
	scratch := make([]int64, G)
	var touched []int
	for d, ms := range dix.members {
		if len(ms) == 1 {
			dix.groups[d] = c.nodes[ms[0]].pods
			continue
		}
		touched = touched[:0]
		for _, n := range ms {
			for _, gc := range c.nodes[n].pods {
				if scratch[gc.Group] == 0 {
					touched = append(touched, gc.Group)
				}
				scratch[gc.Group] = satAdd(scratch[gc.Group], int64(gc.Count))
			}
		}
		if len(touched) == 0 {
			continue
		}
		out := make([]GroupCount, len(touched))
		for i, g := range touched {
			out[i] = GroupCount{Group: g, Count: int(scratch[g])}
			scratch[g] = 0
		}
		dix.groups[d] = out
	}

	perGroup := make([]int, G)
	total := 0
	for _, gcs := range dix.groups {
		for _, gc := range gcs {
			perGroup[gc.Group]++
			total++
		}
	}
	backing := make([]domCount, 0, total)
	dix.groupDoms = make([][]domCount, G)
	for g, k := range perGroup {
		dix.groupDoms[g] = backing[len(backing) : len(backing) : len(backing)+k]
		backing = backing[:len(backing)+k]
	}
	for d, gcs := range dix.groups {
		for _, gc := range gcs {
			dix.groupDoms[gc.Group] = append(dix.groupDoms[gc.Group], domCount{int32(d), gc.Count})
		}
	}
	c.topo.indexes[key] = dix
	return dix
}

// domainName names domain d of dix for messages: the node for hostname, else key=value.
func (c *planCheck) domainName(dix *domainIndex, d int32) string {
	if dix.key == LabelHostname && len(dix.members[d]) > 0 {
		return c.nodeName(int(dix.members[d][0]))
	}
	return dix.key + "=" + dix.values[d]
}

// hasBound reports whether any existing node has bound pods.
func (c *planCheck) hasBound() bool {
	c.buildClasses()
	return len(c.topo.classes) > 0
}

// buildClasses sorts the bound pods into classes of equal namespace and labels.
func (c *planCheck) buildClasses() {
	t := &c.topo
	if t.classesBuilt {
		return
	}
	t.classesBuilt = true
	t.nodeClasses = make([][]classCount, len(c.nodes))
	ids := make(map[string]int)
	for i := range c.p.Nodes {
		n := c.nNew + i
		var list []classCount
		for j := range c.p.Nodes[i].Pods {
			bp := &c.p.Nodes[i].Pods[j]
			key := LabelSetKey(bp.Ref.Namespace, bp.Labels)
			id, ok := ids[key]
			if !ok {
				id = len(t.classes)
				ids[key] = id
				t.classes = append(t.classes, podClass{ns: bp.Ref.Namespace, labels: bp.Labels, example: bp.Ref})
			}
			found := false
			for k := range list {
				if list[k].class == id {
					list[k].count++
					found = true
					break
				}
			}
			if !found {
				list = append(list, classCount{id, 1})
			}
		}
		t.nodeClasses[n] = list
	}
	t.classNodes = make([][]nodeCount, len(t.classes))
	for n, list := range t.nodeClasses {
		for _, cc := range list {
			t.classNodes[cc.class] = append(t.classNodes[cc.class], nodeCount{n, cc.count})
		}
	}
	t.classScratch = make([]int, len(t.classes))
}

// domainClasses returns the bound pods of domain d, per class.
func (c *planCheck) domainClasses(dix *domainIndex, d int32) []classCount {
	c.buildClasses()
	if dix.classes == nil {
		dix.classes = make([][]classCount, len(dix.values))
		dix.classDone = make([]bool, len(dix.values))
	}
	if dix.classDone[d] {
		return dix.classes[d]
	}
	dix.classDone[d] = true
	ms := dix.members[d]
	if len(ms) == 1 {
		dix.classes[d] = c.topo.nodeClasses[ms[0]]
		return dix.classes[d]
	}
	scratch := c.topo.classScratch
	var touched []int
	for _, n := range ms {
		for _, cc := range c.topo.nodeClasses[n] {
			if scratch[cc.class] == 0 {
				touched = append(touched, cc.class)
			}
			scratch[cc.class] += cc.count
		}
	}
	out := make([]classCount, len(touched))
	for i, k := range touched {
		out[i] = classCount{k, scratch[k]}
		scratch[k] = 0
	}
	dix.classes[d] = out
	return out
}

// checkAntiAffinity checks the required anti-affinity terms of group g against every pod sharing a domain.
func (c *planCheck) checkAntiAffinity(g int) {
	grp := &c.p.Groups[g]
	for ti := range grp.PodAntiAffinity {
		t := grp.PodAntiAffinity[ti]
		dix := c.index(t.TopologyKey)
		selects := c.groupsMatching(t.Selector, func(h int) bool {
			return t.MatchesPod(grp.Namespace, c.p.Groups[h].Namespace, c.p.Groups[h].Labels)
		})
		var selectsBound *memo
		for _, dc := range dix.groupDoms[g] {
			var with []string
			for _, gc := range dix.groups[dc.dom] {
				switch {
				case gc.Group == g:
					if gc.Count > 1 && selects[g] {
						with = append(with, "each other (the term selects its own pods)")
					}
				case selects[gc.Group]:
					with = append(with, fmt.Sprintf("group %s (%d pods)", c.groupName(gc.Group), gc.Count))
				}
			}
			if c.hasBound() {
				if selectsBound == nil {
					selectsBound = newMemo(len(c.topo.classes), func(k int) bool {
						cl := &c.topo.classes[k]
						return t.MatchesPod(grp.Namespace, cl.ns, cl.labels)
					})
				}
				nb, example := 0, ""
				for _, cc := range c.domainClasses(dix, dc.dom) {
					if selectsBound.get(cc.class) {
						if nb == 0 {
							example = c.topo.classes[cc.class].example.String()
						}
						nb += cc.count
					}
				}
				if nb > 0 {
					with = append(with, fmt.Sprintf("%d bound pods (%s...)", nb, example))
				}
			}
			if len(with) > 0 {
				c.fail("group %s: required anti-affinity %s violated in %s: %d of its pods share it with %s",
					c.groupName(g), t, c.domainName(dix, dc.dom), dc.count, strings.Join(with, ", "))
			}
		}
	}
}

// checkBoundAntiAffinity checks the bound pods' required anti-affinity terms against the placed pods.
func (c *planCheck) checkBoundAntiAffinity() {
	for i := range c.p.Nodes {
		n := c.nNew + i
		for j := range c.p.Nodes[i].Pods {
			bp := &c.p.Nodes[i].Pods[j]
			for _, t := range bp.PodAntiAffinity {
				dix := c.index(t.TopologyKey)
				d := dix.nodeDom[n]
				if d < 0 {
					continue
				}
				for _, gc := range dix.groups[d] {
					h := &c.p.Groups[gc.Group]
					if t.MatchesPod(bp.Ref.Namespace, h.Namespace, h.Labels) {
						c.fail("group %s: %d pods in %s violate required anti-affinity %s of bound pod %s on %s",
							c.groupName(gc.Group), gc.Count, c.domainName(dix, d), t, bp.Ref, c.nodeName(n))
					}
				}
			}
		}
	}
}

// checkAffinity checks the required pod affinity of group g (see checkTopology).
func (c *planCheck) checkAffinity(g int) {
	grp := &c.p.Groups[g]
	terms := grp.PodAffinity
	if len(terms) == 0 {
		return
	}
	matchesAll := func(ns string, labels map[string]string) bool {
		for _, t := range terms {
			if !t.MatchesPod(grp.Namespace, ns, labels) {
				return false
			}
		}
		return true
	}
	anchorGroup := c.groupsMatching(terms[0].Selector, func(h int) bool {
		return matchesAll(c.p.Groups[h].Namespace, c.p.Groups[h].Labels)
	})
	var anchorClass *memo
	if c.hasBound() {
		anchorClass = newMemo(len(c.topo.classes), func(k int) bool {
			return matchesAll(c.topo.classes[k].ns, c.topo.classes[k].labels)
		})
	}

	type lonely struct {
		term int
		dom  int32
	}
	var unanchored []lonely
	boundAnywhere := false
	for ti, t := range terms {
		dix := c.index(t.TopologyKey)
		for _, nc := range c.groupNodes[g] {
			if dix.nodeDom[nc.node] < 0 {
				c.fail("group %s: %d pods on %s, which has no %s label that required pod affinity %s needs",
					c.groupName(g), nc.count, c.nodeName(nc.node), t.TopologyKey, t)
			}
		}
		if anchorClass != nil && !boundAnywhere {
			for d := range dix.values {
				for _, cc := range c.domainClasses(dix, int32(d)) {
					if anchorClass.get(cc.class) {
						boundAnywhere = true
						break
					}
				}
				if boundAnywhere {
					break
				}
			}
		}
		for _, dc := range dix.groupDoms[g] {
			anchored := false
			for _, gc := range dix.groups[dc.dom] {
				if gc.Group != g && anchorGroup[gc.Group] {
					anchored = true
					break
				}
			}
			if !anchored && anchorClass != nil {
				for _, cc := range c.domainClasses(dix, dc.dom) {
					if anchorClass.get(cc.class) {
						anchored = true
						break
					}
				}
			}
			if !anchored {
				unanchored = append(unanchored, lonely{ti, dc.dom})
			}
		}
	}
	if len(unanchored) == 0 {
		return
	}
	self := anchorGroup[g]
	describe := func() string {
		parts := make([]string, len(unanchored))
		for i, u := range unanchored {
			parts[i] = fmt.Sprintf("%s for %s", c.domainName(c.index(terms[u.term].TopologyKey), u.dom), terms[u.term])
		}
		return strings.Join(parts, "; ")
	}
	switch {
	case !self:
		c.fail("group %s: required pod affinity unmet: no other pod matching all its affinity terms in %s",
			c.groupName(g), describe())
		return
	case boundAnywhere:
		c.fail("group %s: required pod affinity unmet: no pod matching all its affinity terms in %s; the group matches its own terms, but bound pods matching them exist, so its first pod may not start a new domain",
			c.groupName(g), describe())
		return
	}
	// One seed node must lie in every unanchored domain.
	for _, nc := range c.groupNodes[g] {
		ok := true
		for _, u := range unanchored {
			if c.index(terms[u.term].TopologyKey).nodeDom[nc.node] != u.dom {
				ok = false
				break
			}
		}
		if ok {
			c.topo.seeds = append(c.topo.seeds, seed{group: g, node: nc.node, match: anchorGroup})
			return
		}
	}
	c.fail("group %s: required pod affinity unmet: only the group's first pod may start a domain of its own, but its pods start several: %s",
		c.groupName(g), describe())
}

// checkSeeds rejects two seeded groups that each match the other's affinity terms: whichever binds second
// finds a matching pod and may no longer start a domain of its own.
func (c *planCheck) checkSeeds() {
	s := c.topo.seeds
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[i].match[s[j].group] && s[j].match[s[i].group] {
				c.fail("groups %s and %s: required pod affinity unmet: both start their own domain (%s, %s), but each matches the other's terms, so they cannot both bind first",
					c.groupName(s[i].group), c.groupName(s[j].group), c.nodeName(s[i].node), c.nodeName(s[j].node))
			}
		}
	}
}

// checkSpread checks the DoNotSchedule topology spread constraints of group g (see checkTopology).
func (c *planCheck) checkSpread(g int) {
	grp := &c.p.Groups[g]
	var keys []string
	for _, sc := range grp.TopologySpread {
		if sc.WhenUnsatisfiable == DoNotSchedule && !slices.Contains(keys, sc.TopologyKey) {
			keys = append(keys, sc.TopologyKey)
		}
	}
	if len(keys) == 0 {
		return
	}
	for _, k := range keys {
		dix := c.index(k)
		for _, nc := range c.groupNodes[g] {
			if dix.nodeDom[nc.node] < 0 {
				c.fail("group %s: %d pods on %s, which has no %s label that its topology spread needs",
					c.groupName(g), nc.count, c.nodeName(nc.node), k)
			}
		}
	}
	eligible := c.spreadEligible(g, keys)
	for _, sc := range grp.TopologySpread {
		if sc.WhenUnsatisfiable != DoNotSchedule {
			continue
		}
		dix := c.index(sc.TopologyKey)
		D := len(dix.values)
		count := make([]int64, D)
		isDomain := make([]bool, D)

		matching := c.groupsMatching(sc.Selector, func(h int) bool {
			hg := &c.p.Groups[h]
			return len(c.groupNodes[h]) > 0 && hg.Namespace == grp.Namespace && sc.Selector.Matches(hg.Labels)
		})
		for h, ok := range matching {
			if !ok {
				continue
			}
			for _, nc := range c.groupNodes[h] {
				if d := dix.nodeDom[nc.node]; d >= 0 && eligible[nc.node] {
					count[d] = satAdd(count[d], int64(nc.count))
				}
			}
		}
		if c.hasBound() {
			for k, cl := range c.topo.classes {
				if cl.ns != grp.Namespace || !sc.Selector.Matches(cl.labels) {
					continue
				}
				for _, nc := range c.topo.classNodes[k] {
					if d := dix.nodeDom[nc.node]; d >= 0 && eligible[nc.node] {
						count[d] += int64(nc.count)
					}
				}
			}
		}
		domains := 0
		for n, ok := range eligible {
			if d := dix.nodeDom[n]; ok && d >= 0 && !isDomain[d] {
				isDomain[d] = true
				domains++
			}
		}
		if sc.TopologyKey == LabelZone {
			for _, z := range c.p.Zones {
				if d := dix.ids[z]; !isDomain[d] && c.zoneTakesGroup(g, z) {
					isDomain[d] = true
					domains++
				}
			}
		}
		least, leastDom := int64(0), int32(-1)
		if domains >= int(sc.MinDomains) {
			for d, ok := range isDomain {
				if ok && (leastDom < 0 || count[d] < least) {
					least, leastDom = count[d], int32(d)
				}
			}
		}
		for _, dc := range dix.groupDoms[g] {
			if skew := count[dc.dom] - least; skew > int64(sc.MaxSkew) {
				var why string
				if leastDom >= 0 {
					why = fmt.Sprintf("minimum %d in %s", least, c.domainName(dix, leastDom))
				} else {
					why = fmt.Sprintf("only %d domains, fewer than minDomains %d, so the minimum counts as 0", domains, sc.MinDomains)
				}
				c.fail("group %s: topology spread on %s (maxSkew %d) violated: %s has %d matching pods, %s: skew %d",
					c.groupName(g), sc.TopologyKey, sc.MaxSkew, c.domainName(dix, dc.dom), count[dc.dom], why, skew)
			}
		}
	}
}

// spreadEligible marks the nodes whose pods g's spread constraints count: they satisfy g's nodeSelector
// and required node affinity and carry every key in keys. Groups without node selection share the result.
func (c *planCheck) spreadEligible(g int, keys []string) []bool {
	grp := &c.p.Groups[g]
	trivial := len(grp.NodeSelector) == 0 && len(grp.NodeAffinity) == 0
	cacheKey := ""
	if trivial {
		sorted := slices.Clone(keys)
		slices.Sort(sorted)
		cacheKey = strings.Join(sorted, "\x00")
		if e, ok := c.topo.eligible[cacheKey]; ok {
			return e
		}
	}
	dixs := make([]*domainIndex, len(keys))
	for i, k := range keys {
		dixs[i] = c.index(k)
	}
	perOffering := make(map[int]bool)
	hostDependent := grp.MentionsHostname()
	eligible := make([]bool, len(c.nodes))
	for n := range c.nodes {
		ok := true
		for _, dix := range dixs {
			if dix.nodeDom[n] < 0 {
				ok = false
				break
			}
		}
		if !ok || trivial {
			eligible[n] = ok
			continue
		}
		node := &c.nodes[n]
		switch {
		case hostDependent:
			ok = grp.MatchesNodeLabels(c.nodeLabels(n))
		case node.off >= 0:
			r, seen := perOffering[node.off]
			if !seen {
				r = grp.MatchesNodeLabels(node.labels)
				perOffering[node.off] = r
			}
			ok = r
		default:
			ok = grp.MatchesNodeLabels(node.labels)
		}
		eligible[n] = ok
	}
	if trivial {
		if c.topo.eligible == nil {
			c.topo.eligible = make(map[string][]bool)
		}
		c.topo.eligible[cacheKey] = eligible
	}
	return eligible
}

// zoneTakesGroup reports whether some offering in zone z could take a pod of group g: compatible
// (tolerations included) and with room for one pod.
func (c *planCheck) zoneTakesGroup(g int, z string) bool {
	key := groupZone{g, z}
	if ok, seen := c.topo.zoneOK[key]; seen {
		return ok
	}
	if c.topo.offeringsByZone == nil {
		c.topo.offeringsByZone = make(map[string][]int)
		for i := range c.p.Offerings {
			o := &c.p.Offerings[i]
			zone, ok := o.Labels[LabelZone]
			if !ok {
				zone = o.Zone
			}
			c.topo.offeringsByZone[zone] = append(c.topo.offeringsByZone[zone], i)
		}
		c.topo.zoneOK = make(map[groupZone]bool)
	}
	grp := &c.p.Groups[g]
	one := grp.Requests.Clone()
	if one == nil {
		one = Resources{}
	}
	one[Pods] = max(one[Pods], 1)
	found := false
	for _, i := range c.topo.offeringsByZone[z] {
		o := &c.p.Offerings[i]
		labels := o.Labels
		if grp.MentionsHostname() {
			labels = WithLabel(o.Labels, LabelHostname, "\x00potential-node")
		}
		if one.Fits(o.Allocatable) && grp.Compatible(labels, o.Taints) {
			found = true
			break
		}
	}
	c.topo.zoneOK[key] = found
	return found
}
