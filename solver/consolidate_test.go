package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
)

// consolidationInput builds candidates of 4 cpu at price each, with podsOn[i] movable 1-cpu pods of one
// Deployment on candidate i, and a catalog offering of 4 cpu at catalogPrice.
func consolidationInput(price, catalogPrice float64, podsOn ...int) *ConsolidationInput {
	shape := model.Resources{model.CPU: 4000, model.Memory: 16 << 30, model.Pods: 110}
	in := &ConsolidationInput{Origin: map[model.PodRef]int{}}
	in.Problem = model.Problem{Zones: []string{"a"}, Pools: []model.NodePool{{Name: "default"}},
		Offerings: []model.Offering{{ID: "default/t/a/on-demand", NodePool: "default", InstanceType: "t", Zone: "a",
			CapacityType: model.OnDemand, Price: catalogPrice, Capacity: shape, Allocatable: shape,
			Labels: map[string]string{model.LabelZone: "a"}}}}
	g := model.PodGroup{Name: "default/web", Namespace: "default", Labels: map[string]string{"app": "web"},
		Requests: model.Resources{model.CPU: 1000, model.Memory: 1 << 30, model.Pods: 1}}
	for ci, n := range podsOn {
		name := fmt.Sprintf("node-%d", ci)
		in.Candidates = append(in.Candidates, model.ExistingNode{Name: name, NodePool: "default", InstanceType: "t",
			Zone: "a", CapacityType: model.OnDemand, Price: price, Capacity: shape, Allocatable: shape,
			Labels: map[string]string{model.LabelZone: "a", model.LabelHostname: name}})
		for k := 0; k < n; k++ {
			ref := model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d-%d", ci, k)}
			g.Pods = append(g.Pods, ref)
			in.Origin[ref] = ci
		}
	}
	if len(g.Pods) > 0 {
		in.Problem.Groups = []model.PodGroup{g}
	}
	return in
}

func TestConsolidate(t *testing.T) {
	cases := []struct {
		name     string
		in       *ConsolidationInput
		opts     ConsolidationOptions
		act      bool
		removed  int
		newNodes int
		after    float64
		maxMoves int
	}{
		{"empty node deleted", consolidationInput(0.2, 0.2, 4, 0), ConsolidationOptions{}, true, 1, 0, 0.2, 0},
		{"two half-empty nodes merged", consolidationInput(0.2, 0.2, 2, 2), ConsolidationOptions{}, true, 1, 0, 0.2, 2},
		{"expensive node replaced", consolidationInput(0.5, 0.2, 3), ConsolidationOptions{}, true, 1, 1, 0.2, 3},
		{"full nodes stay", consolidationInput(0.2, 0.2, 4, 4), ConsolidationOptions{}, false, 0, 0, 0.4, 0},
		{"threshold stops a small saving", consolidationInput(0.2, 0.195, 3), ConsolidationOptions{}, false, 0, 0, 0.2, 0},
		{"budget 1 removes one node", consolidationInput(0.2, 0.2, 1, 1, 1, 1), ConsolidationOptions{MaxRemoved: map[string]int{"default": 1}}, true, 1, 0, 0.6, 1},
		{"budget 0 removes none", consolidationInput(0.2, 0.2, 4, 0), ConsolidationOptions{MaxRemoved: map[string]int{"default": 0}}, false, 0, 0, 0.4, 0},
		{"no budget removes three", consolidationInput(0.2, 0.2, 1, 1, 1, 1), ConsolidationOptions{}, true, 3, 0, 0.2, 3},
		{"a lower threshold lets it through", consolidationInput(0.2, 0.195, 3), ConsolidationOptions{MinSaving: 0.001}, true, 1, 1, 0.195, 3},
	}
	kinds := solverKinds()
	for _, tc := range cases {
		for _, kind := range kinds {
			t.Run(tc.name+"/"+string(kind), func(t *testing.T) {
				res := consolidateValid(t, tc.in, tc.opts, kind)
				if res.Act != tc.act || len(res.Removed) != tc.removed || len(res.NewNodes) != tc.newNodes {
					t.Fatalf("act %v removed %v new %d (reason %q), want act %v removed %d new %d",
						res.Act, res.Removed, len(res.NewNodes), res.Reason, tc.act, tc.removed, tc.newNodes)
				}
				if math.Abs(res.CostAfter-tc.after) > 1e-9 || math.Abs(res.Saving-(res.CostBefore-res.CostAfter)) > 1e-9 {
					t.Fatalf("cost after %.4f saving %.4f, want after %.4f", res.CostAfter, res.Saving, tc.after)
				}
				if len(res.Moves) > tc.maxMoves {
					t.Fatalf("%d moves, want at most %d: %+v", len(res.Moves), tc.maxMoves, res.Moves)
				}
				if res.LowerBound > res.CostAfter+1e-9 {
					t.Fatalf("lower bound %.4f above cost after %.4f", res.LowerBound, res.CostAfter)
				}
			})
		}
	}
}

