package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/mip"
)

// spreadServices is a problem of services with hostname anti-affinity and zone spread on three families of
// offerings in three zones: greedy's plans for it leave room that the local search takes back.
func spreadServices(seed uint64, services int) *model.Problem {
	r := rand.New(rand.NewPCG(seed, 11))
	zones := []string{"a", "b", "c"}
	p := &model.Problem{Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	for _, f := range []struct {
		name   string
		gibCPU int64
		perCPU float64
	}{{"c", 2, 0.0425}, {"m", 4, 0.048}, {"r", 8, 0.063}} {
		for _, cpu := range []int64{2, 4, 8, 16, 32} {
			for _, z := range zones {
				it := fmt.Sprintf("%s%d", f.name, cpu)
				res := model.Resources{model.CPU: cpu * 1000, model.Memory: cpu * f.gibCPU * model.Gi, model.Pods: 110}
				p.Offerings = append(p.Offerings, model.Offering{ID: it + "/" + z, NodePool: "default", InstanceType: it, Zone: z,
					CapacityType: model.OnDemand, Price: f.perCPU * float64(cpu), Capacity: res.Clone(), Allocatable: res,
					Labels: map[string]string{model.LabelZone: z, model.LabelInstanceType: it, model.LabelNodePool: "default"}})
			}
		}
	}
	for i := range services {
		name := fmt.Sprintf("svc%d", i)
		g := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
			Requests: model.Resources{model.CPU: []int64{250, 500, 1000, 2000}[r.IntN(4)], model.Memory: []int64{model.Gi / 2, model.Gi, 2 * model.Gi, 4 * model.Gi}[r.IntN(4)], model.Pods: 1}}
		sel := &model.LabelSelector{MatchLabels: map[string]string{"app": name}}
		if i%3 != 1 {
			g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}
		}
		if i%3 != 0 {
			g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}
		}
		for j := range 6 + r.IntN(12) {
			g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, j)})
		}
		p.Groups = append(p.Groups, g)
	}
	return p
}

