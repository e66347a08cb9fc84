package greedy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// topology indexes the nodes by the value of every topology key that some rule uses, so that the rules of
// Plan.Validate (see model/validate_topology.go) can be checked incrementally while placing. The greedy
// checks every rule itself rather than trusting prep's encoding of it: prep relaxes cross-group rules, and
// a greedy plan must validate.
type topology struct {
	keys   []string
	keyIdx map[string]int
	host   int // index of kubernetes.io/hostname in keys, -1 when no rule uses it
	zone   int // index of the zone key, -1 when no rule uses it

	domIDs []map[string]int32 // per key (nil for hostname): value -> domain
	names  [][]string         // per key: domain -> value
	ndom   []int
	// nodeDom and offDom give the domain of each existing node and offering per key, -1 when the node lacks
	// the label. An existing node's hostname domain is its bin id; an offering's is set when a node opens.
	nodeDom [][]int32
	offDom  [][]int32

	// cnt[key][domain][group] counts placed pods, for the keys that anti-affinity and affinity rules use
	// (not hostname: a bin's own pod list serves there). A domain's slice is allocated on first use.
	cnt     [][][]int32
	needCnt []bool

	spreads []*spreadRule
	// openGuards lists the spread rules for which opening a node could add a domain (a zone not counted yet),
	// which lowers the minimum: opening such a node is checked against them.
	openGuards []*spreadRule

	classes []boundClass
	// classIndex indexes the classes by label: the greedy's completion (Complete) sees the placed pods as bound
	// pods, one class per group, and testing every rule against every class was quadratic (seconds on 50,000
	// spread pods).
	classIndex *prep.LabelIndex
}

// boundClass is a set of bound pods with one namespace and identical labels, which every selector treats
// alike; indexing them once keeps the rule set-up linear in the number of distinct pod shapes.
type boundClass struct {
	ns     string
	labels map[string]string
	nodes  []nodeCount
}

type nodeCount struct{ node, count int }

// groupRules is everything that constrains where one group's pods may go beyond capacity and compatibility.
type groupRules struct {
	hostMentions bool
	// ports are the group's host ports (0 dropped); portWith the groups sharing one of them.
	ports    []int32
	portWith []int
	anti     []*antiRule
	aff      *affRule
	own      []*spreadRule // the group's DoNotSchedule spread constraints
	guards   []*spreadRule // other groups' constraints whose selector counts this group's pods
	dnsKeys  []int         // keys of own; a node lacking one is not eligible for the group's spread
	eligNode []bool        // per existing node: counted by the group's spread constraints
	eligOff  []int8        // per offering, memoised: 0 unknown, 1 eligible, 2 not
	any      bool          // some rule above applies
}

// antiRule is required pod anti-affinity on one key, in both directions: groups in with (whose pods this
// group's terms select, or whose terms select this group) may not share a domain with it; self means its
// own pods may not share one either; bound marks domains (existing nodes, for hostname) holding bound pods
// that conflict either way.
type antiRule struct {
	key     int
	self    bool
	with    []int
	withSet []bool
	bound   []bool
	// terms are the group's own terms and repelling those of other groups and bound pods that select it: a
	// reason names them (desc), and only then are they spelt out, since a cluster has many such pods and most
	// plans place every pod (spelling each was a tenth of a completion on spread/kwok/1000).
	terms     []*model.PodAffinityTerm
	repelling []foreignTerm
	more      int // terms beyond maxRepelling
}

// foreignTerm is the anti-affinity term of another group (group is its name) or of a bound pod.
type foreignTerm struct {
	term  *model.PodAffinityTerm
	group string
	pod   model.PodRef
}

// maxRepelling is how many other groups' and bound pods' terms a reason names; it counts the others.
const maxRepelling = 3

// repelledBy notes another group's or a bound pod's term that selects the rule's group.
func (a *antiRule) repelledBy(t foreignTerm) {
	if len(a.repelling) < maxRepelling {
		a.repelling = append(a.repelling, t)
	} else {
		a.more++
	}
}

