// Package mip plans nodes with the configuration (pattern) formulation of DESIGN.md, solved through HiGHS: column
// generation on the LP relaxation of the master problem, with patterns priced by a multi-dimensional knapsack
// per non-dominated offering class, then an integer master over the generated patterns warm-started from the
// greedy plan. The converged LP value, or Farley's bound when stopped early, is a proven lower bound.
package mip

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
)

// Options tune the MIP.
type Options struct {
	// LPShare is the share of the time before the deadline that column generation may use (default 0.6).
	LPShare float64
	// PricingBudget caps branch-and-bound nodes per pricing knapsack (default 4000).
	PricingBudget int
	// MaxColumnsPerIteration caps the patterns added per column-generation round (default 200).
	MaxColumnsPerIteration int
	// ExactPricingLimit bounds one HiGHS pricing solve, used where the search ran out of budget (default 10 ms).
	ExactPricingLimit time.Duration
	// ExactPricingBudget bounds the HiGHS pricing solves of one column-generation round (default 30 ms).
	ExactPricingBudget time.Duration
	// AfterLP, when set, is called once column generation ends (the portfolio's local search waits for it).
	AfterLP func()
	// Incumbent, when set, is asked once before the integer master for a plan found beside the MIP (the
	// portfolio's local search); a whole plan cheaper than the MIP's own start becomes the start.
	Incumbent func() *model.Plan
	// Found, when set, is called with each valid plan the MIP finds before its integer master (the rounded LP,
	// the dive's plan), for the portfolio's local search to go on from.
	Found func(*model.Plan)
	// Nodes, when set, is called from a goroutine of its own with the new nodes of the zone fluid program in
	// whole numbers (offering indices into c.Src; nil when none), as BoundOptions.Nodes; the program is built
	// after the zone bounds and solved beside column generation for at most NodesLimit.
	Nodes      func(offerings []int)
	NodesLimit time.Duration
	// PartsTime is the time the integer master leaves for repacking parts of a plan too large to repack whole
	// (parts.go; default a fifth of the time, negative: none).
	PartsTime time.Duration
	// FixAbove is the number of whole new nodes in the LP above which they are fixed before the integer master
	// (default 60; negative never fixes).
	FixAbove int
	// beforePricing, set by tests only, is called by a pricing worker before each knapsack it solves (what is
	// "class" or "node", a running node's filling), to stand for a bug there.
	beforePricing func(what string)
}

func (o *Options) defaults() {
	if o.LPShare <= 0 || o.LPShare >= 1 {
		o.LPShare = 0.6
	}
	if o.PricingBudget <= 0 {
		o.PricingBudget = 4000
	}
	if o.ExactPricingLimit <= 0 {
		o.ExactPricingLimit = 10 * time.Millisecond
	}
	if o.ExactPricingBudget <= 0 {
		o.ExactPricingBudget = 30 * time.Millisecond
	}
	if o.FixAbove == 0 {
		o.FixAbove = 60
	}
	if o.MaxColumnsPerIteration <= 0 {
		o.MaxColumnsPerIteration = 200
	}
}

// Result is the MIP's answer. Plan is nil when the integer master found no solution in time. Plan has passed
// model.Plan.Validate, except an integer plan decoded after the deadline, whose validation (tens of
// milliseconds on 50,000 pods) is left to the caller, which must validate every plan anyway.
type Result struct {
	Plan *model.Plan
	// LowerBound is a proven lower bound on the hourly cost of new nodes for placing every placeable pod; 0 when
	// unknown (for example when NodePool limits leave pods unplaced even in the LP). When the NodePools differ
	// in weight (prep.Problem.Tiered) it bounds cost plus weight penalty (prep.Problem.PlanPenalty): any plan
	// with no more penalty than a plan P costs at least LowerBound - PlanPenalty(P).
	LowerBound float64
	// LPValue is the restricted master's last LP value; Converged says no pattern with negative reduced cost is
	// left (the pricing was exact).
	LPValue    float64
	Converged  bool
	Iterations int
	Columns    int
	Classes    int
	// MasterStatus is HiGHS's status for the integer master; Fixed says the LP's whole nodes were fixed first.
	MasterStatus string
	Fixed        bool
	// Complete, when Plan leaves pods to the slack (an integer master stopped at the deadline), is the cheapest
	// plan found before it that places every pod (the rounded LP's or the dive's), for the caller to fall back
	// on when it cannot complete Plan in time; nil otherwise.
	Complete *model.Plan
	// OutOfTime says the deadline stopped the MIP before it finished (Plan is then the rounded LP, if any):
	// an answer, not an error.
	OutOfTime bool
	// LPTime and PricingTime split column generation's time between HiGHS and the knapsacks.
	LPTime, PricingTime time.Duration
}

