package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Tolerances of the cost checks in Plan.Validate.
const (
	// CostRelTolerance is how far Plan.Cost may be from the sum of the new nodes' prices, relative to it.
	CostRelTolerance = 1e-6
	// BoundTolerance is how far Plan.LowerBound may exceed Plan.Cost.
	BoundTolerance = 1e-6
)

// Validate re-checks, independently of how the plan was made, every promise the plan makes about p, and
// returns nil or an error joining one error per violation (errors.Join), each naming the node, group,
// offering or pool and the reason. It assumes nothing about the plan; it assumes p passed Problem.Validate
// but never panics on a problem that did not. It works with counts per group and node, never per pod.
//
// # Rules
//
//   - Structure: offering, node and group indices are in range and counts are positive.
//   - Accounting: for every group, pods on new nodes + on existing nodes + unschedulable == Demand, so no pod
//     is lost and none is placed twice. Unschedulable entries carry a non-empty reason.
//   - Capacity: on every node the placed pods' requests, summed, fit what is free: a new node's offering
//     Allocatable; an existing node's Allocatable minus its bound pods' requests. Every resource a placed
//     pod requests is checked (a resource requested by no placed pod cannot be overcommitted by the plan,
//     as in kube-scheduler's NodeResourcesFit), and a pod always takes at least one "pods" slot.
//   - Compatibility: each group's nodeSelector, required node affinity and tolerations hold on each node it
//     is placed on. A new node has its offering's labels and taints and a synthetic hostname unique to it
//     (which no requirement value can equal); an existing node its labels (hostname defaulting to its name).
//   - Host ports: no two pods on one node, bound pods included, use the same host port.
//   - Required pod anti-affinity, required pod affinity and DoNotSchedule topology spread, on any topology
//     key, as below.
//   - NodePool limits: for each pool in which the plan launches a node, the Capacity of its existing nodes
//     plus its new nodes stays within every limited resource.
//   - Offering counts: an offering with a positive MaxCount has at most that many new nodes.
//   - NodePool weights (only when offerings' pools differ in weight): no group is on a new node of a pool
//     while a higher-weight pool could take one of its pods on a fresh node; see checkWeights for the
//     exact test and the groups it leaves unchecked.
//   - Cost: Cost equals the sum of the new nodes' offering prices within CostRelTolerance (relative), and
//     LowerBound <= Cost + BoundTolerance.
//
// # Topology
//
// kube-scheduler binds pods one at a time, so a batch plan is right when some order of binding its pods
// passes the scheduler's filters at every step (the scheduler retries pods that fail, so the order need not
// be the controller's). The rules below are that condition, stated on the plan's final state.
//
// Domains. For a topology key K, a node's domain is its K label value; a node without the label has no
// K domain, and kube-scheduler then ignores it for anti-affinity on K, rejects it for affinity and spread on
// K, and does not count its pods. kubernetes.io/hostname is always present: each new node is its own domain,
// an existing node's is its hostname label (its name when the label is missing). For the zone key the Zone
// field stands in for a missing label.
//
// Anti-affinity (required). Every pair of pods sharing a domain is checked both ways, as the scheduler's two
// anti-affinity filters do (the incoming pod's terms against the pods present, the present pods' terms
// against the incoming pod). A pairwise condition holds in every order or in none, so the final-state check
// is exact. A term of group g selects pod q when q's namespace is one of the term's Namespaces (g's own when
// empty) and the selector matches q's labels. Violations: g shares a domain with a pod of another placed
// group, or a bound pod, that its term selects; g has two pods in one domain and its term selects itself; a
// bound pod's term selects g's pods in the bound pod's domain. Bound pods against bound pods are the
// cluster's business, not the plan's.
//
// Affinity (required). kube-scheduler lets pod p with affinity terms T onto node n only if n has every
// topology key of T and, for each term t, some pod matching all of T (not just t) is already in n's
// t-domain. The exception: when no pod anywhere matches all of T and p matches T itself, p may go anywhere
// (the first pod of a self-affine group). In a batch, bound pods and pods of other placed groups can bind
// first, so a t-domain holding g's pods is anchored when it holds a bound pod or a pod of another placed
// group that matches all of T. An unanchored domain can only have been started by g's own exempt first pod,
// the seed, and there is one seed. So unanchored domains are accepted only when g matches T, no bound pod
// matches T, and every unanchored domain (of every term) contains the seed's node. Two seeded groups that
// each match the other's terms cannot both bind first and are rejected. Known leniency: groups whose anchors
// form a cycle (web needs cache on its host, cache needs web on its host) are accepted, although neither
// can bind first.
//
// Topology spread (DoNotSchedule; ScheduleAnyway is only a preference). For a constraint c of group g on key
// K, a node is eligible when it satisfies g's nodeSelector and required node affinity and has every key of
// g's DoNotSchedule constraints. Taints are ignored, as with the defaults nodeAffinityPolicy Honor and
// nodeTaintsPolicy Ignore. C[d] counts, on the eligible nodes of domain d, the bound and placed pods in g's
// namespace that c's selector matches. The domains are those of eligible nodes, plus, for the zone key,
// every zone of Problem.Zones in which some offering could take a pod of g (compatible, tolerations
// included, and with room for one pod): the autoscaler may launch nodes there, so spreading means spreading
// there too. Let min be the least C[d] over the domains, or 0 when there are fewer domains than
// c.MinDomains. The rule: every node holding g's pods has key K, and C[d] - min <= MaxSkew for every domain d
// that receives pods of g.
//
// For g's own pods this is exact. If the rule holds, binding them in water-filling order (next pod into the
// receiving domain with the fewest matching pods) passes the scheduler's check count(d) + self - min <=
// MaxSkew at every step: the domain being filled either is the current minimum (skew 1) or is below its
// final count while the minimum is at least the final minimum. If the rule fails for d, the last pod bound
// into d sees count C[d]-1 and a minimum no larger than the final one, and is rejected. Pods of other placed
// groups that the selector matches are counted as if bound first. That is conservative: a plan that needs
// g's pods to bind before theirs is rejected. A randomized comparison with a brute-force scheduler
// (scheduler_sim_test.go) finds no differences but these two documented ones.
func (pl *Plan) Validate(p *Problem) error {
	if pl == nil || p == nil {
		return errors.New("validate plan: nil plan or problem")
	}
	c := newPlanCheck(p, pl)
	c.checkStructure()
	c.checkCapacity()
	c.checkCompatibility()
	c.checkHostPorts()
	c.checkTopology()
	c.checkLimits()
	c.checkMaxCount()
	c.checkWeights()
	c.checkCost()
	return errors.Join(c.errs...)
}

