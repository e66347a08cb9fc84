package catalog

import (
	"slices"
	"sort"
)

// ByName returns the instance type called name, or false.
func (c *Catalog) ByName(name string) (*InstanceType, bool) {
	// The index is a hint: a catalog built or edited by hand may not have one, or a stale one, so the entry is
	// checked and a linear scan is the fallback.
	if i, ok := c.index[name]; ok && i < len(c.InstanceTypes) && c.InstanceTypes[i].Name == name {
		return &c.InstanceTypes[i], true
	}
	for i := range c.InstanceTypes {
		if c.InstanceTypes[i].Name == name {
			return &c.InstanceTypes[i], true
		}
	}
	return nil, false
}

// Price returns the hourly price of an instance type in a zone and capacity type, for pricing existing nodes;
// false when the catalog does not sell that combination.
func (c *Catalog) Price(instanceType, zone, capacityType string) (float64, bool) {
	it, ok := c.ByName(instanceType)
	if !ok {
		return 0, false
	}
	for _, o := range it.Offerings {
		if o.Zone == zone && o.CapacityType == capacityType {
			return o.Price, true
		}
	}
	return 0, false
}

// Zones returns every zone that some offering uses, sorted.
func (c *Catalog) Zones() []string {
	set := map[string]bool{}
	for i := range c.InstanceTypes {
		for _, o := range c.InstanceTypes[i].Offerings {
			set[o.Zone] = true
		}
	}
	zones := make([]string, 0, len(set))
	for z := range set {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	return zones
}

// Families returns every instance family in the catalog, sorted.
func (c *Catalog) Families() []string {
	set := map[string]bool{}
	for i := range c.InstanceTypes {
		set[c.InstanceTypes[i].Family] = true
	}
	fams := make([]string, 0, len(set))
	for f := range set {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	return fams
}

// Clone returns a deep copy, so that a caller may edit a shared catalog (such as an embedded one) safely.
func (c *Catalog) Clone() *Catalog {
	out := *c
	out.InstanceTypes = slices.Clone(c.InstanceTypes)
	for i := range out.InstanceTypes {
		it := &out.InstanceTypes[i]
		it.Offerings = slices.Clone(it.Offerings)
		if it.ENI != nil {
			e := *it.ENI
			it.ENI = &e
		}
	}
	if c.index != nil {
		out.index = make(map[string]int, len(c.index))
		for k, v := range c.index {
			out.index[k] = v
		}
	}
	return &out
}
