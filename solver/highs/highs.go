// Package highs is Packwright's thin binding to the HiGHS C API (https://highs.dev): build an LP or MIP from Go
// slices, set options, solve under a hard deadline and read the solution, duals and MIP bounds.
//
// Every HiGHS call runs on one dedicated OS thread. That serialises all instances of the process, which is what
// HiGHS 1.12–1.15.1 needs (Highs_destroy resets a global scheduler and is unsafe while another instance solves),
// and keeps the thread count fixed for the process. Deadlines are enforced twice: HiGHS's own time_limit and an
// interrupt callback set by a watchdog at the deadline; if HiGHS still has not returned 100 ms later (presolve
// ignores interrupts, HiGHS issue 2226), Run returns the best solution seen so far and the instance finishes in
// the background.
//
// Built without cgo, the package compiles but Available reports false and every call returns ErrUnavailable.
package highs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Inf is the bound to use for "no bound". HiGHS treats values >= 1e30 as infinite.
var Inf = math.Inf(1)

// ErrUnavailable is returned when the binary was built without HiGHS (CGO_ENABLED=0).
var ErrUnavailable = errors.New("highs: HiGHS is not available in this build (built without cgo)")

// ErrBusy is returned when the solver thread is still finishing an earlier solve that overran its deadline
// and the caller's context ended before the thread became free.
var ErrBusy = errors.New("highs: solver thread busy with an earlier solve that overran its deadline")

// ErrClosed is returned by calls on a closed Instance.
var ErrClosed = errors.New("highs: instance is closed")

// Grace is how long Run waits past the context's deadline for HiGHS to honour the interrupt before it gives up
// on the run and returns the best solution seen. The portfolio ends the MIP this much before its own margin, so a
// run abandoned at the last moment still leaves the decision inside its deadline.
const Grace = 50 * time.Millisecond

// Sense is the optimisation direction.
type Sense int

// Optimisation directions.
const (
	Minimize Sense = 1
	Maximize Sense = -1
)

// Model is an LP or MIP in HiGHS's form: min/max Offset + ColCost·x subject to RowLower <= A x <= RowUpper and
// ColLower <= x <= ColUpper, with A in compressed sparse row form.
type Model struct {
	Sense  Sense // zero means Minimize
	Offset float64

	ColCost  []float64
	ColLower []float64
	ColUpper []float64
	// Integrality marks integer columns; nil or all false makes an LP.
	Integrality []bool

	RowLower []float64
	RowUpper []float64
	// RowStart has len(RowLower)+1 entries: row i's nonzeros are RowIndex/RowValue[RowStart[i]:RowStart[i+1]].
	RowStart []int
	RowIndex []int
	RowValue []float64
}

// NumCols is the number of columns (variables).
func (m *Model) NumCols() int { return len(m.ColCost) }

// NumRows is the number of rows (constraints).
func (m *Model) NumRows() int { return len(m.RowLower) }

// IsMIP reports whether any column is integer.
func (m *Model) IsMIP() bool {
	for _, b := range m.Integrality {
		if b {
			return true
		}
	}
	return false
}

// Check reports the first structural error: mismatched lengths, indices out of range, NaN or inverted bounds.
// HiGHS would otherwise reject the model with a less helpful message or, for bad indices, read out of bounds.
func (m *Model) Check() error {
	n, r := m.NumCols(), m.NumRows()
	if len(m.ColLower) != n || len(m.ColUpper) != n {
		return fmt.Errorf("highs: model has %d column costs but %d lower and %d upper bounds", n, len(m.ColLower), len(m.ColUpper))
	}
	if m.Integrality != nil && len(m.Integrality) != n {
		return fmt.Errorf("highs: model has %d columns but %d integrality flags", n, len(m.Integrality))
	}
	if len(m.RowUpper) != r {
		return fmt.Errorf("highs: model has %d row lower bounds but %d upper", r, len(m.RowUpper))
	}
	for j := 0; j < n; j++ {
		if math.IsNaN(m.ColCost[j]) || math.IsNaN(m.ColLower[j]) || math.IsNaN(m.ColUpper[j]) {
			return fmt.Errorf("highs: column %d has a NaN cost or bound", j)
		}
		if m.ColLower[j] > m.ColUpper[j] {
			return fmt.Errorf("highs: column %d has lower bound %g above upper bound %g", j, m.ColLower[j], m.ColUpper[j])
		}
	}
	if r == 0 && len(m.RowStart) <= 1 && len(m.RowIndex) == 0 {
		return nil
	}
	if len(m.RowStart) != r+1 {
		return fmt.Errorf("highs: model has %d rows but %d row starts (want rows+1)", r, len(m.RowStart))
	}
	if len(m.RowIndex) != len(m.RowValue) || m.RowStart[0] != 0 || m.RowStart[r] != len(m.RowIndex) {
		return fmt.Errorf("highs: row starts [0]=%d [%d]=%d do not span the %d index and %d value entries",
			m.RowStart[0], r, m.RowStart[r], len(m.RowIndex), len(m.RowValue))
	}
	for i := 0; i < r; i++ {
		if m.RowStart[i] > m.RowStart[i+1] {
			return fmt.Errorf("highs: row %d start %d is after row %d start %d", i, m.RowStart[i], i+1, m.RowStart[i+1])
		}
		if math.IsNaN(m.RowLower[i]) || math.IsNaN(m.RowUpper[i]) {
			return fmt.Errorf("highs: row %d has a NaN bound", i)
		}
		for k := m.RowStart[i]; k < m.RowStart[i+1]; k++ {
			if m.RowIndex[k] < 0 || m.RowIndex[k] >= n {
				return fmt.Errorf("highs: row %d refers to column %d of %d", i, m.RowIndex[k], n)
			}
			if math.IsNaN(m.RowValue[k]) || math.IsInf(m.RowValue[k], 0) {
				return fmt.Errorf("highs: row %d has a non-finite coefficient for column %d", i, m.RowIndex[k])
			}
		}
	}
	return nil
}

