package mip

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
	"github.com/packwright/packwright/solver/internal/safe"
)

// mgroup is an active pod group in master units. A co-located group is one unit of all its pods.
type mgroup struct {
	g        int      // index into prep.Problem.Groups
	units    int      // demand in units
	ppu      int      // pods per unit
	req      prep.Vec // resources of one unit
	maxUnits int      // most units on one node
	row      int      // demand row
}

type colKind int

const (
	colSlack   colKind = iota // unplaced units of a group
	colRowSlk                 // slack of a zone row
	colNode                   // units of a group on an existing node
	colPattern                // new nodes of one pattern
	colRunning                // a whole filling of one running node (column generation only; see running.go)
)

type unitCount struct{ mg, n int }

type column struct {
	hi     float64 // upper bound
	kind   colKind
	mg     int         // colSlack, colNode
	node   int         // colNode, colRunning
	class  int         // colPattern
	counts []unitCount // colPattern, colRunning
}

// zoneRow is a zone rule row of one group: +1 for pods in zone plus, -1 for zone minus (-1: none).
type zoneRow struct {
	row, mg, plus, minus int
	floor                bool // the row has a lower bound above zero (zoneBox)
}

// zoneBox states a zone spread of maxSkew 1 as a range of pods per zone: with T pods of the group in its k zones
// (bound and pending), every zone ends with floor(T/k) or floor(T/k)+1 of them, so the pending pods in zone z
// number between lo[z] and hi[z]. In whole numbers that is the pairwise rule exactly; in the LP it is tighter
// (the pairwise rows allow 1.8, 1.4 and 0.8 of 4 pods) and it is k rows instead of k(k-1). ok is false for
// other skews, and when a zone's bound pods already exceed the range (the pairwise rows and their slack then
// say how far).
func zoneBox(g *prep.Group) (lo, hi map[int]float64, ok bool) {
	l, h, ok := g.ZoneRange()
	if !ok {
		return nil, nil, false
	}
	lo, hi = make(map[int]float64, len(l)), make(map[int]float64, len(h))
	for z := range l {
		lo[z], hi[z] = float64(l[z]), float64(h[z])
	}
	return lo, hi, true
}

type poolRow struct{ row, pool, k int }

type master struct {
	c        *prep.Problem
	groups   []mgroup
	classes  []class
	inst     *highs.Instance
	cols     []column
	nrows    int
	nodeRows map[[2]int]int // (node, resource) -> row
	zoneRows []zoneRow
	// zoneSpan[i] is the range of zoneRows that belong to mgroup i (they are added group by group): scanning
	// every zone row per pattern entry was quadratic, 0.6 s of a 1 s decision on 50,000 spread pods.
	zoneSpan [][2]int
	poolRows []poolRow
	// rowLo and rowHi are the bounds of the rows build adds (the zone rows' are what zoneFluidBound and
	// shapeBound need).
	rowLo, rowHi []float64
	mgOf         map[int]int    // prep group -> mgroup
	penalty      float64        // cost of leaving one unit unplaced
	zones        bool           // zones matter (some group has zone rules)
	fixed        []int          // the columns whose lower bound fixBulk raised
	colOf        map[string]int // pattern key -> column
	nodeCol      map[[2]int]int // (existing node, mgroup) -> column
	// runRow maps each running node that some group may use to its convexity row: while fillings is set, column
	// generation covers running nodes with colRunning columns instead of colNode ones (running.go).
	runRow   map[int]int
	running  []int         // the running nodes with a convexity row, in order
	onNode   map[int][]int // running node -> the mgroups with a column there, in order
	fillings bool
	// repackWide caps every repack slot at the dearest node of its zone rather than at its own node (parts.go).
	repackWide bool
	// nodeColsHeld says the per-group columns of running nodes are held at zero (holdNodeCols).
	nodeColsHeld bool
	// seeds[ci] is the best pattern priced for class ci in the last round (without residents): the duals move
	// little between rounds, so a local search from it finds columns the knapsack search misses.
	seeds [][]unitCount
	// classKnapsacks and nodeKnapsacks are the last pricing round's knapsacks (price, priceFillings), kept with
	// the duals they priced.
	classKnapsacks pricingMemo[classKnapsack]
	nodeKnapsacks  pricingMemo[nodeKnapsack]
}

// pricingMemo keeps one pricing step's knapsacks with the duals they priced, so that pricing the same duals
// again (Solve does, with more time for exact solves, when a round finds no column) goes on from them instead of
// searching and proving every knapsack again: on existing/kwok/1000 the running nodes' knapsacks were proved
// up to three times over, and its pricing fell from 385 ms to 190 ms of the decision.
type pricingMemo[T any] struct {
	y   []float64
	out []T
}

// knapsacks returns n knapsacks for duals y: the ones kept when they priced y, else new ones.
func (pm *pricingMemo[T]) knapsacks(y []float64, n int) []T {
	if len(pm.out) != n || !slices.Equal(pm.y, y) {
		pm.y = append(pm.y[:0], y...)
		pm.out = make([]T, n)
	}
	return pm.out
}

// classKnapsack is one class's pricing knapsack in a round (price).
type classKnapsack struct {
	items                []item
	best                 []int
	val, upper, constant float64
	target               float64 // the value a pattern must beat to price out: the class's price less constant
	done                 bool
}

// open gives m its HiGHS instance, with presolve off (column generation re-solves the LP from its last basis,
// which presolve would throw away; the integer master turns it on), and builds the master LP in it. The caller
// releases m.inst; when building fails, open has released it.
func (m *master) open(ctx context.Context) error {
	inst, err := highs.New(ctx, highs.Options{Presolve: "off"})
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	m.inst = inst
	if err := m.build(ctx); err != nil {
		inst.Release()
		m.inst = nil
		return fmt.Errorf("build: %w", err)
	}
	return nil
}

