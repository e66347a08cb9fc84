//go:build cgo

package highs

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*(1+math.Abs(b)) }

// csr builds CSR arrays from dense rows.
func csr(rows [][]float64) (start, index []int, value []float64) {
	start = []int{0}
	for _, r := range rows {
		for j, v := range r {
			if v != 0 {
				index = append(index, j)
				value = append(value, v)
			}
		}
		start = append(start, len(index))
	}
	return start, index, value
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestSolve(t *testing.T) {
	// min x + y  s.t.  x + 2y >= 4,  3x + y >= 6,  x, y >= 0.
	// By hand: both rows bind at x = 1.6, y = 1.2, objective 2.8; the duals solve A^T pi = c: pi = (0.4, 0.2).
	lpStart, lpIndex, lpValue := csr([][]float64{{1, 2}, {3, 1}})
	lp := &Model{
		ColCost: []float64{1, 1}, ColLower: []float64{0, 0}, ColUpper: []float64{Inf, Inf},
		RowLower: []float64{4, 6}, RowUpper: []float64{Inf, Inf},
		RowStart: lpStart, RowIndex: lpIndex, RowValue: lpValue,
	}
	// max 10a + 13b + 7c + 8d  s.t.  3a + 4b + 2c + 3d <= 7, binary. By enumeration: a+b = 23.
	kStart, kIndex, kValue := csr([][]float64{{3, 4, 2, 3}})
	knap := &Model{
		Sense: Maximize, ColCost: []float64{10, 13, 7, 8}, ColLower: repeat(0, 4), ColUpper: repeat(1, 4),
		Integrality: []bool{true, true, true, true},
		RowLower:    []float64{-Inf}, RowUpper: []float64{7}, RowStart: kStart, RowIndex: kIndex, RowValue: kValue,
	}
	// x + y <= -1 with x, y >= 0 has no solution.
	iStart, iIndex, iValue := csr([][]float64{{1, 1}})
	infeasible := &Model{
		ColCost: []float64{1, 1}, ColLower: []float64{0, 0}, ColUpper: []float64{Inf, Inf},
		RowLower: []float64{-Inf}, RowUpper: []float64{-1}, RowStart: iStart, RowIndex: iIndex, RowValue: iValue,
	}
	// min -x - y  s.t.  x - y <= 1, x, y >= 0 is unbounded along (1, 1).
	uStart, uIndex, uValue := csr([][]float64{{1, -1}})
	unbounded := &Model{
		ColCost: []float64{-1, -1}, ColLower: []float64{0, 0}, ColUpper: []float64{Inf, Inf},
		RowLower: []float64{-Inf}, RowUpper: []float64{1}, RowStart: uStart, RowIndex: uIndex, RowValue: uValue,
	}
	tests := []struct {
		name      string
		model     *Model
		opts      Options
		status    ModelStatus
		objective float64
		cols      []float64
		duals     []float64
	}{
		{name: "lp optimum and duals by hand", model: lp, status: StatusOptimal, objective: 2.8,
			cols: []float64{1.6, 1.2}, duals: []float64{0.4, 0.2}},
		{name: "knapsack mip", model: knap, status: StatusOptimal, objective: 23, cols: []float64{1, 1, 0, 0}},
		{name: "knapsack mip without restarts", model: knap, opts: Options{MIPNoRestart: true}, status: StatusOptimal,
			objective: 23, cols: []float64{1, 1, 0, 0}},
		{name: "infeasible", model: infeasible, opts: Options{Presolve: "off"}, status: StatusInfeasible},
		{name: "unbounded", model: unbounded, opts: Options{Presolve: "off"}, status: StatusUnbounded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Solve(context.Background(), tc.model, tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Fatalf("status = %v, want %v", res.Status, tc.status)
			}
			if tc.status != StatusOptimal {
				if res.HasSolution && tc.status == StatusInfeasible {
					t.Fatalf("infeasible model reports a feasible solution %v", res.ColValues)
				}
				return
			}
			if !res.HasSolution || !near(res.Objective, tc.objective) {
				t.Fatalf("objective = %v (has solution %v), want %v", res.Objective, res.HasSolution, tc.objective)
			}
			for j, want := range tc.cols {
				if !near(res.ColValues[j], want) {
					t.Errorf("x[%d] = %v, want %v", j, res.ColValues[j], want)
				}
			}
			for i, want := range tc.duals {
				if !near(res.RowDuals[i], want) {
					t.Errorf("dual[%d] = %v, want %v", i, res.RowDuals[i], want)
				}
			}
			if tc.model.IsMIP() {
				if res.RowDuals != nil {
					t.Errorf("a MIP reported row duals %v", res.RowDuals)
				}
				if !near(res.MIPDualBound, tc.objective) || res.MIPGap > 1e-4 {
					t.Errorf("mip dual bound %v gap %v, want %v and 0", res.MIPDualBound, res.MIPGap, tc.objective)
				}
			}
		})
	}
}

