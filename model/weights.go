package model

import (
	"cmp"
	"slices"
	"strings"
)

// PoolWeight returns the Weight of the NodePool named name, 0 when the problem has no such pool.
func (p *Problem) PoolWeight(name string) int32 {
	for i := range p.Pools {
		if p.Pools[i].Name == name {
			return p.Pools[i].Weight
		}
	}
	return 0
}

// OfferingWeights returns, per offering, its NodePool's weight, and whether any two offerings differ: only
// then do weights decide anything.
func (p *Problem) OfferingWeights() ([]int32, bool) {
	byName := make(map[string]int32, len(p.Pools))
	for i := range p.Pools {
		byName[p.Pools[i].Name] = p.Pools[i].Weight
	}
	out := make([]int32, len(p.Offerings))
	differ := false
	for i := range p.Offerings {
		out[i] = byName[p.Offerings[i].NodePool]
		differ = differ || out[i] != out[0]
	}
	return out, differ
}

// checkWeights enforces NodePool weights as Karpenter means them: a pod goes to a lower-weight pool only when
// no higher-weight pool can take it. Existing nodes are not concerned (pods fill them whatever their pool).
//
// The check is a one-pod move test on the plan's final state: a group on a new node of weight w is rejected
// when some offering of a pool of higher weight could take one of its pods on a fresh node that changes no
// topology domain. That offering must be compatible with the group, hold one pod of it by Allocatable, lie
// in the node's zone and have the node's value of every other topology key that a required pod
// (anti-)affinity (of a group or a bound pod) or DoNotSchedule spread of the problem uses, have MaxCount room, and keep its pool's
// existing and new nodes' Capacity within the limits. Moving a pod there would keep the plan valid and put it
// on the higher-weight pool, so the plan did not honour the weight.
//
// Where a fresh node may not be able to take the pod, the check is lenient rather than wrong: a group with
// required pod affinity, or selected by another group's required pod affinity or by a DoNotSchedule spread
// on the hostname, is not checked; and an offering does not count as room when a fresh node of it could be a
// new, empty domain of some group's DoNotSchedule spread (it is eligible for that group, and the key is not
// the zone, or the zone is not one the spread counts anyway).
func (c *planCheck) checkWeights() {
	weights, differ := c.p.OfferingWeights()
	if !differ || c.nNew == 0 {
		return
	}
	p := c.p
	exempt, spreads, keys := c.weightRules()

	// Pool usage and offering counts after the plan.
	poolOf := make(map[string]int, len(p.Pools))
	for i := range p.Pools {
		poolOf[p.Pools[i].Name] = i
	}
	used := make([]Resources, len(p.Pools))
	for i := range used {
		used[i] = Resources{}
	}
	for i := range p.Nodes {
		if pi, ok := poolOf[p.Nodes[i].NodePool]; ok {
			used[pi] = used[pi].Add(p.Nodes[i].Capacity)
		}
	}
	count := make([]int, len(p.Offerings))
	for n := 0; n < c.nNew; n++ {
		if off := c.nodes[n].off; off >= 0 {
			count[off]++
			if pi, ok := poolOf[p.Offerings[off].NodePool]; ok {
				used[pi] = used[pi].Add(p.Offerings[off].Capacity)
			}
		}
	}
	// hasRoom: one more node of offering o stays within its MaxCount and its pool's limits, and opens no
	// spread domain. Memoised (0 unknown, 1 yes, 2 no): only higher-weight offerings are ever asked.
	room := make([]int8, len(p.Offerings))
	hasRoom := func(o int) bool {
		if room[o] != 0 {
			return room[o] == 1
		}
		off := &p.Offerings[o]
		ok := off.MaxCount <= 0 || count[o] < off.MaxCount
		if pi, in := poolOf[off.NodePool]; in && ok {
			for name, l := range p.Pools[pi].Limits {
				if satAdd(used[pi][name], off.Capacity[name]) > l {
					ok = false
					break
				}
			}
		}
		if ok {
			labels := WithLabel(off.Labels, LabelHostname, "\x00potential-node")
			for _, sp := range spreads {
				if c.opensDomain(sp, o, labels) {
					ok = false
					break
				}
			}
		}
		room[o] = 2
		if ok {
			room[o] = 1
		}
		return ok
	}
	// Offerings by domain signature (their values of keys), each bucket by decreasing weight, so a node's
	// candidates are its own bucket's offerings of higher weight.
	sig := func(o int) string {
		off := &p.Offerings[o]
		var sb strings.Builder
		for _, k := range keys {
			v, ok := off.Labels[k]
			if !ok && k == LabelZone {
				v, ok = off.Zone, off.Zone != ""
			}
			if ok {
				sb.WriteString("=" + v) // nothing stands for no label
			}
			sb.WriteByte(0)
		}
		return sb.String()
	}
	sigOf := make([]string, len(p.Offerings))
	buckets := make(map[string][]int)
	for o := range p.Offerings {
		sigOf[o] = sig(o)
		buckets[sigOf[o]] = append(buckets[sigOf[o]], o)
	}
	for _, b := range buckets {
		slices.SortStableFunc(b, func(x, y int) int { return cmp.Compare(weights[y], weights[x]) })
	}
	// One verdict per (group, offering of the node): all nodes of an offering look alike here.
	type pair struct{ g, off int }
	seen := make(map[pair]bool)
	for n := 0; n < c.nNew; n++ {
		off := c.nodes[n].off
		if off < 0 {
			continue
		}
		for _, gc := range c.nodes[n].pods {
			k := pair{gc.Group, off}
			if exempt[gc.Group] || seen[k] {
				continue
			}
			seen[k] = true
			grp := &p.Groups[gc.Group]
			one := grp.Requests.Clone()
			if one == nil {
				one = Resources{}
			}
			one[Pods] = max(one[Pods], 1)
			for _, o := range buckets[sigOf[off]] {
				if weights[o] <= weights[off] {
					break
				}
				if !one.Fits(p.Offerings[o].Allocatable) || !hasRoom(o) {
					continue
				}
				labels := p.Offerings[o].Labels
				if grp.MentionsHostname() {
					labels = WithLabel(labels, LabelHostname, "\x00potential-node")
				}
				if !grp.Compatible(labels, p.Offerings[o].Taints) {
					continue
				}
				c.fail("%s: group %s is on pool %q (weight %d) but pool %q (weight %d) could take it: offering %q is compatible and within the pool's limits",
					c.nodeName(n), c.groupName(gc.Group), p.Offerings[off].NodePool, weights[off],
					p.Offerings[o].NodePool, weights[o], p.Offerings[o].ID)
				break
			}
		}
	}
}

