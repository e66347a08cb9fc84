package greedy

import (
	"math"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

func TestZoneCounts(t *testing.T) {
	cheap := []float64{3, 1, 2} // zone 1 is the cheapest, then zone 2
	for _, tc := range []struct {
		name   string
		g      prep.Group
		want   []int // pending pods per zone, nil for no split
		wantOK bool
	}{
		{name: "even", g: prep.Group{ZoneSkew: 1, ZoneCap: -1, Demand: 6, Zones: []int{0, 1, 2}, ZoneBase: []int{0, 0, 0}}, want: []int{2, 2, 2}, wantOK: true},
		{name: "remainder to the cheapest zones", g: prep.Group{ZoneSkew: 1, ZoneCap: -1, Demand: 5, Zones: []int{0, 1, 2}, ZoneBase: []int{0, 0, 0}}, want: []int{1, 2, 2}, wantOK: true},
		{name: "bound pods level up", g: prep.Group{ZoneSkew: 1, ZoneCap: -1, Demand: 4, Zones: []int{0, 1, 2}, ZoneBase: []int{3, 0, 0}}, want: []int{0, 2, 2}, wantOK: true},
		{name: "bound pods above the level", g: prep.Group{ZoneSkew: 1, ZoneCap: -1, Demand: 1, Zones: []int{0, 1, 2}, ZoneBase: []int{4, 0, 0}}},
		{name: "skew 2", g: prep.Group{ZoneSkew: 2, ZoneCap: -1, Demand: 6, Zones: []int{0, 1, 2}, ZoneBase: []int{0, 0, 0}}},
		{name: "zone anti-affinity too", g: prep.Group{ZoneSkew: 1, ZoneCap: 1, Demand: 3, Zones: []int{0, 1, 2}, ZoneBase: []int{0, 0, 0}}},
		{name: "two eligible zones", g: prep.Group{ZoneSkew: 1, ZoneCap: -1, Demand: 3, Zones: []int{0, 2}, ZoneBase: []int{0, 0, 0}}, want: []int{1, 0, 2}, wantOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := zoneCounts(&tc.g, cheap)
			if (got != nil) != tc.wantOK {
				t.Fatalf("counts %v, want a split: %v", got, tc.wantOK)
			}
			for z, n := range tc.want {
				if got[z] != n {
					t.Errorf("zone %d: %d pods, want %d (all: %v)", z, got[z], n, got)
				}
			}
		})
	}
}

// On spread problems the plan with zone spreads split up front validates, and the greedy keeps the cheaper of it
// and the plan that balances zones as it goes; on some of them the split plan is the cheaper one.
func TestZoneSplitPlans(t *testing.T) {
	splitWins := 0
	for seed := uint64(1); seed <= 8; seed++ {
		p := spreadProblem(seed, 30)
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		z := SplitZones(c)
		if z == nil {
			t.Fatalf("seed %d: no group split", seed)
		}
		split := z.planOf(c)
		if split == nil {
			t.Fatalf("seed %d: the split plan is invalid or failed", seed)
		}
		if err := split.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if split.Placed() != placeablePods(p) {
			t.Fatalf("seed %d: split plan places %d of %d pods", seed, split.Placed(), placeablePods(p))
		}
		plain, _, err := solveCompiled(c, false, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SolveCompiled(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if want := min(plain.Cost, split.Cost); got.Cost > want+1e-9 {
			t.Errorf("seed %d: greedy $%.4f/h, want the cheaper of $%.4f/h (as it goes) and $%.4f/h (split)", seed, got.Cost, plain.Cost, split.Cost)
		}
		if got.LowerBound > plain.LowerBound+1e-9 {
			t.Errorf("seed %d: bound $%.4f/h taken from the split problem (the original's is $%.4f/h)", seed, got.LowerBound, plain.LowerBound)
		}
		if split.Cost < plain.Cost-1e-9 {
			splitWins++
		}
		t.Logf("seed %d: as it goes $%.4f/h, split $%.4f/h", seed, plain.Cost, split.Cost)
	}
	if splitWins == 0 {
		t.Error("the split plan was never the cheaper one")
	}
}

func placeablePods(p *model.Problem) int {
	n := 0
	for _, g := range p.Groups {
		n += len(g.Pods)
	}
	return n
}

// SolveCompiledWithSplit hands back the split it planned, planned once: Planned returns the same compiled split
// and plan on every call, that plan is the one a fresh compile and greedy run make, and the plan returned is no
// dearer than the split's. A problem without zone spreads has no split.
func TestSolveCompiledWithSplitHandsBackItsPlan(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		p := spreadProblem(seed, 30)
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		best, _, z, err := SolveCompiledWithSplit(c)
		if err != nil {
			t.Fatal(err)
		}
		if z == nil {
			t.Fatalf("seed %d: no split", seed)
		}
		sc, sp, err := z.Planned()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if sc2, sp2, _ := z.Planned(); sc2 != sc || sp2 != sp {
			t.Fatalf("seed %d: Planned made the split's plan again", seed)
		}
		fresh, err := prep.Compile(z.Problem)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := SolveCompiled(fresh)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(fp.Cost-sp.Cost) > 1e-9 || fp.Placed() != sp.Placed() {
			t.Fatalf("seed %d: Planned's plan $%.4f/h placing %d, a fresh one $%.4f/h placing %d", seed, sp.Cost, sp.Placed(), fp.Cost, fp.Placed())
		}
		if mapped := z.PlanOf(sp); mapped.Validate(p) == nil && mapped.Placed() >= best.Placed() && best.Cost > mapped.Cost+1e-9 {
			t.Fatalf("seed %d: plan $%.4f/h, the split's $%.4f/h", seed, best.Cost, mapped.Cost)
		}
	}
	c, err := prep.Compile(mixedProblem(30, 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, z, err := SolveCompiledWithSplit(c); err != nil || z != nil {
		t.Fatalf("a problem without zone spreads: split %v, err %v", z != nil, err)
	}
}
