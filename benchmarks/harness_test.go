package benchmarks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
	"github.com/packwright/packwright/solver/greedy"
)

func TestRunSmallSuite(t *testing.T) {
	ws, err := Workloads(nil, []int{100}, []string{CatalogKwok}, DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	rs, err := Run(context.Background(), ws, Options{Deadline: 300 * time.Millisecond, Progress: func(done, total int, name string) {
		calls = append(calls, name)
		if total != len(ws) || done > total {
			t.Errorf("progress %d/%d, want total %d", done, total, len(ws))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(ws) {
		t.Fatalf("%d results for %d workloads", len(rs), len(ws))
	}
	if len(calls) != len(ws)+1 || calls[len(calls)-1] != "" {
		t.Errorf("progress calls %q: want one per workload and a final one", calls)
	}
	for _, r := range rs {
		if r.Failed() {
			t.Errorf("%s failed: %v", r.Workload, r.Failures)
		}
		if r.Greedy.Placed+r.Greedy.Unschedulable != r.Pods || r.Packwright.Placed+r.Packwright.Unschedulable != r.Pods {
			t.Errorf("%s: pods not accounted for: greedy %+v, packwright %+v", r.Workload, r.Greedy, r.Packwright)
		}
		if r.Packwright.Cost > r.Greedy.Cost+1e-9 {
			t.Errorf("%s: packwright $%v above greedy $%v", r.Workload, r.Packwright.Cost, r.Greedy.Cost)
		}
		if r.Packwright.LowerBound > r.Packwright.Cost+1e-9 || r.Packwright.Gap < 0 || r.Packwright.Gap > 1 {
			t.Errorf("%s: bound %v, cost %v, gap %v", r.Workload, r.Packwright.LowerBound, r.Packwright.Cost, r.Packwright.Gap)
		}
		if r.Packwright.Duration <= 0 || r.Packwright.Duration > 2*time.Second {
			t.Errorf("%s: packwright took %v with a 300ms deadline", r.Workload, r.Packwright.Duration)
		}
		if r.Groups == 0 || r.Offerings == 0 {
			t.Errorf("%s: %d groups, %d offerings", r.Workload, r.Groups, r.Offerings)
		}
	}
}

func TestRunReportsBrokenWorkload(t *testing.T) {
	ws := []Workload{{Name: "broken", Generator: "broken", Pods: 1, Problem: func() (*model.Problem, error) {
		return nil, errors.New("no such thing")
	}}}
	rs, err := Run(context.Background(), ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rs[0].Failed() || !strings.Contains(rs[0].Failures[0], "no such thing") {
		t.Fatalf("failures %q, want the build error", rs[0].Failures)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	ws, err := Workloads([]string{"web"}, []int{100, 200}, []string{CatalogKwok}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs, err := Run(ctx, ws, Options{})
	if err == nil || len(rs) != 0 {
		t.Fatalf("Run on a cancelled context: %d results, error %v", len(rs), err)
	}
}

// TestOutcomeValidates checks that an invalid plan is reported as a failure, never passed off as a result.
func TestOutcomeValidates(t *testing.T) {
	ws, err := Workloads([]string{"web"}, []int{100}, []string{CatalogKwok}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws[0].Problem()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	if o := outcome(p, pl, nil, time.Millisecond); o.Err != "" {
		t.Fatalf("greedy plan reported invalid: %s", o.Err)
	}

	// Put every pod on the first new node: it cannot hold 100 pods.
	bad := *pl
	bad.NewNodes = []model.NewNode{{Offering: pl.NewNodes[0].Offering}}
	for g := range p.Groups {
		bad.NewNodes[0].Pods = append(bad.NewNodes[0].Pods, model.GroupCount{Group: g, Count: p.Groups[g].Demand()})
	}
	bad.Cost = p.Offerings[bad.NewNodes[0].Offering].Price
	bad.LowerBound = 0
	o := outcome(p, &bad, nil, time.Millisecond)
	if !strings.HasPrefix(o.Err, "invalid plan:") {
		t.Fatalf("overfull plan: Err %q, want an invalid plan", o.Err)
	}
	if strings.Contains(o.Err, "\n") {
		t.Errorf("Err spans lines: %q", o.Err)
	}

	o = outcome(p, nil, errors.New("boom"), time.Millisecond)
	if o.Status != "error" || o.Err != "boom" {
		t.Fatalf("solver error: %+v", o)
	}
}

func TestRunKindGreedy(t *testing.T) {
	ws, err := Workloads([]string{"mixed"}, []int{100}, []string{CatalogKwok}, 1)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Run(context.Background(), ws, Options{Kind: solver.Greedy})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs[0]; r.Packwright.Status != string(model.StatusGreedy) || r.Packwright.Cost != r.Greedy.Cost {
		t.Fatalf("greedy-only portfolio: %+v against greedy %+v", r.Packwright, r.Greedy)
	}
}