func newMaster(ctx context.Context, c *prep.Problem) (*master, error) {
	m := &master{c: c, nodeRows: map[[2]int]int{}, mgOf: map[int]int{}, colOf: map[string]int{}, nodeCol: map[[2]int]int{}}
	var active []int
	for gi := range c.Groups {
		g := &c.Groups[gi]
		if g.Impossible != "" || g.Demand == 0 {
			continue
		}
		mg := mgroup{g: gi, units: g.Demand, ppu: 1, req: g.Req, maxUnits: g.Demand}
		if g.CoLocate {
			mg.units, mg.ppu, mg.maxUnits = 1, g.Demand, 1
			mg.req = make(prep.Vec, len(g.Req))
			for k := range g.Req {
				mg.req[k] = g.Req[k] * int64(g.Demand)
			}
		} else if g.Cap >= 0 && g.Cap < mg.maxUnits {
			mg.maxUnits = g.Cap
		}
		if g.ZoneSkew > 0 || g.ZoneCap > 0 {
			m.zones = true
		}
		m.mgOf[gi] = len(m.groups)
		m.groups = append(m.groups, mg)
		active = append(active, gi)
	}
	classes, err := buildClasses(ctx, c, active)
	if err != nil {
		return nil, err
	}
	m.classes = classes
	m.setResidents()
	maxPrice := 0.0
	for _, o := range c.Offerings {
		maxPrice = math.Max(maxPrice, o.Price)
	}
	m.penalty = 10*maxPrice + 1
	// Placing a unit must stay cheaper than leaving it out, weight penalty included.
	for _, mg := range m.groups {
		if n := len(c.Groups[mg.g].Weights); n > 1 {
			m.penalty = math.Max(m.penalty, 10*maxPrice+1+2*float64(mg.ppu*(n-1))*c.WeightUnit)
		}
	}
	return m, nil
}

// setResidents gives each class of offerings with resident pods those pods in master units, and the room left
// beside them. A class whose residents cannot all be expressed (part of a co-located group, more than one node
// may hold, a group the offering does not suit, or more than fits) gets none: the MIP may then move them, which
// consolidation notices and repairs.
func (m *master) setResidents() {
	c := m.c
	for ci := range m.classes {
		cl := &m.classes[ci]
		src := c.Src.Offerings[c.Offerings[cl.rep].Index].Resident
		if len(src) == 0 {
			continue
		}
		free := append(prep.Vec(nil), cl.alloc...)
		var units []unitCount
		ok := true
		for _, gc := range src {
			i, active := m.mgOf[gc.Group]
			if !active || gc.Count%m.groups[i].ppu != 0 || !slices.Contains(cl.groups, gc.Group) {
				ok = false
				break
			}
			n := gc.Count / m.groups[i].ppu
			if n > m.groups[i].maxUnits {
				ok = false
				break
			}
			units = append(units, unitCount{i, n})
			for k := range free {
				free[k] -= int64(n) * m.groups[i].req[k]
			}
		}
		for _, v := range free {
			if v < 0 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		sort.Slice(units, func(a, b int) bool { return units[a].mg < units[b].mg })
		cl.resident, cl.free = units, free
	}
}

// knapsackRoom is the room the pricing knapsack of class ci fills: beside its residents, if any.
func (m *master) knapsackRoom(ci int) prep.Vec {
	if cl := &m.classes[ci]; cl.resident != nil {
		return cl.free
	}
	return m.classes[ci].alloc
}

// withResidents merges class ci's residents into a pattern's counts (sorted by mgroup).
func (m *master) withResidents(ci int, counts []unitCount) []unitCount {
	res := m.classes[ci].resident
	if len(res) == 0 {
		return counts
	}
	out := append([]unitCount(nil), counts...)
	for _, r := range res {
		if j := slices.IndexFunc(out, func(u unitCount) bool { return u.mg == r.mg }); j >= 0 {
			out[j].n += r.n
		} else {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].mg < out[b].mg })
	return out
}

// holdsResidents reports whether counts (sorted by mgroup) hold class ci's residents.
func (m *master) holdsResidents(ci int, counts []unitCount) bool {
	for _, r := range m.classes[ci].resident {
		j := slices.IndexFunc(counts, func(u unitCount) bool { return u.mg == r.mg })
		if j < 0 || counts[j].n < r.n {
			return false
		}
	}
	return true
}

func (m *master) addRow() int { m.nrows++; return m.nrows - 1 }

