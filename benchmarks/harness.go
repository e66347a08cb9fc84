package benchmarks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
)

// Options configure Run.
type Options struct {
	// Deadline is the portfolio's deadline per workload (solver.DefaultDeadline when zero).
	Deadline time.Duration
	// Kind selects the portfolio's solvers (solver.Auto when empty).
	Kind solver.Kind
	// PeerDir, when set, is a directory of peer plans (see ExportProblems): each workload's Karpenter plan found
	// there is validated and reported beside Packwright's.
	PeerDir string
	// Reference, when positive, solves each provisioning workload of at most ReferencePods pods a second time
	// with this deadline: its bound and plan bracket the true optimum, against which the deadline's plan is
	// measured (Result.Reference, Result.AboveOptimum).
	Reference time.Duration
	// ReferencePods is the largest workload the reference solve runs on (DefaultReferencePods when zero).
	ReferencePods int
	// Progress, when set, is called before each workload (done of total finished) and once at the end
	// (done == total, name empty).
	Progress func(done, total int, name string)
}

// Outcome is what one solver made of one workload.
type Outcome struct {
	// Solver, Status and StatusReason are the plan's; Status is "error" when the solver failed.
	Solver       string `json:"solver"`
	Status       string `json:"status"`
	StatusReason string `json:"statusReason,omitempty"`
	// Cost and LowerBound are hourly USD of new nodes; Gap is (Cost-LowerBound)/Cost.
	Cost       float64 `json:"cost"`
	LowerBound float64 `json:"lowerBound"`
	Gap        float64 `json:"gap"`
	// Duration is the wall time of the call, measured here (not the plan's own Duration).
	Duration time.Duration `json:"durationNs"`
	// NewNodes is the number of nodes the plan launches; Placed and Unschedulable count pods.
	NewNodes      int `json:"newNodes"`
	Placed        int `json:"placed"`
	Unschedulable int `json:"unschedulable"`
	// Err is the solver's error or, when the plan failed model.Plan.Validate, the validation error.
	Err string `json:"error,omitempty"`
}

// Result is one workload's outcome with both solvers.
type Result struct {
	Workload      string `json:"workload"`
	Generator     string `json:"generator"`
	Catalog       string `json:"catalog"`
	Pods          int    `json:"pods"`
	Groups        int    `json:"groups"`
	Offerings     int    `json:"offerings"`
	ExistingNodes int    `json:"existingNodes"`
	// Greedy is greedy.Solve alone; Packwright is solver.Solve (greedy, then the MIP in the deadline).
	Greedy     Outcome `json:"greedy"`
	Packwright Outcome `json:"packwright"`
	// Reference is solver.Solve again with Options.Reference's longer deadline; nil when not run.
	Reference *Outcome `json:"reference,omitempty"`
	// Peer is the peer scheduler's plan (Options.PeerDir), validated like the others; nil when there is none.
	Peer *Outcome `json:"peer,omitempty"`
	// HiGHSTail is how long HiGHS kept its solver thread after solver.Solve returned: a run abandoned at the
	// deadline finishes in the background, and Run waits for it so that it cannot eat into the next workload's
	// deadline.
	HiGHSTail time.Duration `json:"highsTailNs"`
	// Failures lists what went wrong: a problem that could not be built, a solver error, an invalid plan, a
	// portfolio worse than greedy. A result with failures is a failed benchmark, whatever its figures.
	Failures []string `json:"failures"`
	// Warnings are worth a look but do not fail the run: a decision over its deadline, a long HiGHS tail.
	Warnings []string `json:"warnings"`
}

// DefaultReferencePods is the largest workload of a reference solve unless Options.ReferencePods says otherwise:
// the 0.5%-of-the-optimum target is for plans of up to 1,000 pods.
const DefaultReferencePods = 1000

// Optimum brackets the true optimum with everything known: the best bound and the cheapest valid plan of the
// deadline's solve and the reference solve. ok is false without a bound or when the plans place different
// numbers of pods (the bound is for placing them all).
func (r *Result) Optimum() (lo, hi float64, ok bool) {
	pw := r.Packwright
	if pw.Status == "error" || pw.Err != "" || pw.LowerBound <= 0 {
		return 0, 0, false
	}
	lo, hi = pw.LowerBound, pw.Cost
	if ref := r.Reference; ref != nil && ref.Status != "error" && ref.Err == "" && ref.Placed == pw.Placed {
		lo, hi = math.Max(lo, ref.LowerBound), math.Min(hi, ref.Cost)
	}
	return lo, math.Max(lo, hi), true
}

