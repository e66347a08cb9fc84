package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/mip"
)

// tinyProblem is a random problem small enough for the exact model below: a few groups, a few offerings with
// different shapes and prices, some offerings tainted or labelled so compatibility matters.
func tinyProblem(r *rand.Rand) *model.Problem {
	p := &model.Problem{Zones: []string{"a", "b"}, Pools: []model.NodePool{{Name: "default"}}}
	nOff := 2 + r.IntN(3)
	for i := 0; i < nOff; i++ {
		cpu := int64(1+r.IntN(8)) * 1000
		mem := int64(1+r.IntN(16)) << 30
		o := model.Offering{ID: fmt.Sprintf("o%d", i), NodePool: "default", InstanceType: fmt.Sprintf("t%d", i), Zone: p.Zones[i%2],
			CapacityType: model.OnDemand, Price: math.Round((0.02*float64(cpu/1000)+0.005*float64(mem>>30))*(0.8+0.4*r.Float64())*1e4) / 1e4,
			Capacity:    model.Resources{model.CPU: cpu, model.Memory: mem, model.Pods: 110},
			Allocatable: model.Resources{model.CPU: cpu, model.Memory: mem, model.Pods: 110},
			Labels:      map[string]string{model.LabelZone: p.Zones[i%2], "kind": []string{"x", "y"}[r.IntN(2)]}}
		p.Offerings = append(p.Offerings, o)
	}
	nGroups := 1 + r.IntN(3)
	for g := 0; g < nGroups; g++ {
		pg := model.PodGroup{Name: fmt.Sprintf("g%d", g), Namespace: "default", Labels: map[string]string{"app": fmt.Sprint(g)},
			Requests: model.Resources{model.CPU: int64(1+r.IntN(6)) * 250, model.Memory: int64(1+r.IntN(8)) << 29, model.Pods: 1}}
		if r.IntN(4) == 0 {
			pg.NodeSelector = map[string]string{"kind": "x"}
		}
		for i := 0; i < 1+r.IntN(8); i++ {
			pg.Pods = append(pg.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("g%d-%d", g, i)})
		}
		p.Groups = append(p.Groups, pg)
	}
	return p
}