// weightSpread is a DoNotSchedule topology spread constraint of group h, on key (with all of h's
// DoNotSchedule keys, which a node must have to be eligible).
type weightSpread struct {
	h    int
	key  string
	keys []string
}

// weightRules returns what checkWeights needs about the topology rules: the groups it does not check, the
// DoNotSchedule spread constraints, and the topology keys (zone first, hostname excluded) that a fresh node
// must match to change no domain.
func (c *planCheck) weightRules() (exempt []bool, spreads []weightSpread, keys []string) {
	p := c.p
	exempt = make([]bool, len(p.Groups))
	keys = []string{LabelZone}
	addKey := func(k string) {
		if k != LabelHostname && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for i := range p.Nodes {
		for _, bp := range p.Nodes[i].Pods {
			for _, t := range bp.PodAntiAffinity {
				addKey(t.TopologyKey)
			}
		}
	}
	for h := range p.Groups {
		gh := &p.Groups[h]
		for _, t := range gh.PodAntiAffinity {
			addKey(t.TopologyKey)
		}
		if len(gh.PodAffinity) > 0 {
			exempt[h] = true
		}
		for _, t := range gh.PodAffinity {
			addKey(t.TopologyKey)
			for g := range p.Groups {
				if t.MatchesPod(gh.Namespace, p.Groups[g].Namespace, p.Groups[g].Labels) {
					exempt[g] = true
				}
			}
		}
		var dns []string
		for _, s := range gh.TopologySpread {
			if s.WhenUnsatisfiable == DoNotSchedule && !slices.Contains(dns, s.TopologyKey) {
				dns = append(dns, s.TopologyKey)
			}
		}
		for _, s := range gh.TopologySpread {
			if s.WhenUnsatisfiable != DoNotSchedule {
				continue
			}
			addKey(s.TopologyKey)
			spreads = append(spreads, weightSpread{h: h, key: s.TopologyKey, keys: dns})
			if s.TopologyKey != LabelHostname {
				continue
			}
			// A pod moved to a fresh node is alone in a new hostname domain.
			for g := range p.Groups {
				if p.Groups[g].Namespace == gh.Namespace && s.Selector.Matches(p.Groups[g].Labels) {
					exempt[g] = true
				}
			}
		}
	}
	return exempt, spreads, keys
}

// opensDomain reports whether a fresh node of offering o (labels: its labels with a hostname) could add a
// domain to spread constraint sp, which could lower its minimum: o is eligible for the constraint's group, and
// either the key is not the zone (hostname: every node is a domain; other keys: the value may be new to the
// group) or o's zone is not one that the constraint counts whatever the nodes (a zone of Problem.Zones where
// an offering takes the group).
func (c *planCheck) opensDomain(sp weightSpread, o int, labels map[string]string) bool {
	off := &c.p.Offerings[o]
	for _, k := range sp.keys {
		if _, ok := labels[k]; !ok && !(k == LabelZone && off.Zone != "") {
			return false // not eligible: lacks a key
		}
	}
	if !c.p.Groups[sp.h].MatchesNodeLabels(labels) {
		return false
	}
	if sp.key != LabelZone {
		return true
	}
	zone, ok := off.Labels[LabelZone]
	if !ok {
		zone = off.Zone
	}
	return !slices.Contains(c.p.Zones, zone) || !c.zoneTakesGroup(sp.h, zone)
}
