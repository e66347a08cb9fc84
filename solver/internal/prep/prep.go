// Package prep compiles a model.Problem into the dense, index-based form that both solvers work on: resource
// vectors in a fixed order, compatibility lists, per-node caps, conflicts and zone rules. It decides nothing; it
// only precomputes what every placement decision asks again and again.
package prep

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/packwright/packwright/model"
)

// Vec is a resource vector in Problem.Res order.
type Vec []int64

// Fits reports whether v fits in avail.
func (v Vec) Fits(avail Vec) bool {
	for k, x := range v {
		if x > avail[k] {
			return false
		}
	}
	return true
}

// Group is a compiled pod group.
type Group struct {
	Index  int // into model.Problem.Groups
	Demand int
	Req    Vec
	// Cap is the most pods of the group one node may hold (hostname anti-affinity, host ports, hostname
	// spread); -1 means no cap beyond capacity.
	Cap int
	// CoLocate is set for required hostname affinity to the group itself: kube-scheduler places the first pod
	// anywhere and every later one next to it, so all pods share one node.
	CoLocate bool
	// Offerings and Nodes list the compatible offerings and existing nodes (indices into Problem).
	Offerings []int
	Nodes     []int
	// OfferingOK and NodeOK are the same as sets.
	OfferingOK []bool
	NodeOK     []bool
	// ZoneSkew is the maxSkew of a DoNotSchedule zone spread that selects the group itself (0: none).
	ZoneSkew int
	// ZoneCap caps pods per zone (self zone anti-affinity: 1); -1 none.
	ZoneCap int
	// ZoneBase counts bound pods per zone that the group's zone rules count, by zone index.
	ZoneBase []int
	// Zones lists the eligible spread domains (zone indices) for ZoneSkew.
	Zones []int
	// Impossible says why no pod of the group can be placed anywhere; empty when some can.
	Impossible string
	// Weights lists the distinct NodePool weights of the compatible offerings, highest first (Tiered only).
	Weights []int32
}

// Offering is a compiled offering.
type Offering struct {
	Index int
	Alloc Vec
	Price float64
	Zone  int // index into Problem.Zones
	Pool  int // index into Problem.Pools; -1 for none
	// Capacity is the machine capacity in Res order, for NodePool limits.
	Capacity Vec
	// Weight is the NodePool's weight.
	Weight int32
}

// Node is a compiled existing node.
type Node struct {
	Index    int
	Residual Vec // allocatable minus bound pods
	Zone     int
	Pool     int
	// Ports are the host ports already taken on the node.
	Ports map[int32]bool
}

// Pool is a NodePool's remaining limits: Limit[k] < 0 means unlimited.
type Pool struct {
	Name  string
	Limit Vec
}

// Problem is the compiled problem.
type Problem struct {
	Src       *model.Problem
	Res       []model.ResourceName
	Zones     []string
	Groups    []Group
	Offerings []Offering
	Nodes     []Node
	Pools     []Pool
	// Conflicts[g] lists groups that may not share a node with g (hostname anti-affinity either way, or a
	// shared host port).
	Conflicts [][]int
	// groupIndex indexes the groups by label (Candidates).
	groupIndex *LabelIndex
	// offLabels and nodeLabels are the labels node selection sees, computed once: with a hostname, except that
	// offerings keep their own labels when no group selects on the hostname (selectsHostname).
	offLabels  []map[string]string
	nodeLabels []map[string]string
	// compat memoizes offeringsCompatible.
	compat map[selection]*compatibility
	// kinds are the distinct bound pods as the rules see them (namespace, labels, anti-affinity); kindNodes[k]
	// lists the nodes that run kind k and kindZones[k][z] counts kind k's pods in zone z. Pods of one workload
	// are alike, so each group tests each kind once rather than each bound pod of each node: on 5,000 bound pods
	// of 466 services that is 0.3 s less per compile.
	kinds     []*model.BoundPod
	kindNodes [][]int
	kindZones [][]int
	// kindIndex indexes the kinds by label, and repelledBy[g] lists the kinds whose hostname anti-affinity may
	// select group g (buildKindIndex). kindMark is Compile's scratch for visiting each kind once per group.
	kindIndex  *LabelIndex
	repelledBy [][]int
	kindMark   []int
	// Relaxed lists the constraints of the source problem that this compiled form does not encode (for example
	// cross-group pod affinity). A plan built on it must be checked by model.Plan.Validate; a bound computed on
	// it is still valid, because dropping constraints only lowers the optimum.
	Relaxed []string
	// Tiered says the offerings' NodePools differ in weight; WeightUnit then prices the weights (see
	// WeightPenalty).
	Tiered     bool
	WeightUnit float64
}