// exactOptimum solves a compact model of p (k copies of every offering that a plan cheaper than ub could
// launch, plus the existing nodes, with integer pods per host) to optimality with HiGHS and no deadline. It is
// written apart from the solver, from the model's own fields, and handles what tinyProblem and featureProblem
// use: capacity, compatibility, hostname anti-affinity and zone spread of a group with itself, existing nodes
// with bound pods, and a pool's CPU limit. It returns the optimal cost of placing every pod.
func exactOptimum(t *testing.T, p *model.Problem, ub float64) float64 {
	t.Helper()
	type host struct {
		o, n int // offering copy, or existing node (-1 for the other)
		zone string
		room model.Resources
	}
	var hosts []host
	for oi, o := range p.Offerings {
		k := int(math.Floor(ub/o.Price + 1e-9))
		for i := 0; i < k; i++ {
			hosts = append(hosts, host{o: oi, n: -1, zone: o.Zone, room: o.Allocatable})
		}
	}
	newHosts := len(hosts)
	for ni, n := range p.Nodes {
		room := model.Resources{}
		for r, v := range n.Allocatable {
			room[r] = v
		}
		for _, b := range n.Pods {
			for r, v := range b.Requests {
				room[r] -= v
			}
		}
		hosts = append(hosts, host{o: -1, n: ni, zone: n.Zone, room: room})
	}
	res := []model.ResourceName{model.CPU, model.Memory, model.Pods}
	// Columns: y per new host, then x[g][host].
	ny := newHosts
	ncol := ny + len(p.Groups)*len(hosts)
	m := &highs.Model{ColCost: make([]float64, ncol), ColLower: make([]float64, ncol), ColUpper: make([]float64, ncol),
		Integrality: make([]bool, ncol), RowStart: []int{0}}
	x := func(g, h int) int { return ny + g*len(hosts) + h }
	for h, hs := range hosts {
		if hs.o >= 0 {
			m.ColCost[h], m.ColUpper[h], m.Integrality[h] = p.Offerings[hs.o].Price, 1, true
		}
		for g := range p.Groups {
			pg := &p.Groups[g]
			j := x(g, h)
			m.Integrality[j] = true
			ok := false
			if hs.o >= 0 {
				ok = pg.Compatible(p.Offerings[hs.o].Labels, p.Offerings[hs.o].Taints)
			} else {
				ok = pg.Compatible(p.Nodes[hs.n].Labels, p.Nodes[hs.n].Taints)
			}
			if ok {
				m.ColUpper[j] = float64(pg.Demand())
				if len(pg.PodAntiAffinity) > 0 {
					m.ColUpper[j] = 1
				}
			}
		}
	}
	row := func(lo, hi float64, idx []int, val []float64) {
		m.RowLower, m.RowUpper = append(m.RowLower, lo), append(m.RowUpper, hi)
		m.RowIndex, m.RowValue = append(m.RowIndex, idx...), append(m.RowValue, val...)
		m.RowStart = append(m.RowStart, len(m.RowIndex))
	}
	for g := range p.Groups {
		idx, val := []int{}, []float64{}
		for h := range hosts {
			idx, val = append(idx, x(g, h)), append(val, 1)
		}
		d := float64(p.Groups[g].Demand())
		row(d, d, idx, val)
		if len(p.Groups[g].TopologySpread) > 0 { // maxSkew 1 between the two zones
			idx, val := []int{}, []float64{}
			for h, hs := range hosts {
				idx, val = append(idx, x(g, h)), append(val, map[bool]float64{true: 1, false: -1}[hs.zone == p.Zones[0]])
			}
			row(-1, 1, idx, val)
		}
	}
	for h, hs := range hosts {
		for _, r := range res {
			idx, val, hi := []int{}, []float64{}, float64(hs.room[r])
			if hs.o >= 0 {
				idx, val, hi = append(idx, h), append(val, -float64(hs.room[r])), 0
			}
			for g := range p.Groups {
				idx, val = append(idx, x(g, h)), append(val, float64(p.Groups[g].Requests[r]))
			}
			row(-highs.Inf, hi, idx, val)
		}
		if h+1 < newHosts && hosts[h+1].o == hs.o { // symmetry: copy k used before copy k+1
			row(0, highs.Inf, []int{h, h + 1}, []float64{1, -1})
		}
	}
	if lim, ok := p.Pools[0].Limits[model.CPU]; ok {
		for _, n := range p.Nodes {
			lim -= n.Capacity[model.CPU]
		}
		idx, val := []int{}, []float64{}
		for h := 0; h < newHosts; h++ {
			idx, val = append(idx, h), append(val, float64(p.Offerings[hosts[h].o].Capacity[model.CPU]))
		}
		row(-highs.Inf, float64(lim), idx, val)
	}
	out, err := highs.Solve(context.Background(), m, highs.Options{MIPRelGap: 1e-9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != highs.StatusOptimal {
		t.Fatalf("exact model: %v", out.Status)
	}
	return out.Objective
}

func allPlaced(p *model.Plan) bool { return len(p.Unschedulable) == 0 }

func TestPortfolioAgainstExactOptimum(t *testing.T) {
	if !highs.Available() {
		t.Fatal("this test needs HiGHS (build with cgo)")
	}
	for _, tc := range []struct {
		name     string
		seed     uint64
		problem  func(*rand.Rand) *model.Problem
		deadline time.Duration
	}{
		{"capacity and compatibility", 42, tinyProblem, 2 * time.Second},
		{"with anti-affinity, spread, existing nodes and limits", 9, featureProblem, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 1))
			optimal, compared, proven := 0, 0, 0
			for trial := 0; trial < 40; trial++ {
				p := tc.problem(r)
				g, plan := portfolioVsGreedy(t, trial, p, tc.deadline)
				if !allPlaced(plan) || !allPlaced(g) {
					continue // an impossible pod: the exact model assumes every pod is placed
				}
				opt := exactOptimum(t, p, g.Cost)
				compared++
				if plan.LowerBound > opt+1e-6 {
					t.Fatalf("trial %d: bound %v above the true optimum %v: not a valid bound", trial, plan.LowerBound, opt)
				}
				if plan.Cost < opt-1e-6 {
					t.Fatalf("trial %d: plan cost %v below the true optimum %v: the exact model or the validator is wrong", trial, plan.Cost, opt)
				}
				if plan.Cost <= opt+1e-6 {
					optimal++
				}
				if plan.LowerBound >= opt*(1-1e-5) {
					proven++ // the compact model's proof: the pattern LP alone leaves a gap on most of these
				}
			}
			t.Logf("optimal on %d of %d instances, proven optimal on %d", optimal, compared, proven)
			if compared < 20 || optimal < compared*95/100 || proven < compared*9/10 {
				t.Fatalf("optimal on %d and proven on %d of %d tiny instances", optimal, proven, compared)
			}
		})
	}
}

