package benchmarks

import (
	"context"
	"fmt"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

// ConsolidationOutcome is what one solver made of one consolidation workload.
type ConsolidationOutcome struct {
	// Solver is "greedy" or "packwright" (or the peer's name); Status is the decision's plan status, "error"
	// when the call failed.
	Solver string `json:"solver"`
	Status string `json:"status"`
	// Act is false when the decision is to leave the cluster alone (Reason says why).
	Act    bool   `json:"act"`
	Reason string `json:"reason,omitempty"`
	// Costs are hourly USD of the whole cluster; Gap is (CostAfter-LowerBound)/CostAfter.
	CostBefore float64 `json:"costBefore"`
	CostAfter  float64 `json:"costAfter"`
	LowerBound float64 `json:"lowerBound"`
	Gap        float64 `json:"gap"`
	// Removed and Launched count nodes, Moved pods.
	Removed  int `json:"removed"`
	Launched int `json:"launched"`
	Moved    int `json:"moved"`
	// Duration is the wall time of the call, measured here.
	Duration time.Duration `json:"durationNs"`
	// Valid says the decision's plan passed model.Plan.Validate against the decision's model.
	Valid bool `json:"valid"`
	// Err is the call's error or what the checks found wrong with the decision.
	Err string `json:"error,omitempty"`
}

// ConsolidationResult is one consolidation workload's outcome with greedy alone and with the portfolio.
type ConsolidationResult struct {
	Workload string `json:"workload"`
	Catalog  string `json:"catalog"`
	// Nodes is the cluster's node count: Candidates may be removed, Pinned stay whatever happens.
	Nodes      int `json:"nodes"`
	Candidates int `json:"candidates"`
	Pinned     int `json:"pinned"`
	// Pods is the number of movable pods; Groups their pod groups.
	Pods      int `json:"pods"`
	Groups    int `json:"groups"`
	Offerings int `json:"offerings"`
	// Greedy is solver.Consolidate with the greedy solver only; Packwright with the portfolio.
	Greedy     ConsolidationOutcome `json:"greedy"`
	Packwright ConsolidationOutcome `json:"packwright"`
	// Peers are the peer's decisions on the same cluster (Options.PeerDir), checked like Packwright's.
	Peers []ConsolidationOutcome `json:"peers,omitempty"`
	// HiGHSTail is as in Result.
	HiGHSTail time.Duration `json:"highsTailNs"`
	// Failures and Warnings are as in Result.
	Failures []string `json:"failures"`
	Warnings []string `json:"warnings"`
}

// Failed reports whether the result has failures.
func (r *ConsolidationResult) Failed() bool { return len(r.Failures) > 0 }

// RunConsolidation decides every consolidation workload with solver.Consolidate, greedy only and then with
// opts.Kind's portfolio, one after the other, and checks every decision (see checkDecision). Its deadline is
// opts.Deadline (ConsolidationDeadline when zero). It stops early only when ctx is done.
func RunConsolidation(ctx context.Context, ws []ConsolidationWorkload, opts Options) ([]ConsolidationResult, error) {
	if opts.Deadline <= 0 {
		opts.Deadline = ConsolidationDeadline
	}
	if opts.Kind == "" {
		opts.Kind = solver.Auto
	}
	return runEach(ctx, "consolidation benchmark", ws, func(w ConsolidationWorkload) string { return w.Name }, opts.Progress,
		func(w ConsolidationWorkload) ConsolidationResult { return runConsolidationOne(ctx, w, opts) })
}

func runConsolidationOne(ctx context.Context, w ConsolidationWorkload, opts Options) ConsolidationResult {
	r := ConsolidationResult{Workload: w.Name, Catalog: w.Catalog, Nodes: w.Nodes}
	in, err := w.Input()
	if err != nil {
		r.Failures = append(r.Failures, "building the cluster: "+oneLine(err))
		r.Greedy.Status, r.Packwright.Status = "error", "error"
		return r
	}
	r.Candidates, r.Pinned, r.Pods = len(in.Candidates), len(in.Problem.Nodes), len(in.Origin)
	r.Groups, r.Offerings = len(in.Problem.Groups), len(in.Problem.Offerings)

	decide := func(name string, kind solver.Kind) ConsolidationOutcome {
		began := time.Now()
		res, err := solver.Consolidate(ctx, in, solver.ConsolidationOptions{Solve: solver.Options{Deadline: opts.Deadline, Kind: kind}})
		o := consolidationOutcome(in, res, err, time.Since(began))
		o.Solver = name
		return o
	}
	r.Greedy = decide("greedy", solver.Greedy)
	if r.Greedy.Err != "" {
		r.Failures = append(r.Failures, "greedy: "+r.Greedy.Err)
	}
	r.Packwright = decide("packwright", opts.Kind)
	r.HiGHSTail = settle(ctx)
	if r.Packwright.Err != "" {
		r.Failures = append(r.Failures, "packwright: "+r.Packwright.Err)
	}
	r.Warnings = append(r.Warnings, timingWarnings(r.Packwright.Duration, opts.Deadline, r.HiGHSTail, "decision")...)
	// The portfolio starts from greedy's plan, but it weighs moves too (solver.DefaultMoveCost per pod), so it
	// may keep a node that greedy empties for a saving below the move cost: worth a look, not a failure.
	if r.Greedy.Err == "" && r.Packwright.Err == "" && r.Packwright.CostAfter > r.Greedy.CostAfter+1e-6 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("packwright's cost after $%.4f/h is above greedy's $%.4f/h",
			r.Packwright.CostAfter, r.Greedy.CostAfter))
	}
	if opts.PeerDir != "" {
		f, found, err := readConsolidationPeer(opts.PeerDir, PeerKarpenter, w.Name)
		switch {
		case err != nil:
			r.Warnings = append(r.Warnings, oneLine(err))
		case found:
			r.Peers = consolidationPeerOutcomes(in, f)
			for _, o := range r.Peers {
				if o.Status != "error" && o.Err != "" {
					// Not ours to fail the run for, but an invalid peer decision must not pass unnoticed.
					r.Warnings = append(r.Warnings, "peer "+f.Peer+" ("+o.Reason+"): "+o.Err)
				}
			}
		}
	}
	return r
}

