package mip

import (
	"context"
	"math"
	"runtime"
	"sort"
	"sync/atomic"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
)

// Running nodes in column generation (Dantzig–Wolfe). Per group and node, the integer master places units on a
// running node through one column per group (colNode) under the node's capacity rows. In the LP those columns
// fill the node's free room with fractions of pods, which no plan can: on `existing` (AWS, 1,000 pods) the LP
// said $4.19/h where the best plan found costs $4.28/h. So column generation instead covers each running node
// with whole fillings (colRunning: counts of units that fit its free room together), at most one in all per node
// (a convexity row), priced like new-node patterns by a knapsack over the node's free room. Its LP is the convex
// hull of each node's whole fillings, a tighter bound ($4.2736/h there, and the 1 s plan is within 0.4% of it).
// Column generation first converges with the per-group columns, which is fast (they make every filling from the
// first round) and gives their LP's bound, then holds them at zero and goes on with fillings when the time left
// allows. With y the LP's duals, every plan costs at least y·b less, per running node, the most its best filling
// could be worth above its convexity dual (the knapsack's upper bound), and over 1-rho for the patterns not yet
// priced (farley): a valid bound at any point, equal to the LP value once pricing proves nothing is left. When
// column generation ends, the per-group columns take over again (endFillings) for the rounding, the dive and the
// integer master, whose decoding reads them.

// filling is a whole filling of running node node: units of groups, sorted by mgroup.
type filling struct {
	node   int
	counts []unitCount
}

func fillingKey(e int, counts []unitCount) string {
	return "run" + patternKey(e, counts)
}

// nodeRoom is running node e's free room, never negative.
func (m *master) nodeRoom(e int) prep.Vec {
	room := make(prep.Vec, len(m.c.Res))
	for k := range room {
		room[k] = max(0, m.c.Nodes[e].Residual[k])
	}
	return room
}

// addFillings adds filling columns, skipping those already present.
func (m *master) addFillings(ctx context.Context, fs []filling) error {
	var b colBatch
	for _, f := range fs {
		if len(f.counts) == 0 {
			continue
		}
		key := fillingKey(f.node, f.counts)
		if _, ok := m.colOf[key]; ok {
			continue
		}
		m.colOf[key] = len(m.cols) + len(b.cols)
		b.keys = append(b.keys, key)
		var rows []int
		var vals []float64
		for _, uc := range f.counts {
			rows, vals = append(rows, m.groups[uc.mg].row), append(vals, float64(uc.n))
			rows, vals = m.zoneEntries(uc.mg, m.c.Nodes[f.node].Zone, uc.n, rows, vals)
		}
		rows, vals = append(rows, m.runRow[f.node]), append(vals, 1)
		// No upper bound of its own: the convexity row caps it, and so carries the node's price as its dual.
		b.add(0, 0, highs.Inf, rows, vals, column{kind: colRunning, node: f.node, counts: f.counts})
	}
	return m.flush(ctx, &b)
}

// seedFillings gives every running node, as the LP switches to whole fillings, the whole part of its per-group
// LP solution x and the warm plan's filling, so the first LP over fillings starts near the per-group one. (Each
// node's fullest single-group fillings as well made that LP six times slower, 240 ms against 40 ms on existing
// with 5,000 pods, for no better bound.)
func (m *master) seedFillings(ctx context.Context, warm *model.Plan, x []float64) error {
	var fs []filling
	for _, e := range m.running {
		var whole []unitCount
		for _, i := range m.onNode[e] {
			if j := m.nodeCol[[2]int{e, i}]; j < len(x) {
				if n := int(math.Floor(x[j] + 1e-6)); n > 0 {
					whole = append(whole, unitCount{i, n})
				}
			}
		}
		if len(whole) > 0 && m.fits(e, whole) {
			fs = append(fs, filling{e, whole})
		}
	}
	if warm != nil {
		for _, ep := range warm.Existing {
			if _, ok := m.runRow[ep.Node]; !ok {
				continue
			}
			var uc []unitCount
			for _, gc := range ep.Pods {
				i, ok := m.mgOf[gc.Group]
				if !ok || gc.Count%m.groups[i].ppu != 0 {
					continue
				}
				if _, ok := m.nodeCol[[2]int{ep.Node, i}]; ok {
					uc = append(uc, unitCount{i, gc.Count / m.groups[i].ppu})
				}
			}
			sort.Slice(uc, func(a, b int) bool { return uc[a].mg < uc[b].mg })
			fs = append(fs, filling{ep.Node, uc})
		}
	}
	return m.addFillings(ctx, fs)
}