// build passes the rows and the slack columns to HiGHS.
func (m *master) build(ctx context.Context) error {
	c := m.c
	var lower, upper []float64
	row := func(lo, hi float64) int {
		lower, upper = append(lower, lo), append(upper, hi)
		return m.addRow()
	}
	for i := range m.groups {
		m.groups[i].row = row(float64(m.groups[i].units), highs.Inf)
	}
	for i, mg := range m.groups {
		for _, e := range c.Groups[mg.g].Nodes {
			for k := range c.Res {
				if mg.req[k] == 0 {
					continue
				}
				key := [2]int{e, k}
				if _, ok := m.nodeRows[key]; !ok {
					m.nodeRows[key] = row(-highs.Inf, math.Max(0, float64(c.Nodes[e].Residual[k])))
				}
			}
		}
		g := &c.Groups[mg.g]
		first := len(m.zoneRows)
		if lo, hi, ok := zoneBox(g); ok {
			for _, z := range g.Zones {
				m.zoneRows = append(m.zoneRows, zoneRow{row: row(lo[z], hi[z]), mg: i, plus: z, minus: -1, floor: lo[z] > 0})
			}
		} else if g.ZoneSkew > 0 {
			for _, a := range g.Zones {
				for _, b := range g.Zones {
					if a != b {
						rhs := float64(g.ZoneSkew - (g.ZoneBase[a] - g.ZoneBase[b]))
						m.zoneRows = append(m.zoneRows, zoneRow{row: row(-highs.Inf, rhs), mg: i, plus: a, minus: b})
					}
				}
			}
		}
		if g.ZoneCap > 0 {
			for _, z := range g.Zones {
				m.zoneRows = append(m.zoneRows, zoneRow{row: row(-highs.Inf, float64(g.ZoneCap-g.ZoneBase[z])), mg: i, plus: z, minus: -1})
			}
		}
		m.zoneSpan = append(m.zoneSpan, [2]int{first, len(m.zoneRows)})
	}
	for pi, p := range c.Pools {
		for k, l := range p.Limit {
			if l >= 0 {
				m.poolRows = append(m.poolRows, poolRow{row: row(-highs.Inf, float64(l)), pool: pi, k: k})
			}
		}
	}
	// A limited class (offerings with a MaxCount) launches at most its limit of nodes, over all its patterns.
	for ci := range m.classes {
		if cl := &m.classes[ci]; cl.limit > 0 {
			cl.limitRow = row(-highs.Inf, float64(cl.limit))
		}
	}
	// One convexity row per running node: its fillings add up to at most one.
	m.runRow, m.onNode = map[int]int{}, map[int][]int{}
	for _, mg := range m.groups {
		for _, e := range c.Groups[mg.g].Nodes {
			if _, ok := m.runRow[e]; !ok {
				m.runRow[e] = row(-highs.Inf, 1)
				m.running = append(m.running, e)
			}
		}
	}
	sort.Ints(m.running)
	m.fillings = len(m.running) > 0
	m.rowLo, m.rowHi = lower, upper
	if err := m.inst.Pass(ctx, &highs.Model{RowLower: lower, RowUpper: upper, RowStart: make([]int, len(lower)+1)}); err != nil {
		return err
	}
	// Slack columns: unplaced units, and zone-row slack, at the penalty, so the master is always feasible.
	var b colBatch
	for i, mg := range m.groups {
		b.add(m.penalty, 0, float64(mg.units), []int{mg.row}, []float64{1}, column{kind: colSlack, mg: i})
	}
	for _, zr := range m.zoneRows {
		b.add(m.penalty, 0, highs.Inf, []int{zr.row}, []float64{-1}, column{kind: colRowSlk, mg: zr.mg})
		if zr.floor {
			b.add(m.penalty, 0, highs.Inf, []int{zr.row}, []float64{1}, column{kind: colRowSlk, mg: zr.mg})
		}
	}
	for i, mg := range m.groups {
		for _, e := range c.Groups[mg.g].Nodes {
			rows, vals := []int{mg.row}, []float64{1}
			for k := range c.Res {
				if mg.req[k] > 0 {
					rows, vals = append(rows, m.nodeRows[[2]int{e, k}]), append(vals, float64(mg.req[k]))
				}
			}
			rows, vals = m.zoneEntries(i, c.Nodes[e].Zone, 1, rows, vals)
			m.nodeCol[[2]int{e, i}] = len(m.cols) + len(b.cols)
			m.onNode[e] = append(m.onNode[e], i)
			b.add(0, 0, float64(min(mg.maxUnits, mg.units)), rows, vals, column{kind: colNode, mg: i, node: e})
		}
	}
	return m.flush(ctx, &b)
}

// zoneEntries appends the zone rows' coefficients for n units of group i in zone z.
func (m *master) zoneEntries(i, z int, n int, rows []int, vals []float64) ([]int, []float64) {
	if z < 0 {
		return rows, vals
	}
	per := float64(n * m.groups[i].ppu)
	for _, zr := range m.groupZoneRows(i) {
		if zr.plus == z {
			rows, vals = append(rows, zr.row), append(vals, per)
		} else if zr.minus == z {
			rows, vals = append(rows, zr.row), append(vals, -per)
		}
	}
	return rows, vals
}

// groupZoneRows returns the zone rows of mgroup i (none before build).
func (m *master) groupZoneRows(i int) []zoneRow {
	if i >= len(m.zoneSpan) {
		return nil
	}
	sp := m.zoneSpan[i]
	return m.zoneRows[sp[0]:sp[1]]
}

// colBatch gathers columns for one AddCols call.
type colBatch struct {
	cost, lo, hi []float64
	start, index []int
	value        []float64
	cols         []column
	keys         []string // the columns' m.colOf keys, registered as the batch is made and dropped if it fails
}

func (b *colBatch) add(cost, lo, hi float64, rows []int, vals []float64, col column) {
	if len(b.start) == 0 {
		b.start = []int{0}
	}
	b.cost, b.lo, b.hi = append(b.cost, cost), append(b.lo, lo), append(b.hi, hi)
	b.index, b.value = append(b.index, rows...), append(b.value, vals...)
	b.start = append(b.start, len(b.index))
	col.hi = hi
	b.cols = append(b.cols, col)
}

func (m *master) flush(ctx context.Context, b *colBatch) error {
	if len(b.cols) == 0 {
		return nil
	}
	if err := m.inst.AddCols(ctx, b.cost, b.lo, b.hi, b.start, b.index, b.value, false); err != nil {
		// Keys left behind would name columns that do not exist: callers that go on after a failed addition
		// (a warm start is only a start) then indexed past m.cols.
		for _, k := range b.keys {
			delete(m.colOf, k)
		}
		return err
	}
	m.cols = append(m.cols, b.cols...)
	return nil
}

// patternEntries are the rows of one new node of class ci holding counts.
func (m *master) patternEntries(ci int, counts []unitCount) ([]int, []float64) {
	cl := &m.classes[ci]
	var rows []int
	var vals []float64
	for _, uc := range counts {
		rows, vals = append(rows, m.groups[uc.mg].row), append(vals, float64(uc.n))
		rows, vals = m.zoneEntries(uc.mg, cl.zone, uc.n, rows, vals)
	}
	for _, pr := range m.poolRows {
		if pr.pool == cl.pool && cl.capacity[pr.k] != 0 {
			rows, vals = append(rows, pr.row), append(vals, float64(cl.capacity[pr.k]))
		}
	}
	if cl.limit > 0 {
		rows, vals = append(rows, cl.limitRow), append(vals, 1)
	}
	return rows, vals
}

// pricingTol is how far below zero a pattern's reduced cost must be to price out. HiGHS's dual feasibility
// tolerance (1e-7) is absolute: on a cheap class (mixed/aws/5000: $0.039/h) a column already in the LP showed
// -8.6e-8, was priced again every round and column generation stalled on it until its time ran out.
func pricingTol(price float64) float64 { return 1e-7 * math.Max(1, price) }

