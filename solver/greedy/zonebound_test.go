package greedy

import (
	"math"
	"slices"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

func TestZoneFloor(t *testing.T) {
	zones := []string{"a", "b", "c"}
	tests := []struct {
		name  string
		n     int
		setup func(p *model.Problem)
		want  []int // nil: no zone is forced
	}{
		{"no zone rule", 9, func(p *model.Problem) {}, nil},
		{"maxSkew 1, 3 pods", 3, func(p *model.Problem) { zoneSpread(&p.Groups[0], 1) }, []int{1, 1, 1}},
		{"maxSkew 1, 4 pods", 4, func(p *model.Problem) { zoneSpread(&p.Groups[0], 1) }, []int{1, 1, 1}},
		{"maxSkew 1, 60 pods", 60, func(p *model.Problem) { zoneSpread(&p.Groups[0], 1) }, []int{20, 20, 20}},
		{"maxSkew 1, 2 pods", 2, func(p *model.Problem) { zoneSpread(&p.Groups[0], 1) }, nil},
		{"maxSkew 2, 10 pods", 10, func(p *model.Problem) { zoneSpread(&p.Groups[0], 2) }, []int{2, 2, 2}},
		{"maxSkew 1, only two zones take it", 5, func(p *model.Problem) {
			zoneSpread(&p.Groups[0], 1)
			p.Groups[0].NodeSelector = map[string]string{"spread": "yes"}
		}, []int{2, 2, 0}},
		{"bound pods of the rule turn the spread off", 9, func(p *model.Problem) {
			zoneSpread(&p.Groups[0], 1)
			n := existing("n1", "a", 4, 16, 1)
			n.Pods = []model.BoundPod{{Ref: model.PodRef{Namespace: "default", Name: "old"}, Labels: map[string]string{"app": "web"},
				Requests: model.Resources{model.CPU: 100, model.Pods: 1}}}
			p.Nodes = append(p.Nodes, n)
		}, nil},
		{"zone anti-affinity, 3 pods", 3, func(p *model.Problem) { selfAnti(&p.Groups[0], model.LabelZone) }, []int{1, 1, 1}},
		{"zone anti-affinity, 2 pods", 2, func(p *model.Problem) { selfAnti(&p.Groups[0], model.LabelZone) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			offs := kwok(zones...)
			for i := range offs {
				if offs[i].Zone != "c" {
					offs[i].Labels["spread"] = "yes"
				}
			}
			p := problem([]model.PodGroup{group("web", tc.n, 500, gi)}, offs, zones...)
			tc.setup(p)
			c, err := prep.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			s, err := newSolver(c)
			if err != nil {
				t.Fatal(err)
			}
			got := s.zoneFloor(0, tc.n)
			if got != nil {
				// Report by zone name: prep numbers the zones.
				byName := make([]int, len(zones))
				for z, m := range got {
					byName[slices.Index(zones, c.Zones[z])] = m
				}
				got = byName
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("zoneFloor = %v, want %v", got, tc.want)
			}
		})
	}
}

// Zone a is cheap and zones b and c dear: a spread service must still put a third of its pods in each, which
// the zone-blind bounds do not see. Each pod takes a whole 2-CPU node, so the optimum is known: 2 nodes per
// zone.
func TestZoneDualBound(t *testing.T) {
	var offs []model.Offering
	for z, price := range map[string]float64{"a": 0.1, "b": 0.2, "c": 0.3} {
		offs = append(offs, offering("n2", z, 2, 4, price))
	}
	g := group("web", 6, 2000, gi)
	zoneSpread(&g, 1)
	p := problem([]model.PodGroup{g}, offs, "a", "b", "c")
	plan := solve(t, p)
	const optimum = 2 * (0.1 + 0.2 + 0.3)
	if math.Abs(plan.Cost-optimum) > 1e-9 {
		t.Fatalf("cost $%.4f/h, want the optimum $%.4f/h", plan.Cost, optimum)
	}
	// Zone-blind, every pod could be priced at zone a's $0.1/h: a bound of $0.6/h.
	if plan.LowerBound < optimum*(1-1e-6) {
		t.Fatalf("bound $%.4f/h, want the optimum $%.4f/h", plan.LowerBound, optimum)
	}
}
