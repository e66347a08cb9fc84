// Package solver is Packwright's decision portfolio: Solve runs the greedy first-fit plan at once, gives the
// HiGHS MIP the rest of the deadline, and returns the cheapest plan that passes model.Plan.Validate, with a
// proven lower bound and the gap.
package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
	"github.com/packwright/packwright/solver/mip"
)

// DefaultDeadline is the provisioning decision's deadline.
const DefaultDeadline = time.Second

// Kind selects the solvers that run.
type Kind string

// Solver kinds.
const (
	Auto   Kind = "auto"   // greedy, then the MIP when HiGHS is available
	MIP    Kind = "mip"    // like auto, but an error when HiGHS is not available
	Greedy Kind = "greedy" // greedy only
)

// ParseKind checks a --solver value.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case Auto, MIP, Greedy:
		return k, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown solver %q (want auto, mip or greedy)", s)
}

// Options configure Solve.
type Options struct {
	// Deadline bounds the whole decision (default 1 s); the context's deadline applies too, whichever is sooner.
	Deadline time.Duration
	Kind     Kind
	MIP      mip.Options
}

// Solve plans p. The returned plan always validates against p; an error means even the greedy plan failed,
// which is a bug worth reporting.
func Solve(ctx context.Context, p *model.Problem, opts Options) (*model.Plan, error) {
	best, _, err := solve(ctx, p, opts)
	return best, err
}

