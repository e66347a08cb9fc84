package benchmarks

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// Sizes are the pending-pod counts of the full suite.
var Sizes = []int{100, 1000, 5000, 20000, 50000}

// DefaultSeed is the seed of published figures; change it only to check that a result is not a fluke of one
// draw.
const DefaultSeed int64 = 1

// Workload is one benchmark case: a problem of a given generator, size and catalog.
type Workload struct {
	// Name is "generator/catalog/pods", e.g. "web/kwok/1000"; a snapshot's is "snapshot/<file>".
	Name      string
	Generator string
	Catalog   string
	// Pods is the number of pending pods (pods already bound to existing nodes are not counted).
	Pods int
	Seed int64
	// Problem builds the problem afresh on each call; every call returns an equal problem.
	Problem func() (*model.Problem, error)
}

// Generator makes problems of one kind. Generate is deterministic in (seed, pods, catalog).
type Generator struct {
	Name string
	// Summary is one line for help texts; docs/benchmarks.md says more.
	Summary string
	// GPU says the problems need the GPU node pool.
	GPU      bool
	generate func(b *builder)
}

// Generate builds the generator's problem with pods pending pods against cat, seeded with seed.
func (g *Generator) Generate(cat *catalog.Catalog, pods int, seed int64) (*model.Problem, error) {
	if pods < 1 {
		return nil, fmt.Errorf("generator %s: pods must be positive (got %d)", g.Name, pods)
	}
	pools := Pools(g.GPU)
	offs, zones, err := offeringsFor(cat, pools)
	if err != nil {
		return nil, fmt.Errorf("generator %s: %w", g.Name, err)
	}
	b := newBuilder(workloadSeed(seed, g.Name, pods), pods, &model.Problem{Pools: pools, Offerings: offs, Zones: zones})
	g.generate(b)
	p := b.p
	if err := p.Validate(); err != nil {
		// The generators only build valid problems; this is a bug in one of them.
		return nil, fmt.Errorf("generator %s (%d pods): generated problem is invalid: %w", g.Name, pods, err)
	}
	return p, nil
}

// workloadSeed derives a generator- and size-specific seed, so that each workload draws its own stream and
// adding a generator or a size changes no other workload. The catalog is left out on purpose: the kwok and aws
// variants of a workload then hold the same pods.
func workloadSeed(seed int64, generator string, pods int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", seed, generator, pods)
	return h.Sum64()
}

// Generators lists every generator, in report order.
func Generators() []*Generator {
	return []*Generator{webGenerator, mixedGenerator, gpuGenerator, spreadGenerator, existingGenerator}
}

// GeneratorNames lists the names of Generators.
func GeneratorNames() []string {
	var names []string
	for _, g := range Generators() {
		names = append(names, g.Name)
	}
	return names
}

// LookupGenerator returns the generator called name.
func LookupGenerator(name string) (*Generator, error) {
	for _, g := range Generators() {
		if g.Name == name {
			return g, nil
		}
	}
	return nil, fmt.Errorf("unknown workload %q (want one of %s)", name, strings.Join(GeneratorNames(), ", "))
}

// Workloads returns one workload per (generator, catalog, size), generator-major, then catalog, then size. An
// empty generators list means all of them. Each catalog is loaded once and shared, read-only, by its workloads.
func Workloads(generators []string, sizes []int, catalogs []string, seed int64) ([]Workload, error) {
	if len(generators) == 0 {
		generators = GeneratorNames()
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("workloads: no sizes")
	}
	if len(catalogs) == 0 {
		return nil, fmt.Errorf("workloads: no catalogs")
	}
	cats := make(map[string]*catalog.Catalog, len(catalogs))
	for _, name := range catalogs {
		c, err := LoadCatalog(name)
		if err != nil {
			return nil, err
		}
		cats[name] = c
	}
	var out []Workload
	for _, gname := range generators {
		g, err := LookupGenerator(gname)
		if err != nil {
			return nil, err
		}
		for _, cname := range catalogs {
			for _, n := range sizes {
				if n < 1 {
					return nil, fmt.Errorf("workloads: size %d is not positive", n)
				}
				cat := cats[cname]
				out = append(out, Workload{
					Name:      fmt.Sprintf("%s/%s/%d", g.Name, cname, n),
					Generator: g.Name,
					Catalog:   cname,
					Pods:      n,
					Seed:      seed,
					Problem:   func() (*model.Problem, error) { return g.Generate(cat, n, seed) },
				})
			}
		}
	}
	return out, nil
}

// ProblemWorkload wraps a problem that was built elsewhere (such as from a cluster snapshot) as a workload.
// Problem returns p itself each time; the solvers do not modify their input.
func ProblemWorkload(name, catalogName string, p *model.Problem) Workload {
	pods := 0
	for i := range p.Groups {
		pods += p.Groups[i].Demand()
	}
	return Workload{
		Name:      name,
		Generator: "snapshot",
		Catalog:   catalogName,
		Pods:      pods,
		Problem:   func() (*model.Problem, error) { return p, nil },
	}
}

// SortedSizes returns the distinct sizes of ws, ascending.
func SortedSizes(ws []Workload) []int {
	var s []int
	for _, w := range ws {
		if !slices.Contains(s, w.Pods) {
			s = append(s, w.Pods)
		}
	}
	slices.Sort(s)
	return s
}
