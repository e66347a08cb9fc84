// Command gen writes the embedded default AWS catalogs (catalog/data/aws-REGION.json) from the family table in
// families.go. It is run by `go generate ./catalog` and is not part of any binary. Its output is deterministic:
// spot prices are a hash of (region, type, zone), not random draws, so a re-run changes nothing unless the table
// does.
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/packwright/packwright/catalog"
)

// snapshotDate is the day the table's prices were checked against AWS's public price list.
const snapshotDate = "2026-12-02"

const source = "packwright catalog/internal/gen: AWS published instance specifications and Linux on-demand " +
	"list prices (shared tenancy); spot prices are modelled as a deterministic per-zone fraction of on-demand, " +
	"not market data. Refresh from AWS with awsrefresh for real prices."

func main() {
	out := flag.String("out", "data", "directory to write aws-REGION.json files into")
	flag.Parse()
	for _, r := range regions {
		c, err := build(r)
		if err != nil {
			log.Fatalf("gen: %s: %v", r.name, err)
		}
		path := filepath.Join(*out, "aws-"+r.name+".json")
		if err := c.WriteFile(path); err != nil {
			log.Fatalf("gen: %v", err)
		}
		// A read-back proves the file is in the format Load accepts.
		if _, err := catalog.LoadFile(path); err != nil {
			log.Fatalf("gen: read back: %v", err)
		}
		fmt.Fprintf(os.Stderr, "gen: wrote %s (%d instance types)\n", path, len(c.InstanceTypes))
	}
}

func build(r region) (*catalog.Catalog, error) {
	c := &catalog.Catalog{Region: r.name, SnapshotDate: snapshotDate, Source: source}
	for _, f := range families {
		types, err := f.instanceTypes(r)
		if err != nil {
			return nil, fmt.Errorf("family %s: %w", f.name, err)
		}
		c.InstanceTypes = append(c.InstanceTypes, types...)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (f family) instanceTypes(r region) ([]catalog.InstanceType, error) {
	zoneLetters := f.zones
	if zoneLetters == "" {
		zoneLetters = "abc"
	}
	var zones []string
	for _, l := range zoneLetters {
		zones = append(zones, r.name+string(l))
	}
	factor := r.priceFactor[""]
	if v, ok := r.priceFactor[f.category]; ok {
		factor = v
	}
	if v, ok := r.familyFactor[f.name]; ok {
		factor = v
	}
	var out []catalog.InstanceType
	add := func(size string, vcpu int, memMiB int64, price float64, nvmeGB int64, e eni) {
		it := catalog.InstanceType{
			Name:            f.name + "." + size,
			Family:          f.name,
			Category:        catalog.Category(f.category),
			Generation:      f.gen,
			Size:            size,
			Arch:            f.arch,
			VCPU:            vcpu,
			MemoryMiB:       memMiB,
			LocalStorageGiB: gbToGiB(nvmeGB),
			ENI:             &catalog.ENILimits{MaxInterfaces: e.interfaces, IPv4PerInterface: e.ipv4},
		}
		it.MaxPods = it.ENI.MaxPods()
		if g := f.gpu; g != nil {
			it.GPUName, it.GPUManufacturer, it.GPUMemoryMiB = g.name, g.manufacturer, g.memoryMiB
		}
		od := round(price*factor, 4)
		if factor == 1 {
			od = round(price, 6) // us-east-1 list prices keep their published digits
		}
		for _, z := range zones {
			it.Offerings = append(it.Offerings,
				catalog.Offering{Zone: z, CapacityType: catalog.OnDemand, Price: od},
				catalog.Offering{Zone: z, CapacityType: catalog.Spot, Price: round(od*spotFraction(r, f, it.Name, z), 4)})
		}
		out = append(out, it)
	}
	if g := f.gpu; g != nil {
		for _, s := range g.sizes {
			n := len(out)
			add(s.size, s.vcpu, s.memGiB*1024, s.price, s.nvmeGB, s.eni)
			out[n].GPUs = s.gpus
		}
		return out, nil
	}
	for _, size := range f.sizes {
		vcpu, err := f.vcpus(size)
		if err != nil {
			return nil, err
		}
		mem := int64(math.Round(float64(vcpu) * f.gibPerCPU * 1024))
		if m, ok := f.memMiB[size]; ok {
			mem = m
		}
		if mem <= 0 {
			return nil, fmt.Errorf("size %s: no memory", size)
		}
		nvme := int64(math.Floor(float64(vcpu) * f.nvmeGBPerCPU))
		if v, ok := f.nvmeGB[size]; ok {
			nvme = v
		}
		e := defaultENI(vcpu)
		if v, ok := f.eni[size]; ok {
			e = v
		}
		add(size, vcpu, mem, f.largePrice*float64(vcpu)/2, nvme, e)
	}
	return out, nil
}

// vcpus parses a size name: large=2, xlarge=4, NNxlarge=4*NN, and the family's metal sizes.
func (f family) vcpus(size string) (int, error) {
	switch {
	case size == "large":
		return 2, nil
	case size == "xlarge":
		return 4, nil
	case strings.HasPrefix(size, "metal"):
		if v, ok := f.metalCPU[size]; ok {
			return v, nil
		}
		return 0, fmt.Errorf("size %s: no vCPU count for this metal size", size)
	case strings.HasSuffix(size, "xlarge"):
		n, err := strconv.Atoi(strings.TrimSuffix(size, "xlarge"))
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("size %s: cannot parse", size)
		}
		return 4 * n, nil
	}
	return 0, fmt.Errorf("size %s: cannot parse", size)
}

// defaultENI is the Nitro interface limit by vCPU count, which most families follow.
func defaultENI(vcpu int) eni {
	switch {
	case vcpu <= 2:
		return eni{3, 10}
	case vcpu <= 8:
		return eni{4, 15}
	case vcpu <= 48:
		return eni{8, 30}
	}
	return eni{15, 50}
}

// spotFraction is the spot/on-demand ratio of a type in a zone: the category's base, shifted per region and
// jittered by a hash so that zones differ (the solver should see that the cheapest zone depends on the type).
func spotFraction(r region, f family, name, zone string) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", r.name, name, zone)
	u := float64(mix64(h.Sum64())>>11)/(1<<53)*2 - 1 // [-1, 1)
	return spotBase[f.category] + r.spotShift + u*spotJitter
}

// mix64 is the splitmix64 finaliser. FNV alone barely moves its high bits when only the last byte differs (zone
// "a" against "b"), which would give every zone the same fraction.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// gbToGiB converts AWS's decimal instance-store gigabytes to whole GiB, rounding down so that ephemeral-storage is
// never overstated.
func gbToGiB(gb int64) int64 { return gb * 1_000_000_000 / (1 << 30) }

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
