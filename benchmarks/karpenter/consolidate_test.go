package main

import (
	"fmt"
	"slices"
	"testing"
)

// tinyCluster is tinyProblem's catalog with a cluster on it: a pinned large node p1 running one batch pod, and
// candidates c1 and c2 (large, one web pod each) and, when withEmpty, c3 (small, only its DaemonSet pod).
func tinyCluster(withEmpty bool) *consolidationFile {
	p := tinyProblem()
	node := func(name, it string, alloc resources, price float64) existingNode {
		var o offering
		for _, of := range p.Offerings {
			if of.InstanceType == it && of.Zone == "z1" {
				o = of
			}
		}
		return existingNode{Name: name, NodePool: "default", InstanceType: it, Zone: "z1", CapacityType: "on-demand", Price: price,
			Capacity: alloc, Allocatable: alloc, Labels: o.Labels}
	}
	large := p.Offerings[1].Allocatable
	small := p.Offerings[0].Allocatable
	daemon := func(n string) boundPod {
		return boundPod{Ref: podRef{"kube-system", "agent-" + n}, Labels: map[string]string{"app": "agent"}, Requests: resources{"cpu": 100, "memory": 128 << 20, "pods": 1}}
	}
	p1 := node("p1", "large", large, 0.25)
	p1.Pods = []boundPod{{Ref: podRef{"batch", "job"}, Requests: resources{"cpu": 1000, "memory": 1 << 30, "pods": 1}}}
	p.Nodes = []existingNode{p1}
	c1, c2 := node("c1", "large", large, 0.25), node("c2", "large", large, 0.25)
	c1.Pods, c2.Pods = []boundPod{daemon("c1")}, []boundPod{daemon("c2")}
	cands := []existingNode{c1, c2}
	if withEmpty {
		c3 := node("c3", "small", small, 0.10)
		c3.Pods = []boundPod{daemon("c3")}
		cands = append(cands, c3)
	}
	web := []podRef{{"shop", "web-0"}, {"shop", "web-1"}}
	p.Groups = []podGroup{{Name: "shop/web", Namespace: "shop", Pods: web, Requests: resources{"cpu": 1000, "memory": 1 << 30, "pods": 1}}}
	return &consolidationFile{Workload: "tiny", Nodes: 1 + len(cands), Problem: p, Candidates: cands,
		Origin: []podOrigin{{Pod: web[0], Candidate: 0}, {Pod: web[1], Candidate: 1}}}
}

func TestConsolidateTinyCluster(t *testing.T) {
	for _, tc := range []struct {
		name      string
		withEmpty bool
		method    string
		removed   []string
		movesTo   string
	}{
		// The controller runs emptiness first: the empty node goes, nothing moves.
		{"empty node first", true, "emptiness", []string{"c3"}, ""},
		// Then multi-node consolidation: both half-empty candidates go, their pods move to the pinned node.
		{"two candidates onto the pinned node", false, "multi-node consolidation", []string{"c1", "c2"}, "p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := consolidate(tinyCluster(tc.withEmpty))
			if res.Error != "" || len(res.Decisions) != 2 {
				t.Fatalf("consolidate: %+v", res)
			}
			out := res.Decisions[0]
			if out.Method != "first cycle: "+tc.method || !slices.Equal(out.Removed, tc.removed) || len(out.NewNodes) != 0 {
				t.Fatalf("decision %+v, want %s removing %v and launching nothing", out, tc.method, tc.removed)
			}
			if tc.movesTo == "" && len(out.Moves) != 0 {
				t.Fatalf("moves %+v, want none", out.Moves)
			}
			if tc.movesTo != "" {
				if len(out.Moves) != 2 {
					t.Fatalf("moves %+v, want both web pods", out.Moves)
				}
				for _, m := range out.Moves {
					if m.To != tc.movesTo {
						t.Fatalf("move %+v, want to %s", m, tc.movesTo)
					}
				}
			}
			if out.DurationNs <= 0 {
				t.Errorf("duration %d", out.DurationNs)
			}
			// Cycle after cycle, both half-empty candidates go onto the pinned node in the end, the empty one too.
			final := res.Decisions[1]
			want := []string{"c1", "c2"}
			if tc.withEmpty {
				want = append(want, "c3")
			}
			if final.Label != fmt.Sprintf("%d cycles", len(want)) || out.Label != "first cycle" {
				t.Errorf("labels %q and %q", out.Label, final.Label)
			}
			if !slices.Equal(final.Removed, want) || len(final.NewNodes) != 0 || len(final.Moves) != 2 || final.Cycles != len(want) {
				t.Fatalf("final decision %+v, want %v removed over %d cycles", final, want, len(want))
			}
			for _, m := range final.Moves {
				if m.To != "p1" {
					t.Fatalf("final move %+v, want to p1", m)
				}
			}
		})
	}
}

func TestConsolidateBadOrigin(t *testing.T) {
	cf := tinyCluster(false)
	cf.Origin[0].Candidate = 7
	if out := consolidate(cf); out.Error == "" || len(out.Decisions) != 0 {
		t.Fatalf("origin out of range: %+v, want an error", out)
	}
}
