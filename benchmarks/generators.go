package benchmarks

import (
	"fmt"
	"slices"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// webShapes are the request sizes of stateless web services, most common first (weights by repetition).
var webShapes = []shape{
	{250, 256 * mi}, {250, 256 * mi}, {250, 512 * mi}, {250, 512 * mi}, {500, 512 * mi},
	{500, 1 * gi}, {500, 1 * gi}, {100, 128 * mi}, {1000, 1 * gi}, {1000, 2 * gi},
}

// cpuHeavyShapes are compute-bound services: 1–4 cores with 0.25–1 GiB per core.
var cpuHeavyShapes = shapeGrid([]int64{1000, 1500, 2000, 3000, 4000}, func(cpu int64) []int64 {
	return []int64{cpu * gi / 4000, cpu * gi / 2000, cpu * gi / 1000}
})

// memHeavyShapes are caches and JVMs: 0.25–1 core with 4–16 GiB.
var memHeavyShapes = shapeGrid([]int64{250, 500, 1000}, func(int64) []int64 {
	return []int64{4 * gi, 8 * gi, 12 * gi, 16 * gi}
})

func shapeGrid(cpus []int64, mems func(cpu int64) []int64) []shape {
	var out []shape
	for _, c := range cpus {
		for _, m := range mems(c) {
			out = append(out, shape{c, m})
		}
	}
	return out
}

var webGenerator = &Generator{
	Name:    "web",
	Summary: "uniform stateless web services, 2–50 replicas, 100m–1 CPU and 128Mi–2Gi, no constraints",
	generate: func(b *builder) {
		for b.remaining() > 0 {
			svc, s := b.service("web"), pick(b, webShapes)
			b.add("web", s.String(), svc, b.replicas(2, 50), plain(s))
		}
	},
}

var mixedGenerator = &Generator{
	Name:    "mixed",
	Summary: "half CPU-heavy (1–4 CPU, 0.25–1 GiB/CPU), half memory-heavy (0.25–1 CPU, 4–16 GiB) services",
	generate: func(b *builder) {
		for b.remaining() > 0 {
			shapes, prefix := cpuHeavyShapes, "compute"
			if b.rng.IntN(2) == 0 {
				shapes, prefix = memHeavyShapes, "cache"
			}
			svc, s := b.service(prefix), pick(b, shapes)
			b.add("mixed", s.String(), svc, b.replicas(2, 40), plain(s))
		}
	},
}

// gpuNames are the GPU kinds GPU jobs select, present in both suite catalogs.
var gpuNames = []string{"t4", "l4", "a10g"}

var gpuGenerator = &Generator{
	Name: "gpu",
	Summary: "ML jobs: 30% GPU pods (1–8 GPUs, nodeSelector or affinity on the GPU model, tolerating the GPU taint), " +
		"70% CPU data-prep pods (half pinned to spot by nodeSelector)",
	GPU: true,
	generate: func(b *builder) {
		gpuPods := b.target * 3 / 10
		for b.remaining() > 0 {
			if b.made < gpuPods {
				addGPUJob(b, gpuPods-b.made)
				continue
			}
			svc, s := b.service("prep"), pick(b, cpuHeavyShapes)
			spot := b.rng.IntN(2) == 0
			name := s.String()
			if spot {
				name += "-spot"
			}
			b.add("ml", name, svc, b.replicas(2, 40), func() model.PodGroup {
				g := model.PodGroup{Requests: s.requests(), NodeSelector: map[string]string{model.LabelArch: catalog.AMD64}}
				if spot {
					g.NodeSelector[model.LabelCapacityType] = model.Spot
				}
				return g
			})
		}
	},
}

// addGPUJob adds one GPU job of at most limit pods: 3 CPU and 12 GiB per GPU, so that a pod fits the smallest
// node with its GPU count. Training jobs name one GPU model by nodeSelector; inference jobs accept T4 or L4 by
// required node affinity.
func addGPUJob(b *builder, limit int) {
	gpus := pick(b, []int64{1, 1, 1, 2, 4, 8})
	req := model.Resources{model.CPU: 3000 * gpus, model.Memory: 12 * gi * gpus, model.GPU: gpus, model.Pods: 1}
	tol := []model.Toleration{{Key: GPUTaint.Key, Operator: model.TolerationExists, Effect: model.NoSchedule}}
	n := min(b.replicas(1, 16), limit)
	if b.rng.IntN(3) == 0 {
		svc := b.service("infer")
		b.add("ml", fmt.Sprintf("infer-%dgpu", gpus), svc, n, func() model.PodGroup {
			return model.PodGroup{Requests: req, Tolerations: tol, NodeAffinity: model.NodeSelectorTerms{{
				{Key: catalog.LabelInstanceGPUName, Operator: model.OpIn, Values: []string{"t4", "l4"}},
			}}}
		})
		return
	}
	gpu := pick(b, gpuNames)
	svc := b.service("train")
	b.add("ml", fmt.Sprintf("train-%s-%dgpu", gpu, gpus), svc, n, func() model.PodGroup {
		return model.PodGroup{Requests: req, Tolerations: tol, NodeSelector: map[string]string{catalog.LabelInstanceGPUName: gpu}}
	})
}

var spreadGenerator = &Generator{
	Name: "spread",
	Summary: "services with required hostname anti-affinity (2–12 replicas), zone topology spread maxSkew 1 " +
		"(3–60 replicas) or both; one group per service",
	generate: func(b *builder) {
		for b.remaining() > 0 {
			s := pick(b, webShapes)
			kind := b.rng.IntN(3) // 0 anti-affinity, 1 spread, 2 both
			lo, hi := 2, 12
			if kind == 1 {
				lo, hi = 3, 60
			}
			svc := b.service([]string{"ha", "zonal", "hazonal"}[kind])
			b.add("spread", svc, svc, b.replicas(lo, hi), func() model.PodGroup {
				g := model.PodGroup{Requests: s.requests(), Labels: map[string]string{"app": svc}}
				if kind != 1 {
					g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: appSelector(svc), TopologyKey: model.LabelHostname}}
				}
				if kind != 0 {
					g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone,
						WhenUnsatisfiable: model.DoNotSchedule, Selector: appSelector(svc)}}
				}
				return g
			})
		}
	},
}

