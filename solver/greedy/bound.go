package greedy

import (
	"cmp"
	"math"
	"slices"

	"github.com/packwright/packwright/model"
)

// lowerBound is a proven lower bound on the hourly cost of the new nodes of any valid plan that places the
// same number of pods of each group, x_g, as this one.
//
// Why it is valid. Take such a plan, and a new node of offering o in it holding c_g pods of each group. For
// any resource k, p_o >= sum_g c_g r_gk (p_o / a_ok) >= sum_g c_g r_gk rho_gk, where rho_gk is the least price
// per unit of k over the offerings that could hold a pod of g (p_o/a_ok is one of them, since the node holds
// g's pods). Summing over the plan's new nodes: cost >= sum_g y_g r_gk rho_gk, with y_g = x_g - e_g the pods
// of g not on existing nodes. Sharing a node between groups does not help, since the inequality holds node by
// node; zones, spread, affinity and pool limits only remove plans, so ignoring them keeps the bound valid.
// The e_g are unknown, so the bound takes the worst case: the existing nodes' free k (R_k) spent on the
// groups with the highest rho_gk, each up to what fits on its compatible existing nodes (a fractional
// knapsack, whose optimum is at least any plan's saving). The bound for k is then
// sum_g x_g r_gk rho_gk - saving_k, and any k gives a bound, so the largest is taken.
//
// Groups that take one pod per node (host ports, or hostname anti-affinity to themselves) also need
// x_g - n_g distinct new nodes, n_g being the existing nodes that could hold one, each costing at least the
// cheapest offering that could hold a pod; the largest of these is a bound too. So is the dual-price bound
// (dualBound), which values cpu and memory together and is much the strongest for mixed workloads.
func (s *solver) lowerBound(initFree [][]int64) float64 {
	G := len(s.p.Groups)
	rho := make([][]float64, G)    // per group, per dim; 0 when unknown (a safe value)
	minPrice := make([]float64, G) // cheapest offering that could hold a pod; 0 when unknown
	onExisting := make([]int, G)   // pods of g that fit on compatible existing nodes, each node alone
	nodesFor := make([]int, G)     // compatible existing nodes with room for one pod
	inUnion := make([]bool, len(s.p.Offerings))
	var union []int
	for g := 0; g < G; g++ {
		rho[g] = make([]float64, s.dims)
		if s.placed[g] == 0 {
			continue
		}
		offs := s.boundOfferings(g)
		for _, o := range offs {
			if !inUnion[o] {
				inUnion[o] = true
				union = append(union, o)
			}
		}
		minPrice[g] = math.Inf(1)
		for k := range rho[g] {
			rho[g][k] = math.Inf(1)
		}
		for _, o := range offs {
			price := s.p.Offerings[o].Price
			minPrice[g] = min(minPrice[g], price)
			for k, a := range s.alloc[o] {
				if a > 0 {
					rho[g][k] = min(rho[g][k], price/float64(a))
				}
			}
		}
		if len(offs) == 0 {
			minPrice[g] = 0
		}
		for k := range rho[g] {
			if math.IsInf(rho[g][k], 1) {
				rho[g][k] = 0
			}
		}
		pg := &s.p.Groups[g]
		for n := range s.p.Nodes {
			if !pg.Compatible(s.nodeLabels(n), s.p.Nodes[n].Taints) {
				continue
			}
			if f, _ := s.fitCount(g, initFree[n], s.placed[g]); f > 0 {
				onExisting[g] += f
				nodesFor[g]++
			}
		}
	}

	best := 0.0
	type item struct {
		rho   float64
		units float64
	}
	items := make([]item, 0, G)
	for k := 0; k < s.dims; k++ {
		need := 0.0
		items = items[:0]
		for g := 0; g < G; g++ {
			q := s.req[g][k]
			if s.placed[g] == 0 || q == 0 || rho[g][k] == 0 {
				continue
			}
			need += float64(s.placed[g]) * float64(q) * rho[g][k]
			if e := min(onExisting[g], s.placed[g]); e > 0 {
				items = append(items, item{rho[g][k], float64(e) * float64(q)})
			}
		}
		var room float64
		for n := range s.p.Nodes {
			room += float64(max(initFree[n][k], 0))
		}
		slices.SortFunc(items, func(a, b item) int { return cmp.Compare(b.rho, a.rho) })
		saving := 0.0
		for _, it := range items {
			if room <= 0 {
				break
			}
			u := min(it.units, room)
			saving += u * it.rho
			room -= u
		}
		best = max(best, need-saving)
	}
	best = max(best, s.dualBound(union, onExisting, initFree))
	best = max(best, s.zoneDualBound(union, onExisting, initFree))
	for g := 0; g < G; g++ {
		if s.placed[g] > 0 && (len(s.rule[g].ports) > 0 || s.selfHostAnti(g)) {
			best = max(best, float64(max(s.placed[g]-nodesFor[g], 0))*minPrice[g])
		}
	}
	// Rounding must never push the bound above what it bounds.
	return max(best*(1-1e-9), 0)
}

