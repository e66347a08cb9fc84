//go:build cgo

package highs

// This is the only file that includes highs_c_api.h: HiGHS 1.10/1.11 headers define non-static constants, so a
// second translation unit including it fails to link.

/*
#cgo pkg-config: highs
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include "interfaces/highs_c_api.h"

// pw_run is the state the callback shares with the watchdog. The callback is pure C: it never calls into Go,
// so it is cheap and safe on whatever thread HiGHS invokes it.
typedef struct {
	int stop;               // set (atomically) by the watchdog
	double stall_until;     // test hook: ignore stop until this CLOCK_MONOTONIC time
	pthread_mutex_t mu;     // guards the fields below
	double* best;           // copy of the best MIP solution seen
	HighsInt best_cap;
	HighsInt best_n;
	int have_best;
} pw_run;

static double pw_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pw_callback(int type, const char* message, const HighsCallbackDataOut* out,
                        HighsCallbackDataIn* in, void* user) {
	pw_run* r = (pw_run*)user;
	(void)message;
	if (type == kHighsCallbackSimplexInterrupt || type == kHighsCallbackIpmInterrupt ||
	    type == kHighsCallbackMipInterrupt) {
		// HiGHS reads user_interrupt only in its interrupt callbacks.
		if (in != NULL && __atomic_load_n(&r->stop, __ATOMIC_RELAXED) &&
		    (r->stall_until <= 0 || pw_now() >= r->stall_until)) {
			in->user_interrupt = 1;
		}
		return;
	}
	if (type == kHighsCallbackMipImprovingSolution && out != NULL) {
		const double* sol = (const double*)Highs_getCallbackDataOutItem(out, "mip_solution");
		if (sol == NULL) return;
		pthread_mutex_lock(&r->mu);
		if (r->best != NULL && r->best_cap > 0) {
			memcpy(r->best, sol, sizeof(double) * (size_t)r->best_cap);
			r->best_n = r->best_cap;
			r->have_best = 1;
		}
		pthread_mutex_unlock(&r->mu);
	}
}

static pw_run* pw_run_new(void) {
	pw_run* r = (pw_run*)calloc(1, sizeof(pw_run));
	if (r != NULL) pthread_mutex_init(&r->mu, NULL);
	return r;
}

static void pw_run_free(pw_run* r) {
	if (r == NULL) return;
	pthread_mutex_destroy(&r->mu);
	free(r->best);
	free(r);
}

// pw_run_reset prepares for a run over ncol columns.
static int pw_run_reset(pw_run* r, HighsInt ncol) {
	pthread_mutex_lock(&r->mu);
	__atomic_store_n(&r->stop, 0, __ATOMIC_RELAXED);
	r->have_best = 0;
	r->best_n = 0;
	if (r->best_cap != ncol) {
		free(r->best);
		r->best = ncol > 0 ? (double*)malloc(sizeof(double) * (size_t)ncol) : NULL;
		r->best_cap = (ncol > 0 && r->best != NULL) ? ncol : 0;
	}
	int ok = ncol == 0 || r->best != NULL;
	pthread_mutex_unlock(&r->mu);
	return ok;
}

static void pw_run_stop(pw_run* r) { __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED); }

static void pw_run_set_stall(pw_run* r, double seconds) {
	r->stall_until = seconds > 0 ? pw_now() + seconds : 0;
}

// pw_run_copy_best copies the best solution into dst (n entries) and reports whether there was one.
static int pw_run_copy_best(pw_run* r, double* dst, HighsInt n) {
	int have = 0;
	pthread_mutex_lock(&r->mu);
	if (r->have_best && r->best_n == n) {
		memcpy(dst, r->best, sizeof(double) * (size_t)n);
		have = 1;
	}
	pthread_mutex_unlock(&r->mu);
	return have;
}

static HighsInt pw_attach(void* h, pw_run* r) {
	HighsInt s = Highs_setCallback(h, pw_callback, r);
	s |= Highs_startCallback(h, kHighsCallbackSimplexInterrupt);
	s |= Highs_startCallback(h, kHighsCallbackIpmInterrupt);
	s |= Highs_startCallback(h, kHighsCallbackMipInterrupt);
	s |= Highs_startCallback(h, kHighsCallbackMipImprovingSolution);
	return s;
}

static double pw_inf(void* h) { return Highs_getInfinity(h); }
*/
import "C"

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Available reports whether HiGHS is linked into this binary.
func Available() bool { return true }