func TestModelCheck(t *testing.T) {
	good := func() *Model {
		s, i, v := csr([][]float64{{1, 1}})
		return &Model{ColCost: []float64{1, 1}, ColLower: []float64{0, 0}, ColUpper: []float64{1, 1},
			RowLower: []float64{0}, RowUpper: []float64{1}, RowStart: s, RowIndex: i, RowValue: v}
	}
	tests := []struct {
		name   string
		mutate func(*Model)
		want   string
	}{
		{"ok", func(*Model) {}, ""},
		{"bounds length", func(m *Model) { m.ColUpper = m.ColUpper[:1] }, "upper bounds"},
		{"inverted bounds", func(m *Model) { m.ColLower[1] = 2 }, "column 1 has lower bound"},
		{"nan cost", func(m *Model) { m.ColCost[0] = math.NaN() }, "NaN"},
		{"column out of range", func(m *Model) { m.RowIndex[1] = 7 }, "refers to column 7"},
		{"starts", func(m *Model) { m.RowStart = []int{0} }, "row starts"},
		{"integrality length", func(m *Model) { m.Integrality = []bool{true} }, "integrality"},
		{"infinite coefficient", func(m *Model) { m.RowValue[0] = math.Inf(1) }, "non-finite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.mutate(m)
			err := m.Check()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				// And HiGHS accepts it.
				if _, err := Solve(context.Background(), m, Options{}, nil); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check() = %v, want an error containing %q", err, tc.want)
			}
			if _, err := Solve(context.Background(), m, Options{}, nil); err == nil {
				t.Fatal("Solve accepted a malformed model")
			}
		})
	}
}

// marketSplit is a Cornuéjols–Dawande market split instance: binary x with A x = b. These are notoriously hard for
// branch and bound. With b = A x* for a random x* it is feasible and x* is a solution; with b = floor(sum/2) it is
// (almost always) infeasible and HiGHS searches until stopped.
func marketSplit(seed uint64, m, n int, feasible bool) (*Model, []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	rows := make([][]float64, m)
	xstar := make([]float64, n)
	for j := range xstar {
		xstar[j] = float64(r.IntN(2))
	}
	b := make([]float64, m)
	for i := range rows {
		rows[i] = make([]float64, n)
		sum := 0.0
		for j := range rows[i] {
			rows[i][j] = float64(r.IntN(100))
			sum += rows[i][j]
			b[i] += rows[i][j] * xstar[j]
		}
		if !feasible {
			b[i] = math.Floor(sum / 2)
		}
	}
	s, idx, val := csr(rows)
	integ := make([]bool, n)
	for j := range integ {
		integ[j] = true
	}
	return &Model{ColCost: repeat(0, n), ColLower: repeat(0, n), ColUpper: repeat(1, n), Integrality: integ,
		RowLower: b, RowUpper: b, RowStart: s, RowIndex: idx, RowValue: val}, xstar
}

func TestDeadlineHonouredOnHardMIP(t *testing.T) {
	m, _ := marketSplit(1, 6, 60, false)
	for _, budget := range []time.Duration{200 * time.Millisecond, 500 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		began := time.Now()
		res, err := Solve(ctx, m, Options{}, nil)
		elapsed := time.Since(began)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if elapsed > budget+100*time.Millisecond {
			t.Fatalf("budget %v: Solve took %v", budget, elapsed)
		}
		if res.Status == StatusOptimal || res.Status == StatusInfeasible {
			t.Fatalf("budget %v: the hard instance was solved (%v): pick a harder one", budget, res.Status)
		}
		t.Logf("budget %v: returned after %v with status %v, abandoned %v", budget, elapsed, res.Status, res.Abandoned)
	}
}