// unseen drops the patterns that already have a column: the LP would not change, nor would the next round's
// duals, and column generation would go round in circles.
func (m *master) unseen(ps []pattern) []pattern {
	out := ps[:0]
	for _, p := range ps {
		if _, ok := m.colOf[patternKey(p.class, p.counts)]; !ok {
			out = append(out, p)
		}
	}
	return out
}

func patternKey(ci int, counts []unitCount) string {
	b := make([]byte, 0, 8+8*len(counts))
	b = appendInt(b, ci)
	for _, uc := range counts {
		b = append(b, ':')
		b = appendInt(b, uc.mg)
		b = append(b, '=')
		b = appendInt(b, uc.n)
	}
	return string(b)
}

func appendInt(b []byte, v int) []byte {
	if v == 0 {
		return append(b, '0')
	}
	var d [20]byte
	i := len(d)
	for v > 0 {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[i:]...)
}

type pattern struct {
	class  int
	counts []unitCount
}

// addPatterns adds new pattern columns (skipping ones already present) and returns their column indices.
func (m *master) addPatterns(ctx context.Context, ps []pattern) error {
	var b colBatch
	for _, p := range ps {
		key := patternKey(p.class, p.counts)
		if _, ok := m.colOf[key]; ok {
			continue
		}
		m.colOf[key] = len(m.cols) + len(b.cols)
		b.keys = append(b.keys, key)
		rows, vals := m.patternEntries(p.class, p.counts)
		b.add(m.patternCost(p.class, p.counts), 0, highs.Inf, rows, vals, column{kind: colPattern, class: p.class, counts: p.counts})
	}
	return m.flush(ctx, &b)
}

// patternCost is a pattern column's objective: the class's price plus the weight penalty of its pods
// (prep.WeightPenalty; none unless the pools differ in weight).
func (m *master) patternCost(ci int, counts []unitCount) float64 {
	cl := &m.classes[ci]
	cost := cl.price
	if m.c.Tiered {
		for _, uc := range counts {
			cost += float64(uc.n*m.groups[uc.mg].ppu) * m.unitPenalty(uc.mg, ci)
		}
	}
	return cost
}

// unitPenalty is the weight penalty of one pod of mgroup i on a node of class ci.
func (m *master) unitPenalty(i, ci int) float64 {
	if !m.c.Tiered {
		return 0
	}
	return m.c.WeightPenalty(m.groups[i].g, m.classes[ci].rep)
}

// addSingles seeds, for every group, its fullest single-group node on the few classes cheapest per pod, so every
// group can be covered from the first LP on without flooding it with columns.
func (m *master) addSingles(ctx context.Context) error {
	const perGroup = 12
	type single struct {
		class, n int
		perPod   float64
	}
	byGroup := make([][]single, len(m.groups))
	var ps []pattern
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.resident != nil {
			// Keeping the node as it is: its residents and nothing else.
			ps = append(ps, pattern{class: ci, counts: cl.resident})
			continue
		}
		if cl.dominated {
			continue
		}
		for _, g := range cl.groups {
			i := m.mgOf[g]
			it := item{max: min(m.groups[i].maxUnits, m.groups[i].units), req: m.groups[i].req}
			if n := maxFit(&it, cl.alloc); n > 0 {
				// Price per unit placed, as if the group filled the remaining demand with this class.
				nodes := (m.groups[i].units + n - 1) / n
				perPod := cl.price*float64(nodes)/float64(m.groups[i].units) + float64(m.groups[i].ppu)*m.unitPenalty(i, ci)
				byGroup[i] = append(byGroup[i], single{ci, n, perPod})
			}
		}
	}
	for i, ss := range byGroup {
		sort.Slice(ss, func(a, b int) bool { return ss[a].perPod < ss[b].perPod })
		for _, s := range ss[:min(perGroup, len(ss))] {
			ps = append(ps, pattern{class: s.class, counts: []unitCount{{i, s.n}}})
		}
	}
	return m.addPatterns(ctx, ps)
}

// addWarm adds the greedy plan's nodes as patterns and returns the plan as a start (column -> value). whole is
// false when some of its nodes are left out: a node of an offering with residents that does not hold them has no
// column, and its pods count as unplaced in the start.
func (m *master) addWarm(ctx context.Context, warm *model.Plan) (start map[int]float64, whole bool, err error) {
	start, whole = map[int]float64{}, true
	var ps []pattern
	counts := map[string]int{}
	for _, nn := range warm.NewNodes {
		var uc []unitCount
		usage := make(prep.Vec, len(m.c.Res))
		ok := true
		for _, gc := range nn.Pods {
			i, active := m.mgOf[gc.Group]
			if !active || gc.Count%m.groups[i].ppu != 0 {
				ok = false
				break
			}
			n := gc.Count / m.groups[i].ppu
			uc = append(uc, unitCount{i, n})
			for k := range usage {
				usage[k] += int64(n) * m.groups[i].req[k]
			}
		}
		if !ok || len(uc) == 0 {
			continue
		}
		sort.Slice(uc, func(a, b int) bool { return uc[a].mg < uc[b].mg })
		ci := m.classFor(uc, usage, m.c.Offerings[nn.Offering].Zone, m.c.Offerings[nn.Offering].Pool, nn.Offering)
		if !m.holdsResidents(ci, uc) {
			whole = false
			continue
		}
		key := patternKey(ci, uc)
		if _, dup := counts[key]; !dup {
			ps = append(ps, pattern{class: ci, counts: uc})
		}
		counts[key]++
	}
	if err := m.addPatterns(ctx, ps); err != nil {
		return nil, false, err
	}
	// Existing-node placements and what is left unplaced.
	placed := make([]int, len(m.groups))
	var held []int
	for key, n := range counts {
		j, ok := m.colOf[key] // the column, whether added now or generated before
		if !ok {
			continue
		}
		if m.cols[j].hi == 0 { // held out of the integer master (holdPatternsFrom): the start needs it
			m.cols[j].hi = highs.Inf
			held = append(held, j)
		}
		start[j] = float64(n)
		for _, uc := range m.cols[j].counts {
			placed[uc.mg] += uc.n * n
		}
	}
	for _, ep := range warm.Existing {
		for _, gc := range ep.Pods {
			i, ok := m.mgOf[gc.Group]
			if !ok {
				continue
			}
			if j, ok := m.nodeCol[[2]int{ep.Node, i}]; ok {
				start[j] += float64(gc.Count / m.groups[i].ppu)
				placed[i] += gc.Count / m.groups[i].ppu
			}
		}
	}
	for j, col := range m.cols {
		if col.kind == colSlack {
			if left := m.groups[col.mg].units - placed[col.mg]; left > 0 {
				start[j] = float64(left)
			}
		}
	}
	if len(held) > 0 {
		inf := make([]float64, len(held))
		for i := range inf {
			inf[i] = highs.Inf
		}
		if err := m.inst.SetColsBounds(ctx, held, make([]float64, len(held)), inf); err != nil {
			return nil, false, err
		}
	}
	return start, whole, nil
}