// Compile builds the compiled form of p.
func Compile(p *model.Problem) (*Problem, error) {
	c := &Problem{Src: p}
	c.Res = resourceOrder(p)
	zoneIdx := map[string]int{}
	addZone := func(z string) int {
		if z == "" {
			return -1
		}
		if i, ok := zoneIdx[z]; ok {
			return i
		}
		zoneIdx[z] = len(c.Zones)
		c.Zones = append(c.Zones, z)
		return len(c.Zones) - 1
	}
	for _, z := range p.Zones {
		addZone(z)
	}
	poolIdx := map[string]int{}
	for i, np := range p.Pools {
		poolIdx[np.Name] = i
		lim := make(Vec, len(c.Res))
		for k, r := range c.Res {
			if v, ok := np.Limits[r]; ok {
				lim[k] = v
			} else {
				lim[k] = -1
			}
		}
		c.Pools = append(c.Pools, Pool{Name: np.Name, Limit: lim})
	}
	pool := func(name string) int {
		if i, ok := poolIdx[name]; ok {
			return i
		}
		return -1
	}
	for i := range p.Offerings {
		o := &p.Offerings[i]
		if o.Price < 0 {
			return nil, fmt.Errorf("offering %s: negative price %g", o.ID, o.Price)
		}
		c.Offerings = append(c.Offerings, Offering{Index: i, Alloc: c.vec(o.Allocatable), Price: o.Price,
			Zone: addZone(o.Zone), Pool: pool(o.NodePool), Capacity: c.vec(o.Capacity)})
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		res := c.vec(n.Allocatable)
		ports := map[int32]bool{}
		for _, bp := range n.Pods {
			for k, x := range c.podVec(bp.Requests) {
				res[k] -= x
			}
			for _, hp := range bp.HostPorts {
				ports[hp] = true
			}
		}
		c.Nodes = append(c.Nodes, Node{Index: i, Residual: res, Zone: addZone(n.Zone), Pool: pool(n.NodePool), Ports: ports})
		// Existing nodes of a pool use up its limits.
		if pi := pool(n.NodePool); pi >= 0 {
			capv := c.vec(n.Capacity)
			for k := range c.Res {
				if c.Pools[pi].Limit[k] >= 0 {
					c.Pools[pi].Limit[k] -= capv[k]
				}
			}
		}
	}
	hostname := selectsHostname(p)
	for i := range p.Offerings {
		if hostname {
			c.offLabels = append(c.offLabels, offeringLabels(&p.Offerings[i]))
		} else {
			c.offLabels = append(c.offLabels, p.Offerings[i].Labels)
		}
	}
	for i := range p.Nodes {
		c.nodeLabels = append(c.nodeLabels, nodeLabels(&p.Nodes[i]))
	}
	c.groupIndex = NewLabelIndex(len(p.Groups), func(g int) map[string]string { return p.Groups[g].Labels })
	c.buildBoundKinds()
	c.buildKindIndex()
	for gi := range p.Groups {
		c.Groups = append(c.Groups, c.group(gi))
	}
	c.conflicts()
	c.compileWeights()
	return c, nil
}

