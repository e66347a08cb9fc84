package mip

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/packwright/packwright/solver/internal/prep"
)

// class is a set of interchangeable offerings represented by its cheapest member: same allocatable, same
// compatible groups, and (where it matters) the same zone and NodePool. Classes dominated by a cheaper, larger,
// more compatible class are dropped: any pattern of a dominated class fits the dominating one for less.
type class struct {
	rep      int // offering index (the cheapest member)
	price    float64
	alloc    prep.Vec
	capacity prep.Vec
	zone     int   // -1 when zones do not matter
	pool     int   // -1 when the pool has no limits
	weight   int32 // the NodePool weight (classes never mix weights)
	groups   []int
	// limit caps the class's new nodes (0: unlimited): the summed MaxCount of its members, which are offerings
	// with a MaxCount, cheapest first. Such a class stands for those offerings only, priced at the cheapest, so
	// the LP stays a relaxation; the plan hands each node a member of its own.
	limit    int
	members  []int
	limitRow int
	// dominated marks a limited class that a cheaper unlimited class dominates: it is never priced, but kept so
	// that a warm plan using one of its members has a column under the limit row.
	dominated bool
	// resident are the units (of master groups) that every pattern of the class holds: the pods a consolidation
	// candidate already runs (model.Offering.Resident), so keeping it never counts on moving them. free is the
	// room left beside them, which the pricing knapsack fills. Both are set by master.setResidents.
	resident []unitCount
	free     prep.Vec
}

// buildClasses reduces the offerings to non-dominated classes.
func buildClasses(ctx context.Context, c *prep.Problem, active []int) ([]class, error) {
	zonesMatter := false
	for _, g := range active {
		if c.Groups[g].ZoneSkew > 0 || c.Groups[g].ZoneCap > 0 {
			zonesMatter = true
		}
	}
	limited := make([]bool, len(c.Pools))
	for i, p := range c.Pools {
		for _, l := range p.Limit {
			if l >= 0 {
				limited[i] = true
			}
		}
	}
	byKey := map[string]*class{}
	var order []string
	for oi := range c.Offerings {
		if oi%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		o := &c.Offerings[oi]
		var groups []int
		for _, g := range active {
			if c.Groups[g].OfferingOK[oi] {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			continue
		}
		zone, pool := -1, -1
		if zonesMatter {
			zone = o.Zone
		}
		if o.Pool >= 0 && limited[o.Pool] {
			pool = o.Pool
		}
		limited := c.Src.Offerings[o.Index].MaxCount > 0
		var sb strings.Builder
		if limited {
			// Limited offerings only share a class with each other: a class is either a count or unlimited.
			sb.WriteString("limited|")
		}
		fmt.Fprint(&sb, zone, "|", pool, "|", o.Alloc, "|", groups)
		if c.Tiered {
			fmt.Fprint(&sb, "|w", o.Weight)
		}
		if pool >= 0 {
			fmt.Fprint(&sb, "|", o.Capacity)
		}
		if r := c.Src.Offerings[o.Index].Resident; len(r) > 0 {
			fmt.Fprint(&sb, "|r", r) // only offerings with the same residents are interchangeable
		}
		key := sb.String()
		if cl, ok := byKey[key]; ok {
			if o.Price < cl.price {
				cl.rep, cl.price = oi, o.Price
			}
			if limited {
				cl.members = append(cl.members, oi)
				cl.limit += c.Src.Offerings[o.Index].MaxCount
			}
			continue
		}
		cl := &class{rep: oi, price: o.Price, alloc: o.Alloc, capacity: o.Capacity, zone: zone, pool: pool, groups: groups,
			weight: o.Weight}
		if limited {
			cl.members, cl.limit = []int{oi}, c.Src.Offerings[o.Index].MaxCount
		}
		byKey[key] = cl
		order = append(order, key)
	}
	for _, cl := range byKey {
		sort.SliceStable(cl.members, func(i, j int) bool { return c.Offerings[cl.members[i]].Price < c.Offerings[cl.members[j]].Price })
	}
	all := make([]class, 0, len(order))
	for _, k := range order {
		all = append(all, *byKey[k])
	}
	// Dominance: cheapest first, so a class can only be dominated by one earlier in the order (or an equal price).
	sort.SliceStable(all, func(i, j int) bool { return all[i].price < all[j].price })
	kept := make([]class, 0, len(all))
	var shadowed []class
	for ai, a := range all {
		if ai%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		dominated := false
		for bi := range kept {
			if dominates(&kept[bi], &a) {
				dominated = true
				break
			}
		}
		switch {
		case !dominated:
			kept = append(kept, a)
		case a.limit > 0:
			a.dominated = true
			shadowed = append(shadowed, a)
		}
	}
	return append(kept, shadowed...), nil
}

// dominates reports whether b makes a redundant: no dearer, at least as large, compatible with every group a
// is, in the same zone and pool, using no more of the pool's limits, of no lower weight (so no more weight
// penalty), and not limited in count itself.
func dominates(b, a *class) bool {
	// A limited class cannot stand in for another: it may run out.
	if b.limit > 0 || b.dominated || b.price > a.price || b.zone != a.zone || b.pool != a.pool || b.weight < a.weight {
		return false
	}
	for k := range a.alloc {
		if b.alloc[k] < a.alloc[k] {
			return false
		}
	}
	if a.pool >= 0 {
		for k := range a.capacity {
			if b.capacity[k] > a.capacity[k] {
				return false
			}
		}
	}
	// groups are sorted ascending: check a.groups ⊆ b.groups.
	i := 0
	for _, g := range a.groups {
		for i < len(b.groups) && b.groups[i] < g {
			i++
		}
		if i == len(b.groups) || b.groups[i] != g {
			return false
		}
	}
	return true
}