// classFor picks the cheapest class that can hold the pattern (same zone/pool when they matter); when none can,
// it adds a class for the warm plan's own offering.
func (m *master) classFor(uc []unitCount, usage prep.Vec, zone, pool, offering int) int {
	// A node of a limited offering counts against its own class's limit, whatever is cheaper.
	if m.c.Src.Offerings[m.c.Offerings[offering].Index].MaxCount > 0 {
		for ci := range m.classes {
			if slices.Contains(m.classes[ci].members, offering) {
				return ci
			}
		}
	}
	best, bestPrice := -1, math.Inf(1)
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.limit > 0 || cl.price >= bestPrice || (cl.zone >= 0 && cl.zone != zone) || (cl.pool >= 0 && cl.pool != pool) ||
			cl.weight != m.c.Offerings[offering].Weight || !usage.Fits(cl.alloc) {
			continue
		}
		all := true
		for _, u := range uc {
			if !m.c.Groups[m.groups[u.mg].g].OfferingOK[cl.rep] {
				all = false
				break
			}
		}
		if all {
			best, bestPrice = ci, cl.price
		}
	}
	if best >= 0 {
		return best
	}
	o := &m.c.Offerings[offering]
	z, p := -1, -1
	if m.zones {
		z = o.Zone
	}
	for _, pr := range m.poolRows {
		if pr.pool == o.Pool {
			p = o.Pool
		}
	}
	m.classes = append(m.classes, class{rep: offering, price: o.Price, alloc: o.Alloc, capacity: o.Capacity, zone: z, pool: p,
		weight: o.Weight})
	return len(m.classes) - 1
}

// price runs the pricing knapsack for every class under the LP duals y. It returns patterns with negative
// reduced cost (the most negative first) and rho, a proven lower bound on min over all patterns of reduced
// cost / price (0 when none is negative; -Inf when time ran out before every class was priced).
func (m *master) price(ctx context.Context, y []float64, opts Options, until time.Time) ([]pattern, float64) {
	type cand struct {
		p  pattern
		rc float64
	}
	conflict := m.conflictSets()
	out := m.classKnapsacks.knapsacks(y, len(m.classes))
	// The knapsacks are independent: price them on every core (HiGHS is idle meanwhile). A panic in a worker
	// is raised again here, for the portfolio to fall back on greedy.
	var next atomic.Int64
	safe.Workers(runtime.GOMAXPROCS(0), func() {
		for {
			ci := int(next.Add(1) - 1)
			if ci >= len(m.classes) || time.Now().After(until) {
				return
			}
			r := &out[ci]
			if r.done {
				continue // priced these duals already (pricingMemo)
			}
			if m.classes[ci].dominated {
				r.target, r.done = m.classes[ci].price, true // a cheaper unlimited class prices every pattern lower
				continue
			}
			if opts.beforePricing != nil {
				opts.beforePricing("class")
			}
			r.items, r.constant = m.pricingItems(ci, y, conflict)
			room := m.knapsackRoom(ci)
			r.target = m.classes[ci].price - r.constant
			r.best, r.val, r.upper = knapsack(r.items, room, max(50, opts.PricingBudget*8/max(8, len(r.items))), r.target, lpFirst)
			if ci < len(m.seeds) && m.seeds[ci] != nil && r.upper > r.target+1e-9 {
				if cnt, v, ok := fromSeed(r.items, room, m.seeds[ci]); ok {
					if cnt, v = improve(r.items, room, cnt, v, densityOrder(r.items, room)); v > r.val {
						r.best, r.val, r.upper = cnt, v, math.Max(r.upper, v)
					}
				}
			}
			r.done = true
		}
	})

	// The knapsack search finds columns cheaply; HiGHS's exact pricing (slow) is worth it only once the search
	// finds none, to add the last columns and prove the bound.
	heuristicFound := false
	for ci := range m.classes {
		if r := &out[ci]; r.done && (len(r.items) > 0 || m.classes[ci].resident != nil) && m.classes[ci].price > 0 && r.target-r.val < -pricingTol(m.classes[ci].price) {
			heuristicFound = true
			break
		}
	}
	var cands []cand
	rho := 0.0
	complete := true
	exactUntil := time.Now().Add(opts.ExactPricingBudget)
	if heuristicFound {
		exactUntil = time.Time{}
	}
	priced := func(ci int) bool {
		r := &out[ci]
		return r.done && m.classes[ci].price > 0 && (len(r.items) > 0 || m.classes[ci].resident != nil)
	}
	// Where the search ran out of budget and a negative reduced cost is still possible, the LP relaxation
	// tightens the bound cheaply, and where that is not enough HiGHS solves the knapsack exactly. The class
	// with the least reduced cost per dollar sets the bound (farley), so the loosest go first while the budget
	// lasts.
	var loose []int
	for ci := range m.classes {
		if r := &out[ci]; priced(ci) && r.upper > r.val+1e-9 && r.upper > r.target {
			loose = append(loose, ci)
		}
	}
	sort.SliceStable(loose, func(a, b int) bool {
		ra, rb := &out[loose[a]], &out[loose[b]]
		return (ra.target-ra.upper)/m.classes[loose[a]].price < (rb.target-rb.upper)/m.classes[loose[b]].price
	})
	for _, ci := range loose {
		if !time.Now().Before(exactUntil) {
			break
		}
		r := &out[ci]
		room := m.knapsackRoom(ci)
		if _, _, u, ok := exactKnapsack(ctx, r.items, room, opts.ExactPricingLimit, true, r.target); ok {
			r.upper = math.Min(r.upper, u)
		}
		if r.upper > r.val+1e-9 && r.upper > r.target {
			if b, v, u, ok := exactKnapsack(ctx, r.items, room, opts.ExactPricingLimit, false, r.target); ok {
				if v > r.val {
					r.best, r.val = b, v
				}
				r.upper = math.Min(r.upper, u)
			}
		}
	}
	for ci := range m.classes {
		cl := &m.classes[ci]
		r := &out[ci]
		if !priced(ci) {
			if !r.done {
				complete = false
			}
			continue
		}
		room := m.knapsackRoom(ci)
		if x := (r.target - r.upper) / cl.price; x < rho {
			rho = x
		}
		add := func(cnt []int, v float64) {
			if rc := r.target - v; rc < -pricingTol(cl.price) {
				var uc []unitCount
				for a, n := range cnt {
					if n > 0 {
						uc = append(uc, unitCount{r.items[a].g, n})
					}
				}
				sort.Slice(uc, func(a, b int) bool { return uc[a].mg < uc[b].mg })
				cands = append(cands, cand{pattern{ci, m.withResidents(ci, uc)}, rc / cl.price})
			}
		}
		add(r.best, r.val)
		if r.val > 0 {
			if m.seeds == nil {
				m.seeds = make([][]unitCount, len(m.classes))
			}
			m.seeds[ci] = m.seeds[ci][:0]
			for a, n := range r.best {
				if n > 0 {
					m.seeds[ci] = append(m.seeds[ci], unitCount{r.items[a].g, n})
				}
			}
		}
		if r.upper <= r.target {
			continue // no pattern of this class prices out
		}
		// A few more patterns per class, each led by one of the most valuable groups, speed up convergence:
		// one column per class and round makes column generation tail off.
		for _, cnt := range diverse(r.items, room, 3) {
			v := 0.0
			for a, n := range cnt {
				v += float64(n) * r.items[a].w
			}
			add(cnt, v)
		}
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].rc < cands[b].rc })
	if len(cands) > opts.MaxColumnsPerIteration {
		cands = cands[:opts.MaxColumnsPerIteration]
	}
	pats := make([]pattern, len(cands))
	for i, cd := range cands {
		pats[i] = cd.p
	}
	if !complete {
		rho = math.Inf(-1) // out of time before every class was priced: the patterns help, the bound does not hold
	}
	return pats, rho
}