// desc names the rule's terms, e.g. "required pod anti-affinity {app=web} on kubernetes.io/hostname".
func (a *antiRule) desc() string {
	var parts []string
	add := func(what string) {
		if !slices.Contains(parts, what) {
			parts = append(parts, what)
		}
	}
	for _, t := range a.terms {
		add("required pod anti-affinity " + t.String())
	}
	for _, f := range a.repelling {
		if f.group != "" {
			add(fmt.Sprintf("required pod anti-affinity %s of group %q", f.term.String(), f.group))
		} else {
			add(fmt.Sprintf("required pod anti-affinity %s of bound pod %s", f.term.String(), f.pod))
		}
	}
	out := strings.Join(parts, "; ")
	if a.more > 0 {
		out += fmt.Sprintf(" (and %d more terms of other pods)", a.more)
	}
	return out
}

// affRule is the group's required pod affinity (all its terms): a node is allowed when, for every key, its
// domain holds a bound pod or a pod of another placed group matching all the terms (an anchor), or when the
// group may seed (it matches its own terms and nothing else does) and the node shares the seed's domains.
type affRule struct {
	keys          []int
	anchors       []int
	anchorSet     []bool
	bound         [][]bool // per keys entry: domains (existing nodes, for hostname) with a matching bound pod
	boundAnywhere bool
	self          bool
	seed          int // bin id of the first pod's node while seeding, -1 before
	desc          string
}

// spreadRule is one DoNotSchedule topology spread constraint of group owner. For keys other than hostname
// it keeps C[d] (matching pods on eligible nodes per domain), the domain set and the receiving domains. For
// hostname the minimum is taken as 0, which is safe: it assumes the least the minimum can be.
type spreadRule struct {
	owner      int
	key        int
	maxSkew    int64
	minDomains int
	sel        []bool // per group: counted by the selector (same namespace, labels match)
	desc       string

	count  []int64
	isDom  []bool
	recv   []bool
	ndom   int
	minOK  bool
	minVal int64

	boundNode []int64 // hostname: matching bound pods per existing node
}

// least is the minimum of C over the domains, 0 when there are fewer domains than minDomains.
func (r *spreadRule) least() int64 {
	if r.ndom < r.minDomains {
		return 0
	}
	if r.minOK {
		return r.minVal
	}
	first := true
	for d, ok := range r.isDom {
		if ok && (first || r.count[d] < r.minVal) {
			r.minVal, first = r.count[d], false
		}
	}
	if first {
		r.minVal = 0
	}
	r.minOK = true
	return r.minVal
}

// maxRecv is the largest C over the domains receiving the owner's pods.
func (r *spreadRule) maxRecv() int64 {
	var m int64
	for d, ok := range r.recv {
		if ok && r.count[d] > m {
			m = r.count[d]
		}
	}
	return m
}

// binCount is C for the hostname domain of bin b.
func (r *spreadRule) binCount(b *bin) int64 {
	var c int64
	if b.node >= 0 {
		c = r.boundNode[b.node]
	}
	for _, gc := range b.pods {
		if r.sel[gc.Group] {
			c += int64(gc.Count)
		}
	}
	return c
}