// solve is Solve, also returning the MIP's valid plan when the greedy plan is kept instead (nil otherwise), with
// the same bound: consolidation weighs plans by more than their cost (see Consolidate).
func solve(ctx context.Context, p *model.Problem, opts Options) (best, alt *model.Plan, err error) {
	began := time.Now()
	if opts.Deadline <= 0 {
		opts.Deadline = DefaultDeadline
	}
	if opts.Kind == "" {
		opts.Kind = Auto
	}
	if opts.Kind == MIP && !highs.Available() {
		return nil, nil, fmt.Errorf("solve: --solver mip needs HiGHS: %w", highs.ErrUnavailable)
	}
	ctx, cancel := context.WithDeadline(ctx, began.Add(opts.Deadline))
	defer cancel()

	c, err := prep.Compile(p)
	if err != nil {
		return nil, nil, fmt.Errorf("solve: %w", err)
	}
	g, inOrder, split, err := greedy.SolveCompiledWithSplit(c)
	// Compiling p and two greedy plans: what completing a plan of p takes, bar its validation (greedy.Complete
	// compiles the residual problem and plans it once).
	firstPlanTook := time.Since(began)
	if err != nil {
		return nil, nil, fmt.Errorf("solve: greedy: %w", err)
	}
	validating := time.Now()
	if err := g.Validate(p); err != nil {
		return nil, nil, fmt.Errorf("solve: the greedy plan is invalid (a bug): %w", err)
	}
	// What validating a plan of p takes: the work after the MIP that must still fit before the deadline.
	validation := time.Since(validating)
	best = g
	best.Status = model.StatusGreedy
	bound := g.LowerBound
	// The MIP's bound is on cost plus NodePool-weight penalty (the same unless pools differ in weight); the
	// penalty of the plan returned is taken off once that plan is known.
	mipBound := 0.0
	reason := ""
	var lsPlan *model.Plan // the local search's valid plan, if it found a cheaper one than greedy
	switch {
	case opts.Kind == Greedy:
		reason = "greedy requested"
	case !highs.Available():
		best.Status = model.StatusGreedyFallback
		reason = "HiGHS is not available in this build (built without cgo)"
	default:
		// Leave a little of the deadline for validating the MIP's plan, and HiGHS's grace past its own deadline
		// (a run that misses the interrupt is abandoned only then: spread/aws/1000 took 1,032 ms without it).
		// The little is 5%, or twice what validating the greedy plan took, when more: validating a plan of
		// 50,000 spread pods takes 34-58 ms alone, more beside the other goroutines, and those decisions ended at
		// 1,049-1,079 ms with 5%.
		keep := max(opts.Deadline/20, 2*validation)
		mctx, mcancel := context.WithDeadline(ctx, began.Add(opts.Deadline-keep-min(highs.Grace, opts.Deadline/20)))
		// In a consolidation (offerings with residents), the MIP starts from the greedy plan made in placement
		// order alone: measured on the consolidation benchmark (1,000 nodes), it ends 0.1-0.2% nearer the bound
		// from there than from the value fill's plan. For provisioning next to running nodes the cheaper plan (g)
		// is the better start since greedy plans nodes whole: existing/kwok/1000 ends at $5.71/h against
		// $5.92/h. The cheaper greedy plan (g) stays the plan to beat either way.
		warm := g
		residents := slices.ContainsFunc(p.Offerings, func(o model.Offering) bool { return len(o.Resident) > 0 })
		if inOrder != g && residents && inOrder.Validate(p) == nil {
			warm = inOrder
		}
		// The greedy's local search runs beside the MIP once its column generation is over (see localSearch).
		// Sharing the machine slows HiGHS down, so it is left to problems of LocalSearchPods pending pods or
		// more, where the MIP's plan is often a percent or more above the bound and the search gains most
		// (docs/solver.md). It is left out of consolidation, whose plans are weighed by more than their cost,
		// and of pools of different weights, whose plans are weighed by their weight too.
		var search *localSearch
		if !residents && !c.Tiered && c.Placeable() >= LocalSearchPods {
			search = startLocalSearch(mctx, p, g)
			// Filling the fluid program's nodes takes about twice a greedy run (spread/aws/5000: 255 ms for 604
			// nodes, greedy 121 ms), and the search needs as long again to go on from the plan.
			search.restartNeed = 3 * firstPlanTook
			opts.MIP.AfterLP, opts.MIP.Incumbent, opts.MIP.Found = search.lpEnded, search.incumbent, search.offer
			if opts.MIP.LPShare == 0 {
				opts.MIP.LPShare = searchLPShare
			}
		}
		z := zoneSplitFor(c, split, residents)
		if z == nil && search != nil && len(c.Groups) <= fluidMaxGroups {
			opts.MIP.Nodes, opts.MIP.NodesLimit = func(n []int) { search.restartFromNodes(mctx, p, n) }, fluidLimit
		}
		var res *mip.Result
		res, err = solveMIP(mctx, c, z, warm, opts.MIP, search)
		// A MIP plan within 0.2% of its bound ends the search: it could gain little more, and the decision is
		// wanted now.
		if err == nil && res.Plan != nil && res.Plan.Cost-res.LowerBound <= 0.002*res.Plan.Cost {
			search.stop()
		}
		lsPlan = search.wait(mctx, p)
		mcancel()
		// An integer master stopped at the deadline can leave a few pods to its slack, and the MIP then had no
		// time to complete its plan: complete it here, in the time kept for validation, when it is the cheaper
		// one (spread/aws/5000 at 5 s: $25.92/h placing 4,959 of 5,000 pods, against greedy's $26.00/h).
		if err == nil && res.Plan != nil && res.Plan.Placed() < g.Placed() && res.Plan.Cost < g.Cost-1e-9 {
			res.Plan = completeOrFallBack(ctx, p, res, began.Add(opts.Deadline-2*validation), firstPlanTook+validation)
		}

		best.Status = model.StatusGreedyFallback
		switch {
		case err != nil:
			reason = "mip: " + err.Error()
		case res.Plan == nil && res.OutOfTime:
			reason = fmt.Sprintf("mip: out of time before an integer plan (%s)", res.MasterStatus)
			mipBound = res.LowerBound
		case res.Plan == nil:
			reason = fmt.Sprintf("mip: no integer plan (%s)", res.MasterStatus)
			mipBound = res.LowerBound
		default:
			mipBound = res.LowerBound
			if left := g.Placed() - res.Plan.Placed(); left > 0 {
				// It cannot be kept (nor be the alternative), so validating it would only cost time, which it
				// no longer has when the completion above gave up at its deadline.
				reason = fmt.Sprintf("mip plan ($%.4f/h) leaves %d more pods unplaced than greedy's ($%.4f/h)", res.Plan.Cost, left, g.Cost)
			} else if left == 0 && !residents && !c.Tiered && res.Plan.Cost >= g.Cost-1e-9 {
				// Nor can a plan no cheaper than greedy's that places no more pods, with pools of one weight and
				// outside consolidation (which may take a dearer plan as the alternative): at 50,000 spread pods
				// the MIP's plan is greedy's, and validating it took 74-98 ms beside an abandoned HiGHS run, past
				// the deadline. Greedy's plan is then as good as the MIP's, with the MIP's bound.
				best.Status = model.StatusWithinGap
				reason = fmt.Sprintf("greedy's plan, as cheap as the mip's ($%.4f/h)", res.Plan.Cost)
			} else if verr := res.Plan.Validate(p); verr != nil {
				reason = "mip plan rejected by validation: " + firstLine(verr)
			} else if res.Plan.Cost <= g.Cost+1e-9 && res.Plan.Placed() >= g.Placed() {
				best = res.Plan
				best.Status = model.StatusWithinGap
			} else {
				reason = fmt.Sprintf("mip plan ($%.4f/h) no better than greedy ($%.4f/h)", res.Plan.Cost, g.Cost)
				alt = res.Plan
			}
			if best != res.Plan && reason == "" {
				reason = "greedy plan kept"
			}
		}
	}
	// The local search's plan wins when it is cheaper than the MIP's (or the greedy's) and places as many pods.
	if lsPlan != nil && lsPlan.Cost < best.Cost-1e-9 && lsPlan.Placed() >= best.Placed() {
		if best.Solver == "mip" {
			reason = fmt.Sprintf("local search's plan cheaper than the mip's ($%.4f/h)", best.Cost)
		} else {
			reason = "local search's plan cheaper than greedy's; " + reason
		}
		best, alt = lsPlan, nil
		best.Status = model.StatusWithinGap
	}
	// With pools of different weights, the bound holds for the plans that put no more pods below their
	// best weight than best does (docs/solver.md).
	bound = math.Max(bound, mipBound-c.PlanPenalty(best))
	// The bound is for placing every placeable pod; a plan that leaves more pods out is not comparable to it.
	if best.Placed() < c.Placeable() {
		bound = 0
	}
	best.LowerBound = math.Min(bound, best.Cost)
	if best.Status == model.StatusWithinGap && best.Cost-best.LowerBound <= 1e-6*math.Max(1, best.Cost) {
		best.Status = model.StatusOptimal
	}
	best.StatusReason = reason
	best.Duration = time.Since(began)
	if alt != nil {
		// With pools of different weights the bound is for plans with no more weight penalty than best.
		if alt.Placed() < best.Placed() || c.Tiered {
			alt = nil
		} else {
			alt.LowerBound = math.Min(best.LowerBound, alt.Cost)
			alt.Status, alt.StatusReason, alt.Duration = model.StatusWithinGap, "mip plan, dearer than greedy's", best.Duration
		}
	}
	return best, alt, nil
}