// pricingItems lists the groups of class ci with a positive dual value, and the class's constant dual cost
// (its use of NodePool limits).
func (m *master) pricingItems(ci int, y []float64, conflict [][]int) ([]item, float64) {
	cl := &m.classes[ci]
	constant := m.classDuals(ci, y)
	// value is the dual value of one unit of mgroup i on a node of the class.
	value := func(i int) float64 {
		return m.unitValue(i, cl.zone, y) - float64(m.groups[i].ppu)*m.unitPenalty(i, ci) // the pattern's cost grows by it per unit
	}
	// Residents are in every pattern of the class: their value is a constant, their room and per-node caps are
	// taken, and a group that may not share a node with them is out.
	resident := map[int]int{}
	clashesResident := map[int]bool{}
	for _, r := range cl.resident {
		constant -= float64(r.n) * value(r.mg)
		resident[r.mg] = r.n
		for _, j := range conflict[r.mg] {
			clashesResident[j] = true
		}
	}
	var items []item
	for _, g := range cl.groups {
		i := m.mgOf[g]
		if clashesResident[i] {
			continue
		}
		w := value(i)
		most := min(m.groups[i].maxUnits, m.groups[i].units) - resident[i]
		if w <= 1e-12 || most <= 0 {
			continue
		}
		items = append(items, item{g: i, w: w, req: m.groups[i].req, max: most})
	}
	linkClashes(items, conflict)
	return items, constant
}

// classDuals is the dual cost that every pattern of class ci pays whatever it holds: its use of NodePool
// limits and of the class's count limit.
func (m *master) classDuals(ci int, y []float64) float64 {
	cl := &m.classes[ci]
	d := 0.0
	for _, pr := range m.poolRows {
		if pr.pool == cl.pool {
			d += y[pr.row] * float64(cl.capacity[pr.k])
		}
	}
	if cl.limit > 0 {
		d += y[cl.limitRow]
	}
	return d
}

// linkClashes fills each item's clash list: the other items whose mgroup conflict[its mgroup] lists.
func linkClashes(items []item, conflict [][]int) {
	local := make(map[int]int, len(items))
	for a := range items {
		local[items[a].g] = a
	}
	for a := range items {
		for _, gb := range conflict[items[a].g] {
			if b, ok := local[gb]; ok {
				items[a].clash = append(items[a].clash, b)
			}
		}
	}
}

// unitValue is the dual value of one unit of mgroup i on a node in zone z (-1: zones do not matter): its demand
// row's and its zone rows' duals.
func (m *master) unitValue(i, z int, y []float64) float64 {
	w := y[m.groups[i].row]
	if z >= 0 {
		per := float64(m.groups[i].ppu)
		for _, zr := range m.groupZoneRows(i) {
			if zr.plus == z {
				w += per * y[zr.row]
			} else if zr.minus == z {
				w -= per * y[zr.row]
			}
		}
	}
	return w
}

// conflictSets maps each mgroup to the mgroups it may not share a node with.
func (m *master) conflictSets() [][]int {
	out := make([][]int, len(m.groups))
	for i, mg := range m.groups {
		for _, h := range m.c.Conflicts[mg.g] {
			if j, ok := m.mgOf[h]; ok {
				out[i] = append(out[i], j)
			}
		}
	}
	return out
}

