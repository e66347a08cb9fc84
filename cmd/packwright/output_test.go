package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
)

// viewProblem has two groups (3 and 2 pods), two offerings and one existing node.
func viewProblem() *model.Problem {
	res := model.Resources{model.CPU: 3920, model.Memory: 14 << 30, model.Pods: 110}
	off := func(id, it, zone string, price float64) model.Offering {
		return model.Offering{ID: id, NodePool: "default", InstanceType: it, Zone: zone, CapacityType: model.Spot, Price: price,
			Capacity: res, Allocatable: res, Labels: map[string]string{model.LabelZone: zone},
			Taints: []model.Taint{{Key: "example.com/spot", Value: "true", Effect: model.NoSchedule}}}
	}
	pods := func(ns, prefix string, n int) []model.PodRef {
		var out []model.PodRef
		for i := range n {
			out = append(out, model.PodRef{Namespace: ns, Name: prefix + "-" + string(rune('a'+i))})
		}
		return out
	}
	return &model.Problem{
		Groups: []model.PodGroup{
			{Name: "shop/web", Namespace: "shop", Pods: pods("shop", "web", 3)},
			{Name: "shop/api", Namespace: "shop", Pods: pods("shop", "api", 2)},
		},
		Offerings: []model.Offering{off("b", "m5.xlarge", "z1", 0.1), off("a", "c5.xlarge", "z2", 0.2)},
		Nodes:     []model.ExistingNode{{Name: "node-1", InstanceType: "r5.large", Zone: "z1", Price: 0.05, Capacity: res, Allocatable: res}},
	}
}

func TestPlanViewHandsOutPods(t *testing.T) {
	p := viewProblem()
	pl := &model.Plan{
		// Out of order on purpose: the view sorts new nodes by instance type, and merges split counts.
		NewNodes: []model.NewNode{
			{Offering: 0, Pods: []model.GroupCount{{Group: 0, Count: 1}}},
			{Offering: 1, Pods: []model.GroupCount{{Group: 1, Count: 1}, {Group: 0, Count: 1}}},
			{Offering: 0, Pods: []model.GroupCount{{Group: 0, Count: 0}}},
		},
		Existing:      []model.ExistingPlacement{{Node: 0, Pods: []model.GroupCount{{Group: 0, Count: 1}}}},
		Unschedulable: []model.Unschedulable{{Group: 1, Count: 1, Reason: "too big"}},
		Cost:          0.4, Solver: "greedy", Status: model.StatusGreedy, Duration: time.Millisecond,
	}
	v := newPlanView(p, pl)
	type node struct {
		name, it string
		pods     string
	}
	var got []node
	for _, n := range v.nodes {
		var names []string
		for _, r := range n.pods {
			names = append(names, r.String())
		}
		got = append(got, node{n.name, n.instanceType, strings.Join(names, ",")})
	}
	want := []node{
		{"new-1", "c5.xlarge", "shop/web-a,shop/api-a"},
		{"new-2", "m5.xlarge", ""},
		{"new-3", "m5.xlarge", "shop/web-b"},
		{"node-1", "r5.large", "shop/web-c"},
	}
	if len(got) != len(want) {
		t.Fatalf("nodes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("node %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(v.unsched) != 1 || len(v.unsched[0].pods) != 1 || v.unsched[0].pods[0].String() != "shop/api-b" {
		t.Errorf("unschedulable %+v, want shop/api-b", v.unsched)
	}
	if v.placed() != 4 || v.unschedulable() != 1 || v.pending != 5 {
		t.Errorf("placed %d, unschedulable %d, pending %d", v.placed(), v.unschedulable(), v.pending)
	}
}

// TestPlanViewSurvivesBadPlans: a plan that over-counts or names unknown indices (it would fail Validate)
// must not crash the output.
func TestPlanViewSurvivesBadPlans(t *testing.T) {
	p := viewProblem()
	pl := &model.Plan{
		NewNodes:      []model.NewNode{{Offering: 9, Pods: []model.GroupCount{{Group: 0, Count: 10}, {Group: 7, Count: 1}}}},
		Existing:      []model.ExistingPlacement{{Node: 5, Pods: []model.GroupCount{{Group: 0, Count: 1}}}},
		Unschedulable: []model.Unschedulable{{Group: 0, Count: 2, Reason: "x"}},
	}
	v := newPlanView(p, pl)
	var b bytes.Buffer
	if err := writeTable(&b, &tableReport{input: "test", catalog: "c", view: v}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(&b, &tableReport{input: "test", catalog: "c", view: v}); err != nil {
		t.Fatal(err)
	}
}

func TestTableCollapsesIdenticalNodes(t *testing.T) {
	p := viewProblem()
	two := []model.GroupCount{{Group: 0, Count: 1}}
	pl := &model.Plan{
		NewNodes: []model.NewNode{{Offering: 0, Pods: two}, {Offering: 0, Pods: two}, {Offering: 0, Pods: []model.GroupCount{{Group: 1, Count: 2}}}},
		Existing: []model.ExistingPlacement{{Node: 0, Pods: []model.GroupCount{{Group: 0, Count: 1}}}},
		Cost:     0.3, LowerBound: 0.25, Solver: "mip", Status: model.StatusWithinGap, StatusReason: "deadline", Duration: 1500 * time.Millisecond,
	}
	var b bytes.Buffer
	if err := writeTable(&b, &tableReport{input: "test", catalog: "kwok", view: newPlanView(p, pl)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Nodes to launch: 3",
		"  2      new-1..2  m5.xlarge  z1    spot      default   0.1000       shop/web×1",
		"  1      new-3     m5.xlarge  z1    spot      default   0.1000       shop/api×2",
		"Pods placed on existing nodes: 1", "node-1  r5.large  z1    -         shop/web×1",
		"Cost:      $0.3000/hour, $219.00/month (730 h)",
		"Bound:     $0.2500/hour lower bound, gap 16.67%",
		"Solver:    mip, status within-gap (deadline), 1.5s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestQuantities(t *testing.T) {
	got := quantities(model.Resources{
		model.CPU: 3920, model.Memory: 14 << 30, model.EphemeralStorage: 1500, model.Pods: 110, model.GPU: 1,
		"hugepages-2Mi": 4 << 20, "example.com/fpga": 2000,
	})
	want := map[string]string{
		"cpu": "3920m", "memory": "14Gi", "ephemeral-storage": "1500", "pods": "110", "nvidia.com/gpu": "1",
		"hugepages-2Mi": "4Mi", "example.com/fpga": "2k",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if q := quantities(model.Resources{model.CPU: 4000}); q["cpu"] != "4" {
		t.Errorf("4000m prints as %q, want 4", q["cpu"])
	}
}
