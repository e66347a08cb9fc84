package solver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/mip"
)

// splitLoss is a problem whose zone split is dearer than its optimum: the spread group's third pod goes to
// zone a (the cheaper per CPU) in the split, where it needs a second node, while the optimum puts it in zone b
// beside the b-pinned pods: $1.90/h against $2.20/h.
func splitLoss() (p *model.Problem, optimum *model.Plan) {
	group := func(name string, pods int, zone string) model.PodGroup {
		g := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
			Requests: model.Resources{model.CPU: 1000, model.Pods: 1}}
		if zone != "" {
			g.NodeSelector = map[string]string{model.LabelZone: zone}
		} else {
			g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule,
				Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
		}
		for i := range pods {
			g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i)})
		}
		return g
	}
	p = &model.Problem{Zones: []string{"a", "b"}, Pools: []model.NodePool{{Name: "default"}},
		Offerings: []model.Offering{cpuOffering("a4", "a", 4000, 0.9), cpuOffering("a1", "a", 1000, 0.3), cpuOffering("b4", "b", 4000, 1)},
		Groups:    []model.PodGroup{group("spread", 3, ""), group("in-a", 3, "a"), group("in-b", 2, "b")}}
	optimum = &model.Plan{Solver: "hand", Cost: 1.9, NewNodes: []model.NewNode{
		{Offering: 0, Pods: []model.GroupCount{{Group: 0, Count: 1}, {Group: 1, Count: 3}}},
		{Offering: 2, Pods: []model.GroupCount{{Group: 0, Count: 2}, {Group: 2, Count: 2}}}}}
	return p, optimum
}

// The MIP's plan of a zone split is a valid plan of the original problem, but the split's own bound is not a
// bound of it: the bound reported is the original's, at most its optimum, even where the split costs more.
func TestSolveSplitBoundsTheOriginal(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	p, optimum := splitLoss()
	if err := optimum.Validate(p); err != nil {
		t.Fatalf("the hand-made optimum is invalid: %v", err)
	}
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	z := greedy.SplitZones(c)
	if z == nil {
		t.Fatal("no zone split")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := solveSplit(ctx, c, z, mip.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatalf("no plan (%s)", res.MasterStatus)
	}
	if err := res.Plan.Validate(p); err != nil {
		t.Fatalf("the split's plan is invalid for the original: %v", err)
	}
	t.Logf("split plan $%.4f/h, bound $%.4f/h (%s)", res.Plan.Cost, res.LowerBound, res.MasterStatus)
	if res.Plan.Cost < 2.2-1e-9 {
		t.Errorf("split plan $%.4f/h: below the split's optimum $2.20/h, so the split did not restrict (the test is void)", res.Plan.Cost)
	}
	if res.LowerBound > optimum.Cost+1e-9 {
		t.Errorf("bound $%.4f/h is above the optimum $%.4f/h: the split's bound was reported", res.LowerBound, optimum.Cost)
	}
	if res.LowerBound <= 0 {
		t.Errorf("no bound: the original's bound was not proven")
	}
}

// The portfolio plans the zone split from splitMinPods pending pods, not below them nor beside running nodes'
// residents; on a spread problem that large its plan is valid and its bound at most its cost.
func TestZoneSplitFor(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	small, _ := splitLoss()
	large := spreadServices(3, 60)
	for _, tc := range []struct {
		name      string
		p         *model.Problem
		residents bool
		want      bool
	}{
		{"few pods", small, false, false},
		{"many pods", large, false, true},
		{"residents", large, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := prep.Compile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := zoneSplitFor(c, greedy.SplitZones(c), tc.residents) != nil; got != tc.want {
				t.Fatalf("zone split planned: %v, want %v (%d placeable pods)", got, tc.want, c.Placeable())
			}
		})
	}
	plan, err := Solve(context.Background(), large, Options{Deadline: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := plan.Validate(large); err != nil {
		t.Fatalf("invalid plan: %v", err)
	}
	if plan.LowerBound <= 0 || plan.LowerBound > plan.Cost+1e-9 {
		t.Fatalf("bound $%.4f/h for a plan of $%.4f/h", plan.LowerBound, plan.Cost)
	}
	t.Logf("$%.4f/h, bound $%.4f/h, %s %s", plan.Cost, plan.LowerBound, plan.Status, plan.StatusReason)
}