// slackUsed reports whether the LP leaves units unplaced or breaks a zone rule, in which case its value carries
// penalties and is no bound on node cost.
func (m *master) slackUsed(x []float64) bool {
	for j, col := range m.cols {
		if (col.kind == colSlack || col.kind == colRowSlk) && j < len(x) && x[j] > 1e-6 {
			return true
		}
	}
	return false
}

func (m *master) makeInteger(ctx context.Context) error {
	flags := make([]bool, len(m.cols))
	for j, col := range m.cols {
		flags[j] = col.kind != colRowSlk
	}
	return m.inst.SetIntegrality(ctx, flags)
}

// plan turns an integer master solution into a model.Plan: units are handed out to existing nodes first, then to
// new nodes (over-covered patterns give up their surplus), and each new node is shrunk to the cheapest offering
// that still holds its pods.
func (m *master) plan(x []float64) *model.Plan {
	c := m.c
	left := make([]int, len(m.groups))
	for i, mg := range m.groups {
		left[i] = mg.units
	}
	quota := m.zoneQuotas(x)
	// take hands out up to n units of group i in zone z.
	take := func(i, z, n int) int {
		n = min(n, left[i])
		if q := quota[i]; q != nil && z >= 0 {
			n = min(n, q[z])
			q[z] -= max(n, 0)
		}
		if n > 0 {
			left[i] -= n
		}
		return n
	}
	// can reports whether n units of group i in zone z are left to hand out.
	can := func(i, z, n int) bool {
		if q := quota[i]; q != nil && z >= 0 && q[z] < n {
			return false
		}
		return left[i] >= n
	}
	plan := &model.Plan{Solver: "mip"}
	existing := map[int][]model.GroupCount{}
	for j, col := range m.cols {
		if col.kind != colNode || j >= len(x) {
			continue
		}
		if n := take(col.mg, c.Nodes[col.node].Zone, count(x[j])); n > 0 {
			existing[col.node] = append(existing[col.node], model.GroupCount{Group: m.groups[col.mg].g, Count: n * m.groups[col.mg].ppu})
		}
	}
	nodes := make([]int, 0, len(existing))
	for e := range existing {
		nodes = append(nodes, e)
	}
	sort.Ints(nodes)
	for _, e := range nodes {
		plan.Existing = append(plan.Existing, model.ExistingPlacement{Node: c.Nodes[e].Index, Pods: existing[e]})
	}
	nextMember := make([]int, len(m.classes)) // limited classes hand out their members in turn
	memberUsed := map[int]int{}
	// Residents are handed out before anything else: a surplus is given up by the other nodes, never by the pods
	// a kept node runs. reserved[j] counts the nodes of column j whose residents are set aside.
	var order []int
	reserved := map[int]int{}
	inClass := make([]int, len(m.classes))
	for pass := 0; pass < 2; pass++ {
		for j, col := range m.cols {
			if col.kind != colPattern || j >= len(x) || (m.classes[col.class].resident != nil) != (pass == 0) {
				continue
			}
			order = append(order, j)
			if cl := &m.classes[col.class]; pass == 0 {
				for r := count(x[j]); r > 0 && inClass[col.class] < cl.limit; r-- {
					if slices.ContainsFunc(cl.resident, func(u unitCount) bool { return !can(u.mg, cl.zone, u.n) }) {
						break // not all there (only when HiGHS's tolerances allow it): this node takes what is left
					}
					inClass[col.class]++
					reserved[j]++
					for _, u := range cl.resident {
						take(u.mg, cl.zone, u.n)
					}
				}
			}
		}
	}
	for _, j := range order {
		col := m.cols[j]
		cl := &m.classes[col.class]
		zone := cl.zone
		for r := count(x[j]); r > 0; r-- {
			member := -1
			if cl.limit > 0 {
				// Members in turn, each as often as its MaxCount allows.
				for nextMember[col.class] < len(cl.members) &&
					memberUsed[cl.members[nextMember[col.class]]] >= c.Src.Offerings[c.Offerings[cl.members[nextMember[col.class]]].Index].MaxCount {
					nextMember[col.class]++
				}
				if nextMember[col.class] >= len(cl.members) {
					break // beyond the limit (only when HiGHS's tolerances allow it): the pods stay unplaced
				}
				member = cl.members[nextMember[col.class]]
			}
			var pods []unitCount
			own := reserved[j] > 0 // this node's residents are set aside
			if own {
				reserved[j]--
			}
			for _, uc := range col.counts {
				n := uc.n
				if own {
					n -= residentUnits(cl, uc.mg)
				}
				n = take(uc.mg, zone, n)
				if own {
					n += residentUnits(cl, uc.mg)
				}
				if n > 0 {
					pods = append(pods, unitCount{uc.mg, n})
				}
			}
			if len(pods) == 0 {
				break
			}
			if member >= 0 {
				memberUsed[member]++
			}
			nn, price := m.newNode(col.class, member, pods)
			plan.NewNodes = append(plan.NewNodes, nn)
			plan.Cost += price
		}
	}
	for i, n := range left {
		if n > 0 {
			plan.Unschedulable = append(plan.Unschedulable, model.Unschedulable{Group: m.groups[i].g, Count: n * m.groups[i].ppu,
				Reason: "no room within the NodePools' limits and the pods' constraints"})
		}
	}
	for gi := range c.Groups {
		if g := &c.Groups[gi]; g.Impossible != "" && g.Demand > 0 {
			plan.Unschedulable = append(plan.Unschedulable, model.Unschedulable{Group: gi, Count: g.Demand, Reason: g.Impossible})
		}
	}
	return plan
}

// newNode is a plan's node of class ci (member: its limited offering, or -1) holding pods, shrunk to the
// cheapest offering that holds them, and that offering's price.
func (m *master) newNode(ci, member int, pods []unitCount) (model.NewNode, float64) {
	oi := m.shrink(ci, member, pods)
	nn := model.NewNode{Offering: m.c.Offerings[oi].Index}
	for _, uc := range pods {
		nn.Pods = append(nn.Pods, model.GroupCount{Group: m.groups[uc.mg].g, Count: uc.n * m.groups[uc.mg].ppu})
	}
	return nn, m.c.Offerings[oi].Price
}

