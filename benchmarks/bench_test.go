package benchmarks

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
	"github.com/packwright/packwright/solver/greedy"
)

// benchSizes are the sizes of the Go benchmarks: PACKWRIGHT_BENCH_SIZES (comma-separated) or 100,1000,5000.
// The catalogs are PACKWRIGHT_BENCH_CATALOGS or both.
func benchWorkloads(b *testing.B) []Workload {
	sizes := []int{100, 1000, 5000}
	if s := os.Getenv("PACKWRIGHT_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				b.Fatalf("PACKWRIGHT_BENCH_SIZES: %v", err)
			}
			sizes = append(sizes, n)
		}
	}
	cats := Catalogs
	if s := os.Getenv("PACKWRIGHT_BENCH_CATALOGS"); s != "" {
		cats = strings.Split(s, ",")
	}
	ws, err := Workloads(nil, sizes, cats, DefaultSeed)
	if err != nil {
		b.Fatal(err)
	}
	return ws
}

// BenchmarkSolve runs the portfolio (solver.Solve, default deadline) on every workload and reports the plan's
// cost, lower bound and gap as custom metrics; an invalid plan fails the benchmark.
func BenchmarkSolve(b *testing.B) {
	for _, w := range benchWorkloads(b) {
		b.Run(w.Name, func(b *testing.B) {
			p, err := w.Problem()
			if err != nil {
				b.Fatal(err)
			}
			var pl *model.Plan
			for b.Loop() {
				pl, err = solver.Solve(context.Background(), p, solver.Options{})
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, p, pl)
		})
	}
}

// BenchmarkGreedy runs greedy.Solve alone on every workload, with the same metrics.
func BenchmarkGreedy(b *testing.B) {
	for _, w := range benchWorkloads(b) {
		b.Run(w.Name, func(b *testing.B) {
			p, err := w.Problem()
			if err != nil {
				b.Fatal(err)
			}
			var pl *model.Plan
			for b.Loop() {
				pl, err = greedy.Solve(p)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, p, pl)
		})
	}
}

func report(b *testing.B, p *model.Problem, pl *model.Plan) {
	b.Helper()
	reportPlan(b, p, pl)
	b.ReportMetric(pl.LowerBound, "lb$/h")
	b.ReportMetric(100*pl.Gap(), "gap%")
}

// reportPlan is report without the bound, for plans that carry none (greedy.Complete's).
func reportPlan(b *testing.B, p *model.Problem, pl *model.Plan) {
	b.Helper()
	if err := pl.Validate(p); err != nil {
		b.Fatalf("invalid plan: %s", oneLine(err))
	}
	b.ReportMetric(pl.Cost, "$/h")
	unsched := 0
	for _, u := range pl.Unschedulable {
		unsched += u.Count
	}
	b.ReportMetric(float64(unsched), "unschedulable")
}

// BenchmarkComplete times one step of the portfolio's local search (greedy.Improve): the greedy plan without
// four of its new nodes, completed again by greedy.Complete. Its cost decides how many steps the search makes
// in a decision.
func BenchmarkComplete(b *testing.B) {
	for _, w := range benchWorkloads(b) {
		b.Run(w.Name, func(b *testing.B) {
			p, err := w.Problem()
			if err != nil {
				b.Fatal(err)
			}
			g, err := greedy.Solve(p)
			if err != nil {
				b.Fatal(err)
			}
			if len(g.NewNodes) < 8 {
				b.Skipf("the greedy plan has %d new nodes, too few to take four away", len(g.NewNodes))
			}
			partial := &model.Plan{Existing: g.Existing}
			step := len(g.NewNodes) / 4
			for i, nn := range g.NewNodes {
				if i%step != 0 || i/step >= 4 {
					partial.NewNodes = append(partial.NewNodes, nn)
				}
			}
			var pl *model.Plan
			for b.Loop() {
				if pl, err = greedy.Complete(p, partial); err != nil {
					b.Fatal(err)
				}
			}
			if pl.Placed() < g.Placed() {
				b.Fatalf("the completion places %d pods, the greedy plan %d", pl.Placed(), g.Placed())
			}
			reportPlan(b, p, pl)
		})
	}
}
