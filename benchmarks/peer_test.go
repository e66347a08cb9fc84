package benchmarks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
)

func TestSlug(t *testing.T) {
	if got := Slug("web/aws/us-east-1/100"); got != "web_aws_us-east-1_100" {
		t.Fatalf("Slug = %q", got)
	}
}

// writePeer writes a peer file for w into dir.
func writePeer(t *testing.T, dir string, f PeerFile) {
	t.Helper()
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Slug(f.Workload)+"."+PeerKarpenter+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPeerPlansAreValidated(t *testing.T) {
	ws, err := Workloads([]string{"web", "mixed", "spread"}, []int{100}, []string{CatalogKwok}, 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := ExportProblems(dir, ws)
	if err != nil || len(files) != 3 {
		t.Fatalf("export: %v, %v", files, err)
	}
	// The exported problem reads back as the same problem.
	var pf ProblemFile
	data, _ := os.ReadFile(filepath.Join(dir, files[0]))
	if err := json.Unmarshal(data, &pf); err != nil {
		t.Fatal(err)
	}
	orig, _ := ws[0].Problem()
	if pf.Workload != ws[0].Name || pf.Pods != 100 || len(pf.Problem.Groups) != len(orig.Groups) || len(pf.Problem.Offerings) != len(orig.Offerings) {
		t.Fatalf("exported %s: %d groups, %d offerings", pf.Workload, len(pf.Problem.Groups), len(pf.Problem.Offerings))
	}
	if err := pf.Problem.Validate(); err != nil {
		t.Fatalf("exported problem does not validate: %v", err)
	}

	// web: a valid plan (greedy's), with a wrong cost that the harness must recompute.
	good, err := greedy.Solve(pf.Problem)
	if err != nil {
		t.Fatal(err)
	}
	wantCost := good.Cost
	good.Cost, good.LowerBound = 1e9, 1e9
	writePeer(t, dir, PeerFile{Workload: ws[0].Name, Peer: "karpenter test", Plan: good, DurationNs: 5e6})
	// mixed: every pod on one node, which cannot hold them.
	pm, _ := ws[1].Problem()
	bad := &model.Plan{NewNodes: []model.NewNode{{Offering: 0}}}
	for g := range pm.Groups {
		bad.NewNodes[0].Pods = append(bad.NewNodes[0].Pods, model.GroupCount{Group: g, Count: pm.Groups[g].Demand()})
	}
	writePeer(t, dir, PeerFile{Workload: ws[1].Name, Peer: "karpenter test", Plan: bad})
	// spread: the peer did not run.
	writePeer(t, dir, PeerFile{Workload: ws[2].Name, Peer: "karpenter test", Error: "not adapted"})

	rs, err := Run(context.Background(), ws, Options{PeerDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	web, mixed, spread := rs[0], rs[1], rs[2]
	if web.Peer == nil || web.Peer.Err != "" || web.Peer.Cost != wantCost || web.Peer.Placed != 100 || web.Peer.Duration != 5e6 || len(web.Warnings) > 0 {
		t.Errorf("valid peer plan: %+v, warnings %v", web.Peer, web.Warnings)
	}
	if mixed.Peer == nil || !strings.HasPrefix(mixed.Peer.Err, "invalid plan") || len(mixed.Warnings) != 1 || mixed.Failed() {
		t.Errorf("invalid peer plan: %+v, warnings %v, failures %v", mixed.Peer, mixed.Warnings, mixed.Failures)
	}
	if spread.Peer == nil || spread.Peer.Status != "error" || spread.Peer.Err != "not adapted" {
		t.Errorf("peer that did not run: %+v", spread.Peer)
	}

	var b strings.Builder
	if err := WriteReport(&b, Results{Provisioning: rs}, ReportInfo{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"karpenter $/h | karpenter ms | karpenter nodes | packwright vs karpenter % |", "| invalid ", "| not run |", "Why Karpenter was not run:", "- 100 pods: not adapted"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}

	// Without a peer directory, or without a file for a workload, there is no peer column.
	rs, err = Run(context.Background(), ws[:1], Options{PeerDir: t.TempDir()})
	if err != nil || rs[0].Peer != nil {
		t.Fatalf("no peer file: %+v, %v", rs[0].Peer, err)
	}
}
