package mip

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/internal/prep"
)

// compactProblem is a small random problem for the compact model: a few groups, some spread over zones or one
// per node, and a running node with room.
func compactProblem(seed uint64) *model.Problem {
	p := randomProblem(seed, 3, 4)
	for i := range p.Groups {
		g := &p.Groups[i]
		sel := &model.LabelSelector{MatchLabels: map[string]string{"app": g.Labels["app"]}}
		switch (int(seed) + i) % 3 {
		case 0:
			g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}
		case 1:
			g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}
		}
	}
	o := p.Offerings[len(p.Offerings)/2]
	p.Nodes = append(p.Nodes, model.ExistingNode{Name: "running", NodePool: "default", InstanceType: o.InstanceType, Zone: o.Zone,
		CapacityType: o.CapacityType, Price: o.Price, Capacity: o.Capacity, Allocatable: o.Allocatable,
		Labels: map[string]string{model.LabelZone: o.Zone, model.LabelHostname: "running"}})
	return p
}

// provenOptimum is the optimum of c as the compact model proves it from the greedy plan warm, and false (with
// HiGHS's status) when it does not prove it before ctx ends.
func provenOptimum(t *testing.T, ctx context.Context, c *prep.Problem, warm *model.Plan) (float64, bool, string) {
	t.Helper()
	cr, err := builtMaster(t, ctx, c).solveCompact(ctx, warm, 0)
	if err != nil {
		t.Fatal(err)
	}
	opt := warm.Cost
	if cr.plan != nil {
		opt = cr.plan.Cost
	}
	return opt, cr.bound >= opt*(1-1e-5), cr.status
}

// compiledWithGreedy compiles p and plans it with the greedy.
func compiledWithGreedy(t *testing.T, p *model.Problem) (*prep.Problem, *model.Plan) {
	t.Helper()
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := greedy.SolveCompiled(c)
	if err != nil {
		t.Fatal(err)
	}
	return c, warm
}

// The incumbent mapped onto the compact model must satisfy every row and bound, or HiGHS drops it silently; the
// model's solution must be a valid plan no dearer than the incumbent, and its bound no higher than any plan.
func TestCompactModel(t *testing.T) {
	proven := 0
	for seed := uint64(1); seed <= 8; seed++ {
		p := compactProblem(seed)
		c, warm := compiledWithGreedy(t, p)
		m, err := newMaster(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !m.placesAll(warm) {
			t.Fatalf("seed %d: greedy leaves pods out: %v", seed, warm.Unschedulable)
		}
		cm, why := m.buildCompact(warm, 0)
		if cm == nil {
			t.Fatalf("seed %d: %s", seed, why)
		}
		if cm.start == nil {
			t.Fatalf("seed %d: the greedy plan does not map onto the compact model", seed)
		}
		mod := cm.mod
		for j, v := range cm.start {
			if v < mod.ColLower[j]-1e-9 || v > mod.ColUpper[j]+1e-9 || (mod.Integrality[j] && v != math.Round(v)) {
				t.Fatalf("seed %d: start column %d = %v outside [%v, %v]", seed, j, v, mod.ColLower[j], mod.ColUpper[j])
			}
		}
		for r := range mod.RowLower {
			act := 0.0
			for k := mod.RowStart[r]; k < mod.RowStart[r+1]; k++ {
				act += mod.RowValue[k] * cm.start[mod.RowIndex[k]]
			}
			if act < mod.RowLower[r]-1e-6 || act > mod.RowUpper[r]+1e-6 {
				t.Fatalf("seed %d: the start breaks row %d: %v not in [%v, %v]", seed, r, act, mod.RowLower[r], mod.RowUpper[r])
			}
		}

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cr, err := m.solveCompact(ctx, warm, 0)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		best := warm.Cost
		if cr.plan != nil {
			if err := cr.plan.Validate(p); err != nil {
				t.Fatalf("seed %d: compact plan invalid: %v", seed, err)
			}
			if cr.plan.Cost >= warm.Cost {
				t.Fatalf("seed %d: compact plan $%v not cheaper than greedy $%v", seed, cr.plan.Cost, warm.Cost)
			}
			best = cr.plan.Cost
		}
		if cr.bound > best+1e-9 {
			t.Fatalf("seed %d: bound %v above a valid plan's cost %v", seed, cr.bound, best)
		}
		if cr.bound >= best*(1-1e-5) {
			proven++
		}
		t.Logf("seed %d: greedy $%.4f, best $%.4f, bound $%.4f: %s", seed, warm.Cost, best, cr.bound, cr.status)
	}
	if proven < 6 {
		t.Fatalf("the compact model proved only %d of 8 small problems optimal", proven)
	}
}
