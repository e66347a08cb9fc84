package mip

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// The compact model proves what the pattern LP cannot when a plan needs few nodes: there the LP's bound is
// several per cent below the optimum (web/kwok/100: 4 nodes, LP $0.6215/h, plan $0.639/h). It has one slot per
// new node that a plan cheaper than the incumbent could launch (per zone when zones matter), each choosing at
// most one offering class and holding whole units of the groups, beside the existing nodes' residual room.
// Every rule of the compiled problem is a row, so its optimum is the true optimum, HiGHS's dual bound on it is
// a valid lower bound even when stopped early, and "infeasible below the incumbent" proves the incumbent
// optimal.

// compactMaxCols caps the compact model's size: beyond it HiGHS rarely proves anything within a deadline of a
// second, and the pattern formulation is the better use of the time.
const compactMaxCols = 6000

// compactEps is the relative improvement the compact model must find: the incumbent's cost minus a hair is the
// cost cap, so infeasibility proves the incumbent within this of the optimum.
const compactEps = 1e-6

// slot is one possible new node of the compact model.
type slot struct {
	zone    int   // -1 when zones do not matter
	classes []int // candidate classes
	yCol    []int // column of "the slot is class classes[k]"
	xCol    []int // column of the units of mgroup i on the slot (-1: none fit)
	zCol    []int // column of "mgroup i is on the slot", for groups with conflicts (-1: none)
}

// compactHost is a running node of the compact model: its units and conflict columns per mgroup, as in slot.
type compactHost struct {
	node       int
	xCol, zCol []int
}

// compactResult is what the compact model established.
type compactResult struct {
	plan   *model.Plan // a valid plan cheaper than the incumbent, or nil
	bound  float64     // a proven lower bound on the cost of placing every unit (0: none)
	status string
	solved bool // HiGHS finished: the model is solved to optimality or infeasible
}

// compactSlots returns the slots each zone needs for plans cheaper than ub: a plan of cost below ub has fewer
// than ub/p nodes of price at least p, and no plan needs more nodes than units. It returns nil when the model
// would be too large, when weights or residents change what the cost means, or when a class is free.
func (m *master) compactSlots(ub float64) []slot {
	if ub <= 0 || !m.compactApplies() {
		return nil
	}
	units := 0
	for _, mg := range m.groups {
		units += mg.units
	}
	byZone := map[int][]int{}
	var zones []int
	for ci := range m.classes {
		cl := &m.classes[ci]
		if len(cl.groups) == 0 || cl.dominated {
			continue // a warm plan's own offering (classFor) suits no group of the master
		}
		z := -1
		if m.zones {
			z = cl.zone
		}
		if _, ok := byZone[z]; !ok {
			zones = append(zones, z)
		}
		byZone[z] = append(byZone[z], ci)
	}
	var slots []slot
	cols := 0
	for _, z := range zones {
		pmin := math.Inf(1)
		for _, ci := range byZone[z] {
			pmin = math.Min(pmin, m.classes[ci].price)
		}
		n := min(units, int(math.Floor(ub/pmin*(1+1e-9))))
		for s := range n {
			// The slots of a zone launch in order of decreasing price, so the s-th costs at most ub/(s+1).
			var cls []int
			for _, ci := range byZone[z] {
				if m.classes[ci].price*float64(s+1) <= ub*(1+1e-9) {
					cls = append(cls, ci)
				}
			}
			cols += len(cls) + len(m.groups)
			if cols > compactMaxCols {
				return nil
			}
			slots = append(slots, slot{zone: z, classes: cls})
		}
	}
	return slots
}

// compactApplies reports whether a compact model over m's classes means what it should: no NodePool weights
// and no residents change what the cost means, and no class that suits a group is free (the slot count
// argument, and a repack's cost cap, need positive prices).
func (m *master) compactApplies() bool {
	if m.c.Tiered {
		return false
	}
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.resident != nil || cl.free != nil || (len(cl.groups) > 0 && !cl.dominated && cl.price <= 0) {
			return false
		}
	}
	return true
}