// The search beside the MIP does not begin before the MIP's LP has ended, then offers the MIP its cheaper plans
// as they come, and its result is a valid local-search plan cheaper than its start. A search never started is
// a nil *localSearch whose methods do nothing.
func TestLocalSearchBesideTheMIP(t *testing.T) {
	var none *localSearch
	none.lpEnded()
	none.stop()
	if none.incumbent() != nil || none.wait(context.Background(), nil) != nil {
		t.Fatal("a search never started has a plan")
	}

	cheaper := 0
	var found *model.Plan // a valid local-search plan, and its problem
	var foundP *model.Problem
	for seed := uint64(1); seed <= 3; seed++ {
		p := spreadServices(seed, 45)
		if err := p.Validate(); err != nil {
			t.Fatalf("test problem invalid: %v", err)
		}
		start, err := greedy.Solve(p)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		s := startLocalSearch(ctx, p, start)
		time.Sleep(200 * time.Millisecond)
		if s.incumbent() != nil {
			t.Fatalf("seed %d: the search found a plan before the LP ended", seed)
		}
		s.lpEnded()
		s.lpEnded() // the MIP may signal more than once
		got := s.wait(context.Background(), p)
		cancel()
		if got == nil {
			t.Logf("seed %d: no cheaper plan than greedy's $%.4f/h", seed, start.Cost)
			continue
		}
		if got.Solver != greedy.LocalSearch || got.Cost >= start.Cost || got.Placed() < start.Placed() {
			t.Fatalf("seed %d: search returned a %s plan of $%.4f/h placing %d, from greedy's $%.4f/h placing %d",
				seed, got.Solver, got.Cost, got.Placed(), start.Cost, start.Placed())
		}
		if inc := s.incumbent(); inc == nil || inc.Cost > got.Cost+1e-9 {
			t.Fatalf("seed %d: the MIP was not offered the search's plan of $%.4f/h (incumbent %v)", seed, got.Cost, inc)
		}
		cheaper++
		found, foundP = got, p
		t.Logf("seed %d: %d pods, greedy $%.4f/h, local search $%.4f/h", seed, start.Placed(), start.Cost, got.Cost)
	}
	if cheaper < 2 {
		t.Errorf("the search beat greedy on %d of 3 problems, want at least 2", cheaper)
	}

	// A search whose time is up before the LP ends returns nothing.
	p := spreadServices(1, 45)
	start, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := startLocalSearch(ctx, p, start)
	cancel()
	if got := s.wait(context.Background(), p); got != nil {
		t.Fatalf("a search cancelled before it began returned a plan of $%.4f/h", got.Cost)
	}

	// A step that overruns the decision (its result never comes) does not hold wait past its context: wait
	// returns the cheapest plan the search reported, validated.
	if found == nil {
		return
	}
	stuck := &localSearch{cancel: func() {}, lpDone: make(chan struct{}), result: make(chan *model.Plan, 1)}
	stuck.latest.Store(found)
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	waited := make(chan *model.Plan, 1)
	go func() { waited <- stuck.wait(wctx, foundP) }()
	select {
	case got := <-waited:
		if got != found {
			t.Fatalf("wait on an overrunning step returned %v, want the reported plan of $%.4f/h", got, found.Cost)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("wait on an overrunning step still waits 2s after its 50ms context ended")
	}
	// A reported plan that is not valid for the problem is not returned.
	bad := *found
	bad.NewNodes = bad.NewNodes[1:]
	stuck = &localSearch{cancel: func() {}, lpDone: make(chan struct{}), result: make(chan *model.Plan, 1)}
	stuck.latest.Store(&bad)
	if got := stuck.wait(wctx, foundP); got != nil {
		t.Fatalf("wait returned a plan that drops a node's pods ($%.4f/h)", got.Cost)
	}
}

// offer keeps the cheapest plan offered, for the search to go on from.
func TestLocalSearchOfferKeepsTheCheapest(t *testing.T) {
	var none *localSearch
	none.offer(&model.Plan{Cost: 1}) // a search never started ignores offers
	s := &localSearch{}
	for _, c := range []float64{5, 3, 4, 3} {
		s.offer(&model.Plan{Cost: c})
	}
	s.offer(nil)
	if got := s.offered.Load(); got == nil || got.Cost != 3 {
		t.Fatalf("offered plan %v, want the $3/h one", got)
	}
}

// leftOut is the greedy plan of spreadServices(3, 24) and that plan without the pods of its last two new nodes,
// as a MIP stopped by its deadline may leave it.
func leftOut(t *testing.T) (*model.Problem, *model.Plan, model.Plan) {
	t.Helper()
	p := spreadServices(3, 24)
	g, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	partial := *g
	partial.NewNodes = g.NewNodes[:len(g.NewNodes)-2]
	partial.Unschedulable = nil
	partial.Cost = 0
	for _, nn := range partial.NewNodes {
		partial.Cost += p.Offerings[nn.Offering].Price
	}
	for _, nn := range g.NewNodes[len(g.NewNodes)-2:] {
		for _, gc := range nn.Pods {
			partial.Unschedulable = append(partial.Unschedulable, model.Unschedulable{Group: gc.Group, Count: gc.Count, Reason: "left out"})
		}
	}
	return p, g, partial
}

// completeBefore places what a plan left out, and gives up at the deadline.
func TestCompleteBefore(t *testing.T) {
	p, g, partial := leftOut(t)
	if partial.Placed() >= g.Placed() {
		t.Fatalf("the partial plan places %d pods, greedy's %d", partial.Placed(), g.Placed())
	}
	cp := completeBefore(context.Background(), p, &partial)
	if cp == nil {
		t.Fatal("no completed plan")
	}
	if err := cp.Validate(p); err != nil {
		t.Fatalf("completed plan invalid: %v", err)
	}
	if cp.Placed() != g.Placed() || len(cp.Unschedulable) != 0 {
		t.Fatalf("completed plan places %d pods (%d unschedulable entries), want %d", cp.Placed(), len(cp.Unschedulable), g.Placed())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if cp := completeBefore(ctx, p, &partial); cp != nil {
		t.Fatal("a plan completed after the deadline")
	}
}

// The search goes on from a restart plan once, when it is at most startMargin dearer than its own, and from the
// MIP's offer only when it is cheaper.
func TestLocalSearchNext(t *testing.T) {
	cur := &model.Plan{Cost: 10}
	for _, tc := range []struct {
		name             string
		restart, offered float64 // 0: none
		want             float64 // 0: stay
	}{
		{name: "nothing", want: 0},
		{name: "restart a little dearer", restart: 10 * (1 + startMargin/2), want: 10 * (1 + startMargin/2)},
		{name: "restart too dear", restart: 10 * (1 + 2*startMargin), want: 0},
		{name: "offer cheaper", offered: 9, want: 9},
		{name: "offer dearer", offered: 10.05, want: 0},
		{name: "restart first", restart: 10.05, offered: 9, want: 10.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &localSearch{}
			if tc.restart > 0 {
				s.restartFrom(&model.Plan{Cost: tc.restart})
			}
			if tc.offered > 0 {
				s.offer(&model.Plan{Cost: tc.offered})
			}
			got := s.next(cur)
			switch {
			case tc.want == 0 && got != nil:
				t.Fatalf("goes on from $%v/h, want its own", got.Cost)
			case tc.want != 0 && (got == nil || got.Cost != tc.want):
				t.Fatalf("goes on from %v, want $%v/h", got, tc.want)
			}
			// A restart is taken once: the next step sees only the offer, if cheaper.
			if again := s.next(cur); again != nil && again.Cost >= cur.Cost {
				t.Fatalf("second step goes on from $%v/h", again.Cost)
			}
		})
	}
	// After a restart to a dearer plan, an offer must be cheaper than the plan the search left too.
	s := &localSearch{}
	s.restartFrom(&model.Plan{Cost: 10.05})
	if got := s.next(cur); got == nil || got.Cost != 10.05 {
		t.Fatalf("restart not taken: %v", got)
	}
	s.offer(&model.Plan{Cost: 10.01})
	if got := s.next(&model.Plan{Cost: 10.05}); got != nil {
		t.Fatalf("after the restart, goes on from an offer of $%v/h that is dearer than the $10/h plan it left", got.Cost)
	}
	s.offer(&model.Plan{Cost: 9.5})
	if got := s.next(&model.Plan{Cost: 10.05}); got == nil || got.Cost != 9.5 {
		t.Fatalf("after the restart, a $9.5/h offer is not taken: %v", got)
	}
}

// restartFromNodes hands the search the greedy's valid plan over the given nodes, and nothing once the search's
// context has ended, with less than restartNeed left, or when there are no nodes.
func TestLocalSearchRestartFromNodes(t *testing.T) {
	p := spreadServices(3, 24)
	g, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []int
	for _, nn := range g.NewNodes {
		nodes = append(nodes, nn.Offering)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	soon, cancelSoon := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSoon()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		nodes []int
		need  time.Duration
		want  bool
	}{
		{name: "greedy's nodes", ctx: context.Background(), nodes: nodes, want: true},
		{name: "no nodes", ctx: context.Background(), want: false},
		{name: "after the search", ctx: done, nodes: nodes, want: false},
		{name: "time enough", ctx: soon, nodes: nodes, need: time.Second, want: true},
		{name: "too little time left", ctx: soon, nodes: nodes, need: time.Hour, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &localSearch{restartNeed: tc.need}
			s.restartFromNodes(tc.ctx, p, tc.nodes)
			got := s.restart.Load()
			if (got != nil) != tc.want {
				t.Fatalf("restart plan %v, want one: %v", got, tc.want)
			}
			if got == nil {
				return
			}
			if err := got.Validate(p); err != nil || got.Placed() != g.Placed() || got.Solver != greedy.LocalSearch {
				t.Fatalf("restart plan: %v, places %d of %d, solver %q", err, got.Placed(), g.Placed(), got.Solver)
			}
			// Over the greedy's own nodes it is no dearer than the greedy's plan.
			if got.Cost > g.Cost+1e-9 {
				t.Fatalf("restart plan $%.4f/h over the greedy's nodes, greedy $%.4f/h", got.Cost, g.Cost)
			}
		})
	}
}