// residentUnits is how many units of mgroup i the class's residents are.
func residentUnits(cl *class, i int) int {
	for _, u := range cl.resident {
		if u.mg == i {
			return u.n
		}
	}
	return 0
}

// zoneQuotas decides, for each group with zone rules, how many units each zone keeps when the solution covers
// more than the demand. The solution's zone rows count the surplus too; taking the surplus away one unit at a
// time from the fullest zone never widens the spread beyond max(old spread, 1), so the rules still hold.
func (m *master) zoneQuotas(x []float64) [][]int {
	c := m.c
	quota := make([][]int, len(m.groups))
	for i, mg := range m.groups {
		if g := &c.Groups[mg.g]; g.ZoneSkew > 0 || g.ZoneCap > 0 {
			quota[i] = make([]int, len(c.Zones))
		}
	}
	covered := make([]int, len(m.groups))
	for j, col := range m.cols {
		if j >= len(x) {
			break
		}
		n := count(x[j])
		switch col.kind {
		case colNode:
			covered[col.mg] += n
			if q := quota[col.mg]; q != nil && c.Nodes[col.node].Zone >= 0 {
				q[c.Nodes[col.node].Zone] += n
			}
		case colPattern:
			z := m.classes[col.class].zone
			for _, uc := range col.counts {
				covered[uc.mg] += n * uc.n
				if q := quota[uc.mg]; q != nil && z >= 0 {
					q[z] += n * uc.n
				}
			}
		}
	}
	for i, q := range quota {
		if q == nil {
			continue
		}
		base := c.Groups[m.groups[i].g].ZoneBase
		ppu := m.groups[i].ppu
		for surplus := covered[i] - m.groups[i].units; surplus > 0; surplus-- {
			best := -1
			for z := range q {
				if q[z] > 0 && (best < 0 || q[z]*ppu+base[z] > q[best]*ppu+base[best]) {
					best = z
				}
			}
			if best < 0 {
				break
			}
			q[best]--
		}
		m.enforceZoneRules(i, q)
	}
	return quota
}

// enforceZoneRules lowers group i's zone quotas q until its zone rules hold. An integer master stopped early may
// return a solution that buys its way past a rule through the zone rows' slack; the units taken away here are
// left unplaced, for the greedy to place within the rules (see completeMaster).
func (m *master) enforceZoneRules(i int, q []int) {
	g := &m.c.Groups[m.groups[i].g]
	ppu := m.groups[i].ppu
	pods := func(z int) int { return q[z]*ppu + g.ZoneBase[z] }
	if g.ZoneCap > 0 {
		for _, z := range g.Zones {
			for q[z] > 0 && pods(z) > g.ZoneCap {
				q[z]--
			}
		}
	}
	if g.ZoneSkew <= 0 || len(g.Zones) < 2 {
		return
	}
	for {
		lo, hi := g.Zones[0], -1
		for _, z := range g.Zones {
			if pods(z) < pods(lo) {
				lo = z
			}
			if q[z] > 0 && (hi < 0 || pods(z) > pods(hi)) {
				hi = z
			}
		}
		if hi < 0 || pods(hi)-pods(lo) <= g.ZoneSkew {
			return
		}
		q[hi]--
	}
}

// shrink returns the cheapest offering that holds pods, compatible with each of their groups, in the class's
// zone and pool where those matter: member (an offering of a limited class, -1 for none) or the class's
// representative, or a cheaper offering without a MaxCount (another limited offering may be in use already).
func (m *master) shrink(ci, member int, pods []unitCount) int {
	c := m.c
	cl := &m.classes[ci]
	usage := make(prep.Vec, len(c.Res))
	for _, uc := range pods {
		for k := range usage {
			usage[k] += int64(uc.n) * m.groups[uc.mg].req[k]
		}
	}
	best, bestPrice := cl.rep, cl.price
	if member >= 0 {
		best, bestPrice = member, c.Offerings[member].Price
	}
	rep := &c.Offerings[best]
	for oi := range c.Offerings {
		o := &c.Offerings[oi]
		if o.Price >= bestPrice || !usage.Fits(o.Alloc) || c.Src.Offerings[o.Index].MaxCount > 0 {
			continue
		}
		if (m.zones && o.Zone != rep.Zone) || o.Weight != rep.Weight {
			continue
		}
		if o.Pool != rep.Pool && (cl.pool >= 0 || m.limited(o.Pool)) {
			continue
		}
		ok := true
		for _, uc := range pods {
			if !c.Groups[m.groups[uc.mg].g].OfferingOK[oi] {
				ok = false
				break
			}
		}
		if ok {
			best, bestPrice = oi, o.Price
		}
	}
	return best
}

func (m *master) limited(pool int) bool {
	for _, pr := range m.poolRows {
		if pr.pool == pool {
			return true
		}
	}
	return false
}

// fixBulk raises the lower bound of every pattern and existing-node column to the floor of its LP value when the
// LP holds more than above whole new nodes. It reports whether it fixed anything.
func (m *master) fixBulk(ctx context.Context, x []float64, above int) (bool, error) {
	if above < 0 || x == nil {
		return false, nil
	}
	whole := 0
	for j, col := range m.cols {
		if col.kind == colPattern && j < len(x) {
			whole += int(math.Floor(x[j] + 1e-9))
		}
	}
	if whole <= above {
		return false, nil
	}
	// In one call, as the dive's (setLower): one call per column crosses to HiGHS's thread each time.
	lower := make([]float64, len(m.cols))
	for j, col := range m.cols {
		if j >= len(x) || (col.kind != colPattern && col.kind != colNode) {
			continue
		}
		if f := math.Floor(x[j] + 1e-9); f >= 1 {
			lower[j] = f
			m.fixed = append(m.fixed, j)
		}
	}
	if err := m.setLower(ctx, m.fixed, lower); err != nil {
		m.fixed = nil
		return false, err
	}
	return true, nil
}

// unfix lowers the bounds fixBulk raised back to 0.
func (m *master) unfix(ctx context.Context) error {
	if err := m.setLower(ctx, m.fixed, make([]float64, len(m.cols))); err != nil {
		return err
	}
	m.fixed = nil
	return nil
}