// fits reports whether counts fit running node e's free room.
func (m *master) fits(e int, counts []unitCount) bool {
	room := m.nodeRoom(e)
	for _, uc := range counts {
		for k := range room {
			room[k] -= int64(uc.n) * m.groups[uc.mg].req[k]
			if room[k] < 0 {
				return false
			}
		}
	}
	return true
}

// nodeKnapsack is one running node's filling knapsack in a round (priceFillings).
type nodeKnapsack struct {
	items      []item
	best       []int
	val, upper float64 // the best filling's value and the bound on any, both above the convexity price
	done       bool
}

// priceFillings prices every running node's best whole filling at the LP's duals y: a knapsack over the node's
// free room with each group's unit valued at its demand and zone rows' duals, against the node's convexity dual.
// It returns the fillings with a negative reduced cost, and gap, the most by which the fillings not in the LP
// could lower it (sum over nodes of the knapsack's upper bound above the convexity dual's price): the full LP is
// at least the restricted one minus gap. As for classes, when the search finds no filling HiGHS bounds (and
// solves) the knapsacks it left open, within opts' exact-pricing budget. complete is false when the deadline
// stopped it before every node.
func (m *master) priceFillings(ctx context.Context, y []float64, opts Options, until time.Time) (fs []filling, gap float64, complete bool) {
	nodes := m.running
	conflict := m.conflictSets()
	out := m.nodeKnapsacks.knapsacks(y, len(nodes))
	var next atomic.Int64
	safe.Workers(runtime.GOMAXPROCS(0), func() { // a panic in a worker is raised again here
		for {
			a := int(next.Add(1) - 1)
			if a >= len(nodes) || time.Now().After(until) {
				return
			}
			e := nodes[a]
			r := &out[a]
			if r.done {
				continue // priced these duals already (pricingMemo)
			}
			if opts.beforePricing != nil {
				opts.beforePricing("node")
			}
			for _, i := range m.onNode[e] {
				if w := m.unitValue(i, m.c.Nodes[e].Zone, y); w > 1e-12 {
					r.items = append(r.items, item{g: i, w: w, req: m.groups[i].req, max: min(m.groups[i].maxUnits, m.groups[i].units)})
				}
			}
			linkClashes(r.items, conflict)
			// A filling's reduced cost is 0 - (its units' value) - y[convexity row]; the row is <= 1, so its
			// dual is <= 0 and prices the node's room.
			conv := -y[m.runRow[e]]
			var val, upper float64
			r.best, val, upper = knapsack(r.items, m.nodeRoom(e), max(50, 32000/max(8, len(r.items))), conv, byDensity)
			r.val, r.upper, r.done = val-conv, upper-conv, true
		}
	})
	eps := func(a int) float64 { return 1e-7 * math.Max(1, -y[m.runRow[nodes[a]]]) }
	found := false
	for a := range out {
		found = found || (out[a].done && out[a].val > eps(a))
	}
	if !found {
		exactUntil := time.Now().Add(opts.ExactPricingBudget)
		for a := range out {
			r := &out[a]
			if !r.done || r.upper <= 1e-9 || !time.Now().Before(exactUntil) || !time.Now().Before(until) {
				continue
			}
			conv := -y[m.runRow[nodes[a]]]
			room := m.nodeRoom(nodes[a])
			// The search's bound is already about the knapsack's LP relaxation, which stays above the whole
			// optimum on these small rooms: only the integer solve closes it.
			if b, v, u, ok := exactKnapsack(ctx, r.items, room, opts.ExactPricingLimit, false, conv); ok {
				if v-conv > r.val {
					r.best, r.val = b, v-conv
				}
				r.upper = math.Min(r.upper, u-conv)
			}
		}
	}
	complete = true
	for a := range out {
		r := &out[a]
		if !r.done {
			complete = false
			continue
		}
		gap += math.Max(0, r.upper)
		if r.val <= eps(a) {
			continue
		}
		f := filling{node: nodes[a]}
		for b, n := range r.best {
			if n > 0 {
				f.counts = append(f.counts, unitCount{r.items[b].g, n})
			}
		}
		sort.Slice(f.counts, func(a, b int) bool { return f.counts[a].mg < f.counts[b].mg })
		if _, dup := m.colOf[fillingKey(f.node, f.counts)]; !dup {
			fs = append(fs, f)
		}
	}
	return fs, gap, complete
}