func (s *solver) initTopology() {
	t := &s.topo
	p := s.p
	G := len(p.Groups)
	t.keyIdx = map[string]int{}
	t.host, t.zone = -1, -1
	key := func(k string) int {
		if i, ok := t.keyIdx[k]; ok {
			return i
		}
		i := len(t.keys)
		t.keyIdx[k] = i
		t.keys = append(t.keys, k)
		switch k {
		case model.LabelHostname:
			t.host = i
		case model.LabelZone:
			t.zone = i
		}
		return i
	}
	for g := range p.Groups {
		pg := &p.Groups[g]
		for _, x := range pg.PodAntiAffinity {
			key(x.TopologyKey)
		}
		for _, x := range pg.PodAffinity {
			key(x.TopologyKey)
		}
		for _, x := range pg.TopologySpread {
			if x.WhenUnsatisfiable == model.DoNotSchedule {
				key(x.TopologyKey)
			}
		}
	}
	for i := range p.Nodes {
		for _, bp := range p.Nodes[i].Pods {
			for _, x := range bp.PodAntiAffinity {
				key(x.TopologyKey)
			}
		}
	}
	K := len(t.keys)
	t.domIDs = make([]map[string]int32, K)
	t.ndom = make([]int, K)
	t.names = make([][]string, K)
	intern := func(k int, v string) int32 {
		m := t.domIDs[k]
		if id, ok := m[v]; ok {
			return id
		}
		id := int32(t.ndom[k])
		m[v] = id
		t.names[k] = append(t.names[k], v)
		t.ndom[k]++
		return id
	}
	for k := range t.keys {
		if k != t.host {
			t.domIDs[k] = map[string]int32{}
		}
	}
	if t.zone >= 0 {
		for _, z := range p.Zones {
			intern(t.zone, z)
		}
	}
	t.nodeDom = make([][]int32, len(p.Nodes))
	for i := range p.Nodes {
		n := &p.Nodes[i]
		dom := make([]int32, K)
		for k, name := range t.keys {
			switch v, ok := topoValue(n.Labels, n.Zone, name); {
			case k == t.host:
				dom[k] = int32(i)
			case ok:
				dom[k] = intern(k, v)
			default:
				dom[k] = -1
			}
		}
		t.nodeDom[i] = dom
	}
	t.offDom = make([][]int32, len(p.Offerings))
	for o := range p.Offerings {
		off := &p.Offerings[o]
		dom := make([]int32, K)
		for k, name := range t.keys {
			switch v, ok := topoValue(off.Labels, off.Zone, name); {
			case k == t.host:
				dom[k] = -1 // set per node when it opens
			case ok:
				dom[k] = intern(k, v)
			default:
				dom[k] = -1
			}
		}
		t.offDom[o] = dom
	}
	t.cnt = make([][][]int32, K)
	t.needCnt = make([]bool, K)
	s.buildClasses()

	s.rule = make([]groupRules, G)
	for g := range p.Groups {
		s.rule[g].hostMentions = p.Groups[g].MentionsHostname()
	}
	s.buildPorts()
	s.buildAnti()
	s.buildAffinity()
	s.buildSpreads()
	for k := range t.keys {
		if t.needCnt[k] {
			t.cnt[k] = make([][]int32, t.ndom[k])
		}
	}
	for g := range s.rule {
		r := &s.rule[g]
		r.any = len(r.anti) > 0 || r.aff != nil || len(r.own) > 0 || len(r.guards) > 0
	}
}

// topoValue is a node's domain value for key, as Plan.Validate sees it: the label, or for the zone key the
// zone field when the label is missing. (The hostname key is handled by the caller.)
func topoValue(labels map[string]string, zone, key string) (string, bool) {
	if v, ok := labels[key]; ok {
		return v, true
	}
	if key == model.LabelZone && zone != "" {
		return zone, true
	}
	return "", false
}

// domOfNode is existing node n's domain for key k.
func (s *solver) domOfNode(n, k int) int32 { return s.topo.nodeDom[n][k] }

func (s *solver) buildClasses() {
	t := &s.topo
	ids := map[string]int{}
	// Pods that share a label map (those model.NewResidual binds share their group's) are of one class: the
	// map's identity finds it without spelling the key (a tenth of a completion on spread/kwok/1000).
	type identity struct {
		ns     string
		labels unsafe.Pointer
	}
	same := map[identity]int{}
	for i := range s.p.Nodes {
		for j := range s.p.Nodes[i].Pods {
			bp := &s.p.Nodes[i].Pods[j]
			ik := identity{bp.Ref.Namespace, reflect.ValueOf(bp.Labels).UnsafePointer()}
			id, ok := same[ik]
			if !ok {
				key := model.LabelSetKey(bp.Ref.Namespace, bp.Labels)
				if id, ok = ids[key]; !ok {
					id = len(t.classes)
					ids[key] = id
					t.classes = append(t.classes, boundClass{ns: bp.Ref.Namespace, labels: bp.Labels})
				}
				same[ik] = id
			}
			cl := &t.classes[id]
			if n := len(cl.nodes); n > 0 && cl.nodes[n-1].node == i {
				cl.nodes[n-1].count++
			} else {
				cl.nodes = append(cl.nodes, nodeCount{i, 1})
			}
		}
	}
	t.classIndex = prep.NewLabelIndex(len(t.classes), func(id int) map[string]string { return t.classes[id].labels })
}

