package benchmarks

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleResults() []Result {
	ok := func(cost, lb float64, status string) Outcome {
		gap := 0.0
		if cost > 0 {
			gap = (cost - lb) / cost
		}
		return Outcome{Solver: "mip", Status: status, Cost: cost, LowerBound: lb, Gap: gap, Duration: 12 * time.Millisecond, NewNodes: 3, Placed: 100}
	}
	return []Result{
		{Workload: "web/kwok/1000", Generator: "web", Catalog: "kwok", Pods: 1000, Groups: 7, Offerings: 216,
			Greedy: ok(12, 0, "greedy"), Packwright: ok(10, 9.5, "within-gap")},
		{Workload: "web/kwok/100", Generator: "web", Catalog: "kwok", Pods: 100, Groups: 6, Offerings: 216,
			Greedy: ok(2, 0, "greedy"), Packwright: ok(2, 0, "greedy-fallback")},
		{Workload: "spread/kwok/100", Generator: "spread", Catalog: "kwok", Pods: 100, Groups: 7, Offerings: 216,
			Greedy: ok(3, 0, "greedy"), Packwright: Outcome{Status: "error", Err: "boom"}, Failures: []string{"packwright: boom"}},
	}
}

func TestWriteReport(t *testing.T) {
	rs := sampleResults()
	rs[1].Packwright.StatusReason = "mip found no integer solution in time"
	var b bytes.Buffer
	if err := WriteReport(&b, Results{Provisioning: rs}, ReportInfo{Command: "packwright bench", Deadline: time.Second, Seed: 1, HiGHS: "1.15.1", Charts: []string{ChartCost}}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"## web (kwok)", "## spread (kwok)",
		"| pods | groups | greedy $/h | packwright $/h | lower bound $/h | gap % | saving % | greedy ms | packwright ms | nodes | status |",
		"| 100 | 6 | 2.0000 | 2.0000 | — | — | 0.00 |",             // no bound: no gap
		"| 1000 | 7 | 12.0000 | 10.0000 | 9.5000 | 5.00 | 16.67 |", // gap and saving in percent
		"**FAIL** error", "- `spread/kwok/100`: packwright: boom",
		"- 100 pods: mip found no integer solution in time",
		"3 workloads, 1 failed", "![cost](cost.png)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Rows are in ascending pods within a table.
	if i, j := strings.Index(out, "| 100 | 6 |"), strings.Index(out, "| 1000 | 7 |"); i < 0 || j < i {
		t.Errorf("rows out of order:\n%s", out)
	}
}

func TestAboveOptimum(t *testing.T) {
	plan := func(cost, lb float64, placed int) Outcome {
		return Outcome{Status: "within-gap", Cost: cost, LowerBound: lb, Placed: placed}
	}
	for _, tc := range []struct {
		name      string
		pw        Outcome
		ref       *Outcome
		lo, hi    float64
		above     float64
		exact, ok bool
	}{
		{"no reference: the plan's own bracket", plan(10, 9.5, 100), nil, 9.5, 10, 0.05, false, true},
		{"a better bound and plan from the reference", plan(10, 9.5, 100), &Outcome{Status: "optimal", Cost: 9.8, LowerBound: 9.8, Placed: 100}, 9.8, 9.8, 0.02, true, true},
		{"the reference places other pods: ignored", plan(10, 9.5, 100), &Outcome{Status: "optimal", Cost: 9, LowerBound: 9, Placed: 90}, 9.5, 10, 0.05, false, true},
		{"an invalid reference plan: ignored", plan(10, 9.5, 100), &Outcome{Status: "optimal", Cost: 9.8, LowerBound: 9.8, Placed: 100, Err: "invalid plan"}, 9.5, 10, 0.05, false, true},
		{"the decision proven optimal", plan(10, 10, 100), nil, 10, 10, 0, true, true},
		{"no bound", plan(10, 0, 100), nil, 0, 0, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Packwright: tc.pw, Reference: tc.ref}
			lo, hi, ok := r.Optimum()
			above, exact, ok2 := r.AboveOptimum()
			if ok != tc.ok || ok2 != tc.ok || exact != tc.exact || math.Abs(lo-tc.lo) > 1e-9 || math.Abs(hi-tc.hi) > 1e-9 || math.Abs(above-tc.above) > 1e-9 {
				t.Fatalf("Optimum = %v, %v, %v; AboveOptimum = %v, %v, %v; want %v, %v, %v and %v, %v",
					lo, hi, ok, above, exact, ok2, tc.lo, tc.hi, tc.ok, tc.above, tc.exact)
			}
		})
	}
	rs := sampleResults()
	rs[0].Reference = &Outcome{Status: "optimal", Cost: 9.8, LowerBound: 9.8, Placed: 100}
	var b bytes.Buffer
	if err := WriteReport(&b, Results{Provisioning: rs}, ReportInfo{Deadline: time.Second, Reference: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| optimum $/h | above optimum % |", "| 9.8000 | 2.00 |", "a 30s deadline"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteAll(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []Result
	}{{"results", sampleResults()}, {"no results", nil}, {"one point, equal costs", []Result{{Workload: "web/kwok/100", Generator: "web",
		Catalog: "kwok", Pods: 100, Greedy: Outcome{Status: "greedy", Cost: 0.7}, Packwright: Outcome{Status: "greedy-fallback", Cost: 0.7}}}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files, err := WriteAll(dir, Results{Provisioning: tc.rs}, ReportInfo{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{ReportFile, ResultsFile, ChartCost, ChartTime, ChartGap}
			if strings.Join(files, ",") != strings.Join(want, ",") {
				t.Fatalf("files %v, want %v", files, want)
			}
			for _, c := range []string{ChartCost, ChartTime, ChartGap} {
				checkPNG(t, filepath.Join(dir, c))
			}
			data, err := os.ReadFile(filepath.Join(dir, ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			var back Results
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatalf("results.json: %v", err)
			}
			if len(back.Provisioning) != len(tc.rs) {
				t.Fatalf("results.json holds %d results, want %d", len(back.Provisioning), len(tc.rs))
			}
			report, err := os.ReadFile(filepath.Join(dir, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(report), "![gap](gap.png)") {
				t.Errorf("report does not show the charts:\n%s", report)
			}
		})
	}
}

// checkPNG checks that path is a PNG image of the chart size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
		t.Fatalf("%s: %v is too small for a chart", path, b)
	}
}
