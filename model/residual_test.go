package model

import (
	"math"
	"strings"
	"testing"
)

// residualProblem is two groups of three pods, one running node and two offerings.
func residualProblem() *Problem {
	res := Resources{CPU: 4000, Memory: 8 << 30, Pods: 110}
	pods := func(name string) []PodRef {
		return []PodRef{{Namespace: "default", Name: name + "-0"}, {Namespace: "default", Name: name + "-1"}, {Namespace: "default", Name: name + "-2"}}
	}
	return &Problem{
		Groups: []PodGroup{
			{Name: "web", Namespace: "default", Pods: pods("web"), Requests: Resources{CPU: 500, Memory: 1 << 30}, Labels: map[string]string{"app": "web"}},
			{Name: "db", Namespace: "default", Pods: pods("db"), Requests: Resources{CPU: 1000, Memory: 2 << 30}, Labels: map[string]string{"app": "db"}},
		},
		Offerings: []Offering{
			{ID: "small", NodePool: "default", InstanceType: "small", Zone: "a", CapacityType: OnDemand, Price: 0.1, Capacity: res, Allocatable: res,
				Labels: map[string]string{LabelZone: "a", LabelInstanceType: "small"}},
			{ID: "once", NodePool: "default", InstanceType: "once", Zone: "a", CapacityType: OnDemand, Price: 0.2, Capacity: res, Allocatable: res,
				Labels: map[string]string{LabelZone: "a", LabelInstanceType: "once"}, MaxCount: 1},
		},
		Nodes: []ExistingNode{{Name: "running", Zone: "a", Capacity: res, Allocatable: res,
			Labels: map[string]string{LabelZone: "a", LabelHostname: "running"}}},
		Pools: []NodePool{{Name: "default"}},
	}
}

// The residual problem binds the partial plan's pods, turns its new nodes into running nodes and uses up the
// offerings it launched to their MaxCount; merging a plan of it gives back a plan of the whole problem.
func TestResidualRoundTrip(t *testing.T) {
	p := residualProblem()
	full := &Plan{
		NewNodes: []NewNode{{Offering: 0, Pods: []GroupCount{{Group: 0, Count: 2}, {Group: 1, Count: 1}}}, {Offering: 1, Pods: []GroupCount{{Group: 1, Count: 2}}}},
		Existing: []ExistingPlacement{{Node: 0, Pods: []GroupCount{{Group: 0, Count: 1}}}},
		Cost:     0.3,
	}
	if err := full.Validate(p); err != nil {
		t.Fatalf("the whole plan is invalid: %v", err)
	}
	partial := &Plan{NewNodes: full.NewNodes[1:], Existing: full.Existing}
	r, err := NewResidual(p, partial)
	if err != nil {
		t.Fatal(err)
	}
	rp := r.Problem
	if r.First != 1 || len(rp.Nodes) != 2 || len(rp.Nodes[1].Pods) != 2 || len(rp.Nodes[0].Pods) != 1 {
		t.Fatalf("residual nodes: first %d, %d nodes, bound pods %d and %d", r.First, len(rp.Nodes), len(rp.Nodes[0].Pods), len(rp.Nodes[len(rp.Nodes)-1].Pods))
	}
	if len(rp.Groups[0].Pods) != 2 || len(rp.Groups[1].Pods) != 1 {
		t.Fatalf("pending pods left: web %d, db %d; want 2 and 1", len(rp.Groups[0].Pods), len(rp.Groups[1].Pods))
	}
	if len(p.Groups[0].Pods) != 3 || len(p.Nodes[0].Pods) != 0 || len(p.Nodes) != 1 {
		t.Fatal("NewResidual changed the problem it was given")
	}
	if len(rp.Offerings[1].Allocatable) != 0 {
		t.Fatal("the offering launched to its MaxCount can still be launched in the residual problem")
	}
	// The rest: the first node again, one web pod more on the held node and one db pod on the running node,
	// beside the partial plan's web pod there.
	rest := &Plan{NewNodes: []NewNode{{Offering: 0, Pods: []GroupCount{{Group: 0, Count: 1}}}},
		Existing: []ExistingPlacement{{Node: r.First, Pods: []GroupCount{{Group: 0, Count: 1}}}, {Node: 0, Pods: []GroupCount{{Group: 1, Count: 1}}}}, Cost: 0.1}
	if err := rest.Validate(rp); err != nil {
		t.Fatalf("the rest is no plan of the residual problem: %v", err)
	}
	merged := r.Merge(rest)
	if err := merged.Validate(p); err != nil {
		t.Fatalf("merged plan invalid: %v", err)
	}
	// The held node first, with the web pod the rest put on it; then the rest's new node; one placement on the
	// running node, with both pods.
	if math.Abs(merged.Cost-0.3) > 1e-9 || merged.Placed() != 6 || len(merged.NewNodes) != 2 ||
		merged.NewNodes[0].Offering != 1 || len(merged.NewNodes[0].Pods) != 2 || merged.NewNodes[1].Offering != 0 {
		t.Fatalf("merged plan: cost %v, %d pods placed, nodes %+v", merged.Cost, merged.Placed(), merged.NewNodes)
	}
	if len(merged.Existing) != 1 || len(merged.Existing[0].Pods) != 2 {
		t.Fatalf("merged placements on running nodes: %+v, want one with the web and the db pod", merged.Existing)
	}
	if len(partial.Existing[0].Pods) != 1 {
		t.Fatal("Merge changed the partial plan's placement")
	}
}

// A partial plan that is no plan of the problem is an error naming what is wrong, not a panic.
func TestResidualRejectsBadPlans(t *testing.T) {
	tests := []struct {
		name    string
		partial Plan
		want    string
	}{
		{"unknown group", Plan{NewNodes: []NewNode{{Offering: 0, Pods: []GroupCount{{Group: 7, Count: 1}}}}}, "group 7"},
		{"too many pods", Plan{NewNodes: []NewNode{{Offering: 0, Pods: []GroupCount{{Group: 1, Count: 4}}}}}, "4 pods of group db, 3 left"},
		{"unknown offering", Plan{NewNodes: []NewNode{{Offering: 9, Pods: nil}}}, "offering 9"},
		{"unknown node", Plan{Existing: []ExistingPlacement{{Node: 3, Pods: []GroupCount{{Group: 0, Count: 1}}}}}, "node 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewResidual(residualProblem(), &tc.partial)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
