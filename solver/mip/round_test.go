package mip

import (
	"context"
	"testing"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// lpSolution runs column generation on p's master for a few rounds and returns the master and its last LP
// solution.
func lpSolution(t *testing.T, p *prep.Problem, rounds int) (*master, []float64) {
	t.Helper()
	ctx := context.Background()
	m := builtMaster(t, ctx, p)
	inst := m.inst
	if err := m.addSingles(ctx); err != nil {
		t.Fatal(err)
	}
	opts := Options{}
	opts.defaults()
	var x []float64
	for r := 0; r < rounds; r++ {
		lp, err := inst.Run(ctx)
		if err != nil || lp.Status != highs.StatusOptimal {
			t.Fatalf("LP: %v %v", err, lp)
		}
		x = lp.ColValues
		cols, _ := m.price(ctx, lp.RowDuals, opts, time.Now().Add(time.Second))
		if len(cols) == 0 {
			break
		}
		if err := m.addPatterns(ctx, cols); err != nil {
			t.Fatal(err)
		}
	}
	return m, x
}

// bestRounding's plan is valid and never dearer than the floor's (its first candidate), and rounding nearly
// whole patterns up makes it cheaper on some of these random problems.
func TestBestRoundingBeatsTheFloor(t *testing.T) {
	cheaper := 0
	for seed := uint64(1); seed <= 12; seed++ {
		p := randomProblem(seed, 8, 12)
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, x := lpSolution(t, c, 8)
		floor, err := m.roundAndComplete(x)
		if err != nil || floor.Validate(p) != nil {
			t.Fatalf("seed %d: the floor's plan: %v", seed, err)
		}
		best := m.bestRounding(x, 0, time.Now().Add(time.Minute))
		if best == nil {
			t.Fatalf("seed %d: no rounding, though the floor's plan is valid", seed)
		}
		if err := best.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if best.Placed() < floor.Placed() || (best.Placed() == floor.Placed() && best.Cost > floor.Cost+1e-9) {
			t.Fatalf("seed %d: best rounding $%.4f/h (%d pods) worse than the floor's $%.4f/h (%d pods)",
				seed, best.Cost, best.Placed(), floor.Cost, floor.Placed())
		}
		if best.Cost < floor.Cost-1e-9 {
			cheaper++
		}
		t.Logf("seed %d: floor $%.4f/h, best rounding $%.4f/h", seed, floor.Cost, best.Cost)
	}
	if cheaper < 3 {
		t.Fatalf("rounding up beat the floor on %d of 12 problems, want at least 3", cheaper)
	}
}