// Solve runs column generation and the integer master on c until ctx's deadline. warm, the greedy plan, seeds the
// columns and the integer master's incumbent, so the MIP is never worse than greedy when HiGHS keeps it.
func Solve(ctx context.Context, c *prep.Problem, warm *model.Plan, opts Options) (*Result, error) {
	opts.defaults()
	began := time.Now()
	// Building the master is quadratic in groups and offerings (a third of a second for 5,000 groups against the
	// AWS catalog) and cannot be interrupted part way, so it stops at the deadline too.
	m, err := newMaster(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return &Result{MasterStatus: "not started: the deadline passed while building the master", OutOfTime: true}, nil
		}
		return nil, err
	}
	res := &Result{Classes: len(m.classes)}
	var rounded *model.Plan // the rounded LP plan, once there is one
	// fail reports an error, except that running out of time is an answer (the rounded plan, if any), not a
	// failure.
	fail := func(stage string, err error) (*Result, error) {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			res.Plan = rounded
			res.MasterStatus += "out of time in " + stage
			res.OutOfTime = true
			return res, nil
		}
		return nil, fmt.Errorf("mip: %s: %w", stage, err)
	}
	if len(m.groups) == 0 {
		res.Plan = m.plan(nil)
		res.Converged = true
		return res, nil
	}
	// A master with very many existing-node columns cannot even finish its first LP in a short deadline, and
	// HiGHS then overruns the interrupt by seconds, blocking the next decision: leave such problems to greedy.
	if ctx.Err() != nil {
		res.MasterStatus, res.OutOfTime = "not started: the deadline passed before the MIP began", true
		return res, nil
	}
	if d, ok := ctx.Deadline(); ok {
		cols := 0
		for _, mg := range m.groups {
			cols += len(c.Groups[mg.g].Nodes)
		}
		if limit := int(20000 * time.Until(d).Seconds()); cols > limit {
			res.MasterStatus = fmt.Sprintf("skipped: %d existing-node columns are too many for the %v left (limit %d)",
				cols, time.Until(d).Round(time.Millisecond), limit)
			res.OutOfTime = true
			return res, nil
		}
	}
	if err := m.open(ctx); err != nil {
		return fail("master", err)
	}
	// Released without waiting: freeing the model of a large master takes tens of milliseconds past the deadline.
	defer m.inst.Release()
	inst := m.inst
	// The zone LPs only bound (bound.go), so a failure costs a bound, not the plan.
	lb, err := m.zoneBounds(ctx, time.Now().Add(time.Duration(shapeShare*float64(time.Until(deadlineOr(ctx))))))
	res.LowerBound = lb
	if err != nil {
		res.MasterStatus = err.Error() + "; "
	}
	if opts.Nodes != nil {
		// After the zone bounds: solved beside them, it cost the shape LP its convergence in some runs
		// (spread/aws/5000: $25.35/h instead of $25.72/h).
		fn := m.fluidNodesModel()
		safe.Go(func() {
			nodes, _ := fn.solve(ctx, opts.NodesLimit) // a failure costs a start, nothing else
			opts.Nodes(nodes)
		}, nil)
	}
	// On small problems an integer program over classes (classip.go) proves more than any LP, since it knows
	// that nodes are whole (spread/kwok/100: $0.6883/h against the LPs' $0.6607/h). It runs in a goroutine of its
	// own and its bound is taken when it is there, but HiGHS has one solver thread (solver/highs): the master's
	// LPs wait for it (existing/kwok/100: the second LP ended after 0.3 s instead of 1 ms).
	var classIP *classBound
	if lp := m.classIPModel(time.Until(deadlineOr(ctx)) >= classIPLongTime); lp != nil {
		classIP = startClassBound(ctx, lp, time.Now().Add(time.Duration(classIPShare*float64(time.Until(deadlineOr(ctx))))))
		defer classIP.cancel()
	}
	start := map[int]float64{}
	// A warm plan that moves residents off the nodes it keeps is only partly a start; any rounded plan replaces it.
	warmWhole := false
	if warm != nil {
		if start, warmWhole, err = m.addWarm(ctx, warm); err != nil {
			return fail("warm start", err)
		}
	}
	if err := m.addSingles(ctx); err != nil {
		return fail("initial columns", err)
	}

	// Column generation until converged or its share of the time is spent.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = began.Add(10 * time.Second)
	}
	lpEnd := began.Add(time.Duration(float64(deadline.Sub(began)) * opts.LPShare))
	var lastX []float64 // the last LP solution, for fixing the integer master's bulk
	var lp *highs.Result
	resolve := true
	popts := opts
	// With running nodes, column generation first converges with their per-group columns (quickly: they cover
	// every filling from the first round), then holds those at zero and goes on with whole fillings, whose LP is
	// tighter but converges more slowly (running.go).
	perGroup := m.fillings
	colsA := -1 // the columns before the fillings' LP
	// The first LP's time. The first LP over fillings starts from the per-group basis and takes about a third of
	// it (existing/aws/5000: 48 ms after 145 ms), a pricing round as long again: firstLP is time for both.
	var firstLP time.Duration
	var converged *lpDuals // the converged per-group LP, for reduced-cost enumeration
	for {
		if resolve {
			if !time.Now().Before(lpEnd) {
				break // column generation's share is spent (possibly before the first LP): go on without it
			}
			lpCtx, cancel := context.WithDeadline(ctx, lpEnd)
			t0 := time.Now()
			r, err := inst.Run(lpCtx)
			cancel()
			res.LPTime += time.Since(t0)
			if firstLP == 0 {
				firstLP = time.Since(t0)
			}
			if err != nil {
				if ctx.Err() == nil && !time.Now().Before(lpEnd) {
					break // column generation's share ran out during the LP: the integer master still has time
				}
				return fail("LP", err)
			}
			if r.Status != highs.StatusOptimal || r.RowDuals == nil {
				break // out of time (or numerical trouble): keep the last bound
			}
			lp = r
			res.Iterations++
			res.LPValue = lp.Objective
			lastX = lp.ColValues
		}
		t1 := time.Now()
		cols, rho := m.price(ctx, lp.RowDuals, popts, lpEnd)
		cols = m.unseen(cols)
		// Running nodes' fillings: the full LP is lower by at most gap for the fillings this one lacks. While the
		// per-group columns are free they cover every use of the running nodes, and gap is 0.
		var fills []filling
		gap := 0.0
		if m.fillings && !perGroup {
			var complete bool
			fills, gap, complete = m.priceFillings(ctx, lp.RowDuals, popts, lpEnd)
			if !complete {
				rho = math.Inf(-1)
			}
		}
		res.PricingTime += time.Since(t1)
		// An LP that leaves pods out or breaks a zone rule carries penalties: its value bounds nothing useful.
		if !m.slackUsed(lp.ColValues) {
			if b := farley(lp.Objective-gap, rho); b > res.LowerBound {
				res.LowerBound = b
			}
		}
		if time.Now().After(lpEnd) {
			break
		}
		if len(cols) == 0 && (perGroup || len(fills) == 0) {
			res.Converged = rho >= -1e-9 && !math.IsInf(rho, -1) && gap <= 1e-9*math.Max(1, lp.Objective)
			if res.Converged && (perGroup || !m.fillings) && !m.slackUsed(lp.ColValues) {
				converged = &lpDuals{y: append([]float64(nil), lp.RowDuals...), value: lp.Objective}
			}
			if res.Converged && perGroup && time.Until(lpEnd) < firstLP {
				// The fillings' LP is what lets the rounding keep running nodes' fillings whole; the per-group
				// LP's rounding is often dearer than greedy (existing/aws/5000: $26.05/h against $24.94/h, and
				// $24.47/h over fillings). So it may take up to fillingsShare of the time when that is enough.
				if ext := began.Add(time.Duration(float64(deadline.Sub(began)) * fillingsShare)); ext.After(lpEnd) &&
					time.Until(ext) >= firstLP {
					lpEnd = ext
				} else {
					break // no time for the fillings' LP: the per-group LP stands, with the time left for the integer master
				}
			}
			if res.Converged && perGroup {
				// The per-group LP has converged (its bound is proven): go on with whole fillings only.
				perGroup, res.Converged = false, false
				if err := m.holdNodeCols(ctx); err != nil {
					return fail("hold running nodes' columns", err)
				}
				colsA = len(m.cols)
				if err := m.seedFillings(ctx, warm, lp.ColValues); err != nil {
					return fail("add fillings", err)
				}
				popts.ExactPricingBudget, popts.ExactPricingLimit = opts.ExactPricingBudget, opts.ExactPricingLimit
				resolve = true
				continue
			}
			if res.Converged || popts.ExactPricingBudget >= time.Second {
				break
			}
			// No column found but the bound is not proven: price again with more time for exact pricing.
			popts.ExactPricingBudget *= 4
			popts.ExactPricingLimit *= 4
			resolve = false
			continue
		}
		if err := m.addFillings(ctx, fills); err != nil {
			return fail("add fillings", err)
		}
		popts.ExactPricingBudget, popts.ExactPricingLimit = opts.ExactPricingBudget, opts.ExactPricingLimit
		resolve = true
		if err := m.addPatterns(ctx, cols); err != nil {
			return fail("add patterns", err)
		}
	}
	if lastX, err = m.endFillings(ctx, lastX); err != nil {
		return fail("end fillings", err)
	}
	if err := m.holdPatternsFrom(ctx, colsA, lastX); err != nil {
		return fail("hold patterns", err)
	}
	res.Columns = len(m.cols)
	if opts.AfterLP != nil {
		opts.AfterLP()
	}

	// Integer master over the generated patterns, if any time is left.
	if ctx.Err() != nil {
		res.MasterStatus += "not run: out of time after column generation"
		res.OutOfTime = true
		return res, nil
	}
	// Round the LP and let the greedy complete it: a plan near the LP's value, which becomes the incumbent when
	// it beats the greedy plan. Each rounding is a greedy run plus a validation, neither of which can be
	// interrupted: they run aside, start no new candidate after a quarter of the time left, and are given up
	// (left to finish unused) when not done well before the deadline.
	if lastX != nil {
		done := make(chan *model.Plan, 1)
		until := time.Now().Add(time.Until(deadline) / 4)
		safe.Go(func() { done <- m.bestRounding(lastX, res.LPValue, until) }, func(*safe.Panic) { done <- nil })
		wait := time.NewTimer(time.Until(deadline) * 6 / 10)
		select {
		case rp := <-done:
			if rp != nil && (!warmWhole || rp.Cost < warm.Cost-1e-9) {
				rounded = rp
				if opts.Found != nil {
					opts.Found(rp)
				}
				if s, _, err := m.addWarm(ctx, rp); err == nil {
					start = s
				}
			}
		case <-wait.C:
		}
		wait.Stop()
	}
	// Dive from the LP for a plan nearer its value than the rounding's; the integer master then starts from the
	// better of the two. Only in a consolidation (classes with residents): there it ends nearer the LP than the
	// rounding, but on none of the 30 provisioning benchmark workloads at 1 s did it beat the rounding, and it
	// took 3-230 ms of the integer master's time (spread/kwok/1000: 180 ms for nothing).
	if lastX != nil && ctx.Err() == nil && m.residents() {
		dp, err := m.dive(ctx, lastX, opts, time.Now().Add(time.Until(deadline)*6/10))
		if err != nil {
			return fail("dive", err)
		}
		if dp != nil && dp.Validate(c.Src) == nil && (rounded == nil || dp.Cost < rounded.Cost-1e-9) &&
			(!warmWhole || dp.Cost < warm.Cost-1e-9) {
			rounded = dp
			if opts.Found != nil {
				opts.Found(dp)
			}
			if s, _, err := m.addWarm(ctx, dp); err == nil {
				start = s
			}
		}
	}
	classIP.poll(res)
	startPlan := bestOf(rounded, warm) // the plan that start holds
	if opts.Incumbent != nil {
		if ip := opts.Incumbent(); ip != nil && (startPlan == nil || ip.Cost < startPlan.Cost-1e-9) {
			if s, whole, err := m.addWarm(ctx, ip); err == nil && whole {
				start, startPlan = s, ip
				res.MasterStatus += "from the local search's plan; "
			}
		}
	}
	// With many nodes, fix the LP's whole nodes (the floor of every pattern's value) and let HiGHS complete only
	// the fractional remainder: the plan is then within a few nodes of the LP value, which a full integer search
	// over thousands of columns would not reach in the time left. The greedy start would break those bounds.
	unfixedStart := start
	if fixed, err := m.fixBulk(ctx, lastX, opts.FixAbove); err != nil {
		return fail("fix bulk", err)
	} else if fixed {
		start = nil
		res.Fixed = true
	}
	// Integrality last: the rounded plan's columns were added above.
	if err := inst.SetOptions(ctx, highs.Options{Presolve: "on"}); err != nil {
		return fail("integer master", err)
	}
	if err := m.makeInteger(ctx); err != nil {
		return fail("integer master", err)
	}
	if len(start) > 0 {
		full := make(map[int]float64, len(m.cols))
		for j := range m.cols {
			full[j] = start[j]
		}
		if err := inst.SetStart(ctx, full); err != nil {
			return fail("warm start", err)
		}
	}
	// A plan of few nodes is repacked after the integer master (repack.go), which then leaves it the time.
	ictx := ctx
	repackable := startPlan != nil && m.fewRepackSlots(startPlan)
	if repackable && time.Until(deadline) > repackTime+compactMinTime {
		var icancel context.CancelFunc
		ictx, icancel = context.WithDeadline(ctx, deadline.Add(-repackTime))
		defer icancel()
	}
	// A plan of fewer than partsMaxPods pods too large to repack whole, far above the bound (where proving
	// seldom closes the gap: spread), has parts of it repacked after the zone copies (parts.go), which then
	// leave it the time too.
	partsEnd, partsFor := deadline, opts.PartsTime // partsEnd: the end of the integer master's and the zone copies' time
	if partsFor == 0 {
		partsFor = time.Duration(partsShare * float64(deadline.Sub(began)))
	}
	classIP.poll(res)
	partable := startPlan != nil && !repackable && len(startPlan.NewNodes) > partsMinNodes && partsFor > 0 &&
		res.LowerBound < startPlan.Cost*(1-partsGap) && c.Placeable() < partsMaxPods && m.compactApplies()
	if partable && time.Until(deadline) > 2*partsRound {
		partsFor = min(partsFor, time.Until(deadline)/2)
		partsEnd = deadline.Add(-partsFor)
		var icancel context.CancelFunc
		ictx, icancel = context.WithDeadline(ctx, partsEnd)
		defer icancel()
	}
	ip, err := inst.Run(ictx)
	if err != nil {
		return fail("integer master", err)
	}
	res.MasterStatus += ip.Status.String()
	// The fixed master may finish well before the deadline with a plan some way above the bound (existing/aws/1000:
	// 7% above in 0.3 s): search the whole master from the best start for the time left.
	if res.Fixed && ip.Status == highs.StatusOptimal && time.Until(partsEnd) > 100*time.Millisecond &&
		m.worthSearching(ip, startPlan, res.LowerBound) {
		if ip2, err := m.searchUnfixed(ictx, ip, unfixedStart, startPlan); err != nil {
			return fail("unfixed integer master", err)
		} else if ip2 != nil {
			ip, res.MasterStatus = ip2, res.MasterStatus+"; unfixed: "+ip2.Status.String()
		}
	}
	var note string
	res.Plan, note = m.decode(ip, deadline)
	res.MasterStatus += note
	if rounded != nil && (res.Plan == nil || rounded.Cost < res.Plan.Cost-1e-9) {
		res.Plan, res.MasterStatus = rounded, res.MasterStatus+"; rounded LP kept"
	}
	if rounded != nil && res.Plan != rounded && res.Plan.Placed() < rounded.Placed() {
		res.Complete = rounded
	}
	if repackable && ctx.Err() == nil {
		if best := bestOf(res.Plan, startPlan); best != nil && res.LowerBound < best.Cost*(1-compactEps) {
			rctx, rcancel := context.WithDeadline(ctx, time.Now().Add(repackTime))
			rp, note, _ := m.repack(rctx, best)
			rcancel()
			res.MasterStatus += note
			if rp != nil {
				res.Plan = rp
			}
		}
	}
	// Under zone spread the master's columns are bound to the zone pricing chose them in, so the integer master
	// cannot move a node to another zone (spread/kwok/100 stops 4.8% above the optimum): copy its patterns into
	// the other zones and search again from the best plan.
	if ip.Status == highs.StatusOptimal && lp != nil {
		res.MasterStatus += m.searchZoneCopies(ctx, res, lp.RowDuals, res.LPValue, partsEnd)
	}
	if partsEnd.Before(deadline) && ctx.Err() == nil {
		if best := bestOf(res.Plan, startPlan); best != nil && res.LowerBound < best.Cost*(1-compactEps) {
			pctx, pcancel := context.WithDeadline(ctx, time.Now().Add(partsFor))
			pp, note := m.repackParts(pctx, best, 1)
			pcancel()
			res.MasterStatus += note
			if pp != nil {
				res.Plan = pp
			}
		}
	}
	classIP.poll(res)
	m.prove(ctx, res, warm, converged)
	// Once the plan is proven there is nothing to wait for.
	best := bestOf(res.Plan, warm)
	classIP.finish(res, best != nil && res.LowerBound >= best.Cost*(1-compactEps))
	return res, nil
}