// consolidationOutcome summarises a decision and checks it: its plan validates against its model, the bound is
// at most the cost after, which is at most the cost before, every candidate is kept or removed, and every
// movable pod of a removed candidate moves exactly once.
func consolidationOutcome(in *solver.ConsolidationInput, res *solver.Consolidation, err error, d time.Duration) ConsolidationOutcome {
	o := ConsolidationOutcome{Duration: d}
	switch {
	case err != nil:
		o.Status, o.Err = "error", oneLine(err)
		return o
	case res == nil:
		o.Status, o.Err = "error", "no decision and no error"
		return o
	}
	o.Act, o.Reason = res.Act, res.Reason
	o.Status = string(res.Status)
	o.CostBefore, o.CostAfter, o.LowerBound, o.Gap = res.CostBefore, res.CostAfter, res.LowerBound, res.Gap()
	o.Removed, o.Launched, o.Moved = len(res.Removed), len(res.NewNodes), len(res.Moves)
	if e := checkDecision(in, res); e != "" {
		o.Err = e
		return o
	}
	o.Valid = true
	return o
}

// checkDecision returns what is wrong with res, or "".
func checkDecision(in *solver.ConsolidationInput, res *solver.Consolidation) string {
	if res.Plan == nil || res.Model == nil {
		return "the decision has no plan or no model"
	}
	if err := res.Plan.Validate(res.Model); err != nil {
		return "invalid plan: " + oneLine(err)
	}
	const eps = 1e-6
	if res.LowerBound > res.CostAfter+eps || res.CostAfter > res.CostBefore+eps {
		return fmt.Sprintf("costs out of order: bound $%.4f/h, after $%.4f/h, before $%.4f/h", res.LowerBound, res.CostAfter, res.CostBefore)
	}
	if len(res.Kept)+len(res.Removed) != len(in.Candidates) {
		return fmt.Sprintf("%d kept and %d removed of %d candidates", len(res.Kept), len(res.Removed), len(in.Candidates))
	}
	removed := map[string]bool{}
	for _, n := range res.Removed {
		removed[n] = true
	}
	moved := map[model.PodRef]bool{}
	for _, m := range res.Moves {
		if moved[m.Pod] {
			return fmt.Sprintf("pod %s moves twice", m.Pod)
		}
		moved[m.Pod] = true
	}
	for ref, ci := range in.Origin {
		if removed[in.Candidates[ci].Name] && !moved[ref] {
			return fmt.Sprintf("pod %s stays on removed node %s", ref, in.Candidates[ci].Name)
		}
	}
	return ""
}