// buildPorts records host ports. Two pods of one group never share a node when it has a port; groups
// sharing a port never share one either. Bound pods' ports are in prep's NodeOK.
func (s *solver) buildPorts() {
	byPort := map[int32][]int{}
	for g := range s.p.Groups {
		var ports []int32
		for _, hp := range s.p.Groups[g].HostPorts {
			if hp != 0 && !slices.Contains(ports, hp) {
				ports = append(ports, hp)
				byPort[hp] = append(byPort[hp], g)
			}
		}
		s.rule[g].ports = ports
	}
	for _, gs := range byPort {
		for _, a := range gs {
			for _, b := range gs {
				if a != b && !slices.Contains(s.rule[a].portWith, b) {
					s.rule[a].portWith = append(s.rule[a].portWith, b)
				}
			}
		}
	}
}

// antiFor returns group g's anti-affinity rule on key k, creating it.
func (s *solver) antiFor(g, k int) *antiRule {
	for _, a := range s.rule[g].anti {
		if a.key == k {
			return a
		}
	}
	size := s.topo.ndom[k]
	if k == s.topo.host {
		size = len(s.p.Nodes)
	}
	a := &antiRule{key: k, withSet: make([]bool, len(s.p.Groups)), bound: make([]bool, size)}
	s.rule[g].anti = append(s.rule[g].anti, a)
	if k != s.topo.host {
		s.topo.needCnt[k] = true
	}
	return a
}

func (a *antiRule) addWith(h int) {
	if !a.withSet[h] {
		a.withSet[h] = true
		a.with = append(a.with, h)
	}
}

func (s *solver) buildAnti() {
	p := s.p
	for g := range p.Groups {
		pg := &p.Groups[g]
		for ti := range pg.PodAntiAffinity {
			term := &pg.PodAntiAffinity[ti]
			k := s.topo.keyIdx[term.TopologyKey]
			a := s.antiFor(g, k)
			a.terms = append(a.terms, term)
			for _, h := range s.c.Candidates(term.Selector) {
				ph := &p.Groups[h]
				if !term.MatchesPod(pg.Namespace, ph.Namespace, ph.Labels) {
					continue
				}
				if h == g {
					a.self = true
					continue
				}
				a.addWith(h)
				b := s.antiFor(h, k)
				b.addWith(g)
				b.repelledBy(foreignTerm{term: term, group: pg.Name})
			}
			for _, id := range s.topo.classIndex.Candidates(term.Selector) {
				cl := &s.topo.classes[id]
				if !term.MatchesPod(pg.Namespace, cl.ns, cl.labels) {
					continue
				}
				for _, nc := range cl.nodes {
					if d := s.domOfNode(nc.node, k); d >= 0 {
						a.bound[d] = true
					}
				}
			}
		}
	}
	// Bound pods' own terms keep the pods they select out of their domain.
	for i := range p.Nodes {
		for _, bp := range p.Nodes[i].Pods {
			for ti := range bp.PodAntiAffinity {
				term := &bp.PodAntiAffinity[ti]
				k := s.topo.keyIdx[term.TopologyKey]
				d := s.domOfNode(i, k)
				if d < 0 {
					continue
				}
				for _, h := range s.c.Candidates(term.Selector) {
					ph := &p.Groups[h]
					if term.MatchesPod(bp.Ref.Namespace, ph.Namespace, ph.Labels) {
						a := s.antiFor(h, k)
						a.bound[d] = true
						a.repelledBy(foreignTerm{term: term, pod: bp.Ref})
					}
				}
			}
		}
	}
}

func (s *solver) buildAffinity() {
	p := s.p
	for g := range p.Groups {
		pg := &p.Groups[g]
		terms := pg.PodAffinity
		if len(terms) == 0 {
			continue
		}
		all := func(ns string, labels map[string]string) bool {
			for _, t := range terms {
				if !t.MatchesPod(pg.Namespace, ns, labels) {
					return false
				}
			}
			return true
		}
		af := &affRule{seed: -1, anchorSet: make([]bool, len(p.Groups)), self: all(pg.Namespace, pg.Labels)}
		var descs []string
		for _, t := range terms {
			k := s.topo.keyIdx[t.TopologyKey]
			descs = append(descs, t.String())
			if !slices.Contains(af.keys, k) {
				af.keys = append(af.keys, k)
				size := s.topo.ndom[k]
				if k == s.topo.host {
					size = len(p.Nodes)
				} else {
					s.topo.needCnt[k] = true
				}
				af.bound = append(af.bound, make([]bool, size))
			}
		}
		af.desc = "required pod affinity " + strings.Join(descs, " and ")
		for _, h := range s.c.Candidates(terms[0].Selector) { // a group matching all terms matches the first
			if h != g && all(p.Groups[h].Namespace, p.Groups[h].Labels) {
				af.anchors = append(af.anchors, h)
				af.anchorSet[h] = true
			}
		}
		for _, id := range s.topo.classIndex.Candidates(terms[0].Selector) { // as for the groups above
			cl := &s.topo.classes[id]
			if !all(cl.ns, cl.labels) {
				continue
			}
			af.boundAnywhere = true
			for _, nc := range cl.nodes {
				for i, k := range af.keys {
					if d := s.domOfNode(nc.node, k); d >= 0 {
						af.bound[i][d] = true
					}
				}
			}
		}
		s.rule[g].aff = af
	}
}