// planCheck holds what the checks share. Nodes are numbered in one space: the plan's new nodes first
// (0..nNew-1), then every existing node of the problem (nNew+i for Problem.Nodes[i]).
type planCheck struct {
	p    *Problem
	plan *Plan
	errs []error

	nNew  int
	nodes []checkNode
	// groupNodes lists, per group, the nodes holding its placed pods and how many.
	groupNodes [][]nodeCount

	// Resource vectors, dense over the resources that some group requests.
	resIdx   map[ResourceName]int
	resNames []ResourceName
	req      [][]int64 // per group

	topo topology
}

type checkNode struct {
	off    int // offering index for a new node, else -1
	ex     int // Problem.Nodes index for an existing node, else -1
	labels map[string]string
	taints []Taint
	pods   []GroupCount // merged: one entry per group, positive counts, valid indices
}

type nodeCount struct{ node, count int }

func newPlanCheck(p *Problem, pl *Plan) *planCheck {
	c := &planCheck{p: p, plan: pl, nNew: len(pl.NewNodes)}
	c.nodes = make([]checkNode, len(pl.NewNodes)+len(p.Nodes))
	for i, nn := range pl.NewNodes {
		c.nodes[i] = checkNode{off: -1, ex: -1}
		if nn.Offering >= 0 && nn.Offering < len(p.Offerings) {
			o := &p.Offerings[nn.Offering]
			c.nodes[i] = checkNode{off: nn.Offering, ex: -1, labels: o.Labels, taints: o.Taints}
		}
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		c.nodes[c.nNew+i] = checkNode{off: -1, ex: i, labels: n.Labels, taints: n.Taints}
	}
	return c
}

