package catalog

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// maxReported caps how many problems one Validate error lists: past that the file is clearly of another shape
// and more lines only bury the first.
const maxReported = 20

// Validate checks every field of every instance type and rebuilds the name index. Its error lists each problem
// on its own line, naming the instance type and the field, e.g.
//
//	instance type "m5.large": offerings[1].price: must not be negative (got -0.1)
func (c *Catalog) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		if len(errs) < maxReported {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if c.Region == "" {
		add("region: must not be empty")
	}
	if c.SnapshotDate != "" {
		if _, err := time.Parse(time.DateOnly, c.SnapshotDate); err != nil {
			add("snapshotDate: want YYYY-MM-DD, got %q", c.SnapshotDate)
		}
	}
	if len(c.InstanceTypes) == 0 {
		add("instanceTypes: must not be empty")
	}
	index := make(map[string]int, len(c.InstanceTypes))
	for i := range c.InstanceTypes {
		it := &c.InstanceTypes[i]
		where := fmt.Sprintf("instance type %q", it.Name)
		if it.Name == "" {
			where = fmt.Sprintf("instanceTypes[%d]", i)
			add("%s: name: must not be empty", where)
		} else if j, dup := index[it.Name]; dup {
			add("%s: name: duplicate of instanceTypes[%d]", where, j)
		} else {
			index[it.Name] = i
		}
		for _, p := range it.problems() {
			add("%s: %s", where, p)
		}
	}
	if len(errs) == 0 {
		c.index = index
		return nil
	}
	return fmt.Errorf("invalid catalog: %w", errors.Join(errs...))
}

// problems lists what is wrong with one instance type, each as "field: reason".
func (it *InstanceType) problems() []string {
	var ps []string
	bad := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if it.Family == "" {
		bad("family: must not be empty")
	}
	if it.Size == "" {
		bad("size: must not be empty")
	}
	if !slices.Contains(Categories, it.Category) {
		bad("category: unknown category %q (want one of %v)", it.Category, Categories)
	}
	if it.Generation < 0 {
		bad("generation: must not be negative (got %d)", it.Generation)
	}
	if it.Arch != AMD64 && it.Arch != ARM64 {
		bad("arch: unknown architecture %q (want %q or %q)", it.Arch, AMD64, ARM64)
	}
	if it.VCPU <= 0 {
		bad("vcpu: must be positive (got %d)", it.VCPU)
	}
	if it.MemoryMiB <= 0 {
		bad("memoryMiB: must be positive (got %d)", it.MemoryMiB)
	}
	if it.MaxPods <= 0 {
		bad("maxPods: must be positive (got %d)", it.MaxPods)
	}
	if it.LocalStorageGiB < 0 {
		bad("localStorageGiB: must not be negative (got %d)", it.LocalStorageGiB)
	}
	switch {
	case it.GPUs < 0:
		bad("gpus: must not be negative (got %d)", it.GPUs)
	case it.GPUs == 0 && (it.GPUName != "" || it.GPUMemoryMiB != 0):
		// A GPU name without GPUs is a half-filled record; rejecting it catches a gpus field left out.
		bad("gpus: is 0 but gpuName or gpuMemoryMiB is set")
	case it.GPUs > 0 && it.GPUName == "":
		bad("gpuName: must be set when gpus is %d", it.GPUs)
	}
	if it.GPUMemoryMiB < 0 {
		bad("gpuMemoryMiB: must not be negative (got %d)", it.GPUMemoryMiB)
	}
	if e := it.ENI; e != nil {
		if e.MaxInterfaces <= 0 {
			bad("eni.maxInterfaces: must be positive (got %d)", e.MaxInterfaces)
		}
		if e.IPv4PerInterface < 2 {
			bad("eni.ipv4PerInterface: must be at least 2 (got %d)", e.IPv4PerInterface)
		}
	}
	if len(it.Offerings) == 0 {
		bad("offerings: must not be empty")
	}
	seen := map[[2]string]int{}
	for j, o := range it.Offerings {
		f := fmt.Sprintf("offerings[%d]", j)
		if o.Zone == "" {
			bad("%s.zone: must not be empty", f)
		}
		if o.CapacityType != OnDemand && o.CapacityType != Spot {
			bad("%s.capacityType: unknown capacity type %q (want %q or %q)", f, o.CapacityType, OnDemand, Spot)
		}
		switch {
		case math.IsNaN(o.Price) || math.IsInf(o.Price, 0):
			bad("%s.price: must be a finite number", f)
		case o.Price < 0:
			bad("%s.price: must not be negative (got %g)", f, o.Price)
		}
		key := [2]string{o.Zone, o.CapacityType}
		if k, dup := seen[key]; dup {
			bad("%s: duplicate of offerings[%d] (%s %s)", f, k, o.Zone, o.CapacityType)
		} else {
			seen[key] = j
		}
	}
	return ps
}