// dualBound is the bound of dual prices pi that no offering any placed group could use is priced below:
// every new node of a valid plan is such an offering, so its price is at least a_o . pi, which is at least the
// value at pi of the pods it holds. Summing, cost >= sum_g y_g (r_g . pi), and the pods on existing nodes
// can save at most the value of the nodes' free capacity, or of what fits of each group, whichever is less.
func (s *solver) dualBound(union, onExisting []int, initFree [][]int64) float64 {
	demand := make([]float64, s.dims)
	for g, x := range s.placed {
		for k, q := range s.req[g] {
			demand[k] += float64(x) * float64(q)
		}
	}
	pi := s.dualPrices(s.dualHull(union), demand)
	need, fits := 0.0, 0.0
	for g, x := range s.placed {
		v := dot(s.req[g], pi)
		need += float64(x) * v
		fits += float64(min(onExisting[g], x)) * v
	}
	room := 0.0
	for n := range initFree {
		for k, f := range initFree[n] {
			room += float64(max(f, 0)) * pi[k]
		}
	}
	return need - min(room, fits)
}

// boundOfferings lists offerings that could hold one pod of group g in some valid plan (a superset is
// safe). prep's compatible list is exact for most groups; for co-located groups it keeps only offerings that
// hold every pod, and for groups selecting on the hostname it misses the synthetic hostname, so those are
// recomputed from the model.
func (s *solver) boundOfferings(g int) []int {
	if !s.c.Groups[g].CoLocate && !s.rule[g].hostMentions {
		return s.c.Groups[g].Offerings
	}
	pg := &s.p.Groups[g]
	var out []int
	for o := range s.p.Offerings {
		off := &s.p.Offerings[o]
		if f, _ := s.fitCount(g, s.alloc[o], 1); f == 0 {
			continue
		}
		labels := off.Labels
		if s.rule[g].hostMentions {
			labels = model.WithLabel(labels, model.LabelHostname, syntheticHost)
		}
		if pg.Compatible(labels, off.Taints) {
			out = append(out, o)
		}
	}
	return out
}