func (c *planCheck) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func (c *planCheck) groupName(g int) string { return strconv.Quote(c.p.Groups[g].Name) }

// nodeName names a node of the unified numbering for messages.
func (c *planCheck) nodeName(n int) string {
	if n < c.nNew {
		if off := c.nodes[n].off; off >= 0 {
			return fmt.Sprintf("new node %d (offering %q)", n, c.p.Offerings[off].ID)
		}
		return fmt.Sprintf("new node %d", n)
	}
	return fmt.Sprintf("node %q", c.p.Nodes[n-c.nNew].Name)
}

// checkStructure checks indices and counts, merges each node's entries per group, and checks that every
// group's pods are accounted for exactly once.
func (c *planCheck) checkStructure() {
	G := len(c.p.Groups)
	onNew := make([]int64, G)
	onExisting := make([]int64, G)
	unsched := make([]int64, G)

	// valid reports one node's bad entries, tallies the good ones and returns them.
	ok := func(gc GroupCount) bool { return gc.Group >= 0 && gc.Group < G && gc.Count > 0 }
	valid := func(where func() string, pods []GroupCount, tally []int64) []GroupCount {
		bad := 0
		for j, gc := range pods {
			switch {
			case gc.Group < 0 || gc.Group >= G:
				c.fail("%s: entry %d: group index %d out of range [0,%d)", where(), j, gc.Group, G)
				bad++
			case gc.Count <= 0:
				c.fail("%s: group %s: count %d is not positive", where(), c.groupName(gc.Group), gc.Count)
				bad++
			default:
				tally[gc.Group] = satAdd(tally[gc.Group], int64(gc.Count))
			}
		}
		if bad == 0 {
			return pods
		}
		out := make([]GroupCount, 0, len(pods)-bad)
		for _, gc := range pods {
			if ok(gc) {
				out = append(out, gc)
			}
		}
		return out
	}

	for i, nn := range c.plan.NewNodes {
		if nn.Offering < 0 || nn.Offering >= len(c.p.Offerings) {
			c.fail("new node %d: offering index %d out of range [0,%d)", i, nn.Offering, len(c.p.Offerings))
		}
		pods := valid(func() string { return c.nodeName(i) }, nn.Pods, onNew)
		if c.nodes[i].off >= 0 {
			c.nodes[i].pods = pods
		}
	}
	for i, ep := range c.plan.Existing {
		if ep.Node < 0 || ep.Node >= len(c.p.Nodes) {
			c.fail("existing placement %d: node index %d out of range [0,%d)", i, ep.Node, len(c.p.Nodes))
			valid(func() string { return fmt.Sprintf("existing placement %d", i) }, ep.Pods, onExisting)
			continue
		}
		n := c.nNew + ep.Node
		pods := valid(func() string { return c.nodeName(n) }, ep.Pods, onExisting)
		if c.nodes[n].pods == nil {
			c.nodes[n].pods = pods
		} else { // several placements on one node: concatenate, merged below
			c.nodes[n].pods = slices.Concat(c.nodes[n].pods, pods)
		}
	}
	for i, u := range c.plan.Unschedulable {
		switch {
		case u.Group < 0 || u.Group >= G:
			c.fail("unschedulable entry %d: group index %d out of range [0,%d)", i, u.Group, G)
			continue
		case u.Count <= 0:
			c.fail("unschedulable entry %d: group %s: count %d is not positive", i, c.groupName(u.Group), u.Count)
			continue
		}
		if strings.TrimSpace(u.Reason) == "" {
			c.fail("unschedulable entry %d: group %s: %d pods without a reason", i, c.groupName(u.Group), u.Count)
		}
		unsched[u.Group] = satAdd(unsched[u.Group], int64(u.Count))
	}

	for g := range c.p.Groups {
		demand := int64(c.p.Groups[g].Demand())
		got := satAdd(satAdd(onNew[g], onExisting[g]), unsched[g])
		switch {
		case got < demand:
			c.fail("group %s: %d of %d pods lost (%d on new nodes, %d on existing nodes, %d unschedulable)",
				c.groupName(g), demand-got, demand, onNew[g], onExisting[g], unsched[g])
		case got > demand:
			c.fail("group %s: %d pods accounted for but demand is %d: pods placed more than once (%d on new nodes, %d on existing nodes, %d unschedulable)",
				c.groupName(g), got, demand, onNew[g], onExisting[g], unsched[g])
		}
	}

	// Merge duplicate entries of a group on one node, then index nodes by group.
	stamp := make([]int, G)
	for i := range stamp {
		stamp[i] = -1
	}
	perGroup := make([]int, G)
	for n := range c.nodes {
		pods := c.nodes[n].pods
		dup := false
		for _, gc := range pods {
			if stamp[gc.Group] == n {
				dup = true
				break
			}
			stamp[gc.Group] = n
		}
		if dup {
			pods = mergeCounts(pods)
			c.nodes[n].pods = pods
		}
		for _, gc := range pods {
			perGroup[gc.Group]++
		}
	}
	total := 0
	for _, k := range perGroup {
		total += k
	}
	backing := make([]nodeCount, 0, total)
	c.groupNodes = make([][]nodeCount, G)
	for g, k := range perGroup {
		c.groupNodes[g] = backing[len(backing) : len(backing) : len(backing)+k]
		backing = backing[:len(backing)+k]
	}
	for n := range c.nodes {
		for _, gc := range c.nodes[n].pods {
			c.groupNodes[gc.Group] = append(c.groupNodes[gc.Group], nodeCount{n, gc.Count})
		}
	}
}

