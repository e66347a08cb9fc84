package catalog

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Synthetic price model, shared by KwokLike and Random and documented in docs/catalog-format.md. The rates are
// close to AWS list prices of current x86 families (c ~ $0.042, m ~ $0.048, r ~ $0.060 per vCPU-hour), so that
// benchmark costs read like real ones.
const (
	// SyntheticVCPUPrice is the on-demand USD per vCPU-hour.
	SyntheticVCPUPrice = 0.036
	// SyntheticGiBPrice is the on-demand USD per GiB-hour of memory.
	SyntheticGiBPrice = 0.003
	// SyntheticGPUPrice is the on-demand USD per GPU-hour (Random only).
	SyntheticGPUPrice = 0.55
	// SyntheticSpotMin and SyntheticSpotMax bound the spot discount: spot = on-demand × a fraction in
	// [min, max) drawn deterministically from the type and zone.
	SyntheticSpotMin = 0.3
	SyntheticSpotMax = 0.6
)

// KwokRegion and KwokZones are the region and zones of synthetic catalogs.
var (
	KwokRegion = "kwok"
	KwokZones  = []string{"kwok-a", "kwok-b", "kwok-c"}
)

// KwokSizes are the vCPU counts of KwokLike's sizes.
var KwokSizes = []int{1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256}

// kwokFamilies are KwokLike's families with their memory per vCPU.
var kwokFamilies = []struct {
	family    string
	category  Category
	gibPerCPU int64
}{
	{"c", Compute, 2},
	{"m", General, 4},
	{"r", Memory, 8},
}

// KwokMaxPods is the pod limit of synthetic types: the kubelet's default, as KWOK nodes use.
const KwokMaxPods = 110

// KwokLike returns a synthetic catalog in the spirit of Karpenter's KWOK provider: families c, m and r with 2, 4
// and 8 GiB per vCPU, sizes KwokSizes, amd64, sold on-demand and spot in each of KwokZones. Names read
// "m-4x" (family, vCPUs). Prices follow the synthetic price model: on-demand = vCPU×0.036 + GiB×0.003, spot a
// deterministic 0.3–0.6 of that per type and zone.
func KwokLike() *Catalog {
	c := &Catalog{Region: KwokRegion, Source: "packwright synthetic: catalog.KwokLike"}
	for _, f := range kwokFamilies {
		for _, cpu := range KwokSizes {
			it := InstanceType{
				Name:       fmt.Sprintf("%s-%dx", f.family, cpu),
				Family:     f.family,
				Category:   f.category,
				Generation: 1,
				Size:       fmt.Sprintf("%dx", cpu),
				Arch:       AMD64,
				VCPU:       cpu,
				MemoryMiB:  int64(cpu) * f.gibPerCPU * 1024,
				MaxPods:    KwokMaxPods,
			}
			it.Offerings = syntheticOfferings(&it, KwokZones, true)
			c.InstanceTypes = append(c.InstanceTypes, it)
		}
	}
	mustValidate(c)
	return c
}

// SyntheticOnDemandPrice is the on-demand price of the synthetic price model, rounded to 1/10000 USD.
func SyntheticOnDemandPrice(vcpu int, memoryMiB int64, gpus int) float64 {
	p := float64(vcpu)*SyntheticVCPUPrice + float64(memoryMiB)/1024*SyntheticGiBPrice + float64(gpus)*SyntheticGPUPrice
	return round4(p)
}

// SyntheticSpotFraction is the spot price as a fraction of on-demand for a type in a zone: a hash of both names
// spread over [SyntheticSpotMin, SyntheticSpotMax), so that it is stable across runs and versions.
func SyntheticSpotFraction(instanceType, zone string) float64 {
	h := fnv.New64a()
	h.Write([]byte(instanceType))
	h.Write([]byte{0})
	h.Write([]byte(zone))
	u := float64(mix64(h.Sum64())>>11) / (1 << 53)
	return SyntheticSpotMin + u*(SyntheticSpotMax-SyntheticSpotMin)
}