func (s *solver) buildSpreads() {
	p := s.p
	t := &s.topo
	for g := range p.Groups {
		pg := &p.Groups[g]
		gr := &s.rule[g]
		for _, sc := range pg.TopologySpread {
			if sc.WhenUnsatisfiable == model.DoNotSchedule {
				if k := t.keyIdx[sc.TopologyKey]; !slices.Contains(gr.dnsKeys, k) {
					gr.dnsKeys = append(gr.dnsKeys, k)
				}
			}
		}
		if len(gr.dnsKeys) == 0 {
			continue
		}
		gr.eligOff = make([]int8, len(p.Offerings))
		gr.eligNode = make([]bool, len(p.Nodes))
		for n := range p.Nodes {
			ok := true
			for _, k := range gr.dnsKeys {
				if s.domOfNode(n, k) < 0 {
					ok = false
				}
			}
			labels := p.Nodes[n].Labels
			if gr.hostMentions {
				labels = s.nodeLabels(n)
			}
			gr.eligNode[n] = ok && pg.MatchesNodeLabels(labels)
		}
		for _, sc := range pg.TopologySpread {
			if sc.WhenUnsatisfiable != model.DoNotSchedule {
				continue
			}
			k := t.keyIdx[sc.TopologyKey]
			r := &spreadRule{owner: g, key: k, maxSkew: int64(sc.MaxSkew), minDomains: int(sc.MinDomains),
				sel:  make([]bool, len(p.Groups)),
				desc: fmt.Sprintf("topology spread on %s (maxSkew %d)", sc.TopologyKey, sc.MaxSkew)}
			for _, h := range s.c.Candidates(sc.Selector) {
				ph := &p.Groups[h]
				r.sel[h] = ph.Namespace == pg.Namespace && sc.Selector.Matches(ph.Labels)
			}
			if k == t.host {
				r.boundNode = make([]int64, len(p.Nodes))
			} else {
				D := t.ndom[k]
				r.count, r.isDom, r.recv = make([]int64, D), make([]bool, D), make([]bool, D)
			}
			for _, id := range t.classIndex.Candidates(sc.Selector) {
				cl := &t.classes[id]
				if cl.ns != pg.Namespace || !sc.Selector.Matches(cl.labels) {
					continue
				}
				for _, nc := range cl.nodes {
					if !gr.eligNode[nc.node] {
						continue
					}
					if k == t.host {
						r.boundNode[nc.node] += int64(nc.count)
					} else {
						r.count[s.domOfNode(nc.node, k)] += int64(nc.count)
					}
				}
			}
			if k != t.host {
				for n := range p.Nodes {
					if gr.eligNode[n] {
						r.addDomain(s.domOfNode(n, k))
					}
				}
				if k == t.zone {
					for _, z := range p.Zones {
						if s.zoneTakesGroup(g, z) {
							r.addDomain(t.domIDs[k][z])
						}
					}
				}
			}
			gr.own = append(gr.own, r)
			t.spreads = append(t.spreads, r)
			for h := range p.Groups {
				if h != g && r.sel[h] {
					s.rule[h].guards = append(s.rule[h].guards, r)
				}
			}
		}
	}
	// A rule needs checking when nodes open only if some offering lies in a domain it does not count yet.
	for _, r := range t.spreads {
		if r.key == t.host {
			continue
		}
		for o := range p.Offerings {
			if d := t.offDom[o][r.key]; d >= 0 && !r.isDom[d] && s.eligibleOffering(r.owner, o) {
				t.openGuards = append(t.openGuards, r)
				break
			}
		}
	}
}

