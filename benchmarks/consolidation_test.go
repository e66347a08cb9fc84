package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

func TestGenerateConsolidation(t *testing.T) {
	for _, cname := range Catalogs {
		t.Run(cname, func(t *testing.T) {
			cat, err := LoadCatalog(cname)
			if err != nil {
				t.Fatal(err)
			}
			a, err := GenerateConsolidation(cat, 200, DefaultSeed)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := GenerateConsolidation(cat, 200, DefaultSeed)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("the same seed gave two different clusters")
			}
			if c, _ := GenerateConsolidation(cat, 200, DefaultSeed+1); reflect.DeepEqual(a, c) {
				t.Fatal("another seed gave the same cluster")
			}
			if n := len(a.Candidates) + len(a.Problem.Nodes); n != 200 {
				t.Fatalf("%d nodes, want 200", n)
			}
			if len(a.Problem.Nodes) == 0 || len(a.Problem.Nodes) > 30 {
				t.Errorf("%d pinned nodes of 200, want about 5%%", len(a.Problem.Nodes))
			}
			pods := 0
			for _, g := range a.Problem.Groups {
				pods += len(g.Pods)
				for _, ref := range g.Pods {
					if ci, ok := a.Origin[ref]; !ok || ci < 0 || ci >= len(a.Candidates) {
						t.Fatalf("pod %s: origin %d, %v", ref, ci, ok)
					}
				}
			}
			if pods != len(a.Origin) || pods < 200 {
				t.Fatalf("%d movable pods in groups, %d with an origin", pods, len(a.Origin))
			}
			// Every node has its DaemonSet pod and stays within its allocatable; pinned nodes hold their job.
			used := make([]model.Resources, len(a.Candidates))
			for ci, n := range a.Candidates {
				used[ci] = model.Resources{}
				for _, bp := range n.Pods {
					used[ci] = used[ci].Add(bp.Requests)
				}
				if len(n.Pods) != 1 || n.Pods[0].Labels["app"] != "node-agent" {
					t.Fatalf("candidate %s: pods that go with it %+v, want its DaemonSet pod", n.Name, n.Pods)
				}
			}
			for _, g := range a.Problem.Groups {
				for _, ref := range g.Pods {
					ci := a.Origin[ref]
					used[ci] = used[ci].Add(g.Requests)
				}
			}
			for ci, n := range a.Candidates {
				if !used[ci].Fits(n.Allocatable) {
					t.Fatalf("candidate %s: %v does not fit %v", n.Name, used[ci], n.Allocatable)
				}
			}
			for _, n := range a.Problem.Nodes {
				if len(n.Pods) < 2 || n.Pods[1].Labels["app"] != "batch" {
					t.Fatalf("pinned node %s without its job: %+v", n.Name, n.Pods)
				}
			}
		})
	}
	if _, err := GenerateConsolidation(nil, 0, 1); err == nil {
		t.Error("0 nodes accepted")
	}
}

