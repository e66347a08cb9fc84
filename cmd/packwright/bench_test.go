package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packwright/packwright/benchmarks"
	"github.com/packwright/packwright/cluster"
)

func TestBenchTinyRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results") // not there yet: bench creates it
	code, out, errOut := runCmd(t, "bench", "--sizes", "100", "--workloads", "web,spread", "--deadline", "300ms", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr %q: no progress bar when stderr is not a terminal", errOut)
	}
	for _, f := range []string{"report.md", "results.json", "cost.png", "time.png", "gap.png"} {
		if !strings.Contains(out, "wrote "+filepath.Join(dir, f)) {
			t.Errorf("stdout does not mention %s:\n%s", f, out)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"`packwright bench --sizes 100 --workloads web,spread --deadline 300ms --out " + dir + "`",
		"## web (kwok)", "## spread (kwok)", "| 100 | ", "2 workloads, 0 failed", "![cost](cost.png)",
	} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(string(report), "## mixed") {
		t.Errorf("report has a workload that was not asked for:\n%s", report)
	}
	for _, c := range []string{"cost.png", "time.png", "gap.png"} {
		f, err := os.Open(filepath.Join(dir, c))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", c, err)
		}
		f.Close()
	}
	var all benchmarks.Results
	data, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(data, &all); err != nil || len(all.Provisioning) != 2 || len(all.Consolidation) != 0 {
		t.Fatalf("results.json: %d results, %d consolidation results, %v", len(all.Provisioning), len(all.Consolidation), err)
	}
	for _, r := range all.Provisioning {
		if r.Pods != 100 || r.Greedy.Cost <= 0 || r.Packwright.Cost <= 0 || r.Packwright.Cost > r.Greedy.Cost+1e-9 {
			t.Errorf("%s: %+v", r.Workload, r)
		}
	}
}

func TestBenchSnapshot(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(snap, cluster.SampleSnapshot, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, "bench", "--snapshot", snap, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "## snapshot (aws/us-east-1)") || !strings.Contains(string(report), "| 13 | 4 |") {
		t.Errorf("report of the snapshot (13 pending pods in 4 groups):\n%s", report)
	}
}

func TestBenchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"zero size", []string{"--sizes", "0"}, `--sizes: "0" is not a positive pod count`},
		{"no sizes", []string{"--sizes", ","}, "--sizes: no sizes given"},
		{"unknown workload", []string{"--sizes", "10", "--workloads", "web,nope"}, `unknown workload "nope"`},
		{"unknown catalog", []string{"--sizes", "10", "--catalog", "aws/mars-1"}, "unknown region"},
		{"snapshot and sizes", []string{"--snapshot", "x.yaml", "--sizes", "10"}, "--sizes and --workloads do not apply"},
		{"missing snapshot", []string{"--snapshot", "/nonexistent/x.yaml"}, "snapshot /nonexistent/x.yaml: no such file"},
		{"bad solver", []string{"--solver", "fast"}, `unknown solver "fast"`},
		{"bad consolidation deadline", []string{"--consolidation-deadline", "0s"}, "--consolidation-deadline must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, append([]string{"bench", "--out", t.TempDir()}, tc.args...)...)
			if code != 1 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q: want exit 1 and one line with %q", code, errOut, tc.want)
			}
		})
	}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	bar := &progressBar{w: &b, enabled: true}
	bar.update(0, 4, "web/kwok/100")
	bar.update(2, 4, "web/kwok/1000")
	bar.done()
	out := b.String()
	if !strings.HasPrefix(out, "\r[                              ] 0/4 web/kwok/100") ||
		!strings.Contains(out, "\r[===============               ] 2/4 web/kwok/1000") || !strings.HasSuffix(out, "\r") {
		t.Fatalf("progress output %q", out)
	}
	b.Reset()
	off := newProgressBar(&b) // a buffer is no terminal
	off.update(1, 2, "x")
	off.done()
	if b.Len() != 0 {
		t.Fatalf("bar drawn on a non-terminal: %q", b.String())
	}
}

func TestBenchExportAndPeer(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "bench", "--sizes", "100", "--workloads", "web", "--export", dir)
	if code != 0 || !strings.Contains(out, "wrote 1 problems and 0 consolidation clusters to "+dir) {
		t.Fatalf("export: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "web_kwok_100.problem.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pf benchmarks.ProblemFile
	if err := json.Unmarshal(data, &pf); err != nil || pf.Workload != "web/kwok/100" || pf.Problem == nil {
		t.Fatalf("problem file: %v", err)
	}
	// A peer plan that leaves every pod unschedulable is valid (if useless) and shows in the report.
	pl := map[string]any{"Unschedulable": []map[string]any{}}
	var us []map[string]any
	for g := range pf.Problem.Groups {
		us = append(us, map[string]any{"Group": g, "Count": pf.Problem.Groups[g].Demand(), "Reason": "peer gave up"})
	}
	pl["Unschedulable"] = us
	peer, _ := json.Marshal(map[string]any{"workload": "web/kwok/100", "peer": "karpenter test", "plan": pl, "durationNs": 1})
	if err := os.WriteFile(filepath.Join(dir, "web_kwok_100.karpenter.json"), peer, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCmd(t, "bench", "--sizes", "100", "--workloads", "web", "--deadline", "200ms", "--peer", dir, "--out", dir)
	if code != 0 {
		t.Fatalf("peer run: exit %d: %s", code, errOut)
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(report), "| karpenter $/h |") || !strings.Contains(string(report), "| 0.0000 | 0 | 0 | — |") {
		t.Errorf("report lacks the peer's columns:\n%s", report)
	}
}

func TestBenchConsolidation(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "bench", "--sizes", "40", "--workloads", "consolidation", "--consolidation-deadline", "1s", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "wrote "+filepath.Join(dir, "report.md")) {
		t.Errorf("stdout %q", out)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## consolidation (kwok)", "- Consolidation deadline 1s", "| 40 | ", "| greedy | ", "| packwright | ",
		"1 workloads, 0 failed"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(string(report), "## web") {
		t.Errorf("report has provisioning workloads that were not asked for:\n%s", report)
	}
	var all benchmarks.Results
	data, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(data, &all); err != nil || len(all.Provisioning) != 0 || len(all.Consolidation) != 1 {
		t.Fatalf("results.json: %d results, %d consolidation results, %v", len(all.Provisioning), len(all.Consolidation), err)
	}
	r := all.Consolidation[0]
	if r.Nodes != 40 || !r.Greedy.Valid || !r.Packwright.Valid || r.Packwright.CostAfter >= r.Packwright.CostBefore {
		t.Errorf("consolidation result %+v", r)
	}

	// --export writes the cluster for a peer.
	code, out, errOut = runCmd(t, "bench", "--sizes", "40", "--workloads", "consolidation", "--export", dir)
	if code != 0 || !strings.Contains(out, "wrote 0 problems and 1 consolidation clusters to "+dir) {
		t.Fatalf("export: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	data, err = os.ReadFile(filepath.Join(dir, "consolidation_kwok_40.consolidation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cf benchmarks.ConsolidationFile
	if err := json.Unmarshal(data, &cf); err != nil || cf.Workload != "consolidation/kwok/40" || len(cf.Candidates)+len(cf.Problem.Nodes) != 40 {
		t.Fatalf("consolidation file: %v", err)
	}
}