func TestWatchdogAbandonsARunThatIgnoresInterrupts(t *testing.T) {
	m, _ := marketSplit(2, 6, 60, false)
	inst, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := inst.Pass(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	// The run ignores the interrupt (as HiGHS's presolve does) for 1.5 s past the deadline, and HiGHS's own
	// time_limit is turned off, so only the watchdog can bring Run back on time.
	inst.stall = 1500 * time.Millisecond
	inst.opts.TimeLimit = 0
	budget := 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	began := time.Now()
	// Without a deadline for time_limit, HiGHS would run for hours: Run caps time_limit by the deadline, so
	// lift that too through a context-free limit.
	res, err := inst.runWithoutTimeLimit(ctx)
	elapsed := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed > budget+100*time.Millisecond {
		t.Fatalf("Run returned after %v, budget %v", elapsed, budget)
	}
	if !res.Abandoned {
		t.Fatalf("Run was not abandoned (status %v after %v)", res.Status, elapsed)
	}
	// While the abandoned run goes on, other solves get ErrBusy once their context ends ...
	short, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	lp, _ := marketSplit(3, 1, 3, true)
	if _, err := Solve(short, lp, Options{}, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("solve during an abandoned run: err = %v, want ErrBusy", err)
	}
	if err := inst.Close(); err != nil {
		t.Fatal(err)
	}
	// ... and succeed once it has ended.
	res, err = Solve(context.Background(), lp, Options{}, nil)
	if err != nil || res.Status != StatusOptimal {
		t.Fatalf("solve after the abandoned run: %v, %v", res, err)
	}
}

func TestWarmStart(t *testing.T) {
	m, xstar := marketSplit(4, 5, 50, true)
	budget := 300 * time.Millisecond
	full := map[int]float64{}
	for j, v := range xstar {
		full[j] = v
	}
	partial := map[int]float64{}
	for j, v := range xstar[:len(xstar)-3] {
		partial[j] = v
	}
	// Without a start, HiGHS finds no solution of this feasibility problem in the budget ...
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	cold, err := Solve(ctx, m, Options{}, nil)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	if cold.HasSolution {
		t.Fatalf("the cold solve found a solution (%v): pick a harder instance", cold.Status)
	}
	for name, start := range map[string]map[int]float64{"full": full, "partial": partial} {
		t.Run(name, func(t *testing.T) {
			// ... with one it is done at once: the start is the incumbent, and with a zero objective optimal.
			ctx, cancel := context.WithTimeout(context.Background(), budget)
			defer cancel()
			res, err := Solve(ctx, m, Options{}, start)
			if err != nil {
				t.Fatal(err)
			}
			if !res.HasSolution || res.Status != StatusOptimal {
				t.Fatalf("warm-started solve: status %v, has solution %v", res.Status, res.HasSolution)
			}
			for i := 0; i < m.NumRows(); i++ {
				lhs := 0.0
				for k := m.RowStart[i]; k < m.RowStart[i+1]; k++ {
					lhs += m.RowValue[k] * res.ColValues[m.RowIndex[k]]
				}
				if !near(lhs, m.RowLower[i]) {
					t.Fatalf("row %d: %v != %v", i, lhs, m.RowLower[i])
				}
			}
		})
	}
}

// coverInstance is an instance holding the LP "cover demand 4 of one item; column 0 holds 1 item at cost 1",
// closed when the test ends.
func coverInstance(t *testing.T, opts Options) *Instance {
	t.Helper()
	inst, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inst.Close() })
	if err := inst.Pass(context.Background(), &Model{ColCost: []float64{1}, ColLower: []float64{0}, ColUpper: []float64{Inf},
		RowLower: []float64{4}, RowUpper: []float64{Inf}, RowStart: []int{0, 1}, RowIndex: []int{0}, RowValue: []float64{1}}); err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestColumnGeneration(t *testing.T) {
	// Cover demand 4 of one item with rolls: column 0 holds 1 item at cost 1.
	inst := coverInstance(t, Options{})
	res, err := inst.Run(context.Background())
	if err != nil || !near(res.Objective, 4) || !near(res.RowDuals[0], 1) {
		t.Fatalf("first LP: %+v %v", res, err)
	}
	// A pattern holding 3 items for 2.5 has reduced cost 2.5 - 3*1 < 0: add it. New optimum 4/3*2.5, dual 2.5/3.
	if err := inst.AddCols(context.Background(), []float64{2.5}, []float64{0}, []float64{Inf}, []int{0, 1}, []int{0}, []float64{3}, false); err != nil {
		t.Fatal(err)
	}
	res, err = inst.Run(context.Background())
	if err != nil || !near(res.Objective, 4.0/3*2.5) || !near(res.RowDuals[0], 2.5/3) {
		t.Fatalf("second LP: %+v %v", res, err)
	}
	// Bounding both columns at once: the single at most 1, the pattern at most 0, leaves 3 items uncovered
	// (infeasible); then the pattern at most 1 and the single free gives 2.5 + 1.
	if err := inst.SetColsBounds(context.Background(), []int{0, 1}, []float64{0, 0}, []float64{1, 0}); err != nil {
		t.Fatal(err)
	}
	if res, err = inst.Run(context.Background()); err != nil || res.Status != StatusInfeasible {
		t.Fatalf("bounded LP: %+v %v, want infeasible", res, err)
	}
	if err := inst.SetColsBounds(context.Background(), []int{1, 0}, []float64{0, 0}, []float64{1, Inf}); err != nil {
		t.Fatal(err)
	}
	if res, err = inst.Run(context.Background()); err != nil || !near(res.Objective, 3.5) {
		t.Fatalf("rebounded LP: %+v %v, want 3.5", res, err)
	}
	if err := inst.SetColsBounds(context.Background(), []int{2}, []float64{0}, []float64{1}); err == nil {
		t.Fatal("SetColsBounds accepted column 2 of 2")
	}
	if err := inst.SetColsBounds(context.Background(), []int{0, 1}, []float64{0, 0}, []float64{Inf, Inf}); err != nil {
		t.Fatal(err)
	}
	// The integer master over both columns: one 3-pattern and one single, 3.5.
	if err := inst.SetIntegrality(context.Background(), []bool{true, true}); err != nil {
		t.Fatal(err)
	}
	res, err = inst.Run(context.Background())
	if err != nil || !near(res.Objective, 3.5) {
		t.Fatalf("integer master: %+v %v", res, err)
	}
}