func (r *spreadRule) addDomain(d int32) {
	if d >= 0 && !r.isDom[d] {
		r.isDom[d] = true
		r.ndom++
		r.minOK = false
	}
}

// zoneTakesGroup is Plan.Validate's test for a zone of Problem.Zones being a spread domain of g: some
// offering there is compatible with g (tolerations included) and has room for one pod.
func (s *solver) zoneTakesGroup(g int, z string) bool {
	pg := &s.p.Groups[g]
	one := pg.Requests.Clone()
	if one == nil {
		one = model.Resources{}
	}
	one[model.Pods] = max(one[model.Pods], 1)
	for o := range s.p.Offerings {
		off := &s.p.Offerings[o]
		if v, _ := topoValue(off.Labels, off.Zone, model.LabelZone); v != z {
			continue
		}
		labels := off.Labels
		if s.rule[g].hostMentions {
			labels = model.WithLabel(labels, model.LabelHostname, syntheticHost)
		}
		if one.Fits(off.Allocatable) && pg.Compatible(labels, off.Taints) {
			return true
		}
	}
	return false
}

// eligibleOffering reports whether a node of offering o counts for group g's spread constraints: it
// matches g's node selection (taints ignored) and has every key they use.
func (s *solver) eligibleOffering(g, o int) bool {
	gr := &s.rule[g]
	switch gr.eligOff[o] {
	case 1:
		return true
	case 2:
		return false
	}
	ok := true
	for _, k := range gr.dnsKeys {
		if k != s.topo.host && s.topo.offDom[o][k] < 0 {
			ok = false
		}
	}
	if ok {
		labels := s.p.Offerings[o].Labels
		if gr.hostMentions {
			labels = model.WithLabel(labels, model.LabelHostname, syntheticHost)
		}
		ok = s.p.Groups[g].MatchesNodeLabels(labels)
	}
	gr.eligOff[o] = 2
	if ok {
		gr.eligOff[o] = 1
	}
	return ok
}

// eligible is eligibleOffering for any bin.
func (s *solver) eligible(g int, b *bin) bool {
	if b.node >= 0 {
		return s.rule[g].eligNode[b.node]
	}
	return s.eligibleOffering(g, b.off)
}

// opened records a new node: it becomes a domain of every spread rule whose owner it is eligible for.
func (t *topology) opened(s *solver, b *bin) {
	for _, r := range t.openGuards {
		if d := b.dom[r.key]; d >= 0 && !r.isDom[d] && s.eligibleOffering(r.owner, b.off) {
			r.addDomain(d)
		}
	}
}

// opensBadDomain reports the spread rule, if any, that a node of offering o would break by becoming a new
// domain with no matching pods: the minimum drops to 0 under domains already holding more than maxSkew.
func (s *solver) opensBadDomain(o int) *spreadRule {
	for _, r := range s.topo.openGuards {
		if d := s.topo.offDom[o][r.key]; d >= 0 && !r.isDom[d] && s.eligibleOffering(r.owner, o) && r.maxRecv() > r.maxSkew {
			return r
		}
	}
	return nil
}

// placed updates the indexes after k pods of group g went to bin b.
func (t *topology) placed(s *solver, g int, b *bin, k int) {
	// Domain counts first, whatever g's own rules: other groups' anti-affinity and affinity read them.
	for key, need := range t.needCnt {
		if !need {
			continue
		}
		if d := b.dom[key]; d >= 0 {
			c := t.cnt[key][d]
			if c == nil {
				c = make([]int32, len(s.p.Groups))
				t.cnt[key][d] = c
			}
			c[g] += int32(k)
		}
	}
	gr := &s.rule[g]
	if !gr.any {
		return
	}
	for _, r := range gr.own {
		if r.key == t.host {
			continue
		}
		d := b.dom[r.key]
		r.recv[d] = true
		if r.sel[g] {
			r.count[d] += int64(k)
			r.minOK = false
		}
	}
	for _, r := range gr.guards {
		if r.key != t.host && s.eligible(r.owner, b) {
			r.count[b.dom[r.key]] += int64(k)
			r.minOK = false
		}
	}
	if af := gr.aff; af != nil && af.seed < 0 && s.canSeed(g) {
		af.seed = b.id
	}
}

