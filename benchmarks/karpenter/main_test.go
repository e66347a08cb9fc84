package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// tinyProblem has two zones, two instance types (a small one and a large one at a little less than twice the
// price) and a web group of 6 pods that fit 2 per small node or 6 per large node, plus one pod no type can hold.
func tinyProblem() *problem {
	labels := func(it, zone, ct string) map[string]string {
		return map[string]string{
			"node.kubernetes.io/instance-type": it, "topology.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
			"kubernetes.io/os": "linux", "karpenter.sh/capacity-type": ct, "packwright.dev/capacity-type": ct,
			"packwright.dev/nodepool": "default", "karpenter.sh/nodepool": "default",
		}
	}
	small := resources{"cpu": 2000, "memory": 4 << 30, "pods": 110}
	large := resources{"cpu": 6000, "memory": 12 << 30, "pods": 110}
	var offs []offering
	for _, z := range []string{"z1", "z2"} {
		offs = append(offs,
			offering{ID: "default/small/" + z + "/on-demand", NodePool: "default", InstanceType: "small", Zone: z, CapacityType: "on-demand",
				Price: 0.10, Capacity: small, Allocatable: small, Labels: labels("small", z, "on-demand")},
			offering{ID: "default/large/" + z + "/on-demand", NodePool: "default", InstanceType: "large", Zone: z, CapacityType: "on-demand",
				Price: 0.25, Capacity: large, Allocatable: large, Labels: labels("large", z, "on-demand")},
		)
	}
	var web, huge []podRef
	for i := range 6 {
		web = append(web, podRef{"shop", "web-" + string(rune('a'+i))})
	}
	huge = append(huge, podRef{"batch", "huge"})
	return &problem{
		Pools:     []nodePool{{Name: "default"}},
		Offerings: offs,
		Zones:     []string{"z1", "z2"},
		Groups: []podGroup{
			{Name: "shop/web", Namespace: "shop", Pods: web, Requests: resources{"cpu": 1000, "memory": 1 << 30, "pods": 1}},
			{Name: "batch/huge", Namespace: "batch", Pods: huge, Requests: resources{"cpu": 64000, "memory": 1 << 30, "pods": 1}},
		},
	}
}

func TestSolveTinyProblem(t *testing.T) {
	out := solve(&problemFile{Workload: "tiny", Pods: 7, Problem: tinyProblem()})
	if out.Error != "" || out.Plan == nil {
		t.Fatalf("solve: %+v", out)
	}
	placed := 0
	for _, nn := range out.Plan.NewNodes {
		for _, gc := range nn.Pods {
			if gc.Group != 0 {
				t.Errorf("group %d placed", gc.Group)
			}
			placed += gc.Count
		}
	}
	if placed != 6 {
		t.Errorf("%d web pods placed, want 6", placed)
	}
	if len(out.Plan.Unschedulable) != 1 || out.Plan.Unschedulable[0].Group != 1 || out.Plan.Unschedulable[0].Count != 1 || out.Plan.Unschedulable[0].Reason == "" {
		t.Errorf("unschedulable %+v, want the huge pod with a reason", out.Plan.Unschedulable)
	}
	// Karpenter fills one NodeClaim while an option still fits: the 6 pods go on one large node ($0.25), and the
	// NodeClaim is priced at its cheapest compatible offering.
	if out.Plan.Cost != 0.25 || len(out.Plan.NewNodes) != 1 {
		t.Errorf("plan %+v, want one large node at $0.25", out.Plan)
	}
	if out.DurationNs <= 0 {
		t.Errorf("duration %d", out.DurationNs)
	}
}

func TestUnsupported(t *testing.T) {
	p := tinyProblem()
	p.Nodes = []existingNode{{Name: "n1"}}
	if out := solve(&problemFile{Workload: "x", Problem: p}); out.Error == "" || out.Plan != nil {
		t.Fatalf("existing nodes: %+v, want an error", out)
	}
}

func TestRunWritesPeerFiles(t *testing.T) {
	dir := t.TempDir()
	data, _ := json.Marshal(problemFile{Workload: "tiny/kwok/7", Pods: 7, Problem: tinyProblem()})
	if err := os.WriteFile(filepath.Join(dir, "tiny_kwok_7.problem.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "tiny_kwok_7.karpenter.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f peerFile
	if err := json.Unmarshal(data, &f); err != nil || f.Workload != "tiny/kwok/7" || f.Plan == nil || f.Peer == "" {
		t.Fatalf("peer file %+v, %v", f, err)
	}
	if err := run(t.TempDir()); err == nil {
		t.Fatal("run on an empty directory: no error")
	}
}