// AboveOptimum is how far the deadline's plan is above the optimum, in parts of its cost, at most: (cost - lo) /
// cost with lo the best bound known. exact says the optimum is known (the bracket is closed), so the figure is
// the distance itself.
func (r *Result) AboveOptimum() (frac float64, exact, ok bool) {
	lo, hi, ok := r.Optimum()
	if !ok || r.Packwright.Cost <= 0 {
		return 0, false, false
	}
	return math.Max(0, (r.Packwright.Cost-lo)/r.Packwright.Cost), hi-lo <= 1e-5*hi, true
}

// Failed reports whether the result has failures.
func (r *Result) Failed() bool { return len(r.Failures) > 0 }

// Saving is the fraction of greedy's cost that the portfolio saves; 0 when either is missing.
func (r *Result) Saving() float64 {
	if r.Greedy.Cost <= 0 || r.Packwright.Err != "" || r.Greedy.Err != "" {
		return 0
	}
	return (r.Greedy.Cost - r.Packwright.Cost) / r.Greedy.Cost
}

// Run plans every workload with greedy.Solve and with solver.Solve, one after the other (never concurrently, so
// that timings are not disturbed), and validates every plan. It stops early only when ctx is done, returning
// the results so far and ctx's error; failures of single workloads are recorded in their Result.
func Run(ctx context.Context, ws []Workload, opts Options) ([]Result, error) {
	if opts.Deadline <= 0 {
		opts.Deadline = solver.DefaultDeadline
	}
	if opts.Kind == "" {
		opts.Kind = solver.Auto
	}
	return runEach(ctx, "benchmark", ws, func(w Workload) string { return w.Name }, opts.Progress,
		func(w Workload) Result { return runOne(ctx, w, opts) })
}

// timingWarnings flags a decision that took more than max(overrunSlack, 10%) beyond its deadline, and a HiGHS
// run that held the solver thread more than overrunSlack after the answer (a plan or a decision) was returned.
func timingWarnings(took, deadline, tail time.Duration, answer string) []string {
	var out []string
	if over := took - deadline; over > max(overrunSlack, deadline/10) {
		out = append(out, fmt.Sprintf("packwright took %s, %s over its %s deadline",
			took.Round(time.Millisecond), over.Round(time.Millisecond), deadline))
	}
	if tail > overrunSlack {
		out = append(out, fmt.Sprintf("HiGHS kept the solver thread %s after the %s was returned (an abandoned run)",
			tail.Round(time.Millisecond), answer))
	}
	return out
}

// runEach runs one per workload, in order, reporting progress; it stops early only when ctx is done, with the
// results so far. what names the run in that error.
func runEach[W, R any](ctx context.Context, what string, ws []W, name func(W) string, progress func(done, total int, current string), one func(W) R) ([]R, error) {
	out := make([]R, 0, len(ws))
	for i, w := range ws {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("%s interrupted before %s: %w", what, name(w), err)
		}
		if progress != nil {
			progress(i, len(ws), name(w))
		}
		out = append(out, one(w))
	}
	if progress != nil {
		progress(len(ws), len(ws), "")
	}
	return out, nil
}

func runOne(ctx context.Context, w Workload, opts Options) Result {
	r := Result{Workload: w.Name, Generator: w.Generator, Catalog: w.Catalog, Pods: w.Pods}
	p, err := w.Problem()
	if err != nil {
		r.Failures = append(r.Failures, "building the problem: "+oneLine(err))
		r.Greedy.Status, r.Packwright.Status = "error", "error"
		return r
	}
	r.Groups, r.Offerings, r.ExistingNodes = len(p.Groups), len(p.Offerings), len(p.Nodes)

	g, d, err := timeGreedy(p)
	r.Greedy = outcome(p, g, err, d)
	if r.Greedy.Err != "" {
		r.Failures = append(r.Failures, "greedy: "+r.Greedy.Err)
	}

	began := time.Now()
	pw, err := solver.Solve(ctx, p, solver.Options{Deadline: opts.Deadline, Kind: opts.Kind})
	r.Packwright = outcome(p, pw, err, time.Since(began))
	r.HiGHSTail = settle(ctx)
	if r.Packwright.Err != "" {
		r.Failures = append(r.Failures, "packwright: "+r.Packwright.Err)
	}
	r.Warnings = append(r.Warnings, timingWarnings(r.Packwright.Duration, opts.Deadline, r.HiGHSTail, "plan")...)
	if opts.Reference > 0 && r.Pods <= cmp.Or(opts.ReferencePods, DefaultReferencePods) {
		began := time.Now()
		ref, err := solver.Solve(ctx, p, solver.Options{Deadline: opts.Reference, Kind: opts.Kind})
		o := outcome(p, ref, err, time.Since(began))
		r.Reference = &o
		settle(ctx)
		if o.Err != "" {
			r.Failures = append(r.Failures, "reference: "+o.Err)
		}
		if pw := r.Packwright; o.Err == "" && pw.Err == "" && o.Placed == pw.Placed && o.LowerBound > pw.Cost*(1+1e-6)+1e-9 {
			r.Failures = append(r.Failures, fmt.Sprintf("the reference bound $%.4f/h is above the plan's $%.4f/h: one is wrong", o.LowerBound, pw.Cost))
		}
	}
	if opts.PeerDir != "" {
		f, found, err := readPeer(opts.PeerDir, PeerKarpenter, w.Name)
		switch {
		case err != nil:
			r.Warnings = append(r.Warnings, oneLine(err))
		case found:
			o := peerOutcome(p, f)
			r.Peer = &o
			if o.Status != "error" && o.Err != "" {
				// The peer's plan is not ours to fail the run for, but an invalid one must not pass unnoticed. A
				// peer that did not run says why in the report's notes.
				r.Warnings = append(r.Warnings, "peer "+f.Peer+": "+o.Err)
			}
		}
	}
	if r.Greedy.Err == "" && r.Packwright.Err == "" {
		// The portfolio starts from the same greedy plan, so it may never do worse: place fewer pods or cost more.
		if r.Packwright.Placed < r.Greedy.Placed {
			r.Failures = append(r.Failures, fmt.Sprintf("packwright places %d pods, greedy %d", r.Packwright.Placed, r.Greedy.Placed))
		} else if r.Packwright.Placed == r.Greedy.Placed && r.Packwright.Cost > r.Greedy.Cost*(1+1e-9)+1e-9 {
			r.Failures = append(r.Failures, fmt.Sprintf("packwright $%.4f/h is worse than greedy $%.4f/h", r.Packwright.Cost, r.Greedy.Cost))
		}
	}
	return r
}

