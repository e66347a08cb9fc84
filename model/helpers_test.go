package model

import (
	"fmt"
	"strings"
	"testing"
)

// Builders for small problems and plans used across the tests.

const testPool = "default"

// offering returns an amd64 on-demand offering of the default pool in zone with the given size.
func offering(id, zone string, cpu, memGi, pods int64, price float64) Offering {
	alloc := Resources{CPU: cpu * 1000, Memory: memGi * Gi, Pods: pods}
	return Offering{
		ID: id, NodePool: testPool, InstanceType: id, Zone: zone, CapacityType: OnDemand, Price: price,
		Capacity: alloc.Clone(), Allocatable: alloc,
		Labels: map[string]string{
			LabelZone: zone, LabelInstanceType: id, LabelArch: "amd64", LabelOS: "linux",
			LabelCapacityType: OnDemand, LabelNodePool: testPool,
		},
	}
}

// group returns a group of n pods in namespace "ns", each requesting milliCPU and 1Gi.
func group(name string, n int, milliCPU int64, labels map[string]string) PodGroup {
	g := PodGroup{
		Name: "ns/" + name, Namespace: "ns", Labels: labels,
		Requests: Resources{CPU: milliCPU, Memory: Gi, Pods: 1},
	}
	for i := range n {
		g.Pods = append(g.Pods, PodRef{Namespace: "ns", Name: fmt.Sprintf("%s-%d", name, i)})
	}
	return g
}

// existing returns an existing node of the default pool in zone with 4 cpu, 16Gi, 20 pods.
func existing(name, zone string, bound ...BoundPod) ExistingNode {
	alloc := Resources{CPU: 4000, Memory: 16 * Gi, Pods: 20}
	return ExistingNode{
		Name: name, NodePool: testPool, InstanceType: "m.xlarge", Zone: zone, CapacityType: OnDemand, Price: 0.2,
		Capacity: alloc.Clone(), Allocatable: alloc,
		Labels: map[string]string{LabelZone: zone, LabelHostname: name, LabelArch: "amd64"},
		Pods:   bound,
	}
}

func bound(name string, labels map[string]string, milliCPU int64) BoundPod {
	return BoundPod{Ref: PodRef{Namespace: "ns", Name: name}, Labels: labels,
		Requests: Resources{CPU: milliCPU, Memory: Gi, Pods: 1}}
}

// baseProblem has one pool, zones a and b, and offerings 0:"small-a" 1:"small-b" (2 cpu, 8Gi, 10 pods, $0.1)
// and 2:"big-a" (16 cpu, 64Gi, 50 pods, $0.8).
func baseProblem(groups ...PodGroup) *Problem {
	return &Problem{
		Groups: groups,
		Offerings: []Offering{
			offering("small-a", "a", 2, 8, 10, 0.1),
			offering("small-b", "b", 2, 8, 10, 0.1),
			offering("big-a", "a", 16, 64, 50, 0.8),
		},
		Pools: []NodePool{{Name: testPool}},
		Zones: []string{"a", "b"},
	}
}

func gc(g, n int) GroupCount { return GroupCount{Group: g, Count: n} }

func nn(off int, pods ...GroupCount) NewNode { return NewNode{Offering: off, Pods: pods} }

// plan returns a plan of new nodes whose Cost is their price sum.
func plan(p *Problem, nodes ...NewNode) *Plan {
	pl := &Plan{NewNodes: nodes}
	pl.Cost = priceOf(p, pl)
	return pl
}

func priceOf(p *Problem, pl *Plan) float64 {
	sum := 0.0
	for _, n := range pl.NewNodes {
		sum += p.Offerings[n.Offering].Price
	}
	return sum
}

func sel(kv ...string) *LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &LabelSelector{MatchLabels: m}
}

func lbl(kv ...string) map[string]string { return sel(kv...).MatchLabels }

// checkPlan asserts that Validate accepts the plan (want == "") or rejects it with an error containing want.
func checkPlan(t *testing.T, p *Problem, pl *Plan, want string) {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatalf("test problem invalid: %v", err)
	}
	err := pl.Validate(p)
	switch {
	case want == "" && err != nil:
		t.Errorf("Validate rejected a valid plan: %v", err)
	case want != "" && err == nil:
		t.Errorf("Validate accepted a plan that should fail with %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("Validate error %q does not mention %q", err, want)
	}
}