// resourceOrder lists every resource that some group requests or some NodePool limits, plus "pods" (every pod
// takes a slot, declared or not), well-known ones first, so vectors stay short.
func resourceOrder(p *model.Problem) []model.ResourceName {
	seen := map[model.ResourceName]bool{model.Pods: true}
	for _, g := range p.Groups {
		for r, v := range g.Requests {
			if v > 0 {
				seen[r] = true
			}
		}
	}
	for _, np := range p.Pools {
		for r := range np.Limits {
			seen[r] = true
		}
	}
	rank := map[model.ResourceName]int{model.CPU: 0, model.Memory: 1, model.Pods: 2, model.EphemeralStorage: 3, model.GPU: 4}
	out := make([]model.ResourceName, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, oki := rank[out[i]]
		rj, okj := rank[out[j]]
		if oki != okj {
			return oki
		}
		if oki && ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// Placeable is the number of pending pods of the groups that are not impossible: the pods a plan that places
// every placeable pod places.
func (c *Problem) Placeable() int {
	n := 0
	for _, g := range c.Groups {
		if g.Impossible == "" {
			n += g.Demand
		}
	}
	return n
}

// podsIndex is the position of "pods" in Res.
func (c *Problem) podsIndex() int {
	for k, r := range c.Res {
		if r == model.Pods {
			return k
		}
	}
	return -1
}

// podVec is a pod's request vector; a pod takes at least one "pods" slot, as the kubelet counts it.
func (c *Problem) podVec(r model.Resources) Vec {
	v := c.vec(r)
	if k := c.podsIndex(); k >= 0 && v[k] < 1 {
		v[k] = 1
	}
	return v
}

func (c *Problem) vec(r model.Resources) Vec {
	v := make(Vec, len(c.Res))
	for k, name := range c.Res {
		v[k] = r[name]
	}
	return v
}

// newNodeHostname stands in for a new node's hostname in node selection: no requirement value can equal it
// (label values cannot hold a NUL byte), as in model.Plan.Validate.
const newNodeHostname = "\x00new-node"

// offeringLabels returns the labels a new node of offering o would carry, with a placeholder hostname.
func offeringLabels(o *model.Offering) map[string]string {
	return model.WithLabel(o.Labels, model.LabelHostname, newNodeHostname)
}

// selectsHostname reports whether some group's nodeSelector or required node affinity names the hostname
// label. Only then must an offering's labels carry a hostname (offeringLabels): copying the labels of every
// offering of the AWS catalog was a sixth of a completion's time (greedy.Complete, mixed/aws/1000).
func selectsHostname(p *model.Problem) bool {
	for gi := range p.Groups {
		if p.Groups[gi].MentionsHostname() {
			return true
		}
	}
	return false
}

// nodeLabels returns an existing node's labels, its hostname defaulting to its name.
func nodeLabels(n *model.ExistingNode) map[string]string {
	if _, ok := n.Labels[model.LabelHostname]; ok {
		return n.Labels
	}
	return model.WithLabel(n.Labels, model.LabelHostname, n.Name)
}

func (c *Problem) group(gi int) Group {
	p := c.Src
	g := &p.Groups[gi]
	cg := Group{Index: gi, Demand: g.Demand(), Req: c.podVec(g.Requests), Cap: g.MaxPerNode(), ZoneCap: -1,
		OfferingOK: make([]bool, len(p.Offerings)), NodeOK: make([]bool, len(p.Nodes)), ZoneBase: make([]int, len(c.Zones))}
	for _, t := range g.PodAffinity {
		if t.Selector != nil && t.TopologyKey == model.LabelHostname && t.MatchesPod(g.Namespace, g.Namespace, g.Labels) && len(g.PodAffinity) == 1 {
			cg.CoLocate = true
		} else {
			c.relax(fmt.Sprintf("group %s: required pod affinity on %s", g.Name, t.TopologyKey))
		}
	}
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == model.LabelZone && t.MatchesPod(g.Namespace, g.Namespace, g.Labels) {
			cg.ZoneCap = 1
		} else if t.TopologyKey != model.LabelHostname {
			c.relax(fmt.Sprintf("group %s: required pod anti-affinity on %s", g.Name, t.TopologyKey))
		}
	}
	for _, s := range g.TopologySpread {
		if s.WhenUnsatisfiable != model.DoNotSchedule {
			continue
		}
		self := s.Selector != nil && s.Selector.Matches(g.Labels)
		switch {
		case s.TopologyKey == model.LabelZone && self && c.selectsOther(gi, s.Selector):
			// The rule counts the pods of other pending groups too, so it bounds their sum per zone: rows on
			// this group's pods alone would be stricter than the rule (a plan may balance the two groups
			// together), not a relaxation of it, and a bound on them would not hold.
			c.relax(fmt.Sprintf("group %s: zone topology spread whose selector matches other pending groups", g.Name))
		case s.TopologyKey == model.LabelZone && self:
			if cg.ZoneSkew == 0 || int(s.MaxSkew) < cg.ZoneSkew {
				cg.ZoneSkew = int(s.MaxSkew)
			}
			if s.MinDomains > 0 {
				c.relax(fmt.Sprintf("group %s: topology spread minDomains", g.Name))
			}
		case s.TopologyKey == model.LabelHostname && self:
			// Some eligible node has none of these pods (a fresh node at least), so each node holds at most maxSkew.
			if cg.Cap < 0 || int(s.MaxSkew) < cg.Cap {
				cg.Cap = int(s.MaxSkew)
			}
		default:
			c.relax(fmt.Sprintf("group %s: topology spread on %s", g.Name, s.TopologyKey))
		}
	}
	if cg.CoLocate {
		cg.Cap = -1
	}
	// Compatible offerings: labels, taints, and room for at least one pod (all of them when co-located).
	one := cg.Req
	if cg.CoLocate {
		one = scale(cg.Req, int64(cg.Demand))
	}
	compat := c.offeringsCompatible(g)
	best := compat.why // reason for the nearest miss, for Impossible
	for oi := range p.Offerings {
		if !compat.ok[oi] || !one.Fits(c.Offerings[oi].Alloc) {
			continue
		}
		cg.OfferingOK[oi] = true
		cg.Offerings = append(cg.Offerings, oi)
	}
	blocked := c.blockedNodes(gi)
	for ni := range p.Nodes {
		n := &p.Nodes[ni]
		if (blocked != nil && blocked[ni]) || !g.Compatible(c.nodeLabels[ni], n.Taints) || !c.nodeAdmits(g, &c.Nodes[ni]) {
			continue
		}
		if !one.Fits(c.Nodes[ni].Residual) {
			continue
		}
		cg.NodeOK[ni] = true
		cg.Nodes = append(cg.Nodes, ni)
	}
	// Zone bookkeeping: bound pods that the group's zone rules count, and the eligible domains.
	c.zoneKinds(gi, func(k int) {
		if c.countsForZone(g, *c.kinds[k]) {
			for z, n := range c.kindZones[k] {
				cg.ZoneBase[z] += n
			}
		}
	})
	if cg.ZoneSkew > 0 || cg.ZoneCap > 0 {
		eligible := make([]bool, len(c.Zones))
		for _, oi := range cg.Offerings {
			if z := c.Offerings[oi].Zone; z >= 0 {
				eligible[z] = true
			}
		}
		for ni := range p.Nodes {
			// kube-scheduler's default nodeTaintsPolicy ignores taints when it counts spread domains.
			if z := c.Nodes[ni].Zone; z >= 0 && g.MatchesNodeLabels(c.nodeLabels[ni]) {
				eligible[z] = true
			}
		}
		for z, ok := range eligible {
			if ok {
				cg.Zones = append(cg.Zones, z)
			}
		}
	}
	if len(cg.Offerings) == 0 && len(cg.Nodes) == 0 {
		cg.Impossible = c.impossibleReason(g, cg, best)
	}
	return cg
}

// buildBoundKinds fills kinds, kindNodes and kindZones.
func (c *Problem) buildBoundKinds() {
	index := map[string]int{}
	// same finds the kind of a pod that shares its label map and terms with one seen before, as the pods that
	// model.NewResidual binds share their group's, without spelling out the key: spelling it was a sixth of
	// a completion's compile (greedy.Complete, existing/kwok/1000).
	type identity struct {
		ns     string
		labels unsafe.Pointer
		anti   *model.PodAffinityTerm
		nAnti  int
	}
	same := map[identity]int{}
	var key strings.Builder
	for ni := range c.Src.Nodes {
		n := &c.Src.Nodes[ni]
		z := c.Nodes[ni].Zone
		for pi := range n.Pods {
			bp := &n.Pods[pi]
			id := identity{bp.Ref.Namespace, reflect.ValueOf(bp.Labels).UnsafePointer(),
				unsafe.SliceData(bp.PodAntiAffinity), len(bp.PodAntiAffinity)}
			k, ok := same[id]
			if !ok {
				key.Reset()
				key.WriteString(bp.Ref.Namespace)
				for _, l := range slices.Sorted(maps.Keys(bp.Labels)) {
					fmt.Fprintf(&key, "\x00%s=%s", l, bp.Labels[l])
				}
				// Terms hold pointers, which %v prints as addresses: equal keys mean equal terms (equal terms
				// behind other pointers only make another kind).
				fmt.Fprintf(&key, "\x01%v", bp.PodAntiAffinity)
				if k, ok = index[key.String()]; !ok {
					k = len(c.kinds)
					index[key.String()] = k
					c.kinds = append(c.kinds, bp)
					c.kindZones = append(c.kindZones, make([]int, len(c.Zones)))
					c.kindNodes = append(c.kindNodes, nil)
				}
				same[id] = k
			}
			if nk := c.kindNodes[k]; len(nk) == 0 || nk[len(nk)-1] != ni {
				c.kindNodes[k] = append(nk, ni)
			}
			if z >= 0 {
				c.kindZones[k][z]++
			}
		}
	}
}

// selection is what node selection reads of a group, by identity: groups that share it (most often none at
// all) are compatible with the same offerings, which offeringsCompatible then checks once. In a completion
// (greedy.Complete) the check per group and offering was a tenth of the step (spread/kwok/1000).
type selection struct {
	nodeSelector unsafe.Pointer
	affinity     *model.Requirements
	nAffinity    int
	tolerations  *model.Toleration
	nTolerations int
}

// compatibility is the offerings a selection is compatible with (labels and taints), and why the first other
// one is not ("" when every offering is).
type compatibility struct {
	ok  []bool
	why string
}

// offeringsCompatible is the compatibility of g's selection with c's offerings, computed once per selection.
func (c *Problem) offeringsCompatible(g *model.PodGroup) *compatibility {
	key := selection{reflect.ValueOf(g.NodeSelector).UnsafePointer(), unsafe.SliceData(g.NodeAffinity), len(g.NodeAffinity),
		unsafe.SliceData(g.Tolerations), len(g.Tolerations)}
	if cp, ok := c.compat[key]; ok {
		return cp
	}
	cp := &compatibility{ok: make([]bool, len(c.Src.Offerings))}
	for oi := range c.Src.Offerings {
		o := &c.Src.Offerings[oi]
		if cp.ok[oi] = g.Compatible(c.offLabels[oi], o.Taints); !cp.ok[oi] && cp.why == "" {
			cp.why = g.Incompatibility(c.offLabels[oi], o.Taints)
		}
	}
	if c.compat == nil {
		c.compat = map[selection]*compatibility{}
	}
	c.compat[key] = cp
	return cp
}

// selectsOther reports whether selector sel matches a pending group other than gi in gi's namespace.
func (c *Problem) selectsOther(gi int, sel *model.LabelSelector) bool {
	ns := c.Src.Groups[gi].Namespace
	for _, h := range c.Candidates(sel) {
		if g := &c.Src.Groups[h]; h != gi && g.Demand() > 0 && g.Namespace == ns && sel.Matches(g.Labels) {
			return true
		}
	}
	return false
}

// countsForZone reports whether a bound pod counts towards g's zone spread or zone anti-affinity.
func (c *Problem) countsForZone(g *model.PodGroup, bp model.BoundPod) bool {
	for _, s := range g.TopologySpread {
		if s.WhenUnsatisfiable == model.DoNotSchedule && s.TopologyKey == model.LabelZone && s.Selector != nil &&
			bp.Ref.Namespace == g.Namespace && s.Selector.Matches(bp.Labels) {
			return true
		}
	}
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == model.LabelZone && t.MatchesPod(g.Namespace, bp.Ref.Namespace, bp.Labels) {
			return true
		}
	}
	return false
}

