package solver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/internal/safe"
)

// LocalSearchPods is the least number of pending pods for which Solve runs the greedy's local search
// (greedy.Improve) beside the MIP. Below it, measured on the benchmarks, the MIP and its compact model reach
// the optimum more often with the machine to themselves.
const LocalSearchPods = 500

// localSearch is greedy.Improve run beside the MIP, on the core that HiGHS leaves free. It waits for the MIP's
// column generation to end (lpEnded): run beside it, the search cost column generation rounds and so the bound
// (mixed/aws/5000: a gap of 0.17% became 0.97-1.98%). A nil *localSearch is a search that was not started.
type localSearch struct {
	cancel context.CancelFunc
	lpDone chan struct{}
	once   sync.Once
	latest atomic.Pointer[model.Plan] // the cheapest plan so far, for the MIP's integer master
	// offered is the cheapest plan the MIP has offered (its rounded LP, its dive), for the search to go on from.
	offered atomic.Pointer[model.Plan]
	// restart is a plan for the search to go on from even if it is a little dearer than the search's own
	// (startMargin): taken once.
	restart atomic.Pointer[model.Plan]
	low     float64 // the cheapest plan next has seen the search at (0: none yet)
	// restartNeed is the least time before ctx's deadline in which restartFromNodes still makes its plan.
	restartNeed time.Duration
	result      chan *model.Plan
}

// startMargin is how much dearer than the search's current plan a plan handed to restartFrom may be and still
// be where the search goes on from: ruin and recreate gains more from a plan of the right shape than from a
// cheaper one (spread/kwok/1000, 400 ms: $6.75-6.84/h from the zone fluid program's nodes at $7.01/h,
// $6.93-6.97/h from the greedy's $7.02/h).
const startMargin = 0.01

// startLocalSearch starts the search from plan start of p, to end with ctx.
func startLocalSearch(ctx context.Context, p *model.Problem, start *model.Plan) *localSearch {
	ctx, cancel := context.WithCancel(ctx)
	s := &localSearch{cancel: cancel, lpDone: make(chan struct{}), result: make(chan *model.Plan, 1)}
	from := *start // the caller goes on to set the greedy plan's status fields
	safe.Go(func() {
		select {
		case <-s.lpDone:
		case <-ctx.Done():
		}
		s.result <- greedy.ImproveWith(ctx, p, &from, 1, s.latest.Store, s.next)
	}, func(*safe.Panic) { s.result <- nil }) // a bug in the search costs its plan, not the decision
	return s
}

// next is the plan the search goes on from instead of cur, or nil: the restart plan, once, when it is at most
// startMargin dearer, else the MIP's cheapest offer when it is cheaper than every plan the search went through,
// the one a restart left included. The MIP's rounded plans are usually cheaper than the restart plan at first,
// and going on from one of them undid the restart (spread/kwok/1000 ended at $6.87-6.89/h, against
// $6.83-6.84/h). Only the search's goroutine calls it.
func (s *localSearch) next(cur *model.Plan) *model.Plan {
	if s.low == 0 || cur.Cost < s.low {
		s.low = cur.Cost
	}
	if r := s.restart.Swap(nil); r != nil && r.Cost <= (1+startMargin)*cur.Cost {
		return r
	}
	if o := s.offered.Load(); o != nil && o.Cost < s.low-1e-9 {
		return o
	}
	return nil
}

// restartFrom hands the search a valid plan to go on from even when it is a little dearer than its own (next):
// one of another shape. It may be called from any goroutine.
func (s *localSearch) restartFrom(p *model.Plan) {
	if s != nil && p != nil {
		s.restart.Store(p)
	}
}

// lpEnded lets the search begin; it may be called more than once.
func (s *localSearch) lpEnded() {
	if s != nil {
		s.once.Do(func() { close(s.lpDone) })
	}
}

// offer hands the search a valid plan found by the MIP; the search goes on from it when it is cheaper than the
// search's own (greedy.ImproveWith). It may be called from any goroutine.
func (s *localSearch) offer(p *model.Plan) {
	if s == nil || p == nil {
		return
	}
	for {
		old := s.offered.Load()
		if old != nil && old.Cost <= p.Cost {
			return
		}
		if s.offered.CompareAndSwap(old, p) {
			return
		}
	}
}

// incumbent is the cheapest plan found so far, or nil.
func (s *localSearch) incumbent() *model.Plan {
	if s == nil {
		return nil
	}
	return s.latest.Load()
}

// stop ends the search early.
func (s *localSearch) stop() {
	if s != nil {
		s.cancel()
	}
}

// wait lets the search begin if it has not (the MIP may have returned before its LP), waits for it to end or
// for ctx to end, and returns its plan when the search found one and it is valid for p, else nil. A step of the
// search cannot be interrupted (one greedy completion of 50,000 spread pods took seconds before the bound pods
// were indexed), so at ctx's end wait takes the cheapest plan the search has reported and leaves the step to
// finish unused.
func (s *localSearch) wait(ctx context.Context, p *model.Problem) *model.Plan {
	if s == nil {
		return nil
	}
	s.lpEnded()
	var ls *model.Plan
	select {
	case ls = <-s.result:
	case <-ctx.Done():
		ls = s.latest.Load()
	}
	s.cancel()
	if ls == nil || ls.Solver != greedy.LocalSearch || ls.Validate(p) != nil {
		return nil
	}
	return ls
}

// fluidLimit caps HiGHS's time for the zone fluid program's nodes (spread/kwok/1000: 90 ms; AWS 1000: 47 ms).
const fluidLimit = 150 * time.Millisecond

// fluidMaxGroups is the most groups for which the search restarts from the zone fluid program's nodes. Filling
// them takes the greedy a residual problem with every node as a running one (spread/aws/5000, 466 groups: 255
// ms for 604 nodes), and at 20,000 spread pods (2,051 groups) the restart came too late to help while taking
// the core from the rest: spread/kwok/20000 fell back to greedy's plan in 1,011 ms (905 ms and $124.23/h
// without), and spread/aws/20000's bound fell from $97.07/h to $96.16/h.
const fluidMaxGroups = 1000

// restartFromNodes hands the search, to go on from (restartFrom), the greedy's plan of p over new nodes of the
// given offerings (greedy.CompleteOnto) when it is valid. mip.Bound or mip.Solve choose them (their Nodes
// option), as the zone fluid program's nodes in whole numbers: the greedy opens nodes one group at a time while
// it balances the zones, and ruin and recreate keeps the shape of the plan it starts from, where the program
// chooses every zone's nodes at once.
// It only ever makes a start, so a failure costs that start and nothing else; after ctx's end (the search's)
// nothing is done, since the decision no longer waits for it, nor with less than s.restartNeed left: the plan
// would come too late to help and take the core from the rest meanwhile (on a machine half as fast,
// spread/aws/5000's nodes came at 600-620 ms and their plan after the deadline).
func (s *localSearch) restartFromNodes(ctx context.Context, p *model.Problem, nodes []int) {
	if s == nil || len(nodes) == 0 || ctx.Err() != nil {
		return
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < s.restartNeed {
		return
	}
	// It runs beside the MIP, under the split inside the bound's goroutine: a bug here costs the start, not the bound.
	defer func() { _ = recover() }()
	if plan, err := greedy.CompleteOnto(p, nodes, greedy.LocalSearch); err == nil && plan.Validate(p) == nil {
		s.restartFrom(plan)
	}
}