// BenchmarkConsolidate1000 consolidates 1,000 over-provisioned 4-cpu nodes holding 0-2 one-cpu pods each
// (2 groups), where half the pods' nodes' worth of capacity suffices, with the 5 s deadline.
func BenchmarkConsolidate1000(b *testing.B) {
	in := consolidationInput(0.2, 0.2)
	extra := consolidationInput(0.2, 0.2, func() []int {
		out := make([]int, 1000)
		for i := range out {
			out[i] = i % 3
		}
		return out
	}()...)
	in = extra
	for i := 0; i < b.N; i++ {
		res, err := Consolidate(context.Background(), in, ConsolidationOptions{Solve: Options{Deadline: 5 * time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.CostBefore, "$/h-before")
		b.ReportMetric(res.CostAfter, "$/h-after")
		b.ReportMetric(res.LowerBound, "$/h-LB")
		b.ReportMetric(100*res.Gap(), "gap%")
		b.ReportMetric(res.Duration.Seconds(), "s")
		b.ReportMetric(float64(len(res.Moves)), "moves")
	}
}

// randomConsolidation is nodes oversized 8-cpu/32 GiB candidates holding 0-3 pods each of 10 Deployments with
// random requests, and a catalog of 2-, 4- and 8-cpu offerings.
func randomConsolidation(seed uint64, nodes int) *ConsolidationInput {
	r := rand.New(rand.NewPCG(seed, seed))
	shape := model.Resources{model.CPU: 8000, model.Memory: 32 << 30, model.Pods: 110}
	in := &ConsolidationInput{Origin: map[model.PodRef]int{}}
	in.Problem = model.Problem{Zones: []string{"a"}, Pools: []model.NodePool{{Name: "default"}}}
	for i, cpu := range []int64{2, 4, 8} {
		res := model.Resources{model.CPU: cpu * 1000, model.Memory: cpu * 4 << 30, model.Pods: 110}
		in.Problem.Offerings = append(in.Problem.Offerings, model.Offering{ID: fmt.Sprintf("o%d", i), NodePool: "default",
			InstanceType: fmt.Sprintf("t%d", cpu), Zone: "a", CapacityType: model.OnDemand, Price: 0.05 * float64(cpu),
			Capacity: res, Allocatable: res, Labels: map[string]string{model.LabelZone: "a"}})
	}
	for g := 0; g < 10; g++ {
		in.Problem.Groups = append(in.Problem.Groups, model.PodGroup{Name: fmt.Sprintf("default/app-%d", g), Namespace: "default",
			Labels:   map[string]string{"app": fmt.Sprint(g)},
			Requests: model.Resources{model.CPU: int64(250 * (1 + r.IntN(6))), model.Memory: int64(1+r.IntN(6)) << 29, model.Pods: 1}})
	}
	for ci := 0; ci < nodes; ci++ {
		name := fmt.Sprintf("node-%d", ci)
		in.Candidates = append(in.Candidates, model.ExistingNode{Name: name, NodePool: "default", InstanceType: "t8",
			Zone: "a", CapacityType: model.OnDemand, Price: 0.4, Capacity: shape, Allocatable: shape,
			Labels: map[string]string{model.LabelZone: "a", model.LabelHostname: name}})
		for k := 0; k < r.IntN(4); k++ {
			g := r.IntN(10)
			ref := model.PodRef{Namespace: "default", Name: fmt.Sprintf("app-%d-%d-%d", g, ci, k)}
			in.Problem.Groups[g].Pods = append(in.Problem.Groups[g].Pods, ref)
			in.Origin[ref] = ci
		}
	}
	in.Problem.Groups = slices.DeleteFunc(in.Problem.Groups, func(g model.PodGroup) bool { return len(g.Pods) == 0 })
	return in
}

// BenchmarkConsolidateRandom1000 consolidates 1,000 oversized 8-cpu/32 GiB nodes ($0.40/h) holding 0-3 pods
// each of 10 Deployments with random requests, with a catalog of 2-, 4- and 8-cpu offerings, in 5 s.
func BenchmarkConsolidateRandom1000(b *testing.B) {
	in := randomConsolidation(7, 1000)
	for i := 0; i < b.N; i++ {
		res, err := Consolidate(context.Background(), in, ConsolidationOptions{Solve: Options{Deadline: 5 * time.Second}})
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Plan.Validate(res.Model); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.CostBefore, "$/h-before")
		b.ReportMetric(res.CostAfter, "$/h-after")
		b.ReportMetric(res.LowerBound, "$/h-LB")
		b.ReportMetric(100*res.Gap(), "gap%")
		b.ReportMetric(res.Duration.Seconds(), "s")
		b.ReportMetric(float64(len(res.Moves)), "moves")
	}
}

// withForced marks the named candidates of in as forced out.
func withForced(in *ConsolidationInput, names ...string) *ConsolidationInput {
	in.Forced = map[string]string{}
	for _, n := range names {
		in.Forced[n] = "drifted: test"
	}
	return in
}

func TestConsolidateForced(t *testing.T) {
	cases := []struct {
		name              string
		in                *ConsolidationInput
		opts              ConsolidationOptions
		removed, newNodes int
		after             float64
	}{
		{"a full forced node is replaced although nothing is saved", withForced(consolidationInput(0.2, 0.2, 4), "node-0"), ConsolidationOptions{}, 1, 1, 0.2},
		{"a forced node's pods move to a kept node", withForced(consolidationInput(0.2, 0.2, 2, 1), "node-0"), ConsolidationOptions{}, 1, 0, 0.2},
		{"forced removals are outside the budget", withForced(consolidationInput(0.2, 0.2, 1, 1, 0), "node-0"), ConsolidationOptions{MaxRemoved: map[string]int{"default": 0}}, 1, 0, 0.4},
		{"budget 1 beside a forced node", withForced(consolidationInput(0.2, 0.2, 1, 1, 1, 0), "node-0"), ConsolidationOptions{MaxRemoved: map[string]int{"default": 1}}, 2, 0, 0.4},
	}
	kinds := solverKinds()
	for _, tc := range cases {
		for _, kind := range kinds {
			t.Run(tc.name+"/"+string(kind), func(t *testing.T) {
				res := consolidateValid(t, tc.in, tc.opts, kind)
				if !res.Act || len(res.Removed) != tc.removed || len(res.NewNodes) != tc.newNodes || res.Forced["node-0"] == "" {
					t.Fatalf("act %v removed %v new %d forced %v (reason %q), want removed %d new %d", res.Act, res.Removed,
						len(res.NewNodes), res.Forced, res.Reason, tc.removed, tc.newNodes)
				}
				if !slices.Contains(res.Removed, "node-0") {
					t.Fatalf("forced node-0 kept: removed %v", res.Removed)
				}
				if math.Abs(res.CostAfter-tc.after) > 1e-9 || res.LowerBound > res.CostAfter+1e-9 {
					t.Fatalf("cost after %.4f (bound %.4f), want %.4f", res.CostAfter, res.LowerBound, tc.after)
				}
			})
		}
	}
	if _, err := Consolidate(context.Background(), withForced(consolidationInput(0.2, 0.2, 1), "ghost"), ConsolidationOptions{}); err == nil ||
		!strings.Contains(err.Error(), "ghost") {
		t.Errorf("a forced node that is not a candidate: err %v", err)
	}
}

// spotInput is one candidate of capacity type capType at 0.5/h holding three 1-cpu pods, with an on-demand
// offering at onDemand (none when 0) and spotTypes spot instance types at 0.1/h.
func spotInput(capType string, onDemand float64, spotTypes int) *ConsolidationInput {
	in := consolidationInput(0.5, onDemand, 3)
	in.Candidates[0].CapacityType = capType
	spot := in.Problem.Offerings[0]
	if onDemand == 0 {
		in.Problem.Offerings = nil
	}
	for i := range spotTypes {
		o := spot
		o.InstanceType = fmt.Sprintf("s%d", i)
		o.ID, o.CapacityType, o.Price = "default/"+o.InstanceType+"/a/spot", model.Spot, 0.1+float64(i)*0.001
		in.Problem.Offerings = append(in.Problem.Offerings, o)
	}
	return in
}

func TestConsolidateSpotToSpot(t *testing.T) {
	cases := []struct {
		name       string
		in         *ConsolidationInput
		spotToSpot bool
		act        bool
		launch     string // capacity type of the one new node, "" for none
	}{
		{"on-demand to spot is allowed", spotInput(model.OnDemand, 0.3, 1), false, true, model.Spot},
		{"spot to spot is off by default: on-demand instead", spotInput(model.Spot, 0.3, 20), false, true, model.OnDemand},
		{"spot to spot needs 15 cheaper types", spotInput(model.Spot, 0.3, 14), true, true, model.OnDemand},
		{"spot to spot with 15 cheaper types", spotInput(model.Spot, 0.3, 15), true, true, model.Spot},
		{"spot only and not allowed: nothing to do", spotInput(model.Spot, 0, 3), false, false, ""},
	}
	kinds := solverKinds()
	for _, tc := range cases {
		for _, kind := range kinds {
			t.Run(tc.name+"/"+string(kind), func(t *testing.T) {
				res := consolidateValid(t, tc.in, ConsolidationOptions{SpotToSpot: tc.spotToSpot}, kind)
				got := ""
				if len(res.NewNodes) == 1 {
					got = res.Model.Offerings[res.NewNodes[0].Offering].CapacityType
				}
				if res.Act != tc.act || got != tc.launch || len(res.NewNodes) > 1 {
					t.Fatalf("act %v, new nodes %v (%q; reason %q), want act %v launching %q", res.Act, res.NewNodes, got, res.Reason, tc.act, tc.launch)
				}
			})
		}
	}
}

// TestConsolidateDoesNotChurn checks that no decision counts on moving pods off a node it keeps: carrying a
// decision out evicts pods from the removed nodes only.
func TestConsolidateDoesNotChurn(t *testing.T) {
	kinds := solverKinds()
	for _, kind := range kinds {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%d", kind, seed), func(t *testing.T) {
				in := randomConsolidation(seed, 120)
				res := consolidateValid(t, in, ConsolidationOptions{}, kind)
				if !res.Act || res.CostAfter >= res.CostBefore {
					t.Fatalf("no saving on an oversized cluster: act %v, %.2f to %.2f (%s)", res.Act, res.CostBefore, res.CostAfter, res.Reason)
				}
				for _, m := range res.Moves {
					if slices.Contains(res.Kept, m.From) {
						t.Fatalf("pod %s moves off kept node %s", m.Pod, m.From)
					}
				}
				t.Logf("%.2f to %.2f/h (bound %.2f), %d moves, %s", res.CostBefore, res.CostAfter, res.LowerBound, len(res.Moves), res.Duration)
			})
		}
	}
}

// solverKinds are the solvers a test runs: greedy, and the MIP when HiGHS is linked.
func solverKinds() []Kind {
	if highs.Available() {
		return []Kind{Greedy, MIP}
	}
	return []Kind{Greedy}
}

// consolidateValid runs Consolidate with solver kind and a 2 s deadline and checks that its plan validates.
func consolidateValid(t *testing.T, in *ConsolidationInput, opts ConsolidationOptions, kind Kind) *Consolidation {
	t.Helper()
	opts.Solve = Options{Kind: kind, Deadline: 2 * time.Second}
	res, err := Consolidate(context.Background(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Plan.Validate(res.Model); err != nil {
		t.Fatalf("invalid plan: %v", err)
	}
	return res
}