// Options are the HiGHS options Packwright sets. Zero values leave HiGHS's defaults, except Output, which is off
// unless set.
type Options struct {
	// TimeLimit is passed to HiGHS as time_limit. Run also caps it by the context's deadline.
	TimeLimit time.Duration
	// MIPRelGap is mip_rel_gap (HiGHS default 1e-4); negative means the default.
	MIPRelGap float64
	// MIPAbsGap is mip_abs_gap; zero means the default.
	MIPAbsGap float64
	// Threads is HiGHS's threads option. HiGHS fixes its scheduler's size on first use, so every instance of a
	// process must use the same value (0 = HiGHS's choice).
	Threads int
	// Presolve is "on", "off" or "choose" (empty = HiGHS's default, "choose").
	Presolve string
	// RandomSeed is random_seed; zero means HiGHS's default.
	RandomSeed int
	// MIPMaxNodes caps branch-and-bound nodes; zero means no cap.
	MIPMaxNodes int
	// MIPNoRestart sets mip_allow_restart off: HiGHS then does not restart the root after fixing columns,
	// which on small programs with a strong root (the class bound's) halves the time to the proof.
	MIPNoRestart bool
	// Output turns HiGHS's log on (to the console).
	Output bool
}

// ModelStatus is HiGHS's model status (kHighsModelStatus*).
type ModelStatus int

// Model statuses, numbered as HiGHS numbers them.
const (
	StatusNotset                ModelStatus = 0
	StatusLoadError             ModelStatus = 1
	StatusModelError            ModelStatus = 2
	StatusPresolveError         ModelStatus = 3
	StatusSolveError            ModelStatus = 4
	StatusPostsolveError        ModelStatus = 5
	StatusModelEmpty            ModelStatus = 6
	StatusOptimal               ModelStatus = 7
	StatusInfeasible            ModelStatus = 8
	StatusUnboundedOrInfeasible ModelStatus = 9
	StatusUnbounded             ModelStatus = 10
	StatusObjectiveBound        ModelStatus = 11
	StatusObjectiveTarget       ModelStatus = 12
	StatusTimeLimit             ModelStatus = 13
	StatusIterationLimit        ModelStatus = 14
	StatusUnknown               ModelStatus = 15
	StatusSolutionLimit         ModelStatus = 16
	StatusInterrupt             ModelStatus = 17
)

var statusNames = map[ModelStatus]string{
	StatusNotset: "not set", StatusLoadError: "load error", StatusModelError: "model error",
	StatusPresolveError: "presolve error", StatusSolveError: "solve error", StatusPostsolveError: "postsolve error",
	StatusModelEmpty: "empty model", StatusOptimal: "optimal", StatusInfeasible: "infeasible",
	StatusUnboundedOrInfeasible: "unbounded or infeasible", StatusUnbounded: "unbounded",
	StatusObjectiveBound: "objective bound reached", StatusObjectiveTarget: "objective target reached",
	StatusTimeLimit: "time limit", StatusIterationLimit: "iteration limit", StatusUnknown: "unknown",
	StatusSolutionLimit: "solution limit", StatusInterrupt: "interrupted",
}

// String names the status as HiGHS's documentation does.
func (s ModelStatus) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status %d", int(s))
}

// Result is what a run produced.
type Result struct {
	Status ModelStatus
	// HasSolution reports a feasible primal solution in ColValues (for a MIP: the incumbent).
	HasSolution bool
	Objective   float64
	ColValues   []float64
	RowValues   []float64
	// ColDuals and RowDuals are the LP's reduced costs and row prices; nil for a MIP.
	ColDuals []float64
	RowDuals []float64
	// MIPGap is HiGHS's relative gap and MIPDualBound its proven bound on the objective (MIP only).
	MIPGap       float64
	MIPDualBound float64
	MIPNodes     int64
	// Abandoned is set when HiGHS did not return within Grace of the deadline; the solution is the best one
	// seen by the improving-solution callback, and the instance finishes the run in the background.
	Abandoned bool
	Runtime   time.Duration
}

// Solve builds the model in a fresh instance, warm-starts it from start (column -> value; nil for none), runs
// it under ctx and releases the instance.
func Solve(ctx context.Context, m *Model, opts Options, start map[int]float64) (*Result, error) {
	inst, err := New(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer inst.Close()
	if err := inst.Pass(ctx, m); err != nil {
		return nil, err
	}
	if len(start) > 0 {
		if err := inst.SetStart(ctx, start); err != nil {
			return nil, err
		}
	}
	return inst.Run(ctx)
}