// featureProblem is a random problem using the constraints the portfolio must honour: hostname anti-affinity,
// zone spread, taints, selectors, pool limits and existing nodes with pods.
func featureProblem(r *rand.Rand) *model.Problem {
	p := tinyProblem(r)
	p.Zones = []string{"a", "b"}
	if r.IntN(3) == 0 {
		p.Pools[0].Limits = model.Resources{model.CPU: int64(4+r.IntN(20)) * 1000}
	}
	for i := range p.Groups {
		g := &p.Groups[i]
		sel := &model.LabelSelector{MatchLabels: map[string]string{"app": g.Labels["app"]}}
		switch r.IntN(4) {
		case 0:
			g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}
		case 1:
			g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}
		}
	}
	if r.IntN(2) == 0 {
		o := p.Offerings[0]
		n := model.ExistingNode{Name: "node-1", NodePool: "default", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType,
			Price: o.Price, Capacity: o.Capacity, Allocatable: o.Allocatable, Labels: map[string]string{model.LabelZone: o.Zone, model.LabelHostname: "node-1"}}
		n.Pods = []model.BoundPod{{Ref: model.PodRef{Namespace: "default", Name: "bound"}, Labels: map[string]string{"app": "other"},
			Requests: model.Resources{model.CPU: o.Allocatable[model.CPU] / 2, model.Pods: 1}}}
		p.Nodes = append(p.Nodes, n)
	}
	return p
}

func TestPortfolioProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 40; trial++ {
		p := featureProblem(r)
		g, err := greedy.Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []Kind{Greedy, Auto} {
			plan, err := Solve(context.Background(), p, Options{Deadline: 300 * time.Millisecond, Kind: kind})
			if err != nil {
				t.Fatalf("trial %d %s: %v", trial, kind, err)
			}
			if err := plan.Validate(p); err != nil {
				t.Fatalf("trial %d %s: invalid plan: %v", trial, kind, err)
			}
			if plan.Cost > g.Cost+1e-9 {
				t.Fatalf("trial %d %s: $%v worse than greedy $%v", trial, kind, plan.Cost, g.Cost)
			}
			if plan.LowerBound > plan.Cost+1e-9 || plan.LowerBound < 0 {
				t.Fatalf("trial %d %s: bound %v, cost %v", trial, kind, plan.LowerBound, plan.Cost)
			}
			if kind == Greedy && plan.Status != model.StatusGreedy {
				t.Fatalf("trial %d: greedy requested, status %s", trial, plan.Status)
			}
			if kind == Auto && plan.Status == model.StatusGreedyFallback && plan.StatusReason == "" {
				t.Fatalf("trial %d: a fallback without a reason", trial)
			}
		}
	}
}

func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"": Auto, "auto": Auto, "mip": MIP, "greedy": Greedy} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseKind("simplex"); err == nil {
		t.Error("ParseKind accepted an unknown solver")
	}
}

// An expired context still gets the greedy plan, as a fallback that says the MIP ran out of time.
func TestSolveExpiredContext(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	p := featureProblem(rand.New(rand.NewPCG(3, 3)))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	plan, err := Solve(ctx, p, Options{Kind: Auto})
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	if err := plan.Validate(p); err != nil {
		t.Fatalf("invalid plan: %v", err)
	}
	if plan.Status != model.StatusGreedyFallback || plan.Solver != greedy.Name || !strings.Contains(plan.StatusReason, "out of time") {
		t.Fatalf("status %s, solver %s, reason %q; want a greedy fallback because the MIP ran out of time",
			plan.Status, plan.Solver, plan.StatusReason)
	}
}

// A panic in the MIP (a bug) is not the decision's: the greedy plan is returned, valid, with the panic as the
// reason for the fallback.
func TestSolveSurvivesAMIPPanic(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	p := featureProblem(rand.New(rand.NewPCG(3, 3)))
	plan, err := Solve(context.Background(), p, Options{MIP: mip.Options{AfterLP: func() { panic("a bug") }}})
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	if err := plan.Validate(p); err != nil {
		t.Fatalf("invalid plan: %v", err)
	}
	if plan.Status != model.StatusGreedyFallback || plan.Solver != greedy.Name || !strings.Contains(plan.StatusReason, "mip: panic: a bug") {
		t.Fatalf("status %s, solver %s, reason %q; want a greedy fallback for the MIP's panic", plan.Status, plan.Solver, plan.StatusReason)
	}
}