// completeOrFallBack completes a MIP plan that leaves pods out when there is time for it, and otherwise falls
// back on the MIP's complete plan, or keeps the plan.
func TestCompleteOrFallBack(t *testing.T) {
	p, g, partial := leftOut(t)
	complete := &model.Plan{Cost: 99} // stands for the MIP's complete plan: only its identity matters here
	soon, later := time.Now().Add(time.Millisecond), time.Now().Add(time.Minute)
	for _, tc := range []struct {
		name     string
		end      time.Time
		need     time.Duration
		complete *model.Plan
		want     string // "completed", "fallback" or "kept"
	}{
		{name: "time for the completion", end: later, need: time.Second, complete: complete, want: "completed"},
		{name: "no time: the complete plan", end: soon, need: time.Second, complete: complete, want: "fallback"},
		{name: "no time, no complete plan", end: soon, need: time.Second, want: "kept"},
		{name: "past the end", end: time.Now().Add(-time.Second), complete: complete, want: "fallback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &mip.Result{Plan: &partial, Complete: tc.complete}
			got := completeOrFallBack(context.Background(), p, res, tc.end, tc.need)
			switch tc.want {
			case "completed":
				if err := got.Validate(p); err != nil || got.Placed() != g.Placed() {
					t.Fatalf("completed plan: %v, places %d of %d", err, got.Placed(), g.Placed())
				}
			case "fallback":
				if got != complete {
					t.Fatalf("got a plan of $%.4f/h, want the MIP's complete plan", got.Cost)
				}
			case "kept":
				if got != &partial {
					t.Fatalf("got a plan of $%.4f/h, want the MIP's plan kept", got.Cost)
				}
			}
		})
	}
}