// decode turns an integer master's solution into a plan, or nil, with a note for the status. A solution stopped
// early may leave pods out through the slack, or break a zone rule there, whose units plan leaves out too: the
// greedy places them. The master relaxes some rules (see prep.Problem.Relaxed), so the plan is validated.
// Completing and validating cannot be interrupted and take a while on large problems (100 ms and more on 50,000
// spread pods), so they run aside until the deadline: then the plan as decoded, complete or not, is returned for
// the caller to validate (see Result) and the work aside is left to finish unused. The portfolio completes such
// a plan in the time it keeps for validation when it is cheaper than greedy's.
func (m *master) decode(ip *highs.Result, deadline time.Time) (*model.Plan, string) {
	if !ip.HasSolution {
		return nil, ""
	}
	p := m.plan(ip.ColValues)
	whole := m.placesAll(p)
	if time.Until(deadline) <= 0 {
		return p, "; validation left to the caller after the deadline"
	}
	type decoded struct {
		plan *model.Plan
		note string
	}
	done := make(chan decoded, 1)
	safe.Go(func() {
		out, note := p, ""
		if !whole {
			partial := *p
			partial.Unschedulable = nil
			if cp, err := greedy.Complete(m.c.Src, &partial); err == nil {
				out, note = cp, "; completed by greedy"
			}
		}
		if err := out.Validate(m.c.Src); err != nil {
			done <- decoded{nil, note + "; integer plan rejected by validation"}
			return
		}
		done <- decoded{out, note}
	}, func(p *safe.Panic) { done <- decoded{nil, "; decoding: " + p.Error()} })
	wait := time.NewTimer(time.Until(deadline))
	defer wait.Stop()
	select {
	case d := <-done:
		return d.plan, d.note
	case <-wait.C:
		// A copy: the validation aside still reads p, and the caller sets the plan's status and bound.
		cp := *p
		return &cp, "; validation left to the caller after the deadline"
	}
}