// blockedNodes marks the existing nodes that g may not join for the pods bound there: hostname
// anti-affinity in either direction. Host ports are checked per node (nodeAdmits).
func (c *Problem) blockedNodes(gi int) []bool {
	g := &c.Src.Groups[gi]
	var blocked []bool
	c.hostnameKinds(gi, func(k int) {
		if !c.repels(g, c.kinds[k]) {
			return
		}
		if blocked == nil {
			blocked = make([]bool, len(c.Nodes))
		}
		for _, ni := range c.kindNodes[k] {
			blocked[ni] = true
		}
	})
	return blocked
}

// repels reports whether g and bound pod bp may not share a node: either's hostname anti-affinity selects the other.
func (c *Problem) repels(g *model.PodGroup, bp *model.BoundPod) bool {
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == model.LabelHostname && t.MatchesPod(g.Namespace, bp.Ref.Namespace, bp.Labels) {
			return true
		}
	}
	for _, t := range bp.PodAntiAffinity {
		if t.TopologyKey == model.LabelHostname && t.MatchesPod(bp.Ref.Namespace, g.Namespace, g.Labels) {
			return true
		}
	}
	return false
}

// nodeAdmits checks the host ports of g against those taken on an existing node.
func (c *Problem) nodeAdmits(g *model.PodGroup, cn *Node) bool {
	for _, hp := range g.HostPorts {
		if cn.Ports[hp] {
			return false
		}
	}
	return true
}