func TestConsolidationWorkloads(t *testing.T) {
	ws, err := ConsolidationWorkloads([]int{10, 100}, Catalogs, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	if got := strings.Join(names, ","); got != "consolidation/kwok/10,consolidation/kwok/100,consolidation/aws/us-east-1/10,consolidation/aws/us-east-1/100" {
		t.Fatalf("workloads %s", got)
	}
	for _, bad := range []struct {
		sizes []int
		cats  []string
	}{{nil, Catalogs}, {[]int{10}, nil}, {[]int{0}, Catalogs}, {[]int{10}, []string{"aws/mars-1"}}} {
		if _, err := ConsolidationWorkloads(bad.sizes, bad.cats, 1); err == nil {
			t.Errorf("sizes %v catalogs %v accepted", bad.sizes, bad.cats)
		}
	}
	gens, cons, err := SplitWorkloadNames([]string{"web", Consolidation, "web"})
	if err != nil || !cons || !reflect.DeepEqual(gens, []string{"web"}) {
		t.Fatalf("split: %v %v %v", gens, cons, err)
	}
	if gens, cons, _ := SplitWorkloadNames(nil); !cons || len(gens) != len(Generators()) {
		t.Fatalf("split of none: %v %v", gens, cons)
	}
	if _, _, err := SplitWorkloadNames([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "consolidation") {
		t.Fatalf("unknown workload: %v", err)
	}
}

func TestRunConsolidation(t *testing.T) {
	ws, err := ConsolidationWorkloads([]int{60}, Catalogs, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := RunConsolidation(context.Background(), ws, Options{Deadline: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Failed() || r.Candidates+r.Pinned != 60 || r.Pods == 0 {
			t.Fatalf("%s: %+v", r.Workload, r)
		}
		for _, o := range []ConsolidationOutcome{r.Greedy, r.Packwright} {
			if !o.Valid || !o.Act || o.Removed == 0 || o.Moved == 0 {
				t.Errorf("%s %s: %+v", r.Workload, o.Solver, o)
			}
			if o.LowerBound > o.CostAfter+1e-9 || o.CostAfter > o.CostBefore+1e-9 || o.Gap < 0 || o.Gap > 1 {
				t.Errorf("%s %s: bound %v, after %v, before %v", r.Workload, o.Solver, o.LowerBound, o.CostAfter, o.CostBefore)
			}
		}
		if r.Packwright.Duration > 3*time.Second {
			t.Errorf("%s: packwright took %v with a 1s deadline", r.Workload, r.Packwright.Duration)
		}
	}
	var b strings.Builder
	if err := WriteReport(&b, Results{Consolidation: rs}, ReportInfo{ConsolidationDeadline: time.Second}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, r := range rs {
		for _, o := range []ConsolidationOutcome{r.Greedy, r.Packwright} {
			row := fmt.Sprintf("| 60 | %d | %d | %d | %s | %.4f | %.4f |", r.Pinned, r.Pods, r.Groups, o.Solver, o.CostBefore, o.CostAfter)
			if !strings.Contains(out, row) {
				t.Errorf("report lacks %q:\n%s", row, out)
			}
		}
	}
	for _, want := range []string{"## consolidation (kwok)", "## consolidation (aws/us-east-1)", "- Consolidation deadline 1s",
		"| nodes | pinned | pods | groups | solver | before $/h | after $/h | lower bound $/h | gap % | saving % | removed | launched | moved | ms | valid | status |",
		"2 workloads, 0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestRunConsolidationReportsBrokenWorkload(t *testing.T) {
	ws := []ConsolidationWorkload{{Name: "consolidation/broken/1", Catalog: "broken", Nodes: 1,
		Input: func() (*solver.ConsolidationInput, error) { return nil, fmt.Errorf("no such cluster") }}}
	rs, err := RunConsolidation(context.Background(), ws, Options{})
	if err != nil || len(rs) != 1 || !rs[0].Failed() || !strings.Contains(rs[0].Failures[0], "no such cluster") {
		t.Fatalf("%+v, %v", rs, err)
	}
	var b strings.Builder
	if err := WriteReport(&b, Results{Consolidation: rs}, ReportInfo{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "**FAIL** error") || !strings.Contains(b.String(), "- `consolidation/broken/1`: building the cluster: no such cluster") {
		t.Errorf("report:\n%s", b.String())
	}
}

// decide consolidates a small generated cluster with greedy.
func decide(t *testing.T, nodes int) (*solver.ConsolidationInput, *solver.Consolidation) {
	t.Helper()
	cat, err := LoadCatalog(CatalogKwok)
	if err != nil {
		t.Fatal(err)
	}
	in, err := GenerateConsolidation(cat, nodes, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := solver.Consolidate(context.Background(), in, solver.ConsolidationOptions{Solve: solver.Options{Kind: solver.Greedy}})
	if err != nil {
		t.Fatal(err)
	}
	return in, res
}

func TestCheckDecision(t *testing.T) {
	in, res := decide(t, 30)
	if e := checkDecision(in, res); e != "" {
		t.Fatalf("a real decision fails its check: %s", e)
	}
	for _, tc := range []struct {
		name   string
		tamper func(c *solver.Consolidation)
		want   string
	}{
		{"pod left on a removed node", func(c *solver.Consolidation) { c.Moves = c.Moves[1:] }, "stays on removed node"},
		{"pod moved twice", func(c *solver.Consolidation) { c.Moves = append(c.Moves, c.Moves[0]) }, "moves twice"},
		{"bound above cost", func(c *solver.Consolidation) { c.LowerBound = c.CostAfter + 1 }, "costs out of order"},
		{"candidate lost", func(c *solver.Consolidation) { c.Removed = c.Removed[1:] }, "candidates"},
		{"plan overfills a node", func(c *solver.Consolidation) {
			pl := *c.Plan
			pl.NewNodes = append([]model.NewNode(nil), pl.NewNodes...)
			nn := pl.NewNodes[0]
			nn.Pods = []model.GroupCount{{Group: nn.Pods[0].Group, Count: 1000}}
			pl.NewNodes[0] = nn
			c.Plan = &pl
		}, "invalid plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := *res
			tc.tamper(&c)
			if e := checkDecision(in, &c); !strings.Contains(e, tc.want) {
				t.Fatalf("check says %q, want %q", e, tc.want)
			}
		})
	}
}

// asPeer writes a Packwright decision in the peer's form.
func asPeer(res *solver.Consolidation) *PeerDecision {
	f := &PeerDecision{Method: "test", Removed: res.Removed, DurationNs: 7}
	for _, nn := range res.NewNodes {
		f.NewNodes = append(f.NewNodes, PeerNode{Offering: nn.Offering})
	}
	for _, m := range res.Moves {
		var i int
		if _, err := fmt.Sscanf(m.To, "new-%d", &i); err == nil {
			f.NewNodes[i].Pods = append(f.NewNodes[i].Pods, m.Pod)
			continue
		}
		f.Moves = append(f.Moves, PeerMove{Pod: m.Pod, To: m.To})
	}
	return f
}

func TestConsolidationPeerOutcome(t *testing.T) {
	in, res := decide(t, 30)
	outs := consolidationPeerOutcomes(in, &ConsolidationPeerFile{Workload: "w", Peer: "test", Decisions: []PeerDecision{*asPeer(res)}})
	if len(outs) != 1 {
		t.Fatalf("%d outcomes for one decision", len(outs))
	}
	o := outs[0]
	if !o.Valid || o.Err != "" || math.Abs(o.CostAfter-res.CostAfter) > 1e-9 || math.Abs(o.CostBefore-res.CostBefore) > 1e-9 ||
		o.Removed != len(res.Removed) || o.Launched != len(res.NewNodes) || o.Moved != len(res.Moves) || o.Duration != 7 || o.Reason != "test" {
		t.Fatalf("Packwright's decision as a peer's: %+v, want cost after %v", o, res.CostAfter)
	}
	for _, tc := range []struct {
		name   string
		tamper func(f *PeerDecision)
		want   string
	}{
		{"pod without a place", func(f *PeerDecision) { f.NewNodes[0].Pods = f.NewNodes[0].Pods[1:] }, "has no place"},
		{"unknown node removed", func(f *PeerDecision) { f.Removed = append(f.Removed, "node-99999") }, "is no candidate"},
		{"move to a removed node", func(f *PeerDecision) {
			f.Moves = append(f.Moves, PeerMove{Pod: f.NewNodes[0].Pods[0], To: f.Removed[0]})
			f.NewNodes[0].Pods = f.NewNodes[0].Pods[1:]
		}, "no node that stays"},
		{"offering out of range", func(f *PeerDecision) { f.NewNodes[0].Offering = -1 }, "out of range"},
		{"overfull node", func(f *PeerDecision) {
			for _, nn := range f.NewNodes[1:] {
				f.NewNodes[0].Pods = append(f.NewNodes[0].Pods, nn.Pods...)
			}
			f.NewNodes = f.NewNodes[:1]
		}, "invalid plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := asPeer(res)
			tc.tamper(g)
			if o := consolidationPeerOutcome(in, "test", g, res.CostBefore); o.Valid || !strings.Contains(o.Err, tc.want) {
				t.Fatalf("%+v, want an error with %q", o, tc.want)
			}
		})
	}
	if outs := consolidationPeerOutcomes(in, &ConsolidationPeerFile{Peer: "test", Error: "not run"}); len(outs) != 1 || outs[0].Status != "error" || outs[0].Err != "not run" {
		t.Fatalf("peer that did not run: %+v", outs)
	}
}

func TestRunConsolidationWithPeer(t *testing.T) {
	ws, err := ConsolidationWorkloads([]int{30}, []string{CatalogKwok}, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := ExportConsolidation(dir, ws); err != nil {
		t.Fatal(err)
	}
	// The peer's decisions: Packwright's greedy decision (valid) and one that leaves a pod behind (invalid).
	in, res := decide(t, 30)
	good, bad := *asPeer(res), *asPeer(res)
	good.Label, bad.Label, bad.Method = "good", "bad", "broken"
	bad.NewNodes = append([]PeerNode(nil), bad.NewNodes...)
	bad.NewNodes[0].Pods = bad.NewNodes[0].Pods[1:]
	data, _ := json.Marshal(ConsolidationPeerFile{Workload: ws[0].Name, Peer: "karpenter test", Decisions: []PeerDecision{good, bad}})
	if err := os.WriteFile(filepath.Join(dir, Slug(ws[0].Name)+".karpenter.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := RunConsolidation(context.Background(), ws, Options{Deadline: time.Second, PeerDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if r.Failed() || len(r.Peers) != 2 || !r.Peers[0].Valid || r.Peers[1].Valid || len(r.Warnings) != 1 ||
		!strings.Contains(r.Warnings[0], "(broken): invalid decision") {
		t.Fatalf("result %+v", r)
	}
	if math.Abs(r.Peers[0].CostAfter-res.CostAfter) > 1e-9 || len(in.Candidates) != r.Candidates {
		t.Fatalf("peer cost after %v, want greedy's %v", r.Peers[0].CostAfter, res.CostAfter)
	}
	var b strings.Builder
	if err := WriteReport(&b, Results{Consolidation: rs}, ReportInfo{}); err != nil {
		t.Fatal(err)
	}
	vs := fmt.Sprintf("| %.2f |", 100*(r.Peers[0].CostAfter-r.Packwright.CostAfter)/r.Peers[0].CostAfter)
	for _, want := range []string{"| packwright vs karpenter % |", "| karpenter test (good) | ", "| **no** |", vs, "- 30 nodes, karpenter test (bad): invalid decision"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