// fit is the most units of mgroup i one node of class ci holds (0 when the class does not suit the group).
func (m *master) fit(i, ci int) int {
	if _, ok := slices.BinarySearch(m.classes[ci].groups, m.groups[i].g); !ok {
		return 0
	}
	return m.unitsIn(i, m.classes[ci].alloc)
}

// unitsIn is the most units of mgroup i that room holds, within the group's per-node cap and demand.
func (m *master) unitsIn(i int, room prep.Vec) int {
	mg := &m.groups[i]
	n := min(mg.units, mg.maxUnits)
	for k, r := range mg.req {
		if r > 0 {
			n = min(n, int(max(room[k], 0)/r))
		}
	}
	return max(n, 0)
}

// compactModel is the compact model built for an incumbent: the HiGHS model, its slots and running nodes, the
// start mapped from the incumbent (nil when it does not map), and the cap on the cost.
type compactModel struct {
	mod      *highs.Model
	slots    []slot
	existing []compactHost
	start    map[int]float64
	limit    float64
}

// buildCompact builds the compact model for plans no dearer than best (the incumbent, which must place every
// placeable unit), with lb a bound already proven. It returns nil and why when the model is not worth building.
func (m *master) buildCompact(best *model.Plan, lb float64) (*compactModel, string) {
	return m.buildCompactOn(best, lb, m.compactSlots(best.Cost))
}

