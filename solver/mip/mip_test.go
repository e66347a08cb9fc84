package mip

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
)

// shapes is a kwok-like set: c/m/r families with 2/4/8 GiB per vCPU, priced linearly.
func offerings(zones []string) []model.Offering {
	var out []model.Offering
	for _, fam := range []struct {
		name  string
		gib   int64
		price float64
	}{{"c", 2, 0.0425}, {"m", 4, 0.048}, {"r", 8, 0.063}} {
		for _, cpu := range []int64{2, 4, 8, 16, 32, 48, 64} {
			for zi, z := range zones {
				id := fmt.Sprintf("%s%d/%s", fam.name, cpu, z)
				alloc := model.Resources{model.CPU: cpu*1000 - 80, model.Memory: (cpu*fam.gib - 1) << 30, model.Pods: 110}
				out = append(out, model.Offering{ID: id, NodePool: "default", InstanceType: fmt.Sprintf("%s.%d", fam.name, cpu),
					Zone: z, CapacityType: model.OnDemand, Price: fam.price * float64(cpu) * (1 + 0.01*float64(zi)),
					Capacity:    model.Resources{model.CPU: cpu * 1000, model.Memory: cpu * fam.gib << 30, model.Pods: 110},
					Allocatable: alloc, Labels: map[string]string{model.LabelZone: z, model.LabelInstanceType: id}})
			}
		}
	}
	return out
}

func randomProblem(seed uint64, groups, podsPerGroup int) *model.Problem {
	r := rand.New(rand.NewPCG(seed, 1))
	zones := []string{"z1", "z2", "z3"}
	p := &model.Problem{Offerings: offerings(zones), Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	for g := 0; g < groups; g++ {
		cpu := []int64{100, 250, 500, 1000, 2000, 4000}[r.IntN(6)]
		mem := cpu * []int64{1, 2, 4, 8}[r.IntN(4)] << 20
		pg := model.PodGroup{Name: fmt.Sprintf("g%d", g), Namespace: "default",
			Requests: model.Resources{model.CPU: cpu, model.Memory: mem, model.Pods: 1}, Labels: map[string]string{"app": fmt.Sprint(g)}}
		n := 1 + r.IntN(2*podsPerGroup)
		for i := 0; i < n; i++ {
			pg.Pods = append(pg.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("g%d-%d", g, i)})
		}
		p.Groups = append(p.Groups, pg)
	}
	return p
}