// holdNodeCols holds the running nodes' per-group columns at zero, so the LP covers running nodes with whole
// fillings only.
func (m *master) holdNodeCols(ctx context.Context) error {
	var cols []int
	for j, col := range m.cols {
		if col.kind == colNode {
			cols = append(cols, j)
		}
	}
	m.nodeColsHeld = true
	return m.inst.SetColsBounds(ctx, cols, make([]float64, len(cols)), make([]float64, len(cols)))
}

// holdPatternsFrom holds the new-node patterns from column from on (those priced at the fillings' duals) that
// the last LP solution x does not use at zero, so the integer master searches about the per-group LP's patterns,
// as before the fillings; a start plan that uses one frees it again (addWarm). On existing/kwok/100 the extra
// patterns kept HiGHS from finishing the integer master in the second it had ($1.3049/h), where without them it
// proves $1.2805/h optimal over its columns. from < 0 holds none.
func (m *master) holdPatternsFrom(ctx context.Context, from int, x []float64) error {
	if from < 0 {
		return nil
	}
	var cols []int
	for j := from; j < len(m.cols); j++ {
		if m.cols[j].kind == colPattern && (j >= len(x) || x[j] <= 1e-9) {
			cols = append(cols, j)
			m.cols[j].hi = 0
		}
	}
	return m.inst.SetColsBounds(ctx, cols, make([]float64, len(cols)), make([]float64, len(cols)))
}

// endFillings hands running nodes back to their per-group columns once column generation is over: the filling
// columns are held at zero and the per-group ones freed, and x, the last LP solution, is restated in the
// per-group columns. A node whose LP solution is mostly (half or more) one filling takes that filling whole,
// which the rounding then keeps; otherwise its fillings' mix is spread over its per-group columns.
func (m *master) endFillings(ctx context.Context, x []float64) ([]float64, error) {
	held := m.nodeColsHeld
	m.fillings, m.nodeColsHeld = false, false
	if !held {
		// Column generation never left the per-group columns: nothing to hand back. (Resetting their bounds
		// anyway makes HiGHS drop its basis, and the dive's first LP then starts from nothing.)
		return x, nil
	}
	var cols []int
	var lo, hi []float64
	for j := range m.cols {
		switch col := &m.cols[j]; col.kind {
		case colNode:
			cols, lo, hi = append(cols, j), append(lo, 0), append(hi, col.hi)
		case colRunning:
			col.hi = 0
			cols, lo, hi = append(cols, j), append(lo, 0), append(hi, 0)
		}
	}
	if err := m.inst.SetColsBounds(ctx, cols, lo, hi); err != nil {
		return nil, err
	}
	if x == nil {
		return nil, nil
	}
	out := append([]float64(nil), x...)
	major := map[int]int{} // running node -> its filling of half or more
	for j, col := range m.cols {
		if col.kind == colRunning && j < len(x) && x[j] >= 0.5-1e-9 {
			major[col.node] = j
		}
	}
	for j, col := range m.cols {
		if col.kind != colRunning || j >= len(x) {
			continue
		}
		share := x[j]
		if mj, ok := major[col.node]; ok && mj == j {
			share = 1
		} else if ok {
			share = 0
		}
		for _, uc := range col.counts {
			out[m.nodeCol[[2]int{col.node, uc.mg}]] += share * float64(uc.n)
		}
		out[j] = 0
	}
	return out, nil
}