// mergeCounts sums the counts of repeated groups, keeping first-seen order.
func mergeCounts(pods []GroupCount) []GroupCount {
	out := make([]GroupCount, 0, len(pods))
	at := make(map[int]int, len(pods))
	for _, gc := range pods {
		if i, ok := at[gc.Group]; ok {
			out[i].Count = int(satAdd(int64(out[i].Count), int64(gc.Count)))
			continue
		}
		at[gc.Group] = len(out)
		out = append(out, gc)
	}
	return out
}

// buildRequests interns the resources the groups request and builds their dense request vectors. The
// "pods" resource is always present and at least 1 per pod: a pod takes a slot whatever it declares.
func (c *planCheck) buildRequests() {
	c.resIdx = map[ResourceName]int{Pods: 0}
	c.resNames = []ResourceName{Pods}
	for g := range c.p.Groups {
		for k, v := range c.p.Groups[g].Requests {
			if _, ok := c.resIdx[k]; !ok && v != 0 {
				c.resIdx[k] = len(c.resNames)
				c.resNames = append(c.resNames, k)
			}
		}
	}
	K := len(c.resNames)
	flat := make([]int64, K*len(c.p.Groups))
	c.req = make([][]int64, len(c.p.Groups))
	for g := range c.p.Groups {
		v := flat[g*K : (g+1)*K : (g+1)*K]
		for k, q := range c.p.Groups[g].Requests {
			if i, ok := c.resIdx[k]; ok {
				v[i] = max(q, 0)
			}
		}
		v[0] = max(v[0], 1)
		c.req[g] = v
	}
}

// dense returns r over the interned resources.
func (c *planCheck) dense(r Resources, out []int64) []int64 {
	for i, name := range c.resNames {
		out[i] = r[name]
	}
	return out
}