// buildCompactOn is buildCompact over the given slots, which must list the slots of each zone together, in
// order of decreasing price (the symmetry rows assume it): those of compactSlots, or fewer (repackSlots).
func (m *master) buildCompactOn(best *model.Plan, lb float64, slots []slot) (*compactModel, string) {
	ub := best.Cost
	if slots == nil {
		return nil, "compact model: not built (too large or not applicable)"
	}
	c := m.c
	mod := &highs.Model{RowStart: []int{0}}
	addCol := func(cost, hi float64, integer bool) int {
		mod.ColCost = append(mod.ColCost, cost)
		mod.ColLower = append(mod.ColLower, 0)
		mod.ColUpper = append(mod.ColUpper, hi)
		mod.Integrality = append(mod.Integrality, integer)
		return len(mod.ColCost) - 1
	}
	addRow := func(lo, hi float64, idx []int, val []float64) {
		mod.RowLower, mod.RowUpper = append(mod.RowLower, lo), append(mod.RowUpper, hi)
		mod.RowIndex, mod.RowValue = append(mod.RowIndex, idx...), append(mod.RowValue, val...)
		mod.RowStart = append(mod.RowStart, len(mod.RowIndex))
	}
	// Resource rows are scaled by the largest allocatable, so bytes and millicores are of one magnitude.
	scale := make([]float64, len(c.Res))
	for ci := range m.classes {
		for k, a := range m.classes[ci].alloc {
			scale[k] = math.Max(scale[k], float64(a))
		}
	}
	for k := range scale {
		if scale[k] <= 0 {
			scale[k] = 1
		}
	}
	conflicts := m.conflictSets()
	// addHost adds the units columns of one host (a slot or a running node) and its rows: capacity (capRow gives
	// the host's own entries and bound for resource k) and conflicts; fits[i] is the most units i may take.
	addHost := func(xCol, zCol []int, fits []int, capRow func(k int) ([]int, []float64, float64)) {
		for i := range m.groups {
			xCol[i], zCol[i] = -1, -1
			if fits[i] > 0 {
				xCol[i] = addCol(0, float64(fits[i]), true)
			}
		}
		for k := range c.Res {
			idx, val, hi := capRow(k)
			n := len(idx)
			for i, mg := range m.groups {
				if xCol[i] >= 0 && mg.req[k] > 0 {
					idx, val = append(idx, xCol[i]), append(val, float64(mg.req[k])/scale[k])
				}
			}
			if len(idx) > n {
				addRow(-highs.Inf, hi, idx, val)
			}
		}
		for i := range m.groups {
			if xCol[i] < 0 {
				continue
			}
			for _, j := range conflicts[i] {
				if j == i || xCol[j] < 0 {
					continue
				}
				for _, g := range []int{i, j} {
					if zCol[g] < 0 {
						zCol[g] = addCol(0, 1, true)
						addRow(-highs.Inf, 0, []int{xCol[g], zCol[g]}, []float64{1, -float64(fits[g])})
					}
				}
				if j > i {
					addRow(-highs.Inf, 1, []int{zCol[i], zCol[j]}, []float64{1, 1})
				}
			}
		}
	}
	costIdx, costVal := []int{}, []float64{}
	for s := range slots {
		sl := &slots[s]
		sl.yCol = make([]int, len(sl.classes))
		fits := make([]int, len(m.groups))
		fitOf := make([][]int, len(m.groups))
		for i := range m.groups {
			fitOf[i] = make([]int, len(sl.classes))
			for k, ci := range sl.classes {
				fitOf[i][k] = m.fit(i, ci)
				fits[i] = max(fits[i], fitOf[i][k])
			}
		}
		var one []int
		var ones []float64
		for k, ci := range sl.classes {
			sl.yCol[k] = addCol(m.classes[ci].price, 1, true)
			one, ones = append(one, sl.yCol[k]), append(ones, 1)
			costIdx, costVal = append(costIdx, sl.yCol[k]), append(costVal, m.classes[ci].price)
		}
		addRow(-highs.Inf, 1, one, ones)
		sl.xCol, sl.zCol = make([]int, len(m.groups)), make([]int, len(m.groups))
		addHost(sl.xCol, sl.zCol, fits, func(k int) ([]int, []float64, float64) {
			var idx []int
			var val []float64
			for j, ci := range sl.classes {
				if a := m.classes[ci].alloc[k]; a > 0 {
					idx, val = append(idx, sl.yCol[j]), append(val, -float64(a)/scale[k])
				}
			}
			return idx, val, 0
		})
		// Units only on a slot that launches a class that fits them.
		for i := range m.groups {
			if sl.xCol[i] < 0 {
				continue
			}
			idx, val := []int{sl.xCol[i]}, []float64{1}
			for j := range sl.classes {
				if f := fitOf[i][j]; f > 0 {
					idx, val = append(idx, sl.yCol[j]), append(val, -float64(f))
				}
			}
			addRow(-highs.Inf, 0, idx, val)
		}
		// Symmetry: the slots of a zone launch in order of decreasing price.
		if s > 0 && slots[s-1].zone == sl.zone {
			var idx []int
			var val []float64
			for j, ci := range slots[s-1].classes {
				idx, val = append(idx, slots[s-1].yCol[j]), append(val, m.classes[ci].price)
			}
			for j, ci := range sl.classes {
				idx, val = append(idx, sl.yCol[j]), append(val, -m.classes[ci].price)
			}
			addRow(0, highs.Inf, idx, val)
		}
	}
	// Existing nodes.
	var existing []compactHost
	for e := range c.Nodes {
		fits := make([]int, len(m.groups))
		any := false
		for i, mg := range m.groups {
			if !c.Groups[mg.g].NodeOK[e] {
				continue
			}
			if n := m.unitsIn(i, c.Nodes[e].Residual); n > 0 {
				fits[i], any = n, true
			}
		}
		if !any {
			continue
		}
		h := compactHost{node: e, xCol: make([]int, len(m.groups)), zCol: make([]int, len(m.groups))}
		addHost(h.xCol, h.zCol, fits, func(k int) ([]int, []float64, float64) {
			return nil, nil, float64(max(c.Nodes[e].Residual[k], 0)) / scale[k]
		})
		existing = append(existing, h)
	}
	if len(mod.ColCost) > 2*compactMaxCols {
		return nil, fmt.Sprintf("compact model: not built (%d columns)", len(mod.ColCost))
	}
	// unitsIn lists the columns (and their zones) that hold units of mgroup i.
	unitsIn := func(i int, each func(col, zone int)) {
		for s := range slots {
			if j := slots[s].xCol[i]; j >= 0 {
				each(j, slots[s].zone)
			}
		}
		for _, h := range existing {
			if j := h.xCol[i]; j >= 0 {
				each(j, c.Nodes[h.node].Zone)
			}
		}
	}
	for i, mg := range m.groups {
		var idx []int
		var val []float64
		unitsIn(i, func(col, _ int) { idx, val = append(idx, col), append(val, 1) })
		if len(idx) == 0 {
			return nil, "compact model: a group fits no slot"
		}
		addRow(float64(mg.units), float64(mg.units), idx, val)
		// Zone rules, as the master states them (pods per zone, from the bound pods' base).
		g := &c.Groups[mg.g]
		zoneRow := func(plus, minus int, hi float64) {
			var idx []int
			var val []float64
			unitsIn(i, func(col, z int) {
				switch {
				case z >= 0 && z == plus:
					idx, val = append(idx, col), append(val, float64(mg.ppu))
				case z >= 0 && z == minus:
					idx, val = append(idx, col), append(val, -float64(mg.ppu))
				}
			})
			if len(idx) > 0 {
				addRow(-highs.Inf, hi, idx, val)
			} else if hi < 0 {
				addRow(1, 0, nil, nil) // cannot hold: an empty row that is infeasible
			}
		}
		if g.ZoneSkew > 0 {
			for _, a := range g.Zones {
				for _, b := range g.Zones {
					if a != b {
						zoneRow(a, b, float64(g.ZoneSkew-(g.ZoneBase[a]-g.ZoneBase[b])))
					}
				}
			}
		}
		if g.ZoneCap > 0 {
			for _, z := range g.Zones {
				zoneRow(z, -1, float64(g.ZoneCap-g.ZoneBase[z]))
			}
		}
	}
	// NodePool limits and offering counts.
	for pi, p := range c.Pools {
		for k, l := range p.Limit {
			if l < 0 {
				continue
			}
			var idx []int
			var val []float64
			for s := range slots {
				for j, ci := range slots[s].classes {
					if cl := &m.classes[ci]; cl.pool == pi && cl.capacity[k] > 0 {
						idx, val = append(idx, slots[s].yCol[j]), append(val, float64(cl.capacity[k]))
					}
				}
			}
			if len(idx) > 0 {
				addRow(-highs.Inf, float64(l), idx, val)
			}
		}
	}
	for ci := range m.classes {
		if m.classes[ci].limit <= 0 {
			continue
		}
		var idx []int
		var val []float64
		for s := range slots {
			for j, cj := range slots[s].classes {
				if cj == ci {
					idx, val = append(idx, slots[s].yCol[j]), append(val, 1)
				}
			}
		}
		if len(idx) > 0 {
			addRow(-highs.Inf, float64(m.classes[ci].limit), idx, val)
		}
	}
	// Only plans no dearer than the incumbent, and no cheaper than the bound already proven. Without a start, the
	// cap is a hair below the incumbent, so that "infeasible" proves it optimal.
	start := m.compactStart(best, slots, existing, len(mod.ColCost))
	limit := ub * (1 - compactEps)
	if start != nil {
		limit = ub * (1 + 1e-9)
	}
	addRow(lb, limit, costIdx, costVal)
	return &compactModel{mod: mod, slots: slots, existing: existing, start: start, limit: limit}, ""
}

