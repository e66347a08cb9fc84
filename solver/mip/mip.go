// Package mip plans nodes with the configuration (pattern) formulation of DESIGN.md, solved through HiGHS: column
// generation on the LP relaxation of the master problem, with patterns priced by a multi-dimensional knapsack
// per non-dominated offering class, then an integer master over the generated patterns warm-started from the
// greedy plan. The converged LP value, or Farley's bound when stopped early, is a proven lower bound.
package mip

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Options tune the MIP.
type Options struct {
	// LPShare is the share of the time before the deadline that column generation may use (default 0.5).
	LPShare float64
	// PricingBudget caps branch-and-bound nodes per pricing knapsack (default 4000).
	PricingBudget int
	// MaxColumnsPerIteration caps the patterns added per column-generation round (default 200).
	MaxColumnsPerIteration int
	// ExactPricingLimit bounds one HiGHS pricing solve, used where the search ran out of budget (default 20 ms).
	ExactPricingLimit time.Duration
	// ExactPricingBudget bounds the HiGHS pricing solves of one column-generation round (default 30 ms).
	ExactPricingBudget time.Duration
}

func (o *Options) defaults() {
	if o.LPShare <= 0 || o.LPShare >= 1 {
		o.LPShare = 0.5
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
	if o.MaxColumnsPerIteration <= 0 {
		o.MaxColumnsPerIteration = 200
	}
}

// Result is the MIP's answer. Plan is nil when the integer master found no solution in time.
type Result struct {
	Plan *model.Plan
	// LowerBound is a proven lower bound on the hourly cost of new nodes for placing every placeable pod; 0 when
	// unknown (for example when NodePool limits leave pods unplaced even in the LP).
	LowerBound float64
	// LPValue is the restricted master's last LP value; Converged says no pattern with negative reduced cost is
	// left (the pricing was exact).
	LPValue    float64
	Converged  bool
	Iterations int
	Columns    int
	Classes    int
	// MasterStatus is HiGHS's status for the integer master.
	MasterStatus string
}

// Solve runs column generation and the integer master on c until ctx's deadline. warm, the greedy plan, seeds the
// columns and the integer master's incumbent, so the MIP is never worse than greedy when HiGHS keeps it.
func Solve(ctx context.Context, c *prep.Problem, warm *model.Plan, opts Options) (*Result, error) {
	opts.defaults()
	began := time.Now()
	m, err := newMaster(c)
	if err != nil {
		return nil, err
	}
	res := &Result{Classes: len(m.classes)}
	if len(m.groups) == 0 {
		res.Plan = m.plan(nil)
		res.Converged = true
		return res, nil
	}
	inst, err := highs.New(ctx, highs.Options{})
	if err != nil {
		return nil, fmt.Errorf("mip: %w", err)
	}
	defer inst.Close()
	m.inst = inst
	if err := m.build(ctx); err != nil {
		return nil, fmt.Errorf("mip: build master: %w", err)
	}
	start := map[int]float64{}
	if warm != nil {
		if start, err = m.addWarm(ctx, warm); err != nil {
			return nil, fmt.Errorf("mip: warm start: %w", err)
		}
	}
	if err := m.addSingles(ctx); err != nil {
		return nil, fmt.Errorf("mip: initial columns: %w", err)
	}

	// Column generation until converged or its share of the time is spent.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = began.Add(10 * time.Second)
	}
	lpEnd := began.Add(time.Duration(float64(deadline.Sub(began)) * opts.LPShare))
	for {
		lpCtx, cancel := context.WithDeadline(ctx, lpEnd)
		lp, err := inst.Run(lpCtx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("mip: LP: %w", err)
		}
		if lp.Status != highs.StatusOptimal || lp.RowDuals == nil {
			break // out of time (or numerical trouble): keep the last bound
		}
		res.Iterations++
		res.LPValue = lp.Objective
		cols, rho := m.price(ctx, lp.RowDuals, opts)
		if m.slackUsed(lp.ColValues) {
			res.LowerBound = 0
		} else if b := farley(lp.Objective, rho); b > res.LowerBound {
			res.LowerBound = b
		}
		if len(cols) == 0 {
			res.Converged = rho >= -1e-9
			break
		}
		if time.Now().After(lpEnd) {
			break
		}
		if err := m.addPatterns(ctx, cols); err != nil {
			return nil, fmt.Errorf("mip: add patterns: %w", err)
		}
	}
	res.Columns = len(m.cols)

	// Integer master over the generated patterns, if any time is left.
	if ctx.Err() != nil {
		res.MasterStatus = "not run: out of time after column generation"
		return res, nil
	}
	if err := m.makeInteger(ctx); err != nil {
		return nil, fmt.Errorf("mip: integer master: %w", err)
	}
	if len(start) > 0 {
		full := make(map[int]float64, len(m.cols))
		for j := range m.cols {
			full[j] = start[j]
		}
		if err := inst.SetStart(ctx, full); err != nil {
			return nil, fmt.Errorf("mip: warm start: %w", err)
		}
	}
	ip, err := inst.Run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			res.MasterStatus = "not run: " + err.Error()
			return res, nil
		}
		return nil, fmt.Errorf("mip: integer master: %w", err)
	}
	res.MasterStatus = ip.Status.String()
	if ip.HasSolution {
		res.Plan = m.plan(ip.ColValues)
	}
	return res, nil
}

// farley turns a restricted master's LP value into a valid bound on the full LP: with every pattern's reduced
// cost at least rho times its price (rho <= 0), LP* >= LP + rho*LP*, so LP* >= LP/(1-rho).
func farley(lp, rho float64) float64 {
	if rho >= 0 {
		return lp
	}
	return lp / (1 - rho)
}

// Round a solution value to an integer count.
func count(v float64) int { return int(math.Round(v)) }