// solveWithin compiles p and runs the MIP for at most d, from the greedy plan when warm is set.
func solveWithin(t *testing.T, p *model.Problem, warm bool, d time.Duration) *Result {
	t.Helper()
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	var start *model.Plan
	if warm {
		if start, err = greedy.SolveCompiled(c); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := Solve(ctx, c, start, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMIPPlansAndBounds(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		res := solveWithin(t, randomProblem(seed, 8, 20), false, 3*time.Second)
		if res.Plan == nil {
			t.Fatalf("seed %d: no plan (%s)", seed, res.MasterStatus)
		}
		if res.LowerBound > res.Plan.Cost+1e-6 {
			t.Fatalf("seed %d: bound %v above cost %v", seed, res.LowerBound, res.Plan.Cost)
		}
		if len(res.Plan.Unschedulable) != 0 {
			t.Fatalf("seed %d: unschedulable %v", seed, res.Plan.Unschedulable)
		}
		t.Logf("seed %d: cost %.4f bound %.4f gap %.2f%% iters %d cols %d classes %d converged %v %s", seed, res.Plan.Cost, res.LowerBound,
			100*(res.Plan.Cost-res.LowerBound)/res.Plan.Cost, res.Iterations, res.Columns, res.Classes, res.Converged, res.MasterStatus)
	}
}

func TestMIPPlansValidate(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		p := randomProblem(seed, 8, 20)
		// 3 s, like the test above: under -race, beside the e2e package, 500 ms ran out before HiGHS even started.
		res := solveWithin(t, p, false, 3*time.Second)
		if res.Plan == nil {
			continue // out of time on a loaded machine: nothing to validate
		}
		if err := res.Plan.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestMIPZoneSpreadPlansValidate: the integer master may cover more pods than pending; the surplus must be taken
// from the fullest zones so that zone spread still holds in the plan.
func TestMIPZoneSpreadPlansValidate(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 6; seed++ {
		p := randomProblem(seed, 6, 15)
		for i := range p.Groups {
			if i%2 == 0 {
				g := &p.Groups[i]
				g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule,
					Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": g.Labels["app"]}}}}
			}
		}
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		res, err := Solve(ctx, c, nil, Options{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Plan == nil {
			continue
		}
		checked++
		if err := res.Plan.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if checked < 4 {
		t.Fatalf("only %d of 6 problems produced a plan in time", checked)
	}
}

// A deadline that passes before HiGHS runs (already expired, or column generation's share spent before the
// first LP) is an answer: no error, OutOfTime set, and any plan still valid.
func TestDeadlineBeforeFirstLP(t *testing.T) {
	p := randomProblem(3, 6, 20)
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, tc := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		opts    Options
		outTime bool
	}{
		{"expired context", func() (context.Context, context.CancelFunc) { return expired, func() {} }, Options{}, true},
		{"LP share spent before the first LP", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 3*time.Second)
		}, Options{LPShare: 1e-9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			res, err := Solve(ctx, c, nil, tc.opts)
			if err != nil {
				t.Fatalf("Solve returned an error: %v", err)
			}
			if res.OutOfTime != tc.outTime {
				t.Fatalf("OutOfTime %v, want %v (%s)", res.OutOfTime, tc.outTime, res.MasterStatus)
			}
			if res.Plan != nil {
				if err := res.Plan.Validate(p); err != nil {
					t.Fatalf("invalid plan: %v", err)
				}
			}
			if res.LowerBound != 0 && res.Plan != nil && res.LowerBound > res.Plan.Cost+1e-6 {
				t.Fatalf("bound %v above cost %v", res.LowerBound, res.Plan.Cost)
			}
		})
	}
}

// TestMIPKeepsResidents: a node of an offering with resident pods (a consolidation candidate) is only opened
// with those pods on it, whatever the warm start does, so keeping it never means moving them. The candidates
// are cheap, so the plan keeps some of them.
func TestMIPKeepsResidents(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		p := randomProblem(seed, 8, 20)
		r := rand.New(rand.NewPCG(seed, 2))
		taken := make([]int, len(p.Groups))
		for k := 0; k < 6; k++ {
			o := p.Offerings[r.IntN(len(p.Offerings))]
			o.ID, o.MaxCount, o.Price = fmt.Sprintf("node/%d", k), 1, o.Price*0.5
			room := o.Allocatable.Clone()
			for tries := 0; tries < 4; tries++ {
				g := r.IntN(len(p.Groups))
				n := min(1+r.IntN(3), p.Groups[g].Demand()-taken[g])
				need := p.Groups[g].Requests.Scale(int64(n))
				if n <= 0 || !need.Fits(room) || slices.ContainsFunc(o.Resident, func(gc model.GroupCount) bool { return gc.Group == g }) {
					continue
				}
				room = room.Sub(need)
				taken[g] += n
				o.Resident = append(o.Resident, model.GroupCount{Group: g, Count: n})
			}
			if len(o.Resident) > 0 {
				p.Offerings = append(p.Offerings, o)
			}
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		res := solveWithin(t, p, true, 3*time.Second)
		if res.Plan == nil {
			t.Fatalf("seed %d: no plan (%s)", seed, res.MasterStatus)
		}
		if err := res.Plan.Validate(p); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		kept := 0
		for _, nn := range res.Plan.NewNodes {
			o := &p.Offerings[nn.Offering]
			if len(o.Resident) > 0 {
				kept++
			}
			for _, want := range o.Resident {
				got := 0
				for _, gc := range nn.Pods {
					if gc.Group == want.Group {
						got += gc.Count
					}
				}
				if got < want.Count {
					t.Fatalf("seed %d: node of %s holds %d pods of group %d, its residents are %d (%s; %v)", seed, o.ID, got, want.Group, want.Count, res.MasterStatus, nn.Pods)
				}
			}
		}
		if kept == 0 {
			t.Fatalf("seed %d: no candidate kept although they cost half the catalog price", seed)
		}
		t.Logf("seed %d: %d of the candidates kept, cost %.4f, bound %.4f (%s)", seed, kept, res.Plan.Cost, res.LowerBound, res.MasterStatus)
	}
}

// TestDive: a dive from a column-generation LP ends in a plan that validates and costs no less than the LP, and
// it restores every bound it fixed, so that the LP over the same columns is no higher afterwards.
func TestDive(t *testing.T) {
	plans := 0
	for seed := uint64(1); seed <= 4; seed++ {
		p := randomProblem(seed, 8, 25)
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m := builtMaster(t, ctx, c)
		if err := m.addSingles(ctx); err != nil {
			t.Fatal(err)
		}
		opts := Options{}
		opts.defaults()
		var lp *highs.Result
		for round := 0; round < 30; round++ {
			if lp, err = m.inst.Run(ctx); err != nil || lp.Status != highs.StatusOptimal {
				t.Fatalf("seed %d: LP: %v %v", seed, err, lp)
			}
			cols, _ := m.price(ctx, lp.RowDuals, opts, time.Now().Add(time.Second))
			if len(cols) == 0 {
				break
			}
			if err := m.addPatterns(ctx, cols); err != nil {
				t.Fatal(err)
			}
		}
		if lp, err = m.inst.Run(ctx); err != nil {
			t.Fatal(err)
		}
		before := lp.Objective
		plan, err := m.dive(ctx, lp.ColValues, opts, time.Now().Add(2*time.Second))
		if err != nil {
			t.Fatalf("seed %d: dive: %v", seed, err)
		}
		if plan != nil {
			plans++
			if err := plan.Validate(p); err != nil {
				t.Fatalf("seed %d: dived plan: %v", seed, err)
			}
			if plan.Cost < before-1e-6 {
				t.Fatalf("seed %d: dived plan costs %.4f, below the LP %.4f", seed, plan.Cost, before)
			}
			t.Logf("seed %d: LP %.4f, dive %.4f", seed, before, plan.Cost)
		}
		after, err := m.inst.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.Objective > before+1e-6 {
			t.Fatalf("seed %d: LP %.6f after the dive, %.6f before: bounds left fixed", seed, after.Objective, before)
		}
		cancel()
	}
	if plans == 0 {
		t.Fatal("no dive ended in a plan")
	}
}

// An integer master stopped early may buy its way past a zone rule through the zone rows' slack. The plan
// decoded from it must still keep the rule (leaving the excess out), and completing it must place every pod
// within the rule.
func TestPlanKeepsZoneRulesOfASlackSolution(t *testing.T) {
	p, c := zoneSpreadWeb(t, 7, true)
	ctx := context.Background()
	m := builtMaster(t, ctx, c)
	// One node per pod in each zone: 5 in z1, 1 in z2, 1 in z3 (skew 4).
	want := map[string]int{"z1": 5, "z2": 1, "z3": 1}
	var ps []pattern
	chosen := map[int]int{} // class -> nodes
	for ci, cl := range m.classes {
		z := c.Zones[cl.zone]
		if n, ok := want[z]; ok && !cl.dominated {
			ps = append(ps, pattern{class: ci, counts: []unitCount{{0, 1}}})
			chosen[ci] = n
			delete(want, z)
		}
	}
	if len(want) > 0 {
		t.Fatalf("no class in zones %v", want)
	}
	if err := m.addPatterns(ctx, ps); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, len(m.cols))
	for j, col := range m.cols {
		if col.kind == colPattern {
			x[j] = float64(chosen[col.class])
		}
	}
	plan := m.plan(x)
	if err := plan.Validate(p); err != nil {
		t.Fatalf("decoded plan breaks a rule: %v", err)
	}
	if got := plan.Placed(); got != 4 {
		t.Fatalf("decoded plan places %d pods, want 4 (2+1+1 within skew 1)", got)
	}
	partial := *plan
	partial.Unschedulable = nil
	full, err := greedy.Complete(p, &partial)
	if err != nil {
		t.Fatal(err)
	}
	if err := full.Validate(p); err != nil {
		t.Fatalf("completed plan: %v", err)
	}
	if full.Placed() != 7 {
		t.Fatalf("completed plan places %d pods, want 7", full.Placed())
	}
}

// builtMaster is the restricted master of c on a HiGHS instance without presolve, built; the instance is closed
// when the test ends.
func builtMaster(t *testing.T, ctx context.Context, c *prep.Problem) *master {
	t.Helper()
	m, err := newMaster(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.inst.Close() })
	return m
}

// The MIP reports the plans it finds before its integer master (the rounded LP, the dive's), each valid, for the
// portfolio's local search to go on from.
func TestMIPReportsItsPlansAsFound(t *testing.T) {
	p := randomProblem(3, 12, 20)
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var found []*model.Plan
	res, err := Solve(ctx, c, nil, Options{Found: func(pl *model.Plan) { found = append(found, pl) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatalf("no plan reported (master status %q)", res.MasterStatus)
	}
	for i, pl := range found {
		if err := pl.Validate(p); err != nil {
			t.Errorf("plan %d reported as found: %v", i, err)
		}
		if res.Plan == nil || res.Plan.Cost > pl.Cost+1e-9 {
			t.Errorf("plan %d reported at $%.4f/h, the MIP returned %v", i, pl.Cost, res.Plan)
		}
	}
}

// zoneSpreadWeb is a problem of one group of pods web pods (1 CPU, 1 GiB) spread over three zones with maxSkew 1,
// one per node too when oneNodeEach, compiled.
func zoneSpreadWeb(t *testing.T, pods int, oneNodeEach bool) (*model.Problem, *prep.Problem) {
	t.Helper()
	zones := []string{"z1", "z2", "z3"}
	p := &model.Problem{Offerings: offerings(zones), Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	sel := &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	g := model.PodGroup{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"},
		Requests:       model.Resources{model.CPU: 1000, model.Memory: 1 << 30, model.Pods: 1},
		TopologySpread: []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}}
	if oneNodeEach {
		g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}
	}
	for i := range pods {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d", i)})
	}
	p.Groups = []model.PodGroup{g}
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// A batch of columns that HiGHS did not take leaves no key behind: the enumeration proof adds its patterns
// again after a step that failed (its share of the time ran out), and a stale key named a column past the
// master's, which panicked.
func TestFailedColumnsLeaveNoKeys(t *testing.T) {
	c, err := prep.Compile(randomProblem(1, 4, 6))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := builtMaster(t, ctx, c)
	gone, stop := context.WithCancel(ctx)
	stop()
	// A call under a cancelled context fails only when the solver thread is not ready at once, so new patterns
	// (n units each) are tried until one batch fails.
	var ps []pattern
	before := len(m.cols)
	for n := 1; ; n++ {
		if n > 64 {
			t.Fatal("no addition failed under a cancelled context")
		}
		ps = ps[:0]
		for ci, cl := range m.classes {
			if len(cl.groups) > 0 && cl.resident == nil {
				ps = append(ps, pattern{class: ci, counts: []unitCount{{m.mgOf[cl.groups[0]], n}}})
			}
		}
		before = len(m.cols)
		if err := m.addPatterns(gone, ps); err != nil {
			break
		}
	}
	if len(m.cols) != before {
		t.Fatalf("%d columns after a failed addition, want %d", len(m.cols), before)
	}
	for key, j := range m.colOf {
		if j >= len(m.cols) {
			t.Fatalf("key %q names column %d of %d", key, j, len(m.cols))
		}
	}
	if err := m.addEnumerated(ctx, ps); err != nil {
		t.Fatal(err)
	}
	if got := len(m.cols) - before; got != len(ps) {
		t.Fatalf("%d columns added, want %d", got, len(ps))
	}
}

// A panic in a pricing worker (a bug in a class's knapsack or a running node's filling) is raised again on
// Solve's goroutine, where the portfolio's recover turns it into a greedy fallback, instead of ending the
// process from the worker's goroutine.
func TestPricingPanicReachesTheCaller(t *testing.T) {
	for _, tc := range []struct {
		what, frame string
		p           *model.Problem
	}{
		{"class", "(*master).price.func", randomProblem(5, 6, 8)},
		{"node", "(*master).priceFillings.func", runningProblem(4, 12)},
	} {
		t.Run(tc.what, func(t *testing.T) {
			c, err := prep.Compile(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			warm, err := greedy.SolveCompiled(c)
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int64
			opts := Options{beforePricing: func(what string) {
				if what == tc.what {
					calls.Add(1)
					panic("a pricing bug")
				}
			}}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r := func() (r any) {
				defer func() { r = recover() }()
				res, err := Solve(ctx, c, warm, opts)
				t.Errorf("Solve returned (%v, %v) past a panicking %s knapsack", res, err, tc.what)
				return nil
			}()
			p, ok := r.(*safe.Panic)
			if !ok {
				t.Fatalf("recovered %#v after %d %s knapsacks; want the worker's *safe.Panic", r, calls.Load(), tc.what)
			}
			if p.Value != "a pricing bug" || !strings.Contains(string(p.Stack), tc.frame) {
				t.Fatalf("recovered %v; want the worker's panic with %s on its stack:\n%s", p.Value, tc.frame, p.Stack)
			}
		})
	}
}

// TestUnseenDropsPatternsInTheLP: a priced pattern that already has a column is dropped (adding it again would
// leave the LP and its duals as they were, and column generation would price it again every round); new ones
// stay.
func TestUnseenDropsPatternsInTheLP(t *testing.T) {
	p := randomProblem(2, 8, 25)
	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m := builtMaster(t, ctx, c)
	if err := m.addSingles(ctx); err != nil {
		t.Fatal(err)
	}
	opts := Options{}
	opts.defaults()
	lp, err := m.inst.Run(ctx)
	if err != nil || lp.Status != highs.StatusOptimal {
		t.Fatalf("LP: %v %v", err, lp)
	}
	cols, _ := m.price(ctx, lp.RowDuals, opts, time.Now().Add(time.Second))
	if len(cols) < 2 {
		t.Fatalf("the first round priced %d patterns, want at least 2", len(cols))
	}
	if got := len(m.unseen(append([]pattern(nil), cols...))); got != len(cols) {
		t.Fatalf("unseen kept %d of %d new patterns", got, len(cols))
	}
	if err := m.addPatterns(ctx, cols[:1]); err != nil {
		t.Fatal(err)
	}
	left := m.unseen(append([]pattern(nil), cols...))
	if len(left) != len(cols)-1 {
		t.Fatalf("after adding one pattern, unseen kept %d of %d", len(left), len(cols))
	}
	for _, q := range left {
		if patternKey(q.class, q.counts) == patternKey(cols[0].class, cols[0].counts) {
			t.Fatalf("unseen kept the pattern just added: %v", q)
		}
	}
}