// Version is the linked HiGHS library's version, e.g. "1.15.1".
func Version() string {
	return fmt.Sprintf("%d.%d.%d", int(C.Highs_versionMajor()), int(C.Highs_versionMinor()), int(C.Highs_versionPatch()))
}

// The solver thread. Jobs are accepted one at a time (the channel is unbuffered), so a job that is still
// running blocks every later call until it ends.
var (
	threadOnce sync.Once
	jobs       chan func()
)

func solverThread() {
	runtime.LockOSThread() // never unlocked: HiGHS keeps per-thread scheduler state
	for job := range jobs {
		job()
	}
}

// submit hands job to the solver thread, waiting at most until ctx ends for the thread to be free, and returns
// a channel closed when the job has run. A panic in job is returned as an error rather than killing the thread.
func submit(ctx context.Context, job func() error) (<-chan error, error) {
	threadOnce.Do(func() {
		jobs = make(chan func())
		go solverThread()
	})
	done := make(chan error, 1)
	wrapped := func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("highs: panic on the solver thread: %v", p)
			}
		}()
		done <- job()
	}
	select {
	case jobs <- wrapped:
		return done, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %v", ErrBusy, ctx.Err())
	}
}

// call runs job on the solver thread and waits for it. Short calls (building, options) wait for the thread
// without a deadline unless ctx has one.
func call(ctx context.Context, job func() error) error {
	done, err := submit(ctx, job)
	if err != nil {
		return err
	}
	return <-done
}

// Instance is one HiGHS model. Its methods may be called from any goroutine but not concurrently with each other.
type Instance struct {
	h     unsafe.Pointer
	run   *C.pw_run
	opts  Options
	ncol  int
	nrow  int
	isMIP bool
	cost  []float64 // column costs, to evaluate a salvaged solution's objective
	off   float64
	sense Sense

	busy   atomic.Bool // a run overran its deadline and is still going
	closed bool
	// stall is a test hook: the callback ignores interrupts for this long after the deadline.
	stall       time.Duration
	noTimeLimit bool
}