// zoneDualBound is dualBound with prices per zone, for plans whose zone rules force pods into dearer zones
// (spot prices differ by zone by 10% or more). For each zone z, prices pi_z value no offering of z above its
// price, so every new node in z costs at least the value at pi_z of its pods. A group whose zone spread or
// zone anti-affinity forces at least m_z of its pods into zone z (zoneFloor) pays at least m_z of them at
// pi_z and the rest at its cheapest zone's. Pods on existing nodes save at most what dualBound says, each
// valued at its dearest zone's prices. It is 0 when no group has a zone rule that forces anything.
func (s *solver) zoneDualBound(union, onExisting []int, initFree [][]int64) float64 {
	Z := len(s.c.Zones)
	if Z < 2 {
		return 0
	}
	G := len(s.p.Groups)
	floor := make([][]int, G)
	forcing := false
	for g, x := range s.placed {
		if x > 0 {
			if floor[g] = s.zoneFloor(g, x); floor[g] != nil {
				forcing = true
			}
		}
	}
	if !forcing {
		return 0
	}
	byZone := make([][]int, Z)
	for _, o := range union {
		z := s.c.Offerings[o].Zone
		if z < 0 {
			return 0 // a node in no zone would need prices of its own; no catalog has one
		}
		byZone[z] = append(byZone[z], o)
	}
	// Price each zone for the demand it must take plus an even share of the rest: any prices are valid, these
	// aim at a large bound.
	demand := make([][]float64, Z)
	for z := range demand {
		demand[z] = make([]float64, s.dims)
	}
	for g, x := range s.placed {
		if x == 0 {
			continue
		}
		free := float64(x)
		for z := range floor[g] {
			free -= float64(floor[g][z])
		}
		for z := range Z {
			n := free / float64(Z)
			if floor[g] != nil {
				n += float64(floor[g][z])
			}
			for k, q := range s.req[g] {
				demand[z][k] += n * float64(q)
			}
		}
	}
	pi := make([][]float64, Z)
	for z := range Z {
		pi[z] = s.dualPrices(s.dualHull(byZone[z]), demand[z])
	}
	need, fits := 0.0, 0.0
	for g, x := range s.placed {
		if x == 0 {
			continue
		}
		// v[z] values a pod of g on a new node in zone z; a zone with no offering for g holds none of its pods on
		// new nodes (0 keeps the bound valid), and the cheapest zone that has one takes the pods not forced.
		has := make([]bool, Z)
		for _, o := range s.boundOfferings(g) {
			if z := s.c.Offerings[o].Zone; z >= 0 {
				has[z] = true
			}
		}
		vmin, vmax := math.Inf(1), 0.0
		v := make([]float64, Z)
		for z := range Z {
			if has[z] {
				v[z] = dot(s.req[g], pi[z])
				vmin = min(vmin, v[z])
			}
			vmax = max(vmax, v[z])
		}
		if math.IsInf(vmin, 1) {
			continue // no new node can hold it: it costs nothing here
		}
		free := x
		for z, m := range floor[g] {
			need += float64(m) * v[z]
			free -= m
		}
		need += float64(free) * vmin
		fits += float64(min(onExisting[g], x)) * vmax
	}
	room := 0.0
	for n := range initFree {
		zpi := pi[0]
		if z := s.c.Nodes[n].Zone; z >= 0 {
			zpi = pi[z]
		} else {
			zpi = make([]float64, s.dims) // a node in no zone: the dearest price of each resource
			for z := range Z {
				for k := range zpi {
					zpi[k] = max(zpi[k], pi[z][k])
				}
			}
		}
		for k, f := range initFree[n] {
			room += float64(max(f, 0)) * zpi[k]
		}
	}
	return need - min(room, fits)
}

// zoneFloor is the least number of g's x pods that any valid plan puts in each zone, or nil when its zone
// rules force none.
//
// Zone spread (maxSkew s over the group's Z eligible zones, counted by model.Plan.Validate on the zones that
// receive pods): with no bound pods of the rule, a zone that receives none leaves the minimum at 0 and every
// zone at most s, and a zone that receives some is within s of the minimum, so n_z >= n_max - s either way;
// the n sum to x, so n_z >= ceil((x - s(Z-1)) / Z). Bound pods break that (a full zone that receives nothing
// does not raise the others), so they turn the spread part off. prep leaves out a spread whose selector
// matches other pending groups, whose pods would count too.
//
// Zone anti-affinity: at most u_z = cap - bound more in zone z, so a zone takes at least what the others
// cannot.
func (s *solver) zoneFloor(g, x int) []int {
	cg := &s.c.Groups[g]
	if (cg.ZoneSkew <= 0 && cg.ZoneCap <= 0) || len(cg.Zones) < 2 {
		return nil
	}
	out := make([]int, len(s.c.Zones))
	forced := false
	bound := false
	for _, z := range cg.Zones {
		bound = bound || cg.ZoneBase[z] != 0
	}
	if Z := len(cg.Zones); cg.ZoneSkew > 0 && !bound {
		if lo := x - cg.ZoneSkew*(Z-1); lo > 0 {
			t := (lo + Z - 1) / Z
			for _, z := range cg.Zones {
				out[z], forced = t, true
			}
		}
	}
	if cg.ZoneCap > 0 {
		room := 0
		for _, z := range cg.Zones {
			room += max(cg.ZoneCap-cg.ZoneBase[z], 0)
		}
		for _, z := range cg.Zones {
			if m := x - (room - max(cg.ZoneCap-cg.ZoneBase[z], 0)); m > out[z] {
				out[z], forced = m, true
			}
		}
	}
	// No zone can be forced to take more than the group has.
	for z := range out {
		out[z] = min(out[z], x)
	}
	if !forced {
		return nil
	}
	return out
}