// searchLPShare is column generation's share of the MIP's time (mip.Options.LPShare) when the local search runs
// beside it: the search's plans, not the integer master's, are the ones that win there, and the longer column
// generation proves a better bound. At 1 s, against the MIP's default of 0.6: mixed/kwok/5000 gap 0.93% to
// 0.28%, existing/kwok/5000 1.23% to 0.92%, mixed/kwok/1000 0.68% to 0.46%, mixed/aws/1000 0.55% to 0.50%, the
// other workloads unchanged. Consolidation, which runs no search, keeps 0.6: at 0.85 a random 1,000-node
// consolidation took 4.7 s instead of 0.3 s for the same cost.
const searchLPShare = 0.85

// solveMIP runs the MIP on c, or on its zone split z when not nil. A panic in it (a bug) is its error, so the
// decision falls back on the greedy plan and says why instead of taking the controller down.
func solveMIP(ctx context.Context, c *prep.Problem, z *greedy.ZoneSplit, warm *model.Plan, opts mip.Options, search *localSearch) (res *mip.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			if p, ok := r.(*safe.Panic); ok { // raised again from a worker
				r = p.Value
			}
			res, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	if z != nil {
		return solveSplit(ctx, c, z, opts, search)
	}
	return mip.Solve(ctx, c, warm, opts)
}

// completeOrFallBack is the plan that stands in for res.Plan, a MIP plan that leaves pods out: its completion
// (completeBefore) when the time until end holds one, which takes about need (a greedy run and a validation),
// else the MIP's cheapest complete plan (res.Complete), else res.Plan itself. end leaves time for the
// validations after it: at 20,000 spread pods, given up at the deadline itself, the completion took the
// decision to 1,006-1,010 ms; and without the fall-back, when the integer master left 283 pods out at
// $124.19/h, the rounded LP's $124.23/h was lost to greedy's $124.47/h.
func completeOrFallBack(ctx context.Context, p *model.Problem, res *mip.Result, end time.Time, need time.Duration) *model.Plan {
	if time.Until(end) > need {
		cctx, cancel := context.WithDeadline(ctx, end)
		defer cancel()
		if cp := completeBefore(cctx, p, res.Plan); cp != nil {
			return cp
		}
	}
	if res.Complete != nil {
		return res.Complete
	}
	return res.Plan
}

// completeBefore has the greedy place the pods plan leaves out (greedy.Complete) and returns the completed plan
// if it validates and is ready before ctx ends, else nil. Neither step can be interrupted, so they run aside
// and are given up, left to finish unused, at the deadline.
func completeBefore(ctx context.Context, p *model.Problem, plan *model.Plan) *model.Plan {
	if ctx.Err() != nil {
		return nil
	}
	done := make(chan *model.Plan, 1)
	safe.Go(func() {
		cp, err := greedy.Complete(p, plan) // it reads only the placed pods, not plan.Unschedulable
		if err != nil || cp.Validate(p) != nil {
			cp = nil
		}
		done <- cp
	}, func(*safe.Panic) { done <- nil })
	select {
	case cp := <-done:
		return cp
	case <-ctx.Done():
		return nil
	}
}

func firstLine(err error) string {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		if errs := j.Unwrap(); len(errs) > 0 {
			return fmt.Sprintf("%v (and %d more)", errs[0], len(errs)-1)
		}
	}
	return err.Error()
}