func (c *Problem) impossibleReason(g *model.PodGroup, cg Group, incompat string) string {
	if len(c.Src.Offerings) == 0 && len(c.Src.Nodes) == 0 {
		return "no offerings and no nodes"
	}
	// Did any offering pass labels and taints? Then the size is the problem: name the resource.
	for oi := range c.Src.Offerings {
		o := &c.Src.Offerings[oi]
		if g.Compatible(c.offLabels[oi], o.Taints) {
			return c.sizeReason(g, cg)
		}
	}
	if incompat != "" {
		return incompat + " on every offering"
	}
	return "no compatible offering or node"
}

// sizeReason names the first resource that no compatible offering has enough of, e.g. "requests 3
// nvidia.com/gpu; the largest allowed offering has 1".
func (c *Problem) sizeReason(g *model.PodGroup, cg Group) string {
	need := cg.Req
	what := "requests"
	if cg.CoLocate {
		need = scale(cg.Req, int64(cg.Demand))
		what = fmt.Sprintf("co-located pods (%d) request", cg.Demand)
	}
	for k, r := range c.Res {
		var largest int64
		for oi := range c.Src.Offerings {
			o := &c.Src.Offerings[oi]
			if g.Compatible(c.offLabels[oi], o.Taints) && c.Offerings[oi].Alloc[k] > largest {
				largest = c.Offerings[oi].Alloc[k]
			}
		}
		if need[k] > largest {
			return fmt.Sprintf("%s %s %s; the largest allowed offering has %s", what,
				model.FormatQuantity(r, need[k]), r, model.FormatQuantity(r, largest))
		}
	}
	return "no allowed offering holds the pod's requests in every resource at once"
}