// portfolioVsGreedy solves trial p greedily and with the portfolio (deadline d) and checks the portfolio's plan:
// valid, no dearer than greedy's, with a bound in [0, cost].
func portfolioVsGreedy(t *testing.T, trial int, p *model.Problem, d time.Duration) (g, plan *model.Plan) {
	t.Helper()
	g, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	plan, err = Solve(context.Background(), p, Options{Deadline: d})
	if err != nil {
		t.Fatalf("trial %d: %v", trial, err)
	}
	if err := plan.Validate(p); err != nil {
		t.Fatalf("trial %d: invalid plan: %v", trial, err)
	}
	if plan.Cost > g.Cost+1e-9 {
		t.Fatalf("trial %d: portfolio $%v worse than greedy $%v", trial, plan.Cost, g.Cost)
	}
	if plan.LowerBound > plan.Cost+1e-9 || plan.LowerBound < 0 {
		t.Fatalf("trial %d: bound %v, cost %v", trial, plan.LowerBound, plan.Cost)
	}
	return g, plan
}

// cpuOffering is an on-demand offering of the default pool in zone with cpu millicores (and room for 110 pods).
func cpuOffering(id, zone string, cpu int64, price float64) model.Offering {
	return model.Offering{ID: id, NodePool: "default", InstanceType: id, Zone: zone, CapacityType: model.OnDemand, Price: price,
		Labels:      map[string]string{model.LabelZone: zone},
		Capacity:    model.Resources{model.CPU: cpu, model.Pods: 110},
		Allocatable: model.Resources{model.CPU: cpu, model.Pods: 110}}
}

// Two Deployments share the zone spread's selector (app=web, as during a rollout): the rule bounds their sum per
// zone, so the big pods may share zone a while the small ones take zone b. A bound from per-group zone rows
// (each group balanced on its own, $2/h) would be above that valid plan's $1.4/h.
func TestSharedZoneSpreadBound(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	sel := &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	group := func(name string, cpu int64) model.PodGroup {
		g := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": "web", "pod-template-hash": name},
			Requests:       model.Resources{model.CPU: cpu, model.Pods: 1},
			TopologySpread: []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}}
		for i := range 2 {
			g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i)})
		}
		return g
	}
	p := &model.Problem{Zones: []string{"a", "b"}, Pools: []model.NodePool{{Name: "default"}},
		Offerings: []model.Offering{cpuOffering("big-a", "a", 6000, 1), cpuOffering("small-b", "b", 2000, 0.4), cpuOffering("big-b", "b", 6000, 1)},
		Groups:    []model.PodGroup{group("big", 3000), group("small", 1000)}}
	// Both big pods on one node in zone a, both small ones on one node in zone b: two web pods in each zone.
	split := &model.Plan{Solver: "hand", Cost: 1.4, NewNodes: []model.NewNode{
		{Offering: 0, Pods: []model.GroupCount{{Group: 0, Count: 2}}},
		{Offering: 1, Pods: []model.GroupCount{{Group: 1, Count: 2}}}}}
	if err := split.Validate(p); err != nil {
		t.Fatalf("the hand-made plan is invalid: %v", err)
	}
	for _, kind := range []Kind{Greedy, Auto} {
		plan, err := Solve(context.Background(), p, Options{Deadline: 2 * time.Second, Kind: kind})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := plan.Validate(p); err != nil {
			t.Fatalf("%s: invalid plan: %v", kind, err)
		}
		t.Logf("%s: $%.4f/h, bound $%.4f/h, %s %s", kind, plan.Cost, plan.LowerBound, plan.Status, plan.StatusReason)
		if plan.LowerBound > split.Cost+1e-9 {
			t.Fatalf("%s: lower bound $%.4f/h is above the valid plan's $%.4f/h (plan $%.4f/h, %s)", kind, plan.LowerBound,
				split.Cost, plan.Cost, plan.Status)
		}
		if kind == Auto && plan.Cost > split.Cost+1e-9 {
			t.Fatalf("auto: $%.4f/h, dearer than the valid plan's $%.4f/h", plan.Cost, split.Cost)
		}
	}
}
