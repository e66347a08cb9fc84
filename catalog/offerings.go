package catalog

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/packwright/packwright/model"
)

// Offerings converts the catalog into the offerings of pool: one model.Offering per (instance type, zone,
// capacity type) whose labels satisfy pool.Requirements, in name, zone, capacity-type order. The ID is
// "pool/type/zone/capacityType". Allocatable holds no DaemonSet overhead (the cluster package subtracts it per
// offering). The catalog applies no defaults of its own: a pool without a capacity-type requirement gets spot
// and on-demand offerings alike.
//
// A pool label may not set a key that the catalog sets (such as topology.kubernetes.io/zone), because the
// node's real label would contradict it.
func (c *Catalog) Offerings(pool model.NodePool, kubelet *KubeletConfig) ([]model.Offering, error) {
	if pool.Name == "" {
		return nil, fmt.Errorf("catalog %s: offerings: node pool has no name", c.Region)
	}
	if kubelet != nil && kubelet.MaxPods != nil && *kubelet.MaxPods <= 0 {
		return nil, fmt.Errorf("catalog %s: node pool %s: kubelet maxPods must be positive (got %d)", c.Region, pool.Name, *kubelet.MaxPods)
	}
	// A malformed requirement (In without values, Gt on a non-number) would silently match nothing; say why.
	if err := pool.Requirements.Validate(); err != nil {
		return nil, fmt.Errorf("catalog %s: node pool %s: %w", c.Region, pool.Name, err)
	}
	var out []model.Offering
	for _, i := range c.sortedIndices() {
		it := &c.InstanceTypes[i]
		capacity := it.Capacity(kubelet)
		alloc := it.Allocatable(kubelet)
		for _, o := range sortedOfferings(it.Offerings) {
			labels := it.Labels(c.Region, o.Zone, o.CapacityType, pool.Name)
			for k, v := range pool.Labels {
				if _, clash := labels[k]; clash {
					return nil, fmt.Errorf("catalog %s: node pool %s: label %s is set by the catalog and may not be set by the pool", c.Region, pool.Name, k)
				}
				labels[k] = v
			}
			if !pool.Requirements.Matches(labels) {
				continue
			}
			out = append(out, model.Offering{
				ID:           pool.Name + "/" + it.Name + "/" + o.Zone + "/" + o.CapacityType,
				NodePool:     pool.Name,
				InstanceType: it.Name,
				Zone:         o.Zone,
				CapacityType: o.CapacityType,
				Price:        o.Price,
				Capacity:     maps.Clone(capacity),
				Allocatable:  maps.Clone(alloc),
				Labels:       labels,
				Taints:       slices.Clone(pool.Taints),
			})
		}
	}
	return out, nil
}

// sortedIndices returns instance type indices in name order, so that offerings (and with them solver input) do
// not depend on the order of the file.
func (c *Catalog) sortedIndices() []int {
	idx := make([]int, len(c.InstanceTypes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Compare(c.InstanceTypes[a].Name, c.InstanceTypes[b].Name)
	})
	return idx
}

func sortedOfferings(offs []Offering) []Offering {
	s := slices.Clone(offs)
	slices.SortStableFunc(s, func(a, b Offering) int {
		return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.CapacityType, b.CapacityType))
	})
	return s
}