// solveCompact solves the compact model for plans no dearer than best (see buildCompact) until ctx ends. The
// incumbent is HiGHS's start where it maps onto the slots, so HiGHS's improvement heuristics search around it.
func (m *master) solveCompact(ctx context.Context, best *model.Plan, lb float64) (*compactResult, error) {
	cm, why := m.buildCompact(best, lb)
	if cm == nil {
		return &compactResult{status: why}, nil
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < compactMinTime/2 {
		return &compactResult{status: "compact model: no time left once built"}, nil
	}
	return m.solveCompactModel(ctx, best, cm, "compact model", highs.Options{MIPRelGap: 1e-6, Presolve: "off"})
}

// solveCompactModel solves cm, built for plans no dearer than best, with HiGHS's options hopts until ctx ends;
// name begins the status. Its bound is a bound on every plan only when cm has compactSlots' slots.
func (m *master) solveCompactModel(ctx context.Context, best *model.Plan, cm *compactModel, name string, hopts highs.Options) (*compactResult, error) {
	c, ub := m.c, best.Cost
	mod, slots, existing, start, limit := cm.mod, cm.slots, cm.existing, cm.start, cm.limit
	began := time.Now()
	res, err := highs.Solve(ctx, mod, hopts, start)
	if err != nil {
		if ctx.Err() != nil {
			return &compactResult{status: name + ": out of time"}, nil
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	from := "no start"
	if start != nil {
		from = "from the incumbent"
	}
	out := &compactResult{status: fmt.Sprintf("%s (%d slots, %d columns, %s): %s in %v", name, len(slots), len(mod.ColCost),
		from, res.Status, time.Since(began).Round(time.Millisecond)),
		solved: res.Status == highs.StatusOptimal || res.Status == highs.StatusInfeasible}
	switch {
	case res.Status == highs.StatusInfeasible && start == nil:
		out.bound = limit // nothing cheaper than the incumbent (less a hair) exists
	case res.Status == highs.StatusInfeasible:
		// The incumbent itself is a solution: HiGHS rejected it within its tolerances. Nothing is proven.
	case !math.IsNaN(res.MIPDualBound) && !math.IsInf(res.MIPDualBound, 0):
		out.bound = math.Min(limit, res.MIPDualBound)
	case res.Status == highs.StatusOptimal && res.HasSolution:
		out.bound = res.Objective * (1 - 1e-6) // optimal within the relative gap asked for
	}
	out.bound = math.Min(out.bound, ub) // never above a plan known to be valid
	if !res.HasSolution || res.Abandoned && len(res.ColValues) < len(mod.ColCost) {
		return out, nil
	}
	x := res.ColValues
	plan := &model.Plan{Solver: "mip"}
	memberUsed := map[int]int{}
	for s := range slots {
		sl := &slots[s]
		ci := -1
		for j := range sl.classes {
			if x[sl.yCol[j]] > 0.5 {
				ci = sl.classes[j]
			}
		}
		var pods []unitCount
		for i := range m.groups {
			if j := sl.xCol[i]; j >= 0 {
				if n := count(x[j]); n > 0 {
					pods = append(pods, unitCount{i, n})
				}
			}
		}
		if ci < 0 || len(pods) == 0 {
			continue
		}
		member := -1
		if cl := &m.classes[ci]; cl.limit > 0 {
			for _, mo := range cl.members {
				if memberUsed[mo] < c.Src.Offerings[c.Offerings[mo].Index].MaxCount {
					member = mo
					break
				}
			}
			if member < 0 {
				return out, nil
			}
			memberUsed[member]++
		}
		nn, price := m.newNode(ci, member, pods)
		plan.NewNodes = append(plan.NewNodes, nn)
		plan.Cost += price
	}
	for _, h := range existing {
		var pods []model.GroupCount
		for i := range m.groups {
			if j := h.xCol[i]; j >= 0 {
				if n := count(x[j]); n > 0 {
					pods = append(pods, model.GroupCount{Group: m.groups[i].g, Count: n * m.groups[i].ppu})
				}
			}
		}
		if len(pods) > 0 {
			plan.Existing = append(plan.Existing, model.ExistingPlacement{Node: c.Nodes[h.node].Index, Pods: pods})
		}
	}
	for gi := range c.Groups {
		if g := &c.Groups[gi]; g.Impossible != "" && g.Demand > 0 {
			plan.Unschedulable = append(plan.Unschedulable, model.Unschedulable{Group: gi, Count: g.Demand, Reason: g.Impossible})
		}
	}
	// The compiled problem relaxes some rules (prep.Problem.Relaxed): a plan that breaks one is no plan, though
	// the bound stands.
	if plan.Cost < ub-1e-9*(1+ub) && plan.Validate(c.Src) == nil { // not the start again, summed in another order
		out.plan = plan
	}
	return out, nil
}

// placesAll reports whether p places every pod of the groups the master plans.
func (m *master) placesAll(p *model.Plan) bool {
	placed := make(map[int]int, len(m.groups))
	for _, n := range p.NewNodes {
		for _, gc := range n.Pods {
			placed[gc.Group] += gc.Count
		}
	}
	for _, e := range p.Existing {
		for _, gc := range e.Pods {
			placed[gc.Group] += gc.Count
		}
	}
	for _, mg := range m.groups {
		if placed[mg.g] < mg.units*mg.ppu {
			return false
		}
	}
	return true
}

// compactStart maps plan p onto the compact model's ncol columns: its new nodes, dearest first, onto the slots of
// their zone, each as the cheapest slot class that holds it, and its placements on running nodes. It returns nil
// when some node or placement has no place in the model.
func (m *master) compactStart(p *model.Plan, slots []slot, existing []compactHost, ncol int) map[int]float64 {
	c := m.c
	start := make(map[int]float64, ncol)
	for j := range ncol {
		start[j] = 0
	}
	type node struct {
		ci, zone int
		units    []unitCount
	}
	var nodes []node
	for _, nn := range p.NewNodes {
		units, ci, z := m.slotClass(nn)
		if ci < 0 {
			return nil
		}
		nodes = append(nodes, node{ci, z, units})
	}
	sort.SliceStable(nodes, func(a, b int) bool { return m.classes[nodes[a].ci].price > m.classes[nodes[b].ci].price })
	used := make([]bool, len(slots))
	for _, nd := range nodes {
		s := slices.IndexFunc(slots, func(sl slot) bool { return sl.zone == nd.zone })
		for s >= 0 && s < len(slots) && used[s] {
			s++
		}
		if s < 0 || s >= len(slots) || slots[s].zone != nd.zone {
			return nil
		}
		used[s] = true
		k := slices.Index(slots[s].classes, nd.ci)
		if k < 0 {
			return nil
		}
		start[slots[s].yCol[k]] = 1
		for _, u := range nd.units {
			j := slots[s].xCol[u.mg]
			if j < 0 {
				return nil
			}
			start[j] += float64(u.n)
			if z := slots[s].zCol[u.mg]; z >= 0 {
				start[z] = 1
			}
		}
	}
	byNode := map[int]*compactHost{}
	for h := range existing {
		byNode[c.Nodes[existing[h].node].Index] = &existing[h]
	}
	for _, ep := range p.Existing {
		h := byNode[ep.Node]
		if h == nil {
			return nil
		}
		for _, gc := range ep.Pods {
			i, ok := m.mgOf[gc.Group]
			if !ok || h.xCol[i] < 0 {
				return nil
			}
			start[h.xCol[i]] += float64(gc.Count / m.groups[i].ppu)
			if z := h.zCol[i]; z >= 0 {
				start[z] = 1
			}
		}
	}
	return start
}

// slotClass maps a new node of a plan onto the compact model: its pods as units, the cheapest slot class that
// holds them (holdingClass) and its zone (-1 when zones do not matter). ci is -1 when the node does not map.
func (m *master) slotClass(nn model.NewNode) (units []unitCount, ci, zone int) {
	usage := make(prep.Vec, len(m.c.Res))
	for _, gc := range nn.Pods {
		i, ok := m.mgOf[gc.Group]
		if !ok || gc.Count%m.groups[i].ppu != 0 {
			return nil, -1, -1
		}
		n := gc.Count / m.groups[i].ppu
		units = append(units, unitCount{i, n})
		for k := range usage {
			usage[k] += int64(n) * m.groups[i].req[k]
		}
	}
	o := &m.c.Offerings[nn.Offering]
	zone = -1
	if m.zones {
		zone = o.Zone
	}
	return units, m.holdingClass(units, usage, zone, o.Pool, nn.Offering), zone
}

// holdingClass is the cheapest class a slot may take that holds units (using usage) in zone z (-1: any) and
// pool, like classFor but without adding a class: a node of a limited offering stays in its own class.
func (m *master) holdingClass(units []unitCount, usage prep.Vec, z, pool, offering int) int {
	limited := m.c.Src.Offerings[m.c.Offerings[offering].Index].MaxCount > 0
	best := -1
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.dominated || len(cl.groups) == 0 || (cl.zone >= 0 && cl.zone != z) || (cl.pool >= 0 && cl.pool != pool) ||
			limited != (cl.limit > 0) || (limited && !slices.Contains(cl.members, offering)) || !usage.Fits(cl.alloc) ||
			(best >= 0 && cl.price >= m.classes[best].price) {
			continue
		}
		suits := func(u unitCount) bool { _, ok := slices.BinarySearch(cl.groups, m.groups[u.mg].g); return ok }
		if !slices.ContainsFunc(units, func(u unitCount) bool { return !suits(u) }) {
			best = ci
		}
	}
	return best
}
