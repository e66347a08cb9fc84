package benchmarks

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// Catalog names accepted by Offerings and Workloads.
const (
	// CatalogKwok is catalog.KwokLike (families c, m, r in three zones, on-demand and spot) plus the synthetic
	// GPU types of KwokGPUTypes, priced by the synthetic model.
	CatalogKwok = "kwok"
	// CatalogAWS is the embedded AWS us-east-1 catalog: three zones, on-demand and spot, list prices.
	CatalogAWS = "aws/us-east-1"
)

// Catalogs lists the catalog names the suite knows.
var Catalogs = []string{CatalogKwok, CatalogAWS}

// Node pool names of generated problems.
const (
	PoolDefault = "default"
	PoolGPU     = "gpu"
)

// GPUTaint is the taint of the GPU pool's nodes; only pods that tolerate it (the GPU jobs) run there, so that
// CPU-only pods never land on an expensive GPU node.
var GPUTaint = model.Taint{Key: string(model.GPU), Value: "true", Effect: model.NoSchedule}

// kwokGPURates are the per-GPU hourly rates of the synthetic GPU types, by GPU name. They replace
// catalog.SyntheticGPUPrice so that the three GPU kinds differ in price, as on AWS (T4 < L4 < A10G).
var kwokGPURates = map[string]float64{"t4": 0.35, "l4": 0.45, "a10g": catalog.SyntheticGPUPrice}

// kwokGPUShapes are the (vCPU, GPU) sizes of each synthetic GPU family: 4 vCPU and 16 GiB per GPU, as on
// AWS's g4dn/g5/g6 sizes that hold whole GPUs.
var kwokGPUShapes = [][2]int{{4, 1}, {8, 1}, {16, 1}, {16, 2}, {32, 4}, {48, 4}, {96, 8}}

// KwokGPUTypes returns the synthetic GPU instance types that CatalogKwok adds to catalog.KwokLike: families
// gpu-t4, gpu-l4 and gpu-a10g with the sizes of kwokGPUShapes, named like "gpu-t4-16x2" (16 vCPU, 2 GPUs),
// 4 GiB per vCPU, sold on-demand and spot in every Kwok zone. On-demand price = vCPU×0.036 + GiB×0.003 +
// GPUs×rate (t4 0.35, l4 0.45, a10g 0.55); spot = on-demand × catalog.SyntheticSpotFraction.
func KwokGPUTypes() []catalog.InstanceType {
	var out []catalog.InstanceType
	for _, gpu := range []string{"a10g", "l4", "t4"} {
		for _, s := range kwokGPUShapes {
			cpu, gpus := s[0], s[1]
			it := catalog.InstanceType{
				Name:            fmt.Sprintf("gpu-%s-%dx%d", gpu, cpu, gpus),
				Family:          "gpu-" + gpu,
				Category:        catalog.GPU,
				Generation:      1,
				Size:            fmt.Sprintf("%dx%d", cpu, gpus),
				Arch:            catalog.AMD64,
				VCPU:            cpu,
				MemoryMiB:       int64(cpu) * 4 * 1024,
				GPUs:            gpus,
				GPUName:         gpu,
				GPUManufacturer: "nvidia",
				GPUMemoryMiB:    24 * 1024,
				MaxPods:         catalog.KwokMaxPods,
			}
			od := roundPrice(float64(cpu)*catalog.SyntheticVCPUPrice + float64(it.MemoryMiB)/1024*catalog.SyntheticGiBPrice +
				float64(gpus)*kwokGPURates[gpu])
			for _, z := range catalog.KwokZones {
				it.Offerings = append(it.Offerings,
					catalog.Offering{Zone: z, CapacityType: catalog.OnDemand, Price: od},
					catalog.Offering{Zone: z, CapacityType: catalog.Spot, Price: roundPrice(od * catalog.SyntheticSpotFraction(it.Name, z))})
			}
			out = append(out, it)
		}
	}
	return out
}

func roundPrice(p float64) float64 {
	// Whole 1/10000 USD, as the catalogs store prices.
	return math.Round(p*1e4) / 1e4
}

// LoadCatalog returns the catalog a suite catalog name stands for: CatalogKwok, CatalogAWS, or any spec that
// catalog.Resolve accepts (another embedded region or a catalog file).
func LoadCatalog(name string) (*catalog.Catalog, error) {
	if name == CatalogKwok {
		c := catalog.KwokLike()
		c.InstanceTypes = append(c.InstanceTypes, KwokGPUTypes()...)
		c.Source += " + benchmarks.KwokGPUTypes"
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", name, err)
		}
		return c, nil
	}
	c, err := catalog.Resolve(name)
	if err != nil {
		return nil, fmt.Errorf("benchmark catalog %q (want %s): %w", name, strings.Join(Catalogs, " or "), err)
	}
	return c, nil
}

// Pools returns the node pools of generated problems: PoolDefault (amd64 instance types without GPUs, any
// zone and capacity type) and, when gpu is set, PoolGPU (GPU types only, tainted with GPUTaint).
func Pools(gpu bool) []model.NodePool {
	noGPU := model.Requirement{Key: catalog.LabelInstanceGPUCount, Operator: model.OpIn, Values: []string{"0"}}
	amd64 := model.Requirement{Key: model.LabelArch, Operator: model.OpIn, Values: []string{catalog.AMD64}}
	pools := []model.NodePool{{Name: PoolDefault, Requirements: model.Requirements{amd64, noGPU}}}
	if gpu {
		pools = append(pools, model.NodePool{
			Name:         PoolGPU,
			Requirements: model.Requirements{amd64, {Key: catalog.LabelInstanceGPUCount, Operator: model.OpGt, Values: []string{"0"}}},
			Taints:       []model.Taint{GPUTaint},
		})
	}
	return pools
}

// offeringsFor returns every offering of pools in cat, pool by pool, and the sorted zones they use.
func offeringsFor(cat *catalog.Catalog, pools []model.NodePool) ([]model.Offering, []string, error) {
	var offs []model.Offering
	zones := map[string]bool{}
	for _, pl := range pools {
		o, err := cat.Offerings(pl, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("offerings of pool %s: %w", pl.Name, err)
		}
		for i := range o {
			zones[o[i].Zone] = true
		}
		offs = append(offs, o...)
	}
	zs := make([]string, 0, len(zones))
	for z := range zones {
		zs = append(zs, z)
	}
	slices.Sort(zs)
	return offs, zs, nil
}