// searchUnfixed lifts fixBulk's bounds and runs the integer master again, from the cheaper of the fixed
// master's solution ip and plan other (start holds other's columns). It returns the new result when it has a
// solution no dearer than ip's, else nil.
func (m *master) searchUnfixed(ctx context.Context, ip *highs.Result, start map[int]float64, other *model.Plan) (*highs.Result, error) {
	if err := m.unfix(ctx); err != nil {
		return nil, err
	}
	full := make(map[int]float64, len(m.cols))
	switch {
	case ip.HasSolution && (other == nil || len(start) == 0 || m.plan(ip.ColValues).Cost <= other.Cost):
		for j := range m.cols {
			full[j] = ip.ColValues[j]
		}
	case len(start) > 0:
		for j := range m.cols {
			full[j] = start[j]
		}
	}
	if len(full) > 0 {
		if err := m.inst.SetStart(ctx, full); err != nil {
			return nil, err
		}
	}
	ip2, err := m.inst.Run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, err
	}
	if !ip2.HasSolution || (ip.HasSolution && ip2.Objective > ip.Objective+1e-9) {
		return nil, nil
	}
	return ip2, nil
}

// worthSearching reports whether the best plan so far (ip's or other) is more than 0.2% above the bound:
// closer than that, the unfixed search would spend the rest of the deadline for little (web/kwok/5000
// took 0.9 s instead of 66 ms for a gap of 0.06%).
func (m *master) worthSearching(ip *highs.Result, other *model.Plan, bound float64) bool {
	best := other
	if ip.HasSolution {
		best = bestOf(best, m.plan(ip.ColValues))
	}
	return best == nil || best.Cost-bound > 0.002*best.Cost
}

