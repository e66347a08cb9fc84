package greedy

import (
	"fmt"
	"slices"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// solver is the mutable state of one greedy run. Resource vectors are dense over dims: prep's resource order,
// plus "pods" when no group declares it, because Plan.Validate charges every pod (bound ones included) at
// least one pod slot whatever it declares.
type solver struct {
	c *prep.Problem
	p *model.Problem
	// inOrder skips fillExisting (SolveCompiledInOrder); filled says fillExisting placed pods.
	inOrder, filled bool

	dims    int
	podsDim int
	req     [][]int64 // per group, per dim
	alloc   [][]int64 // per offering, per dim

	// bins holds the existing nodes (bin id == Problem.Nodes index) followed by the new nodes in the order
	// they were opened; fill scans it in that order, which is what makes existing nodes come first.
	bins      []*bin
	nExisting int
	// skip[i] is a bin index > i from which on fill may look for room when bin i is full, that is has less
	// of some resource than the smallest request of any group (minReq); fill then passes runs of full bins in
	// one step. Bins only fill up while placing, except when one moves to another offering (swap), which
	// clears skip.
	skip   []int
	minReq []int64

	placed []int     // per group: pods placed so far
	left   []int     // per group: pods still to place
	why    []string  // per group: a reason set by a placement strategy, overriding fails
	fails  []failure // per group: the most specific failure seen while placing it

	pools   []poolState
	offPool []int // per offering: index into pools, -1 for unlimited
	// offUsed counts the open nodes of each offering with a MaxCount (nil until one opens).
	offUsed []int
	// weight is each offering's NodePool weight; tiered says they differ (see weights.go).
	weight []int32
	tiered bool

	topo topology
	rule []groupRules // per group
	// spreadOwners are the groups with spread constraints on keys other than hostname: a node may change
	// offering only if it stays eligible for exactly the same of them.
	spreadOwners []int

	// pi are dual resource prices (see dualPrices); podValue[g] is a pod of g valued at them and remValue
	// the value of every pod not placed yet. They steer the offering choice (effective).
	pi        []float64
	offValue  []float64 // per offering: its allocatable valued at pi
	podValue  []float64
	remValue  float64
	remDemand []float64 // per dim: requests of the pods not placed yet
	remCount  float64   // pods not placed yet
	invNeed   []float64 // scratch for creditFor

	// cands are the offering candidates of group candGroup (see candidatesFor); candCache keeps every
	// group's when the problem is tiered.
	cands     []candidate
	candGroup int
	candCache [][]candidate
	// driving is the spread rule that drives the current group's placement domain by domain (placeSpread);
	// sizing is set to it while offerings are scored, so that its per-round cap does not size new nodes.
	driving, sizing *spreadRule
	// scratch stands for a node not opened yet when the rules are asked about an offering.
	scratch bin

	// Planned nodes (pattern.go). plain marks the groups new nodes are planned for (nil: none), pending
	// those of them whose turn has not come yet, turned every group whose turn has come; first is the
	// placement order, and prefilled says the pending groups have had the room of the nodes already open.
	plain, pending, turned []bool
	first                  []int
	prefilled              bool
	// byValue lists the offerings by offEff, their allocatable's value per dollar at pi, best first;
	// bestEff is, per plain group, the best offEff of an offering it may use.
	byValue []int
	offEff  []float64
	bestEff []float64
	// priceOffs are the offerings the first prices were computed over, hull those of them that can bound
	// prices (dualHull); pricedValue is remValue when the prices were last set (reprice).
	priceOffs   []int
	hull        []int
	pricedValue float64
	pat         patternScratch
}

// bin is a node: existing (node >= 0) or new (off >= 0).
type bin struct {
	id   int
	off  int
	node int
	free []int64
	pods []model.GroupCount
	// dom is the node's domain per topology key (-1: no such label); the hostname key's domain is the bin id.
	dom []int32
}

// count returns the pods of group g on b.
func (b *bin) count(g int) int {
	for _, gc := range b.pods {
		if gc.Group == g {
			return gc.Count
		}
	}
	return 0
}

// poolState tracks what is left of one NodePool's limits. Limits are kept over the pool's own limited
// resources (not prep's vector), so a limit on a resource no pod requests, such as GPUs, is still honoured.
type poolState struct {
	name  string
	names []model.ResourceName
	left  []int64
}

func newSolver(c *prep.Problem) (*solver, error) {
	p := c.Src
	if len(c.Groups) != len(p.Groups) || len(c.Offerings) != len(p.Offerings) || len(c.Nodes) != len(p.Nodes) ||
		len(c.Pools) != len(p.Pools) {
		return nil, fmt.Errorf("compiled problem does not match its source (%d/%d groups, %d/%d offerings, %d/%d nodes, %d/%d pools)",
			len(c.Groups), len(p.Groups), len(c.Offerings), len(p.Offerings), len(c.Nodes), len(p.Nodes), len(c.Pools), len(p.Pools))
	}
	s := &solver{c: c, p: p, candGroup: -1}
	s.dims, s.podsDim = len(c.Res), -1
	for k, r := range c.Res {
		if r == model.Pods {
			s.podsDim = k
		}
	}
	if s.podsDim < 0 {
		s.podsDim = s.dims
		s.dims++
	}
	s.req = make([][]int64, len(p.Groups))
	for g := range c.Groups {
		v := s.extend(c.Groups[g].Req)
		v[s.podsDim] = max(v[s.podsDim], 1)
		for k := range v {
			v[k] = max(v[k], 0)
		}
		s.req[g] = v
	}
	s.alloc = make([][]int64, len(p.Offerings))
	for o := range c.Offerings {
		v := s.extend(c.Offerings[o].Alloc)
		v[s.podsDim] = p.Offerings[o].Allocatable[model.Pods]
		s.alloc[o] = v
	}
	s.nExisting = len(p.Nodes)
	s.bins = make([]*bin, 0, len(p.Nodes)+64)
	for i := range c.Nodes {
		free := s.extend(c.Nodes[i].Residual)
		pods := p.Nodes[i].Allocatable[model.Pods]
		for _, bp := range p.Nodes[i].Pods {
			pods -= max(bp.Requests[model.Pods], 1)
		}
		free[s.podsDim] = pods
		s.bins = append(s.bins, &bin{id: i, off: -1, node: i, free: free})
	}
	s.placed = make([]int, len(p.Groups))
	s.left = make([]int, len(p.Groups))
	s.why = make([]string, len(p.Groups))
	s.fails = make([]failure, len(p.Groups))
	for g := range p.Groups {
		s.left[g] = p.Groups[g].Demand()
	}
	s.invNeed = make([]float64, s.dims)
	s.initPools()
	s.initWeights()
	s.initTopology()
	for _, b := range s.bins {
		b.dom = s.topo.nodeDom[b.node]
	}
	for _, r := range s.topo.spreads {
		if r.key != s.topo.host && !slices.Contains(s.spreadOwners, r.owner) {
			s.spreadOwners = append(s.spreadOwners, r.owner)
		}
	}
	return s, nil
}

// extend copies a prep vector into dims.
func (s *solver) extend(v prep.Vec) []int64 {
	out := make([]int64, s.dims)
	copy(out, v)
	return out
}

func (s *solver) initPools() {
	idx := map[string]int{}
	for i := range s.p.Pools {
		np := &s.p.Pools[i]
		ps := poolState{name: np.Name}
		for _, r := range np.Limits.Names() {
			ps.names = append(ps.names, r)
			ps.left = append(ps.left, np.Limits[r])
		}
		idx[np.Name] = i
		s.pools = append(s.pools, ps)
	}
	// Existing nodes of a pool use up its limits, as Plan.Validate counts them.
	for i := range s.p.Nodes {
		n := &s.p.Nodes[i]
		if pi, ok := idx[n.NodePool]; ok && n.NodePool != "" {
			ps := &s.pools[pi]
			for j, r := range ps.names {
				ps.left[j] -= n.Capacity[r]
			}
		}
	}
	s.offPool = make([]int, len(s.p.Offerings))
	for o := range s.p.Offerings {
		s.offPool[o] = -1
		if pi, ok := idx[s.p.Offerings[o].NodePool]; ok && len(s.pools[pi].names) > 0 {
			s.offPool[o] = pi
		}
	}
}

// poolFits reports whether one more node of offering o stays within its pool's limits, and if not, which
// limited resource runs out.
func (s *solver) poolFits(o int) (bool, model.ResourceName) {
	if !s.countFits(o) {
		return false, ""
	}
	pi := s.offPool[o]
	if pi < 0 {
		return true, ""
	}
	ps := &s.pools[pi]
	capy := s.p.Offerings[o].Capacity
	for j, r := range ps.names {
		if capy[r] > ps.left[j] {
			return false, r
		}
	}
	return true, ""
}

// countFits reports whether one more node of offering o stays within its MaxCount.
func (s *solver) countFits(o int) bool {
	mc := s.p.Offerings[o].MaxCount
	return mc <= 0 || s.offUsed == nil || s.offUsed[o] < mc
}

// poolFitsAfterSwap reports whether a node of offering cur may become one of offering o within the limits.
func (s *solver) poolFitsAfterSwap(cur, o int) (bool, model.ResourceName) {
	s.charge(cur, -1)
	ok, r := s.poolFits(o)
	s.charge(cur, 1)
	return ok, r
}

// charge adds (sign 1) or releases (sign -1) one node of offering o against its pool's limits.
func (s *solver) charge(o int, sign int64) {
	if s.p.Offerings[o].MaxCount > 0 {
		if s.offUsed == nil {
			s.offUsed = make([]int, len(s.p.Offerings))
		}
		s.offUsed[o] += int(sign)
	}
	pi := s.offPool[o]
	if pi < 0 {
		return
	}
	ps := &s.pools[pi]
	capy := s.p.Offerings[o].Capacity
	for j, r := range ps.names {
		ps.left[j] -= sign * capy[r]
	}
}

// fitCount is how many pods of group g fit in free, up to want; only requested resources count, as in
// Plan.Validate. It also returns the binding resource when the answer is 0.
func (s *solver) fitCount(g int, free []int64, want int) (int, int) {
	k := int64(want)
	for d, q := range s.req[g] {
		if q <= 0 {
			continue
		}
		if f := free[d] / q; f < k {
			k = f
			if k <= 0 {
				return 0, d
			}
		}
	}
	return int(k), -1
}

// full reports whether bin b has no room for a pod of any group.
func (s *solver) full(b *bin) bool {
	for k, m := range s.minReq {
		if m > 0 && b.free[k] < m {
			return true
		}
	}
	return false
}

// nextRoom returns the first bin index >= i that is not full (len(bins) when none), compressing the path.
func (s *solver) nextRoom(i int) int {
	if s.minReq == nil {
		s.minReq = make([]int64, s.dims)
		for k := range s.minReq {
			s.minReq[k] = -1
		}
		for g, r := range s.req {
			if s.c.Groups[g].Impossible != "" {
				continue
			}
			for k, q := range r {
				if s.minReq[k] < 0 || q < s.minReq[k] {
					s.minReq[k] = q
				}
			}
		}
	}
	for len(s.skip) < len(s.bins) {
		s.skip = append(s.skip, len(s.skip)+1)
	}
	j := i
	for j < len(s.bins) && s.full(s.bins[j]) {
		j = s.skip[j]
	}
	for i < j && i < len(s.bins) { // path compression
		next := s.skip[i]
		s.skip[i] = j
		i = next
	}
	return j
}

// open launches a node of offering o and returns it; the caller has checked the pool limits.
func (s *solver) open(o int) *bin {
	b := &bin{id: len(s.bins), off: o, node: -1, free: append([]int64(nil), s.alloc[o]...)}
	b.dom = append([]int32(nil), s.topo.offDom[o]...)
	if s.topo.host >= 0 {
		b.dom[s.topo.host] = int32(b.id)
	}
	s.bins = append(s.bins, b)
	s.charge(o, 1)
	s.topo.opened(s, b)
	return b
}

// place puts k pods of group g on b; the caller has checked that they may go there.
func (s *solver) place(g int, b *bin, k int) {
	if k <= 0 {
		return
	}
	for d, q := range s.req[g] {
		b.free[d] -= int64(k) * q
	}
	found := false
	for i := range b.pods {
		if b.pods[i].Group == g {
			b.pods[i].Count += k
			found = true
			break
		}
	}
	if !found {
		b.pods = append(b.pods, model.GroupCount{Group: g, Count: k})
	}
	s.placed[g] += k
	s.left[g] -= k
	if s.podValue != nil {
		s.remValue -= float64(k) * s.podValue[g]
		s.remCount -= float64(k)
		for d, q := range s.req[g] {
			s.remDemand[d] -= float64(k) * float64(q)
		}
	}
	s.topo.placed(s, g, b, k)
}

// usableOffering reports whether group g may run on a new node of offering o. prep's OfferingOK is exact
// except for selectors on the hostname label, which Plan.Validate evaluates with a synthetic hostname.
func (s *solver) usableOffering(g, o int) bool {
	if !s.c.Groups[g].OfferingOK[o] {
		return false
	}
	if !s.rule[g].hostMentions {
		return true
	}
	o2 := &s.p.Offerings[o]
	return s.p.Groups[g].Compatible(model.WithLabel(o2.Labels, model.LabelHostname, syntheticHost), o2.Taints)
}

// usableNode is usableOffering for existing node n, whose hostname defaults to its name.
func (s *solver) usableNode(g, n int) bool {
	if !s.c.Groups[g].NodeOK[n] {
		return false
	}
	if !s.rule[g].hostMentions {
		return true
	}
	return s.p.Groups[g].Compatible(s.nodeLabels(n), s.p.Nodes[n].Taints)
}

// usable reports whether group g may run on bin b at all (labels, taints, ports of bound pods).
func (s *solver) usable(g int, b *bin) bool {
	if b.node >= 0 {
		return s.usableNode(g, b.node)
	}
	return s.usableOffering(g, b.off)
}

// syntheticHost stands for the hostname of a node not launched yet; Plan.Validate uses one that no
// requirement value can equal, and so does this.
const syntheticHost = "\x00greedy-new-node"

// nodeLabels returns existing node n's labels with the hostname defaulting to its name.
func (s *solver) nodeLabels(n int) map[string]string {
	nd := &s.p.Nodes[n]
	if _, ok := nd.Labels[model.LabelHostname]; ok {
		return nd.Labels
	}
	return model.WithLabel(nd.Labels, model.LabelHostname, nd.Name)
}