func scale(v Vec, n int64) Vec {
	out := make(Vec, len(v))
	for k, x := range v {
		out[k] = x * n
	}
	return out
}

func (c *Problem) relax(what string) {
	for _, r := range c.Relaxed {
		if r == what {
			return
		}
	}
	c.Relaxed = append(c.Relaxed, what)
}

// conflicts fills Conflicts: groups that may not share a node.
func (c *Problem) conflicts() {
	p := c.Src
	c.Conflicts = make([][]int, len(p.Groups))
	// Candidate pairs: a hostname anti-affinity term of one selects the other, or they share a host port.
	// Testing only those (then exactly, both ways, as before) keeps this linear in the matches.
	pairs := make(map[[2]int]bool)
	addPair := func(a, b int) {
		if a != b {
			pairs[[2]int{min(a, b), max(a, b)}] = true
		}
	}
	byPort := make(map[int32][]int)
	for a := range p.Groups {
		for _, t := range p.Groups[a].PodAntiAffinity {
			if t.TopologyKey != model.LabelHostname {
				continue
			}
			for _, b := range c.Candidates(t.Selector) {
				addPair(a, b)
			}
		}
		for _, port := range p.Groups[a].HostPorts {
			for _, b := range byPort[port] {
				addPair(a, b)
			}
			byPort[port] = append(byPort[port], a)
		}
	}
	list := make([][2]int, 0, len(pairs))
	for pr := range pairs {
		list = append(list, pr)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i][0] != list[j][0] {
			return list[i][0] < list[j][0]
		}
		return list[i][1] < list[j][1]
	})
	for _, pr := range list {
		a, b := pr[0], pr[1]
		if c.conflict(&p.Groups[a], &p.Groups[b]) || c.conflict(&p.Groups[b], &p.Groups[a]) || sharePort(&p.Groups[a], &p.Groups[b]) {
			c.Conflicts[a] = append(c.Conflicts[a], b)
			c.Conflicts[b] = append(c.Conflicts[b], a)
		}
	}
}

