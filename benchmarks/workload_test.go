package benchmarks

import (
	"reflect"
	"testing"

	"github.com/packwright/packwright/model"
)

func TestWorkloadsSizesAndValidity(t *testing.T) {
	sizes := []int{100, 1000}
	if !testing.Short() {
		sizes = append(sizes, 5000)
	}
	ws, err := Workloads(nil, sizes, Catalogs, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(Generators()) * len(sizes) * len(Catalogs); len(ws) != want {
		t.Fatalf("%d workloads, want %d", len(ws), want)
	}
	for _, w := range ws {
		p, err := w.Problem()
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		pods := 0
		for i := range p.Groups {
			pods += p.Groups[i].Demand()
		}
		if pods != w.Pods {
			t.Errorf("%s: %d pending pods, want %d", w.Name, pods, w.Pods)
		}
		if len(p.Offerings) == 0 || len(p.Zones) != 3 {
			t.Errorf("%s: %d offerings in zones %v, want some in 3 zones", w.Name, len(p.Offerings), p.Zones)
		}
		checkGenerator(t, w, p)
	}
}

// checkGenerator checks what each generator promises beyond size and validity.
func checkGenerator(t *testing.T, w Workload, p *model.Problem) {
	t.Helper()
	count := func(f func(g *model.PodGroup) bool) int {
		n := 0
		for i := range p.Groups {
			if f(&p.Groups[i]) {
				n += p.Groups[i].Demand()
			}
		}
		return n
	}
	switch w.Generator {
	case "web", "mixed":
		if n := count(func(g *model.PodGroup) bool {
			return len(g.PodAntiAffinity)+len(g.TopologySpread)+len(g.NodeSelector) > 0
		}); n > 0 {
			t.Errorf("%s: %d pods with constraints, want none", w.Name, n)
		}
	case "gpu":
		gpu := count(func(g *model.PodGroup) bool { return g.Requests[model.GPU] > 0 })
		if want := w.Pods * 3 / 10; gpu != want {
			t.Errorf("%s: %d GPU pods, want %d", w.Name, gpu, want)
		}
		if n := count(func(g *model.PodGroup) bool {
			return g.Requests[model.GPU] > 0 && len(g.NodeSelector) == 0 && len(g.NodeAffinity) == 0
		}); n > 0 {
			t.Errorf("%s: %d GPU pods without a GPU selector", w.Name, n)
		}
	case "spread":
		if n := count(func(g *model.PodGroup) bool { return len(g.PodAntiAffinity)+len(g.TopologySpread) == 0 }); n > 0 {
			t.Errorf("%s: %d pods without anti-affinity or spread", w.Name, n)
		}
	case "existing":
		if len(p.Nodes) < w.Pods/20 {
			t.Errorf("%s: %d existing nodes, want at least %d", w.Name, len(p.Nodes), w.Pods/20)
		}
		for _, n := range p.Nodes {
			used := model.Resources{}
			for _, bp := range n.Pods {
				used = used.Add(bp.Requests)
			}
			if !used.Fits(n.Allocatable) {
				t.Errorf("%s: node %s is overcommitted: %v of %v", w.Name, n.Name, used, n.Allocatable)
			}
			if frac := float64(used[model.CPU]) / float64(n.Allocatable[model.CPU]); frac > 0.8 {
				t.Errorf("%s: node %s is %.0f%% full, want at most 80%%", w.Name, n.Name, 100*frac)
			}
		}
	}
}

func TestWorkloadsDeterministic(t *testing.T) {
	for _, g := range Generators() {
		a, err := Workloads([]string{g.Name}, []int{500}, []string{CatalogKwok}, 7)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Workloads([]string{g.Name}, []int{500}, []string{CatalogKwok}, 7)
		c, _ := Workloads([]string{g.Name}, []int{500}, []string{CatalogKwok}, 8)
		pa, _ := a[0].Problem()
		pb, _ := b[0].Problem()
		pc, _ := c[0].Problem()
		if !reflect.DeepEqual(pa, pb) {
			t.Errorf("%s: two problems from seed 7 differ", g.Name)
		}
		if reflect.DeepEqual(pa.Groups, pc.Groups) && reflect.DeepEqual(pa.Nodes, pc.Nodes) {
			t.Errorf("%s: seeds 7 and 8 give the same problem", g.Name)
		}
	}
}

func TestWorkloadsErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		gens     []string
		sizes    []int
		catalogs []string
	}{
		{"unknown generator", []string{"nope"}, []int{10}, []string{CatalogKwok}},
		{"zero size", nil, []int{0}, []string{CatalogKwok}},
		{"no sizes", nil, nil, []string{CatalogKwok}},
		{"unknown catalog", nil, []int{10}, []string{"aws/mars-1"}},
	} {
		if _, err := Workloads(tc.gens, tc.sizes, tc.catalogs, 1); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
