package greedy

import (
	"fmt"
	"math"
	"testing"

	"github.com/packwright/packwright/model"
)

// Free space on a running node goes to the pods that would cost most elsewhere for the room they take, not to
// the largest first: a node with 4 cpu and 32Gi free takes one CPU-heavy pod and all four memory-heavy ones
// (exactly its free space), and only the other CPU-heavy pod needs a new node. Filling in size order, both
// CPU-heavy pods would use up the free CPU and strand 28Gi, and the memory-heavy pods would need a memory
// node of their own.
func TestExistingSpaceByValue(t *testing.T) {
	offs := append(family("c", 2, 0.042, "a"), family("r", 8, 0.06, "a")...)
	node := existing("old", "a", 4, 32, 0.2)
	node.Pods = nil
	cpuHeavy := group("cpu", 2, 2000, 2*gi)
	memHeavy := group("mem", 4, 500, 15*gi/2)
	for _, tc := range []struct {
		name   string
		groups []model.PodGroup
	}{
		{"cpu-heavy first", []model.PodGroup{cpuHeavy, memHeavy}},
		{"memory-heavy first", []model.PodGroup{memHeavy, cpuHeavy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problem(tc.groups, offs, "a")
			p.Nodes = []model.ExistingNode{node}
			plan := solve(t, p)
			onNode := 0
			for _, ep := range plan.Existing {
				for _, gc := range ep.Pods {
					onNode += gc.Count
				}
			}
			want := 0.042 * 2 // one c2 for the second CPU-heavy pod
			if onNode != 5 || len(plan.NewNodes) != 1 || math.Abs(plan.Cost-want) > 1e-9 {
				t.Fatalf("%d pods on the running node, %d new nodes at $%.4f/h; want 5 pods there and one c2 at $%.4f/h\n%s",
					onNode, len(plan.NewNodes), plan.Cost, want, describePlan(p, plan))
			}
		})
	}
}

// TestFillPassesFullNodesOnly: running nodes too full for any pod are passed in one step, and a node with room
// among them still gets its pods: of five running nodes, the second and the fourth have room for one pod each,
// the others not for the smallest, and both take one before any node is opened.
func TestFillPassesFullNodesOnly(t *testing.T) {
	var nodes []model.ExistingNode
	for i, room := range []bool{false, true, false, true, false} {
		n := existing(fmt.Sprintf("n%d", i), "a", 1, 4, 0.05)
		if !room {
			n.Pods = []model.BoundPod{{Ref: model.PodRef{Namespace: "default", Name: fmt.Sprintf("filler-%d", i)},
				Requests: model.Resources{model.CPU: 900, model.Memory: gi, model.Pods: 1}}}
		}
		nodes = append(nodes, n)
	}
	p := problem([]model.PodGroup{group("web", 3, 600, gi)}, family("c", 2, 0.042, "a"), "a")
	p.Nodes = nodes
	plan := solve(t, p)
	on := map[int]int{}
	for _, ep := range plan.Existing {
		for _, gc := range ep.Pods {
			on[ep.Node] += gc.Count
		}
	}
	if on[1] != 1 || on[3] != 1 || len(on) != 2 || len(plan.NewNodes) != 1 {
		t.Fatalf("pods on running nodes %v and %d new nodes; want one on n1, one on n3 and one new node\n%s", on, len(plan.NewNodes), describePlan(p, plan))
	}
}