// checkCapacity checks that each node holds the summed requests of its placed pods.
func (c *planCheck) checkCapacity() {
	c.buildRequests()
	K := len(c.resNames)
	use := make([]int64, K)
	free := make([]int64, K)
	offAlloc := make(map[int][]int64)
	for n := range c.nodes {
		node := &c.nodes[n]
		if len(node.pods) == 0 {
			continue
		}
		clear(use)
		for _, gc := range node.pods {
			for k, q := range c.req[gc.Group] {
				if q != 0 {
					use[k] = satAdd(use[k], satMul(int64(gc.Count), q))
				}
			}
		}
		var bound []int64
		if node.off >= 0 {
			a, ok := offAlloc[node.off]
			if !ok {
				a = c.dense(c.p.Offerings[node.off].Allocatable, make([]int64, K))
				offAlloc[node.off] = a
			}
			copy(free, a)
		} else {
			en := &c.p.Nodes[node.ex]
			c.dense(en.Allocatable, free)
			bound = make([]int64, K)
			for j := range en.Pods {
				for k, name := range c.resNames {
					q := max(en.Pods[j].Requests[name], 0)
					if k == 0 {
						q = max(q, 1)
					}
					bound[k] = satAdd(bound[k], q)
				}
			}
			for k := range free {
				free[k] = satSub(free[k], bound[k])
			}
		}
		var over []string
		for k := range use {
			if use[k] > 0 && use[k] > free[k] {
				name := c.resNames[k]
				s := fmt.Sprintf("%s %s > %s free", name, FormatQuantity(name, use[k]), FormatQuantity(name, free[k]))
				if bound != nil {
					s += fmt.Sprintf(" (allocatable %s, bound pods %s)",
						FormatQuantity(name, c.p.Nodes[node.ex].Allocatable[name]), FormatQuantity(name, bound[k]))
				}
				over = append(over, s)
			}
		}
		if over != nil {
			c.fail("%s: placed pods exceed capacity: %s", c.nodeName(n), strings.Join(over, ", "))
		}
	}
}

// hostnameLabel is the synthetic kubernetes.io/hostname of new node n. The NUL byte keeps it distinct from
// every real hostname and from every value a requirement may hold (label values cannot contain it).
func hostnameLabel(n int) string { return "\x00new-node-" + strconv.Itoa(n) }

// nodeLabels returns the labels node selection sees on node n: for a new node its offering's labels with
// the synthetic hostname, for an existing node its labels with the hostname defaulting to its name.
func (c *planCheck) nodeLabels(n int) map[string]string {
	node := &c.nodes[n]
	host := c.hostname(n)
	if node.labels[LabelHostname] == host {
		return node.labels
	}
	return WithLabel(node.labels, LabelHostname, host)
}

// hostname is the hostname topology value of node n.
func (c *planCheck) hostname(n int) string {
	if n < c.nNew {
		return hostnameLabel(n)
	}
	if h, ok := c.nodes[n].labels[LabelHostname]; ok {
		return h
	}
	return c.p.Nodes[n-c.nNew].Name
}

// checkCompatibility checks nodeSelector, required node affinity and taints of each placement. Results for
// new nodes are cached per (offering, group), since all nodes of an offering look alike except hostname.
func (c *planCheck) checkCompatibility() {
	G := len(c.p.Groups)
	hostDependent := make([]bool, G)
	for g := range c.p.Groups {
		hostDependent[g] = c.p.Groups[g].MentionsHostname()
	}
	// verdict[off][g]: 0 not yet known, 1 compatible, 2 not (reason in reasons).
	verdict := make(map[int][]int8)
	reasons := make(map[[2]int]string)
	for n := range c.nodes {
		node := &c.nodes[n]
		var offVerdict []int8
		if node.off >= 0 {
			offVerdict = verdict[node.off]
			if offVerdict == nil {
				offVerdict = make([]int8, G)
				verdict[node.off] = offVerdict
			}
		}
		for _, gc := range node.pods {
			g := &c.p.Groups[gc.Group]
			var why string
			switch {
			case hostDependent[gc.Group]:
				why = g.Incompatibility(c.nodeLabels(n), node.taints)
			case node.off >= 0:
				switch offVerdict[gc.Group] {
				case 1:
				case 2:
					why = reasons[[2]int{node.off, gc.Group}]
				default:
					why = g.Incompatibility(node.labels, node.taints)
					offVerdict[gc.Group] = 1
					if why != "" {
						offVerdict[gc.Group] = 2
						reasons[[2]int{node.off, gc.Group}] = why
					}
				}
			default:
				why = g.Incompatibility(node.labels, node.taints)
			}
			if why != "" {
				c.fail("%s: group %s (%d pods) incompatible: %s", c.nodeName(n), c.groupName(gc.Group), gc.Count, why)
			}
		}
	}
}

