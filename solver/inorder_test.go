package solver_test

import (
	"context"
	"testing"
	"time"

	"github.com/packwright/packwright/benchmarks"
	"github.com/packwright/packwright/solver"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/internal/prep"
)

// TestPortfolioBeatsBothGreedyPlans checks, on clusters with running nodes, that both greedy plans (value fill
// and placement order) validate, that greedy's own plan is the cheaper of them, and that the portfolio's plan is
// no dearer than either. On the AWS cluster of 1,000 pods the placement order is the cheaper one.
func TestPortfolioBeatsBothGreedyPlans(t *testing.T) {
	ws, err := benchmarks.Workloads([]string{"existing"}, []int{100, 1000}, []string{benchmarks.CatalogKwok, benchmarks.CatalogAWS}, benchmarks.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		t.Run(w.Name, func(t *testing.T) {
			p, err := w.Problem()
			if err != nil {
				t.Fatal(err)
			}
			c, err := prep.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			fill, err := greedy.SolveCompiled(c)
			if err != nil {
				t.Fatal(err)
			}
			inOrder, err := greedy.SolveCompiledInOrder(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := fill.Validate(p); err != nil {
				t.Fatalf("value-fill greedy plan invalid: %v", err)
			}
			if err := inOrder.Validate(p); err != nil {
				t.Fatalf("in-order greedy plan invalid: %v", err)
			}
			if fill.Cost > inOrder.Cost+1e-9 {
				t.Errorf("greedy's plan $%.4f/h is dearer than its in-order plan $%.4f/h", fill.Cost, inOrder.Cost)
			}
			got, err := solver.Solve(context.Background(), p, solver.Options{Deadline: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if err := got.Validate(p); err != nil {
				t.Fatalf("portfolio plan invalid: %v", err)
			}
			if got.Cost > min(fill.Cost, inOrder.Cost)+1e-9 {
				t.Errorf("portfolio $%.4f/h, dearer than greedy ($%.4f value fill, $%.4f in order)", got.Cost, fill.Cost, inOrder.Cost)
			}
			t.Logf("value fill $%.4f, in order $%.4f, portfolio $%.4f (%s)", fill.Cost, inOrder.Cost, got.Cost, got.Status)
		})
	}
}
