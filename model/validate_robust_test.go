package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestValidateNeverPanics feeds Validate random junk: unvalidated problems (nil maps, nil selectors, empty
// keys, negative quantities, unknown pools) and plans with out-of-range indices and absurd counts.
func TestValidateNeverPanics(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ints := []int{-1, 0, 1, 2, 3, math.MaxInt, math.MinInt}
	anyInt := func() int { return ints[r.IntN(len(ints))] }
	keys := []string{"", LabelHostname, LabelZone, "rack"}
	key := func() string { return keys[r.IntN(len(keys))] }
	term := func() PodAffinityTerm {
		var s *LabelSelector
		if r.IntN(2) == 0 {
			s = &LabelSelector{MatchLabels: lbl("app", "x"), MatchExpressions: Requirements{req("app", Operator([]string{"In", "Gt", "?"}[r.IntN(3)]))}}
		}
		return PodAffinityTerm{Selector: s, TopologyKey: key()}
	}
	for i := range 3000 {
		p := &Problem{Zones: []string{"", "a"}[:r.IntN(3)]}
		for range r.IntN(3) {
			o := Offering{ID: "o", NodePool: []string{"", "x"}[r.IntN(2)], Price: []float64{1, math.NaN(), -1}[r.IntN(3)]}
			if r.IntN(2) == 0 {
				o.Labels = map[string]string{LabelZone: "a"}
				o.Allocatable = Resources{CPU: int64(anyInt()), Pods: math.MaxInt64}
				o.Capacity = Resources{CPU: math.MaxInt64}
			}
			p.Offerings = append(p.Offerings, o)
		}
		for range r.IntN(3) {
			n := ExistingNode{Name: "n", NodePool: "x"}
			if r.IntN(2) == 0 {
				n.Labels = map[string]string{LabelZone: "b"}
				n.Pods = []BoundPod{{Labels: lbl("app", "x"), Requests: Resources{CPU: -5}, HostPorts: []int32{0, 80, -1},
					PodAntiAffinity: []PodAffinityTerm{term()}}}
			}
			p.Nodes = append(p.Nodes, n)
		}
		if r.IntN(2) == 0 {
			p.Pools = []NodePool{{Name: "x", Limits: Resources{CPU: int64(anyInt())}}}
		}
		for range r.IntN(4) {
			g := PodGroup{Pods: make([]PodRef, r.IntN(3))}
			if r.IntN(2) == 0 {
				g.Labels = lbl("app", "x")
				g.Requests = Resources{CPU: int64(anyInt()), GPU: int64(anyInt())}
				g.HostPorts = []int32{80, 80}
				g.NodeSelector = map[string]string{LabelHostname: "n"}
				g.NodeAffinity = NodeSelectorTerms{{}, {req(LabelHostname, OpDoesNotExist)}}
				g.Tolerations = []Toleration{{Operator: "?"}}
			}
			for range r.IntN(2) {
				g.PodAffinity = append(g.PodAffinity, term())
				g.PodAntiAffinity = append(g.PodAntiAffinity, term())
				g.TopologySpread = append(g.TopologySpread, TopologySpread{MaxSkew: int32(anyInt()), TopologyKey: key(),
					WhenUnsatisfiable: DoNotSchedule, MinDomains: int32(anyInt()), Selector: term().Selector})
			}
			p.Groups = append(p.Groups, g)
		}
		pl := &Plan{Cost: []float64{0, math.Inf(1), math.NaN()}[r.IntN(3)], LowerBound: float64(anyInt())}
		counts := func() []GroupCount {
			var out []GroupCount
			for range r.IntN(4) {
				out = append(out, GroupCount{Group: anyInt(), Count: anyInt()})
			}
			return out
		}
		for range r.IntN(4) {
			pl.NewNodes = append(pl.NewNodes, NewNode{Offering: anyInt(), Pods: counts()})
		}
		for range r.IntN(3) {
			pl.Existing = append(pl.Existing, ExistingPlacement{Node: anyInt(), Pods: counts()})
		}
		for range r.IntN(2) {
			pl.Unschedulable = append(pl.Unschedulable, Unschedulable{Group: anyInt(), Count: anyInt()})
		}
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("case %d: Validate panicked: %v\nproblem %+v\nplan %+v", i, v, p, pl)
				}
			}()
			_ = pl.Validate(p)
			_ = p.Validate()
		}()
	}
}