// overrunSlack is how far past its deadline a decision may end before the harness warns: scheduling noise and
// the final validation of the plan, not solver time.
const overrunSlack = 100 * time.Millisecond

// greedyRepeatBudget bounds the repeated greedy runs of timeGreedy.
const greedyRepeatBudget = time.Second

// timeGreedy runs greedy.Solve up to three times while the runs take less than greedyRepeatBudget together,
// and returns the first plan with the fastest time: greedy takes milliseconds, where one cold run (caches, the
// garbage collector finishing the previous workload's garbage) would otherwise dominate the figure.
func timeGreedy(p *model.Problem) (*model.Plan, time.Duration, error) {
	var (
		first *model.Plan
		best  time.Duration
		total time.Duration
	)
	for i := 0; i < 3 && (i == 0 || total < greedyRepeatBudget); i++ {
		began := time.Now()
		pl, err := greedy.Solve(p)
		d := time.Since(began)
		if err != nil {
			return nil, d, err
		}
		if i == 0 {
			first, best = pl, d
		}
		best, total = min(best, d), total+d
	}
	return first, best, nil
}

// settle waits until HiGHS's solver thread is free and returns how long that took. Creating an instance is a
// job on that thread, queued behind whatever run is still going, so it returns once the thread is idle.
func settle(ctx context.Context) time.Duration {
	if !highs.Available() {
		return 0
	}
	began := time.Now()
	inst, err := highs.New(ctx, highs.Options{})
	if err == nil {
		inst.Close()
	}
	return time.Since(began)
}

// outcome summarises a plan, validating it against p.
func outcome(p *model.Problem, pl *model.Plan, err error, d time.Duration) Outcome {
	o := Outcome{Duration: d}
	switch {
	case err != nil:
		o.Status, o.Err = "error", oneLine(err)
		return o
	case pl == nil:
		o.Status, o.Err = "error", "no plan and no error"
		return o
	}
	o.Solver, o.Status, o.StatusReason = pl.Solver, string(pl.Status), pl.StatusReason
	o.Cost, o.LowerBound, o.Gap = pl.Cost, pl.LowerBound, pl.Gap()
	o.NewNodes = len(pl.NewNodes)
	for _, nn := range pl.NewNodes {
		for _, gc := range nn.Pods {
			o.Placed += gc.Count
		}
	}
	for _, ep := range pl.Existing {
		for _, gc := range ep.Pods {
			o.Placed += gc.Count
		}
	}
	for _, u := range pl.Unschedulable {
		o.Unschedulable += u.Count
	}
	if verr := pl.Validate(p); verr != nil {
		o.Err = "invalid plan: " + oneLine(verr)
	}
	return o
}

// oneLine joins a multi-line error (errors.Join) into one line, keeping at most the first three parts.
func oneLine(err error) string {
	var parts []string
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		for _, e := range j.Unwrap() {
			parts = append(parts, strings.ReplaceAll(e.Error(), "\n", "; "))
		}
	} else {
		parts = strings.Split(err.Error(), "\n")
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}