func (c *Problem) conflict(a, b *model.PodGroup) bool {
	for _, t := range a.PodAntiAffinity {
		if t.TopologyKey == model.LabelHostname && t.MatchesPod(a.Namespace, b.Namespace, b.Labels) {
			return true
		}
	}
	return false
}

func sharePort(a, b *model.PodGroup) bool {
	for _, x := range a.HostPorts {
		for _, y := range b.HostPorts {
			if x == y {
				return true
			}
		}
	}
	return false
}

// ZoneRange states a zone spread of maxSkew 1 as a range of pending pods per zone: with T pods of the group in
// its k zones (bound and pending), every zone ends with floor(T/k) or floor(T/k)+1 of them, so the pending pods
// in zone z number between lo[z] and hi[z] (zone indices). ok is false for other skews, fewer than two zones,
// and when a zone's bound pods already exceed the range.
func (g *Group) ZoneRange() (lo, hi map[int]int, ok bool) {
	if g.ZoneSkew != 1 || len(g.Zones) < 2 {
		return nil, nil, false
	}
	k := len(g.Zones)
	total := g.Demand
	for _, z := range g.Zones {
		total += g.ZoneBase[z]
	}
	level, extra := total/k, 0
	if total%k != 0 {
		extra = 1
	}
	lo, hi = make(map[int]int, k), make(map[int]int, k)
	for _, z := range g.Zones {
		b := g.ZoneBase[z]
		if b > level+extra {
			return nil, nil, false
		}
		lo[z], hi[z] = max(0, level-b), level+extra-b
	}
	return lo, hi, true
}