func rssKiB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func TestNoLeakAcrossThousandsOfSolves(t *testing.T) {
	m, _ := marketSplit(5, 2, 8, true)
	solve := func(n int) {
		for i := 0; i < n; i++ {
			res, err := Solve(context.Background(), m, Options{}, nil)
			if err != nil || res.Status != StatusOptimal {
				t.Fatalf("solve %d: %v %v", i, res, err)
			}
		}
	}
	solve(500) // warm up allocators and the scheduler
	before := rssKiB(t)
	solve(5000)
	after := rssKiB(t)
	t.Logf("RSS %d KiB -> %d KiB over 5000 solves", before, after)
	// A leak of even one small model per solve (~10 KiB) would add ~50 MiB.
	if after-before > 16*1024 {
		t.Fatalf("RSS grew by %d KiB over 5000 solves", after-before)
	}
}

// HiGHS measures time_limit against the instance's cumulative run time unless its clocks are reset: column
// generation re-runs one instance hundreds of times, and without the reset its later runs stopped at once on
// "time limit" (existing/aws/5000: the second LP after 4 ms, with 300 ms left). Every run here has the full
// limit, however long the instance has run in all.
func TestTimeLimitIsPerRun(t *testing.T) {
	const limit = 5 * time.Millisecond
	inst := coverInstance(t, Options{TimeLimit: limit, Presolve: "off"})
	var total time.Duration
	runs := 0
	for ; total < 4*limit && runs < 20000; runs++ {
		// A new column each run, so that HiGHS has something to solve.
		if err := inst.AddCols(context.Background(), []float64{2 + float64(runs%7)}, []float64{0}, []float64{Inf}, []int{0, 1}, []int{0}, []float64{2}, false); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		res, err := inst.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wall := time.Since(began)
		total += wall
		if res.Status != StatusOptimal {
			t.Fatalf("run %d, after %v of runs in all: status %v, want optimal", runs, total, res.Status)
		}
		// HiGHS's clock, reset, times this run alone: never more than the run took (a cumulative clock soon is).
		if res.Runtime > wall+time.Millisecond {
			t.Fatalf("run %d: HiGHS's runtime %v above the run's %v: the instance's total, not the run's", runs, res.Runtime, wall)
		}
	}
	t.Logf("%d runs, %v in all", runs, total)
	if total < 4*limit {
		t.Fatalf("%d runs took %v in all: too quick to pass the %v limit", runs, total, limit)
	}
}

// Release frees the model on the solver thread without waiting: thousands of released instances do not leak,
// a second Release (or a Close after it) does nothing, and the thread goes on serving solves.
func TestReleaseFreesWithoutWaiting(t *testing.T) {
	m, _ := marketSplit(5, 2, 8, true)
	cycle := func(n int) {
		for i := 0; i < n; i++ {
			inst, err := New(context.Background(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := inst.Pass(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if res, err := inst.Run(context.Background()); err != nil || res.Status != StatusOptimal {
				t.Fatalf("run %d: %v %v", i, res, err)
			}
			inst.Release()
			inst.Release()
			if err := inst.Close(); err != nil {
				t.Fatalf("Close after Release: %v", err)
			}
		}
	}
	cycle(500)
	before := rssKiB(t)
	cycle(3000)
	// Let the queued releases run before measuring.
	if res, err := Solve(context.Background(), m, Options{}, nil); err != nil || res.Status != StatusOptimal {
		t.Fatalf("solve after the releases: %v %v", res, err)
	}
	after := rssKiB(t)
	t.Logf("RSS %d KiB -> %d KiB over 3000 released instances", before, after)
	if after-before > 16*1024 {
		t.Fatalf("RSS grew by %d KiB over 3000 released instances", after-before)
	}
}