// bestOf is the cheaper of two plans, either of which may be nil.
func bestOf(a, b *model.Plan) *model.Plan {
	if a == nil || (b != nil && b.Cost < a.Cost) {
		return b
	}
	return a
}

// prove tries to close the gap between the best plan so far and the bound with the time left: first by
// reduced-cost enumeration over the converged LP's duals (nil when column generation did not converge), then
// with the compact model. Either may find a cheaper plan, a better bound, or prove the plan optimal.
func (m *master) prove(ctx context.Context, res *Result, warm *model.Plan, converged *lpDuals) {
	best := bestOf(res.Plan, warm)
	if best == nil || best.Cost <= 0 || !m.placesAll(best) || res.LowerBound >= best.Cost*(1-compactEps) {
		return
	}
	// HiGHS takes a while to notice an interrupt in the compact model (web/kwok/1000: 100-200 ms past the
	// deadline when it started 50 ms before it), and with less time than this it proves nothing anyway.
	enough := func() bool {
		d, ok := ctx.Deadline()
		return !ok || time.Until(d) >= compactMinTime
	}
	if !enough() {
		return
	}
	// Two ways to prove: the integer master over every pattern a cheaper plan could use (enumerate.go), and
	// the compact model. Measured at 8 s on the 100-pod benchmarks, neither wins everywhere: the compact model
	// proves web and mixed (23-43 slots) in 0.35-1.5 s, where HiGHS's bound on the listed patterns' master
	// hardly leaves the LP's; with 100 slots or more (spread, gpu) it proves nothing, while the listed master
	// proves gpu/kwok/100 in 4.8 s and lifts gpu/aws/100's bound from $56.03/h to $56.45/h. A short complete
	// list often proves at once (mixed/aws/100: 14 patterns, 47 ms, where the compact model took 1 s). So a
	// short complete list goes first, then the compact model alone when it has few slots, else the listed
	// master and then the compact model.
	gap := best.Cost - res.LowerBound
	if converged != nil {
		gap = best.Cost - converged.value
	}
	slots := m.compactSlots(best.Cost)
	few := slots != nil && len(slots) <= fewSlots
	var ps []pattern
	t := 0.0
	// Within 0.2% the listed master would spend the rest of the deadline for little (web/kwok/5000 ends its
	// integer master in 66 ms 0.06% above the bound), as in worthSearching.
	if converged != nil && m.enumerable() && gap > 0.002*best.Cost {
		until := time.Now().Add(time.Until(deadlineOr(ctx)) / 5)
		if few {
			if short, ok := m.enumerate(ctx, converged, gap, until, shortList); ok {
				ps, t = short, gap
			}
		} else {
			ps, t = m.enumerateWithin(ctx, converged, gap, until)
		}
	}
	open := func() bool {
		best = bestOf(res.Plan, warm)
		return res.LowerBound < best.Cost*(1-compactEps) && enough()
	}
	// within runs step until share of the time left has passed.
	within := func(share float64, step func(context.Context)) {
		if !open() {
			return
		}
		sctx, cancel := context.WithDeadline(ctx, time.Now().Add(time.Duration(float64(time.Until(deadlineOr(ctx)))*share)))
		defer cancel()
		step(sctx)
	}
	listed := func(sctx context.Context) {
		res.MasterStatus += "; " + m.proveByEnumeration(sctx, res, best, converged, ps, t)
	}
	compact := func(sctx context.Context) { m.proveCompact(sctx, res, best) }
	if ps == nil {
		within(1, compact)
		return
	}
	if t >= gap && len(ps) <= shortList {
		within(0.25, listed)
	}
	if slots == nil {
		within(1, listed)
	} else if few {
		// web/aws/100: proven in 0.63 s, which 60% of the time left did not give it.
		within(1, compact)
	} else {
		within(0.6, listed)
		within(1, compact)
	}
}

