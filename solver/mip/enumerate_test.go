package mip

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/solver/internal/prep"
)

// bruteForcePatterns lists, by trying every count vector, the patterns of the non-dominated classes that fit,
// keep the conflicts, leave no room for one more unit of a group without zone rows, and have reduced cost at
// most gap under y: what enumerate must list.
func bruteForcePatterns(m *master, y []float64, gap float64) map[string]bool {
	conflict := m.conflictSets()
	out := map[string]bool{}
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.dominated {
			continue
		}
		_, constant := m.pricingItems(ci, y, conflict)
		var gs []int
		for _, g := range cl.groups {
			if i := m.mgOf[g]; min(m.groups[i].maxUnits, m.groups[i].units) > 0 {
				gs = append(gs, i)
			}
		}
		cnt := make([]int, len(gs))
		var try func(a int)
		try = func(a int) {
			if a < len(gs) {
				for n := 0; n <= min(m.groups[gs[a]].maxUnits, m.groups[gs[a]].units); n++ {
					cnt[a] = n
					try(a + 1)
				}
				cnt[a] = 0
				return
			}
			room := append(prep.Vec(nil), m.knapsackRoom(ci)...)
			val, any := 0.0, false
			var uc []unitCount
			for b, i := range gs {
				if cnt[b] == 0 {
					continue
				}
				any = true
				for k := range room {
					room[k] -= int64(cnt[b]) * m.groups[i].req[k]
				}
				val += float64(cnt[b]) * m.unitValue(i, cl.zone, y)
				uc = append(uc, unitCount{i, cnt[b]})
				for _, j := range conflict[i] {
					for c, h := range gs {
						if h == j && cnt[c] > 0 {
							return
						}
					}
				}
			}
			for _, r := range room {
				if r < 0 {
					return
				}
			}
			if !any || cl.price-constant-val > gap+1e-9 {
				return
			}
			for b, i := range gs {
				if len(m.groupZoneRows(i)) > 0 || cnt[b] >= min(m.groups[i].maxUnits, m.groups[i].units) {
					continue
				}
				blocked := false
				for _, j := range conflict[i] {
					for c, h := range gs {
						if h == j && cnt[c] > 0 {
							blocked = true
						}
					}
				}
				fits := true
				for k, r := range m.groups[i].req {
					if r > room[k] {
						fits = false
					}
				}
				if fits && !blocked {
					return // not maximal
				}
			}
			out[patternKey(ci, uc)] = true
		}
		try(0)
	}
	return out
}

// enumerate lists exactly the patterns that trying every count vector finds, under random duals and gaps, on
// problems with and without zone rules and per-node caps.
func TestEnumerateListsEveryPatternWithinTheGap(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		p := compactProblem(seed)
		if seed%2 == 0 {
			p = randomProblem(seed, 3, 3)
		}
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		m := builtMaster(t, ctx, c)
		r := rand.New(rand.NewPCG(seed, 7))
		cheapest := math.Inf(1)
		for ci := range m.classes {
			cheapest = math.Min(cheapest, m.classes[ci].price)
		}
		y := make([]float64, m.nrows)
		for i := range y {
			y[i] = (r.Float64() - 0.2) * cheapest / 2
		}
		for _, gap := range []float64{0, cheapest / 2, 3 * cheapest} {
			want := bruteForcePatterns(m, y, gap)
			ps, complete := m.enumerate(ctx, &lpDuals{y: y}, gap, time.Now().Add(10*time.Second), 1<<20)
			if !complete {
				t.Fatalf("seed %d, gap %v: enumeration incomplete", seed, gap)
			}
			got := map[string]bool{}
			for _, pt := range ps {
				k := patternKey(pt.class, pt.counts)
				if got[k] {
					t.Fatalf("seed %d, gap %v: pattern %s listed twice", seed, gap, k)
				}
				got[k] = true
				if !want[k] {
					t.Fatalf("seed %d, gap %v: pattern %s listed but not within the gap, maximal and feasible", seed, gap, k)
				}
			}
			for k := range want {
				if !got[k] {
					t.Fatalf("seed %d, gap %v: pattern %s missing (%d listed, %d expected)", seed, gap, k, len(got), len(want))
				}
			}
			t.Logf("seed %d, gap %.4f: %d patterns", seed, gap, len(ps))
		}
	}
}