// New creates an instance with opts applied.
func New(ctx context.Context, opts Options) (*Instance, error) {
	inst := &Instance{opts: opts}
	err := call(ctx, func() error {
		inst.h = C.Highs_create()
		if inst.h == nil {
			return fmt.Errorf("highs: Highs_create failed")
		}
		inst.run = C.pw_run_new()
		if inst.run == nil {
			C.Highs_destroy(inst.h)
			return fmt.Errorf("highs: out of memory")
		}
		if C.pw_attach(inst.h, inst.run) != 0 {
			inst.destroy()
			return fmt.Errorf("highs: cannot install the interrupt callback")
		}
		if err := inst.applyOptions(opts); err != nil {
			inst.destroy()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inst, nil
}

func (inst *Instance) destroy() {
	if inst.h != nil {
		C.Highs_destroy(inst.h)
		inst.h = nil
	}
	if inst.run != nil {
		C.pw_run_free(inst.run)
		inst.run = nil
	}
}

func cstr(s string) *C.char { return C.CString(s) }

func (inst *Instance) setBool(name string, v bool) error {
	n := cstr(name)
	defer C.free(unsafe.Pointer(n))
	b := C.HighsInt(0)
	if v {
		b = 1
	}
	if C.Highs_setBoolOptionValue(inst.h, n, b) != 0 {
		return fmt.Errorf("highs: option %s=%v rejected", name, v)
	}
	return nil
}

func (inst *Instance) setInt(name string, v int) error {
	n := cstr(name)
	defer C.free(unsafe.Pointer(n))
	if C.Highs_setIntOptionValue(inst.h, n, C.HighsInt(v)) != 0 {
		return fmt.Errorf("highs: option %s=%d rejected", name, v)
	}
	return nil
}

func (inst *Instance) setDouble(name string, v float64) error {
	n := cstr(name)
	defer C.free(unsafe.Pointer(n))
	if C.Highs_setDoubleOptionValue(inst.h, n, C.double(v)) != 0 {
		return fmt.Errorf("highs: option %s=%g rejected", name, v)
	}
	return nil
}

func (inst *Instance) setString(name, v string) error {
	n, s := cstr(name), cstr(v)
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(s))
	if C.Highs_setStringOptionValue(inst.h, n, s) != 0 {
		return fmt.Errorf("highs: option %s=%q rejected", name, v)
	}
	return nil
}

func (inst *Instance) applyOptions(o Options) error {
	if err := inst.setBool("output_flag", o.Output); err != nil {
		return err
	}
	if o.TimeLimit > 0 {
		if err := inst.setDouble("time_limit", o.TimeLimit.Seconds()); err != nil {
			return err
		}
	}
	if o.MIPRelGap >= 0 && o.MIPRelGap != 0 {
		if err := inst.setDouble("mip_rel_gap", o.MIPRelGap); err != nil {
			return err
		}
	}
	if o.MIPAbsGap > 0 {
		if err := inst.setDouble("mip_abs_gap", o.MIPAbsGap); err != nil {
			return err
		}
	}
	if o.Threads > 0 {
		if err := inst.setInt("threads", o.Threads); err != nil {
			return fmt.Errorf("%w (HiGHS fixes its thread count on first use: keep Threads the same for the whole process)", err)
		}
	}
	if o.Presolve != "" {
		if err := inst.setString("presolve", o.Presolve); err != nil {
			return err
		}
	}
	if o.RandomSeed != 0 {
		if err := inst.setInt("random_seed", o.RandomSeed); err != nil {
			return err
		}
	}
	if o.MIPNoRestart {
		if err := inst.setBool("mip_allow_restart", false); err != nil {
			return err
		}
	}
	if o.MIPMaxNodes > 0 {
		if err := inst.setInt("mip_max_nodes", o.MIPMaxNodes); err != nil {
			return err
		}
	}
	return nil
}

// SetOptions applies opts to the instance (for example presolve off while column generation re-solves an LP
// from its previous basis, on again for the integer master).
func (inst *Instance) SetOptions(ctx context.Context, opts Options) error {
	if err := inst.usable(); err != nil {
		return err
	}
	err := call(ctx, func() error { return inst.applyOptions(opts) })
	if err == nil {
		inst.opts = opts
	}
	return err
}

func (inst *Instance) usable() error {
	if inst.closed {
		return ErrClosed
	}
	if inst.busy.Load() {
		return ErrBusy
	}
	return nil
}

// C-compatible copies of Go slices. HiGHS reads them during the call only, so Go memory is fine.
func doubles(s []float64) []C.double {
	out := make([]C.double, len(s))
	for i, v := range s {
		out[i] = C.double(clampInf(v))
	}
	return out
}

func ints(s []int) []C.HighsInt {
	out := make([]C.HighsInt, len(s))
	for i, v := range s {
		out[i] = C.HighsInt(v)
	}
	return out
}

func dptr(s []C.double) *C.double {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

func iptr(s []C.HighsInt) *C.HighsInt {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// clampInf maps ±Inf (and anything beyond HiGHS's infinity) to HiGHS's 1e30 convention.
func clampInf(v float64) float64 {
	if v >= 1e30 {
		return 1e30
	}
	if v <= -1e30 {
		return -1e30
	}
	return v
}

// Pass replaces the instance's model with m.
func (inst *Instance) Pass(ctx context.Context, m *Model) error {
	if err := inst.usable(); err != nil {
		return err
	}
	if err := m.Check(); err != nil {
		return err
	}
	n, r := m.NumCols(), m.NumRows()
	if n > math.MaxInt32 || len(m.RowIndex) > math.MaxInt32 {
		return fmt.Errorf("highs: model too large (%d columns, %d nonzeros)", n, len(m.RowIndex))
	}
	cost, lo, hi := doubles(m.ColCost), doubles(m.ColLower), doubles(m.ColUpper)
	rlo, rhi := doubles(m.RowLower), doubles(m.RowUpper)
	var start []C.HighsInt
	if r > 0 {
		start = ints(m.RowStart[:r])
	}
	index, value := ints(m.RowIndex), doubles(m.RowValue)
	sense := C.HighsInt(1)
	if m.Sense == Maximize {
		sense = -1
	}
	isMIP := m.IsMIP()
	var integ []C.HighsInt
	if isMIP {
		integ = make([]C.HighsInt, n)
		for j, b := range m.Integrality {
			if b {
				integ[j] = 1
			}
		}
	}
	err := call(ctx, func() error {
		var s C.HighsInt
		if isMIP {
			s = C.Highs_passMip(inst.h, C.HighsInt(n), C.HighsInt(r), C.HighsInt(len(m.RowIndex)), 2, sense,
				C.double(m.Offset), dptr(cost), dptr(lo), dptr(hi), dptr(rlo), dptr(rhi),
				iptr(start), iptr(index), dptr(value), iptr(integ))
		} else {
			s = C.Highs_passLp(inst.h, C.HighsInt(n), C.HighsInt(r), C.HighsInt(len(m.RowIndex)), 2, sense,
				C.double(m.Offset), dptr(cost), dptr(lo), dptr(hi), dptr(rlo), dptr(rhi),
				iptr(start), iptr(index), dptr(value))
		}
		if s < 0 {
			return fmt.Errorf("highs: model with %d columns and %d rows rejected (status %d)", n, r, int(s))
		}
		return nil
	})
	if err != nil {
		return err
	}
	inst.ncol, inst.nrow, inst.isMIP = n, r, isMIP
	inst.cost = append(inst.cost[:0], m.ColCost...)
	inst.off, inst.sense = m.Offset, m.Sense
	return nil
}

// AddCols appends columns, given column-wise: column j's nonzeros are (rowIndex, value)[start[j]:start[j+1]],
// with len(start) == len(cost)+1. Integrality defaults to continuous; pass integer true to make them integer.
// Column generation uses this: the next LP run warm-starts from the previous basis.
func (inst *Instance) AddCols(ctx context.Context, cost, lower, upper []float64, start, rowIndex []int, value []float64, integer bool) error {
	if err := inst.usable(); err != nil {
		return err
	}
	k := len(cost)
	if k == 0 {
		return nil
	}
	if len(lower) != k || len(upper) != k || len(start) != k+1 || len(rowIndex) != len(value) || start[k] != len(value) {
		return fmt.Errorf("highs: AddCols: %d costs, %d lower, %d upper, %d starts, %d indices, %d values do not agree",
			k, len(lower), len(upper), len(start), len(rowIndex), len(value))
	}
	for _, i := range rowIndex {
		if i < 0 || i >= inst.nrow {
			return fmt.Errorf("highs: AddCols: row %d out of range [0,%d)", i, inst.nrow)
		}
	}
	c, lo, hi, st, ix, v := doubles(cost), doubles(lower), doubles(upper), ints(start[:k]), ints(rowIndex), doubles(value)
	first := inst.ncol
	err := call(ctx, func() error {
		if s := C.Highs_addCols(inst.h, C.HighsInt(k), dptr(c), dptr(lo), dptr(hi), C.HighsInt(len(v)), iptr(st), iptr(ix), dptr(v)); s < 0 {
			return fmt.Errorf("highs: AddCols rejected %d columns (status %d)", k, int(s))
		}
		if integer {
			integ := make([]C.HighsInt, k)
			for j := range integ {
				integ[j] = 1
			}
			if s := C.Highs_changeColsIntegralityByRange(inst.h, C.HighsInt(first), C.HighsInt(first+k-1), iptr(integ)); s < 0 {
				return fmt.Errorf("highs: cannot mark %d new columns integer (status %d)", k, int(s))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	inst.ncol += k
	inst.cost = append(inst.cost, cost...)
	if integer {
		inst.isMIP = true
	}
	return nil
}

// AddRows appends rows in CSR form (len(start) == len(lower)+1).
func (inst *Instance) AddRows(ctx context.Context, lower, upper []float64, start, colIndex []int, value []float64) error {
	if err := inst.usable(); err != nil {
		return err
	}
	k := len(lower)
	if k == 0 {
		return nil
	}
	if len(upper) != k || len(start) != k+1 || len(colIndex) != len(value) || start[k] != len(value) {
		return fmt.Errorf("highs: AddRows: %d lower, %d upper, %d starts, %d indices, %d values do not agree",
			k, len(upper), len(start), len(colIndex), len(value))
	}
	for _, j := range colIndex {
		if j < 0 || j >= inst.ncol {
			return fmt.Errorf("highs: AddRows: column %d out of range [0,%d)", j, inst.ncol)
		}
	}
	lo, hi, st, ix, v := doubles(lower), doubles(upper), ints(start[:k]), ints(colIndex), doubles(value)
	err := call(ctx, func() error {
		if s := C.Highs_addRows(inst.h, C.HighsInt(k), dptr(lo), dptr(hi), C.HighsInt(len(v)), iptr(st), iptr(ix), dptr(v)); s < 0 {
			return fmt.Errorf("highs: AddRows rejected %d rows (status %d)", k, int(s))
		}
		return nil
	})
	if err == nil {
		inst.nrow += k
	}
	return err
}

// SetIntegrality marks every column integer (true) or continuous: the integer master of column generation is
// the converged LP with its columns made integer.
func (inst *Instance) SetIntegrality(ctx context.Context, integer []bool) error {
	if err := inst.usable(); err != nil {
		return err
	}
	if len(integer) != inst.ncol {
		return fmt.Errorf("highs: SetIntegrality: %d flags for %d columns", len(integer), inst.ncol)
	}
	if inst.ncol == 0 {
		return nil
	}
	flags := make([]C.HighsInt, inst.ncol)
	any := false
	for j, b := range integer {
		if b {
			flags[j] = 1
			any = true
		}
	}
	err := call(ctx, func() error {
		if s := C.Highs_changeColsIntegralityByRange(inst.h, 0, C.HighsInt(inst.ncol-1), iptr(flags)); s < 0 {
			return fmt.Errorf("highs: cannot change integrality (status %d)", int(s))
		}
		return nil
	})
	if err == nil {
		inst.isMIP = any
	}
	return err
}

// SetColBounds changes one column's bounds.
func (inst *Instance) SetColBounds(ctx context.Context, col int, lower, upper float64) error {
	if err := inst.usable(); err != nil {
		return err
	}
	if col < 0 || col >= inst.ncol {
		return fmt.Errorf("highs: SetColBounds: column %d out of range [0,%d)", col, inst.ncol)
	}
	return call(ctx, func() error {
		if s := C.Highs_changeColBounds(inst.h, C.HighsInt(col), C.double(clampInf(lower)), C.double(clampInf(upper))); s < 0 {
			return fmt.Errorf("highs: cannot change bounds of column %d (status %d)", col, int(s))
		}
		return nil
	})
}

// SetColsBounds changes the bounds of the columns cols (lower[i] and upper[i] for cols[i]) in one call: per-column
// calls each cross to HiGHS's thread, which for thousands of columns costs more than the LP solve.
func (inst *Instance) SetColsBounds(ctx context.Context, cols []int, lower, upper []float64) error {
	if err := inst.usable(); err != nil {
		return err
	}
	if len(lower) != len(cols) || len(upper) != len(cols) {
		return fmt.Errorf("highs: SetColsBounds: %d columns but %d lower and %d upper bounds", len(cols), len(lower), len(upper))
	}
	if len(cols) == 0 {
		return nil
	}
	for _, j := range cols {
		if j < 0 || j >= inst.ncol {
			return fmt.Errorf("highs: SetColsBounds: column %d out of range [0,%d)", j, inst.ncol)
		}
	}
	idx, clo, chi := ints(cols), doubles(lower), doubles(upper)
	return call(ctx, func() error {
		if s := C.Highs_changeColsBoundsBySet(inst.h, C.HighsInt(len(cols)), iptr(idx), dptr(clo), dptr(chi)); s < 0 {
			return fmt.Errorf("highs: cannot change bounds of %d columns (status %d)", len(cols), int(s))
		}
		return nil
	})
}

// SetStart gives a MIP a starting solution: column -> value. A complete assignment is passed as a full
// solution; a partial one is completed by HiGHS (a sub-MIP), and a feasible result becomes the first incumbent.
func (inst *Instance) SetStart(ctx context.Context, start map[int]float64) error {
	if err := inst.usable(); err != nil {
		return err
	}
	for j := range start {
		if j < 0 || j >= inst.ncol {
			return fmt.Errorf("highs: SetStart: column %d out of range [0,%d)", j, inst.ncol)
		}
	}
	return call(ctx, func() error {
		var s C.HighsInt
		if len(start) == inst.ncol {
			full := make([]C.double, inst.ncol)
			for j, v := range start {
				full[j] = C.double(v)
			}
			s = C.Highs_setSolution(inst.h, dptr(full), nil, nil, nil)
		} else {
			idx := make([]C.HighsInt, 0, len(start))
			val := make([]C.double, 0, len(start))
			for j, v := range start {
				idx = append(idx, C.HighsInt(j))
				val = append(val, C.double(v))
			}
			s = C.Highs_setSparseSolution(inst.h, C.HighsInt(len(idx)), iptr(idx), dptr(val))
		}
		if s < 0 {
			return fmt.Errorf("highs: starting solution rejected (status %d)", int(s))
		}
		return nil
	})
}

// Run solves the current model. It returns within ctx's deadline plus Grace: at the deadline the interrupt
// callback stops HiGHS, and if HiGHS has still not returned by deadline+Grace, Run returns the best MIP
// solution seen (Result.Abandoned) while HiGHS finishes in the background; the instance is busy until then.
func (inst *Instance) Run(ctx context.Context) (*Result, error) {
	if err := inst.usable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("highs: run not started: %w", err)
	}
	deadline, hasDeadline := ctx.Deadline()
	ncol, nrow, isMIP := inst.ncol, inst.nrow, inst.isMIP
	limit := inst.opts.TimeLimit
	if hasDeadline {
		// HiGHS's own limit comes a little early: parts of HiGHS that miss the interrupt callback (presolve,
		// sub-MIPs) still check time_limit, and a run that stops on time leaves the solver thread free.
		rem := time.Until(deadline)
		rem -= min(rem/10, 50*time.Millisecond)
		if limit <= 0 || rem < limit {
			limit = rem
		}
	}
	stall := inst.stall
	if inst.noTimeLimit {
		limit = 0
	}
	results := make(chan *Result, 1)
	var startErr error
	done, err := submit(ctx, func() error {
		tl := math.Inf(1) // HiGHS's "no limit"
		if limit > 0 {
			tl = math.Max(limit.Seconds(), 1e-3)
		}
		if err := inst.setDouble("time_limit", tl); err != nil {
			return err
		}
		if C.pw_run_reset(inst.run, C.HighsInt(ncol)) == 0 {
			return fmt.Errorf("highs: out of memory for %d columns", ncol)
		}
		C.pw_run_set_stall(inst.run, C.double(stall.Seconds()))
		// HiGHS (before 2.0) measures time_limit and its run time from the instance's first run: without the
		// reset, column generation's later runs stop on "time limit" at once.
		C.Highs_zeroAllClocks(inst.h)
		started := time.Now()
		C.Highs_run(inst.h)
		res := inst.collect(ncol, nrow, isMIP)
		if res.Runtime == 0 {
			res.Runtime = time.Since(started)
		}
		results <- res
		return nil
	})
	if err != nil {
		return nil, err
	}

	// Watchdog: interrupt at the deadline (or when ctx is cancelled), abandon Grace later.
	var interrupt, abandon <-chan time.Time
	if hasDeadline {
		t1 := time.NewTimer(time.Until(deadline))
		defer t1.Stop()
		interrupt = t1.C
	}
	ctxDone := ctx.Done()
	for {
		select {
		case startErr = <-done:
			if startErr != nil {
				return nil, startErr
			}
			return <-results, nil
		case <-interrupt:
			interrupt, ctxDone = nil, nil
			C.pw_run_stop(inst.run)
			t2 := time.NewTimer(Grace)
			defer t2.Stop()
			abandon = t2.C
		case <-ctxDone:
			interrupt, ctxDone = nil, nil
			C.pw_run_stop(inst.run)
			t2 := time.NewTimer(Grace)
			defer t2.Stop()
			abandon = t2.C
		case <-abandon:
			inst.busy.Store(true)
			go func() { <-done; inst.busy.Store(false) }()
			return inst.salvage(ncol), nil
		}
	}
}

// salvage builds a Result from the best solution the callback saw, while HiGHS is still running.
func (inst *Instance) salvage(ncol int) *Result {
	res := &Result{Status: StatusInterrupt, Abandoned: true}
	if ncol == 0 {
		return res
	}
	buf := make([]C.double, ncol)
	if C.pw_run_copy_best(inst.run, &buf[0], C.HighsInt(ncol)) == 0 {
		return res
	}
	res.HasSolution = true
	res.ColValues = make([]float64, ncol)
	res.Objective = inst.off
	for j := range buf {
		res.ColValues[j] = float64(buf[j])
		res.Objective += inst.cost[j] * res.ColValues[j]
	}
	return res
}

// collect reads the run's outcome; it runs on the solver thread.
func (inst *Instance) collect(ncol, nrow int, isMIP bool) *Result {
	res := &Result{Status: ModelStatus(C.Highs_getModelStatus(inst.h))}
	res.Runtime = time.Duration(float64(C.Highs_getRunTime(inst.h)) * float64(time.Second))
	var pss C.HighsInt
	name := cstr("primal_solution_status")
	C.Highs_getIntInfoValue(inst.h, name, &pss)
	C.free(unsafe.Pointer(name))
	res.HasSolution = pss == 2 // kHighsSolutionStatusFeasible
	res.Objective = float64(C.Highs_getObjectiveValue(inst.h))
	if isMIP {
		res.MIPGap = inst.infoDouble("mip_gap")
		res.MIPDualBound = inst.infoDouble("mip_dual_bound")
		n := cstr("mip_node_count")
		var nodes C.int64_t
		C.Highs_getInt64InfoValue(inst.h, n, &nodes)
		C.free(unsafe.Pointer(n))
		res.MIPNodes = int64(nodes)
	}
	if !res.HasSolution {
		return res
	}
	cv, rv := make([]C.double, ncol), make([]C.double, nrow)
	var cd, rd []C.double
	if !isMIP {
		cd, rd = make([]C.double, ncol), make([]C.double, nrow)
	}
	C.Highs_getSolution(inst.h, dptr(cv), dptr(cd), dptr(rv), dptr(rd))
	res.ColValues, res.RowValues = fromC(cv), fromC(rv)
	if !isMIP {
		res.ColDuals, res.RowDuals = fromC(cd), fromC(rd)
	}
	return res
}

func (inst *Instance) infoDouble(name string) float64 {
	n := cstr(name)
	defer C.free(unsafe.Pointer(n))
	var v C.double
	if C.Highs_getDoubleInfoValue(inst.h, n, &v) != 0 {
		return math.NaN()
	}
	return float64(v)
}

func fromC(s []C.double) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = float64(v)
	}
	return out
}

// Close releases the instance. When a run overran and still goes on, the release happens on the solver thread
// after it ends, so Close never blocks on HiGHS.
func (inst *Instance) Close() error {
	if inst.closed {
		return nil
	}
	inst.closed = true
	release := func() error { inst.destroy(); return nil }
	if inst.busy.Load() {
		go func() { _ = call(context.Background(), release) }()
		return nil
	}
	return call(context.Background(), release)
}

// Release is Close without waiting: the release is queued on the solver thread and Release returns at once.
// Freeing a large model takes tens of milliseconds (the master of 50,000 spread pods), which a caller at its
// deadline should not spend; the next call on the solver thread runs after it.
func (inst *Instance) Release() {
	if inst.closed {
		return
	}
	inst.closed = true
	go func() { _ = call(context.Background(), func() error { inst.destroy(); return nil }) }()
}

// runWithoutTimeLimit is Run with HiGHS's own time_limit lifted, for testing the watchdog alone.
func (inst *Instance) runWithoutTimeLimit(ctx context.Context) (*Result, error) {
	inst.noTimeLimit = true
	defer func() { inst.noTimeLimit = false }()
	return inst.Run(ctx)
}