// shortList is the longest complete list of patterns whose master prove tries first; fewSlots is the most slots
// of a compact model that it prefers to the listed patterns' master (see prove).
const (
	shortList = 500
	fewSlots  = 64
)

// deadlineOr is ctx's deadline, or 10 s from now when it has none.
func deadlineOr(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(10 * time.Second)
}

// proveCompact runs the compact model for plans cheaper than best until ctx ends.
func (m *master) proveCompact(ctx context.Context, res *Result, best *model.Plan) {
	cr, err := m.solveCompact(ctx, best, res.LowerBound)
	if err != nil {
		res.MasterStatus += "; " + err.Error()
		return
	}
	res.MasterStatus += "; " + cr.status
	if cr.bound > res.LowerBound {
		res.LowerBound = cr.bound
	}
	if cr.plan != nil && (res.Plan == nil || cr.plan.Cost < res.Plan.Cost-1e-9) {
		res.Plan = cr.plan
	}
}

// proveByEnumeration adds every pattern of reduced cost up to some t under the converged LP's duals d (as
// large a t as can be listed, up to best's gap; enumerate.go) and runs the integer master again from best
// until ctx ends. Any plan cheaper than LP + t is then in the master, so min(LP + t, HiGHS's bound) is a valid
// bound, and the optimum's when HiGHS finishes. It returns a note for the status ("" when nothing was listed).
func (m *master) proveByEnumeration(ctx context.Context, res *Result, best *model.Plan, d *lpDuals, ps []pattern, t float64) string {
	deadline := deadlineOr(ctx)
	if res.Fixed {
		if err := m.unfix(ctx); err != nil {
			return "enumeration: " + err.Error()
		}
		res.Fixed = false
	}
	fail := func(err error) string { return fmt.Sprintf("enumeration (%d patterns): %v", len(ps), err) }
	if err := m.addEnumerated(ctx, ps); err != nil {
		return fail(err)
	}
	start, whole, err := m.addWarm(ctx, best)
	if err != nil {
		return fail(err)
	}
	if err := m.makeInteger(ctx); err != nil {
		return fail(err)
	}
	// Its dual bound becomes the plan's bound, so presolve is off, as for the compact model: with presolve and a
	// start HiGHS 1.15 has called a model solved above one of its solutions (see repack).
	if err := m.inst.SetOptions(ctx, highs.Options{Presolve: "off"}); err != nil {
		return fail(err)
	}
	if whole {
		full := make(map[int]float64, len(m.cols))
		for j := range m.cols {
			full[j] = start[j]
		}
		if err := m.inst.SetStart(ctx, full); err != nil {
			return fail(err)
		}
	}
	res.Columns = len(m.cols)
	ip, err := m.inst.Run(ctx)
	if err != nil {
		return fail(err)
	}
	note := fmt.Sprintf("every pattern of reduced cost up to $%.4f/h (%d): %s", t, len(ps), ip.Status)
	if !ip.Abandoned && !math.IsNaN(ip.MIPDualBound) {
		if b := math.Min(d.value+t, ip.MIPDualBound); b > res.LowerBound {
			res.LowerBound = b
		}
	}
	p, n := m.decode(ip, deadline)
	if p != nil && (res.Plan == nil || p.Cost < res.Plan.Cost-1e-9) {
		res.Plan = p
	}
	return note + n
}