// convergedMaster runs column generation on c to convergence and returns the master with its LP's duals.
func convergedMaster(t *testing.T, ctx context.Context, c *prep.Problem) (*master, *lpDuals) {
	t.Helper()
	m := builtMaster(t, ctx, c)
	if err := m.addSingles(ctx); err != nil {
		t.Fatal(err)
	}
	var opts Options
	opts.defaults()
	opts.ExactPricingBudget, opts.ExactPricingLimit = 10*time.Second, time.Second
	for range 200 {
		lp, err := m.inst.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cols, rho := m.price(ctx, lp.RowDuals, opts, time.Now().Add(time.Minute))
		if len(cols) == 0 {
			if rho < -1e-9 || m.slackUsed(lp.ColValues) {
				t.Fatalf("column generation ended unproven (rho %v) or with slack", rho)
			}
			return m, &lpDuals{y: lp.RowDuals, value: lp.Objective}
		}
		if err := m.addPatterns(ctx, cols); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("column generation did not converge in 200 rounds")
	return nil, nil
}

// Over the listed patterns the integer master's bound never passes the optimum (proven by the compact model),
// and once every pattern within the greedy plan's gap is listed and HiGHS finishes, its plan is the optimum.
func TestEnumerationBoundsAndFindsTheOptimum(t *testing.T) {
	exact := 0
	for seed := uint64(1); seed <= 8; seed++ {
		p := compactProblem(seed)
		c, warm := compiledWithGreedy(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		opt, proven, status := provenOptimum(t, ctx, c, warm)
		if !proven {
			cancel()
			t.Logf("seed %d: the compact model did not prove its plan (%s)", seed, status)
			continue
		}

		m, d := convergedMaster(t, ctx, c)
		if !m.enumerable() {
			t.Fatalf("seed %d: the master does not allow enumeration", seed)
		}
		gap := warm.Cost - d.value
		ps, within := m.enumerateWithin(ctx, d, gap, time.Now().Add(5*time.Second))
		if ps == nil {
			cancel()
			t.Logf("seed %d: too many patterns within the gap $%.4f/h", seed, gap)
			continue
		}
		res := &Result{LowerBound: d.value}
		note := m.proveByEnumeration(ctx, res, warm, d, ps, within)
		cancel()
		if res.LowerBound > opt*(1+1e-9) {
			t.Fatalf("seed %d: bound $%v above the optimum $%v (%s)", seed, res.LowerBound, opt, note)
		}
		if res.Plan != nil {
			if err := res.Plan.Validate(p); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if within >= gap && strings.Contains(note, "optimal") {
			best := warm.Cost
			if res.Plan != nil {
				best = math.Min(best, res.Plan.Cost)
			}
			if best > opt*(1+2e-4) {
				t.Fatalf("seed %d: exact master's plan $%v above the optimum $%v (%s)", seed, best, opt, note)
			}
			if res.LowerBound < opt*(1-2e-4) {
				t.Fatalf("seed %d: exact master's bound $%v below the optimum $%v (%s)", seed, res.LowerBound, opt, note)
			}
			exact++
		}
		t.Logf("seed %d: greedy $%.4f, optimum $%.4f, LP $%.4f, bound $%.4f: %s", seed, warm.Cost, opt, d.value, res.LowerBound, note)
	}
	if exact < 3 {
		t.Fatalf("enumeration made the master exact and solved it on only %d of 8 problems", exact)
	}
}
