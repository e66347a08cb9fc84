package mip

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

func TestZoneBox(t *testing.T) {
	for _, tc := range []struct {
		name           string
		skew, demand   int
		base           []int // bound pods in zones 0, 1, 2
		ok             bool
		wantLo, wantHi []float64
	}{
		{name: "even", skew: 1, demand: 6, base: []int{0, 0, 0}, ok: true, wantLo: []float64{2, 2, 2}, wantHi: []float64{2, 2, 2}},
		{name: "remainder", skew: 1, demand: 4, base: []int{0, 0, 0}, ok: true, wantLo: []float64{1, 1, 1}, wantHi: []float64{2, 2, 2}},
		{name: "bound pods level up", skew: 1, demand: 4, base: []int{3, 0, 0}, ok: true, wantLo: []float64{0, 2, 2}, wantHi: []float64{0, 3, 3}},
		{name: "bound pods above the level", skew: 1, demand: 1, base: []int{4, 0, 0}, ok: false},
		{name: "skew 2 is not a box", skew: 2, demand: 6, base: []int{0, 0, 0}, ok: false},
		{name: "no spread", skew: 0, demand: 6, base: []int{0, 0, 0}, ok: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &prep.Group{ZoneSkew: tc.skew, Demand: tc.demand, Zones: []int{0, 1, 2}, ZoneBase: tc.base}
			lo, hi, ok := zoneBox(g)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			for z := range 3 {
				if lo[z] != tc.wantLo[z] || hi[z] != tc.wantHi[z] {
					t.Errorf("zone %d: [%v, %v], want [%v, %v]", z, lo[z], hi[z], tc.wantLo[z], tc.wantHi[z])
				}
			}
		})
	}
}

// TestZoneBoxTightensTheLP: 4 pods, one per node, spread over three zones with maxSkew 1, where a node costs $1/h
// in z1 and z2 and $10/h in z3. Every plan puts one pod in z3 ($13/h). Pairwise zone rows let the LP put 2/3 of a
// pod there ($10/h); per-zone ranges do not.
func TestZoneBoxTightensTheLP(t *testing.T) {
	zones := []string{"z1", "z2", "z3"}
	p := &model.Problem{Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	for i, z := range zones {
		price := map[bool]float64{false: 1, true: 10}[i == 2]
		res := model.Resources{model.CPU: 2000, model.Memory: 4 << 30, model.Pods: 110}
		p.Offerings = append(p.Offerings, model.Offering{ID: "n/" + z, NodePool: "default", InstanceType: "n", Zone: z,
			CapacityType: model.OnDemand, Price: price, Capacity: res, Allocatable: res,
			Labels: map[string]string{model.LabelZone: z, model.LabelInstanceType: "n"}})
	}
	sel := &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	g := model.PodGroup{Name: "web", Namespace: "default", Labels: maps.Clone(sel.MatchLabels),
		Requests:        model.Resources{model.CPU: 1000, model.Memory: 1 << 30, model.Pods: 1},
		PodAntiAffinity: []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}},
		TopologySpread:  []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}}
	for i := range 4 {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d", i)})
	}
	p.Groups = []model.PodGroup{g}
	res := solveWithin(t, p, false, 2*time.Second)
	if !res.Converged {
		t.Fatalf("column generation did not converge: %+v", res)
	}
	if res.LPValue < 13-1e-6 {
		t.Errorf("LP value $%.4f/h, want $13/h (every plan has a pod in z3)", res.LPValue)
	}
	if res.LowerBound > 13+1e-6 {
		t.Errorf("lower bound $%.4f/h above the optimum $13/h", res.LowerBound)
	}
	if res.Plan == nil || res.Plan.Validate(p) != nil || res.Plan.Cost > 13+1e-6 {
		t.Errorf("plan %+v, want a valid $13/h plan", res.Plan)
	}
}
