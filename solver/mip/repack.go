package mip

import (
	"context"
	"sort"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/highs"
)

// Repacking searches the neighbourhood of a plan exactly: the compact model whose slots are the plan's own new
// nodes, each free to take any class of its zone no dearer than its own, or none, beside the running nodes'
// room, with every pod free to move. Its optimum is the cheapest plan that closes or shrinks some of the plan's
// nodes while rearranging all the pods, which the column master cannot find when the patterns it needs were
// never priced (existing/kwok/100: the master's best plan keeps a $0.0301/h node for one pod that fits once the
// running nodes' pods are rearranged). With a plan's few nodes instead of every node a cheaper plan could
// launch, HiGHS solves it in milliseconds where the full compact model needs seconds. Its bound holds only in
// the neighbourhood, so it proves nothing.

// repackSlots returns one slot per new node of plan, in its zone (when zones matter), holding the classes no
// dearer than the node's offering, and the number of columns the slots take. It returns nil when the compact
// model does not apply (compactApplies), when a node does not map onto a class, or when the model would be too
// large.
func (m *master) repackSlots(plan *model.Plan) ([]slot, int) {
	if plan == nil || len(plan.NewNodes) == 0 || !m.compactApplies() {
		return nil, 0
	}
	type node struct {
		zone  int
		price float64
	}
	nodes := make([]node, 0, len(plan.NewNodes))
	for _, nn := range plan.NewNodes {
		// The node's class must be among its slot's for the plan to be the model's start.
		_, ci, z := m.slotClass(nn)
		if ci < 0 {
			return nil, 0
		}
		nodes = append(nodes, node{z, m.c.Offerings[nn.Offering].Price})
	}
	// The slots of a zone together, dearest first, as the symmetry rows of the compact model want: a plan of the
	// neighbourhood sorted the same way still gives each slot a class no dearer than its own.
	sort.SliceStable(nodes, func(a, b int) bool {
		if nodes[a].zone != nodes[b].zone {
			return nodes[a].zone < nodes[b].zone
		}
		return nodes[a].price > nodes[b].price
	})
	// A wide repack (repackWide) caps every slot at the dearest node of its zone instead: the slots of a zone then
	// have the same classes, so the symmetry rows' order by price still loses no plan.
	dearest := map[int]float64{}
	for _, nd := range nodes {
		dearest[nd.zone] = max(dearest[nd.zone], nd.price)
	}
	slots := make([]slot, 0, len(nodes))
	cols := 0
	for _, nd := range nodes {
		limit := nd.price
		if m.repackWide {
			limit = dearest[nd.zone]
		}
		var cls []int
		for ci := range m.classes {
			cl := &m.classes[ci]
			if cl.dominated || len(cl.groups) == 0 || (m.zones && cl.zone != nd.zone) || cl.price > limit*(1+1e-9) {
				continue
			}
			cls = append(cls, ci)
		}
		cols += len(cls) + len(m.groups)
		if cols > compactMaxCols {
			return nil, 0
		}
		slots = append(slots, slot{zone: nd.zone, classes: cls})
	}
	return slots, cols
}

// repack returns the cheapest plan of best's neighbourhood (see repackSlots) that HiGHS finds before ctx ends,
// when it is cheaper than best and valid, else nil, with a note for the status and whether HiGHS finished.
func (m *master) repack(ctx context.Context, best *model.Plan) (*model.Plan, string, bool) {
	if best == nil || !m.placesAll(best) {
		return nil, "", false
	}
	slots, _ := m.repackSlots(best)
	cm, _ := m.buildCompactOn(best, 0, slots)
	if cm == nil || cm.start == nil {
		// Without the plan as its start the cap sits below it and the neighbourhood may well be empty: not worth
		// the time.
		return nil, "", false
	}
	// Presolve off, as for the compact model: with it and the plan as start, HiGHS 1.15 called a neighbourhood
	// solved at $0.8437/h where one of its plans costs $0.7587/h (TestRepackDropsANeedlessNode, seed 9).
	cr, err := m.solveCompactModel(ctx, best, cm, "repack", highs.Options{MIPRelGap: 1e-6, Presolve: "off"})
	if err != nil {
		return nil, "; " + err.Error(), false
	}
	return cr.plan, "; " + cr.status, cr.solved // a plan only when cheaper than best (solveCompactModel)
}

// repackTime is the time the integer master leaves for repacking a plan of at most repackSlotsMax nodes whose
// model has at most repackMaxCols columns: on the 100-pod benchmarks HiGHS solves such a neighbourhood in
// 20-180 ms (existing/kwok/100's, 138 columns, spends 160-180 ms in root cuts, and 200 ms left it unsolved in
// one run of four); with 20 nodes or more, or 1,800 columns (existing/kwok/1000's 50 running nodes), it
// seldom ends in that time.
const (
	repackTime     = 300 * time.Millisecond
	repackSlotsMax = 16
	repackMaxCols  = 800
)

// fewRepackSlots reports whether plan's neighbourhood is small enough to repack in repackTime.
func (m *master) fewRepackSlots(plan *model.Plan) bool {
	if len(plan.NewNodes) > repackSlotsMax {
		return false
	}
	slots, cols := m.repackSlots(plan)
	if slots == nil {
		return false
	}
	for i, mg := range m.groups {
		for _, e := range m.c.Groups[mg.g].Nodes {
			if m.unitsIn(i, m.c.Nodes[e].Residual) > 0 {
				cols++
			}
		}
	}
	return cols <= repackMaxCols
}