func syntheticOfferings(it *InstanceType, zones []string, spot bool) []Offering {
	od := SyntheticOnDemandPrice(it.VCPU, it.MemoryMiB, it.GPUs)
	var offs []Offering
	for _, z := range zones {
		offs = append(offs, Offering{Zone: z, CapacityType: OnDemand, Price: od})
		if spot {
			offs = append(offs, Offering{Zone: z, CapacityType: Spot, Price: round4(od * SyntheticSpotFraction(it.Name, z))})
		}
	}
	return offs
}

// Random returns a heterogeneous synthetic catalog of n instance types drawn from seed: any category and
// architecture, 1–192 vCPUs, 1–16 GiB per vCPU, some GPU types, each sold in one to three of KwokZones,
// on-demand always and spot mostly, priced by the synthetic model with ±15% noise. The same seed and n give the
// same catalog on every platform and Go version (math/rand/v2's PCG is specified bit for bit). n <= 0 gives an
// empty catalog, which Validate rejects.
func Random(seed int64, n int) *Catalog {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7061636b77726974)) // "packwrit"
	c := &Catalog{Region: KwokRegion, Source: fmt.Sprintf("packwright synthetic: catalog.Random(%d, %d)", seed, n)}
	cpus := []int{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192}
	gibPerCPU := []int64{1, 2, 4, 8, 16}
	letters := []struct {
		prefix   string
		category Category
	}{
		{"c", Compute}, {"m", General}, {"r", Memory}, {"t", Burstable}, {"x", Memory}, {"g", GPU}, {"p", GPU},
	}
	for i := range n {
		l := letters[rng.IntN(len(letters))]
		gen := 1 + rng.IntN(8)
		arch := AMD64
		if rng.IntN(3) == 0 {
			arch = ARM64
		}
		cpu := cpus[rng.IntN(len(cpus))]
		it := InstanceType{
			Family:     fmt.Sprintf("%s%d", l.prefix, gen),
			Category:   l.category,
			Generation: gen,
			Size:       fmt.Sprintf("%dx", cpu),
			Arch:       arch,
			VCPU:       cpu,
			MemoryMiB:  int64(cpu) * gibPerCPU[rng.IntN(len(gibPerCPU))] * 1024,
			MaxPods:    int32(min(8+cpu*16, 737)),
		}
		if it.Arch == ARM64 {
			it.Family += "g"
		}
		// The index makes names unique however the draws collide.
		it.Name = fmt.Sprintf("%s.%s-%d", it.Family, it.Size, i)
		if l.category == GPU {
			it.GPUs = 1 << rng.IntN(4)
			it.GPUName = []string{"t4", "a10g", "l4", "a100"}[rng.IntN(4)]
			it.GPUManufacturer = "nvidia"
			it.GPUMemoryMiB = []int64{16384, 24576, 40960}[rng.IntN(3)]
		}
		if rng.IntN(4) == 0 {
			it.LocalStorageGiB = int64(cpu) * 25
		}
		zones := KwokZones[:1+rng.IntN(len(KwokZones))]
		noise := 0.85 + 0.3*rng.Float64()
		for _, z := range zones {
			od := round4(SyntheticOnDemandPrice(it.VCPU, it.MemoryMiB, it.GPUs) * noise)
			it.Offerings = append(it.Offerings, Offering{Zone: z, CapacityType: OnDemand, Price: od})
			if rng.IntN(10) < 7 {
				frac := SyntheticSpotMin + rng.Float64()*(SyntheticSpotMax-SyntheticSpotMin)
				it.Offerings = append(it.Offerings, Offering{Zone: z, CapacityType: Spot, Price: round4(od * frac)})
			}
		}
		c.InstanceTypes = append(c.InstanceTypes, it)
	}
	if n > 0 {
		mustValidate(c)
	}
	return c
}

// mix64 is the splitmix64 finaliser. FNV alone barely moves its high bits when only the last byte differs (zone
// "kwok-a" against "kwok-b"), which would give every zone the same fraction.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func round4(p float64) float64 { return math.Round(p*1e4) / 1e4 }

// mustValidate indexes a catalog built by this package; a failure is a bug here, not bad input.
func mustValidate(c *Catalog) {
	if err := c.Validate(); err != nil {
		panic(fmt.Sprintf("catalog: synthetic catalog is invalid: %v", err))
	}
}
