package greedy

import (
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

// CompleteOnto fills the nodes it is given before it opens its own, drops those it leaves empty and rejects an
// offering that does not exist.
func TestCompleteOnto(t *testing.T) {
	offs := []model.Offering{offering("big", "z1", 8, 32, 0.8), offering("small", "z1", 2, 8, 0.1)}
	p := problem([]model.PodGroup{group("web", 10, 1000, gi)}, offs, "z1")
	for _, tc := range []struct {
		name  string
		nodes []int
		want  map[string]int // new nodes per offering ID
	}{
		// Greedy alone takes five small nodes ($0.50/h); given a big node, it fills it and opens one small.
		{name: "given nodes first", nodes: []int{0}, want: map[string]int{"big/z1": 1, "small/z1": 1}},
		// Two of three big nodes hold the ten pods; the third is left empty and dropped.
		{name: "empty node dropped", nodes: []int{0, 0, 0}, want: map[string]int{"big/z1": 2}},
		{name: "none given", nodes: nil, want: map[string]int{"small/z1": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := CompleteOnto(p, tc.nodes, "test")
			if err != nil {
				t.Fatal(err)
			}
			if err := plan.Validate(p); err != nil {
				t.Fatalf("plan invalid: %v\n%s", err, describePlan(p, plan))
			}
			got, cost := map[string]int{}, 0.0
			for _, nn := range plan.NewNodes {
				if len(nn.Pods) == 0 {
					t.Fatalf("an empty node of %s is kept", p.Offerings[nn.Offering].ID)
				}
				got[p.Offerings[nn.Offering].ID]++
				cost += p.Offerings[nn.Offering].Price
			}
			if len(got) != len(tc.want) {
				t.Fatalf("nodes %v, want %v", got, tc.want)
			}
			for id, n := range tc.want {
				if got[id] != n {
					t.Fatalf("nodes %v, want %v", got, tc.want)
				}
			}
			if plan.Cost < cost-1e-9 || plan.Cost > cost+1e-9 || plan.Placed() != 10 || plan.Solver != "test" {
				t.Fatalf("cost %v (nodes %v), placed %d, solver %q", plan.Cost, cost, plan.Placed(), plan.Solver)
			}
		})
	}
	if _, err := CompleteOnto(p, []int{2}, "test"); err == nil || !strings.Contains(err.Error(), "offering 2") {
		t.Fatalf("offering out of range: err %v", err)
	}
}