// boundShapes are the requests of the pods already running in the existing workload; heavyShapes are the
// CPU- and memory-heavy requests together.
var (
	boundShapes = slices.Concat(webShapes, memHeavyShapes)
	heavyShapes = slices.Concat(cpuHeavyShapes, memHeavyShapes)
)

var existingGenerator = &Generator{
	Name: "existing",
	Summary: "a running cluster (one 4–16 vCPU node per 20 pending pods, each 30–80% full) and pending web and " +
		"CPU/memory-heavy pods, some of which fit the free space",
	generate: func(b *builder) {
		var sizes []*model.Offering
		for i := range b.p.Offerings {
			o := &b.p.Offerings[i]
			if cpu := o.Labels[catalog.LabelInstanceCPU]; o.NodePool == PoolDefault && (cpu == "4" || cpu == "8" || cpu == "16") {
				sizes = append(sizes, o)
			}
		}
		nodes := max(3, b.target/20)
		bound := 0
		for i := range nodes {
			n := existingNode(fmt.Sprintf("node-%05d", i+1), pick(b, sizes))
			fill := 0.3 + 0.5*b.rng.Float64()
			// Add pods until the next one would take cpu or memory past the node's fill level.
			used := model.Resources{}
			for {
				r := pick(b, boundShapes).requests()
				next := used.Add(r)
				if !next.Fits(n.Allocatable) || float64(next[model.CPU]) > fill*float64(n.Allocatable[model.CPU]) ||
					float64(next[model.Memory]) > fill*float64(n.Allocatable[model.Memory]) {
					break
				}
				used = next
				bound++
				svc := fmt.Sprintf("running-%03d", bound%97)
				n.Pods = append(n.Pods, model.BoundPod{
					Ref:      model.PodRef{Namespace: "existing", Name: fmt.Sprintf("%s-%d", svc, bound)},
					Labels:   map[string]string{"app": svc},
					Requests: r,
				})
			}
			b.p.Nodes = append(b.p.Nodes, n)
		}
		for b.remaining() > 0 {
			shapes, prefix := webShapes, "web"
			if b.rng.IntN(3) == 0 {
				shapes, prefix = heavyShapes, "svc"
			}
			svc, s := b.service(prefix), pick(b, shapes)
			b.add("existing", s.String(), svc, b.replicas(2, 40), plain(s))
		}
	},
}