// checkHostPorts checks that no host port is used twice on a node. Conflicts among bound pods alone are the
// cluster's, not the plan's, and are not reported.
func (c *planCheck) checkHostPorts() {
	ports := make([][]int32, len(c.p.Groups))
	some := false
	for g := range c.p.Groups {
		ports[g] = c.p.Groups[g].hostPorts()
		some = some || len(ports[g]) > 0
	}
	if !some {
		return
	}
	for n := range c.nodes {
		node := &c.nodes[n]
		var users map[int32]string
		for _, gc := range node.pods {
			if len(ports[gc.Group]) == 0 {
				continue
			}
			if users == nil {
				users = make(map[int32]string)
				if node.ex >= 0 {
					for _, bp := range c.p.Nodes[node.ex].Pods {
						for _, port := range normalizePorts(bp.HostPorts) {
							if _, ok := users[port]; !ok {
								users[port] = "bound pod " + bp.Ref.String()
							}
						}
					}
				}
			}
			who := "group " + c.groupName(gc.Group)
			if gc.Count > 1 {
				c.fail("%s: %d pods of group %s all use host port %d", c.nodeName(n), gc.Count, c.groupName(gc.Group), ports[gc.Group][0])
			}
			for _, port := range ports[gc.Group] {
				if prev, ok := users[port]; ok {
					c.fail("%s: %s and %s both use host port %d", c.nodeName(n), who, prev, port)
					continue
				}
				users[port] = who
			}
		}
	}
}

// checkLimits checks NodePool limits on the total Capacity of each pool's existing and new nodes. A pool in
// which the plan launches nothing is not checked: the plan cannot have pushed it over.
func (c *planCheck) checkLimits() {
	perOffering := make(map[int]int64)
	for n := 0; n < c.nNew; n++ {
		if off := c.nodes[n].off; off >= 0 {
			perOffering[off]++
		}
	}
	for i := range c.p.Pools {
		pool := &c.p.Pools[i]
		if len(pool.Limits) == 0 {
			continue
		}
		newCap, launched := Resources{}, int64(0)
		for off, k := range perOffering {
			if c.p.Offerings[off].NodePool == pool.Name {
				newCap = newCap.Add(c.p.Offerings[off].Capacity.Scale(k))
				launched += k
			}
		}
		if launched == 0 {
			continue
		}
		oldCap := Resources{}
		for j := range c.p.Nodes {
			if c.p.Nodes[j].NodePool == pool.Name {
				oldCap = oldCap.Add(c.p.Nodes[j].Capacity)
			}
		}
		total := oldCap.Add(newCap)
		for _, name := range pool.Limits.Names() {
			if limit := pool.Limits[name]; total[name] > limit {
				c.fail("pool %q: %s %s exceeds limit %s (existing nodes %s, %d new nodes %s)", pool.Name, name,
					FormatQuantity(name, total[name]), FormatQuantity(name, limit),
					FormatQuantity(name, oldCap[name]), launched, FormatQuantity(name, newCap[name]))
			}
		}
	}
}

// checkMaxCount checks that no offering with a positive MaxCount is launched more often than that.
func (c *planCheck) checkMaxCount() {
	used := make(map[int]int)
	for n := 0; n < c.nNew; n++ {
		if off := c.nodes[n].off; off >= 0 && c.p.Offerings[off].MaxCount > 0 {
			used[off]++
		}
	}
	offs := make([]int, 0, len(used))
	for off := range used {
		offs = append(offs, off)
	}
	slices.Sort(offs)
	for _, off := range offs {
		if o := &c.p.Offerings[off]; used[off] > o.MaxCount {
			c.fail("offering %q: %d new nodes exceed its max count %d", o.ID, used[off], o.MaxCount)
		}
	}
}

// checkCost checks Cost against the new nodes' prices and LowerBound against Cost.
func (c *planCheck) checkCost() {
	sum := 0.0
	for n := 0; n < c.nNew; n++ {
		if off := c.nodes[n].off; off >= 0 {
			sum += c.p.Offerings[off].Price
		}
	}
	cost := c.plan.Cost
	tol := CostRelTolerance * math.Max(math.Abs(sum), math.Abs(cost))
	if !(math.Abs(cost-sum) <= tol) { // also catches NaN
		c.fail("cost %v differs from the sum of the new nodes' prices %v", cost, sum)
	}
	if lb := c.plan.LowerBound; !(lb <= cost+BoundTolerance) {
		c.fail("lower bound %v exceeds cost %v", lb, cost)
	}
}