// canSeed reports whether group g's pods may start affinity domains of their own: the group matches its own
// terms and no other pod, bound or placed, does. This is kube-scheduler's exception for the first pod, taken
// conservatively so that two groups can never both count on it (Plan.Validate's seed rule).
func (s *solver) canSeed(g int) bool {
	af := s.rule[g].aff
	if !af.self || af.boundAnywhere {
		return false
	}
	for _, h := range af.anchors {
		if s.placed[h] > 0 {
			return false
		}
	}
	return true
}

// anchored reports whether bin b's domain d for the i-th key of af holds an anchor.
func (s *solver) anchored(af *affRule, i int, b *bin, d int32) bool {
	key := af.keys[i]
	if key == s.topo.host {
		if b.node >= 0 && af.bound[i][b.node] {
			return true
		}
		for _, gc := range b.pods {
			if af.anchorSet[gc.Group] {
				return true
			}
		}
		return false
	}
	if af.bound[i][d] {
		return true
	}
	if c := s.topo.cnt[key][d]; c != nil {
		for _, h := range af.anchors {
			if c[h] > 0 {
				return true
			}
		}
	}
	return false
}

// checkRules caps k, the pods of group g that may go to bin b, by every topology rule and host ports.
func (s *solver) checkRules(g int, b *bin, k int) (int, failure) {
	gr := &s.rule[g]
	if len(gr.ports) > 0 {
		if b.count(g) > 0 {
			return 0, failure{kind: failPorts}
		}
		for _, h := range gr.portWith {
			if b.count(h) > 0 {
				return 0, failure{kind: failPorts}
			}
		}
		k = min(k, 1)
	}
	if !gr.any {
		return k, failure{}
	}
	t := &s.topo
	for ai, a := range gr.anti {
		d := b.dom[a.key]
		if d < 0 {
			continue // kube-scheduler ignores a term on a key the node lacks
		}
		bad := false
		if a.key == t.host {
			bad = b.node >= 0 && a.bound[b.node]
			for _, gc := range b.pods {
				if (gc.Group == g && a.self) || (gc.Group != g && a.withSet[gc.Group]) {
					bad = true
				}
			}
		} else {
			bad = a.bound[d]
			if c := t.cnt[a.key][d]; c != nil && !bad {
				bad = a.self && c[g] > 0
				for _, h := range a.with {
					if c[h] > 0 {
						bad = true
						break
					}
				}
			}
		}
		if bad {
			return 0, failure{kind: failAnti, idx: ai}
		}
		if a.self {
			k = min(k, 1)
		}
	}
	if af := gr.aff; af != nil {
		seedKnown, seedOK := false, false
		for i, key := range af.keys {
			d := b.dom[key]
			if d < 0 {
				return 0, failure{kind: failAffinity}
			}
			if s.anchored(af, i, b, d) {
				continue
			}
			if !seedKnown {
				seedKnown, seedOK = true, s.canSeed(g)
			}
			if !seedOK || (af.seed >= 0 && s.bins[af.seed].dom[key] != d) {
				return 0, failure{kind: failAffinity}
			}
		}
	}
	for _, r := range gr.own {
		d := b.dom[r.key]
		if d < 0 {
			return 0, failure{kind: failSpread, rule: r}
		}
		var room int64
		if r.key == t.host {
			room = r.maxSkew - r.binCount(b)
		} else {
			room = r.least() + r.maxSkew - r.count[d]
		}
		switch {
		case r == s.sizing && room > 0:
			// Sizing a new node for the rule that drives the placement: later rounds raise the level, so
			// the room now does not bound what the node will hold.
		case r.sel[g]:
			k = int(min(int64(k), max(room, 0)))
		case room < 0:
			k = 0
		}
		if k <= 0 {
			return 0, failure{kind: failSpread, rule: r}
		}
	}
	for _, r := range gr.guards {
		if !s.eligible(r.owner, b) {
			continue
		}
		var room int64
		if r.key == t.host {
			if b.count(r.owner) == 0 {
				continue
			}
			room = r.maxSkew - r.binCount(b)
		} else {
			d := b.dom[r.key]
			if !r.recv[d] {
				continue
			}
			room = r.least() + r.maxSkew - r.count[d]
		}
		k = int(min(int64(k), max(room, 0)))
		if k <= 0 {
			return 0, failure{kind: failGuard, rule: r}
		}
	}
	return k, failure{}
}