// fillingsShare is the share of the time that column generation may take to go on with running nodes'
// fillings when its own share (Options.LPShare) is too short for their first LP.
const fillingsShare = 0.8

// shapeShare is the share of the time left that the shape bound may take: spread/kwok/5000 converges in 130 ms
// alone, and beside the portfolio's local search not within 15% of the 1 s decision's remaining time (the bound
// stayed the fluid LP's) but within 25%. At 1,000 pods it converges in a tenth of the second, so the share only
// matters above.
const shapeShare = 0.25

// classIPShare is the share of the time left that the class program may take. It runs beside the master, but on
// HiGHS's one solver thread, so the master's LPs wait while it runs (see Solve); spread/kwok/100
// needs 0.24 s alone, gpu/aws/100 0.08 s; given 70% (with restarts) it cost spread/kwok/100's parts the optimum
// in one run of three.
const classIPShare = 0.5

// compactMinTime is the least time left before the deadline for which prove starts the compact model.
const compactMinTime = 150 * time.Millisecond

// farley turns a restricted master's LP value into a valid bound on the full LP: with every pattern's reduced
// cost at least rho times its price (rho <= 0), LP* >= LP + rho*LP*, so LP* >= LP/(1-rho).
func farley(lp, rho float64) float64 {
	if math.IsInf(rho, -1) {
		return 0
	}
	if rho >= 0 {
		return lp
	}
	return lp / (1 - rho)
}

// Round a solution value to an integer count.
func count(v float64) int { return int(math.Round(v)) }
