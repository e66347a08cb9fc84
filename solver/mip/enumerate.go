package mip

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/packwright/packwright/solver/highs"
	"github.com/packwright/packwright/solver/internal/prep"
)

// Reduced-cost enumeration proves what column generation's LP bound cannot on small problems. With y the duals
// of the converged LP (value LP), every column's reduced cost rc is at least 0 and any integer solution x costs
// at least LP + sum_j rc_j x_j, so a plan cheaper than the incumbent (cost UB) uses no pattern whose reduced
// cost exceeds UB - LP. When every such pattern is in the master, the integer master over it is exact: its
// optimum is the true optimum whenever that is below UB, and HiGHS's dual bound on it, capped at UB, is a valid
// bound even when stopped early. On spread/kwok/100 the LP is 4.4% below the incumbent and HiGHS had found
// nothing better over the generated columns; the compact model takes 37 s to prove the optimum there.
//
// A pattern that leaves room for one more unit of a group whose rows are all demand rows (no zone row caps
// it) is never needed: the same pattern with that unit costs the same, covers more and, the unit's dual being
// at least 0, has no larger reduced cost. So only patterns maximal in those groups are listed.

// enumLimit caps the patterns listed by one enumeration: beyond it the integer master would not finish in a
// deadline of a second, and the enumeration is abandoned (the generated columns stay as they were).
const enumLimit = 5000

// lpDuals is a converged LP's row duals and value, for reduced-cost enumeration.
type lpDuals struct {
	y     []float64
	value float64
}

// enumerable reports whether reduced-cost enumeration applies to the master: costs are the classes' prices
// alone (no NodePool weights, no residents) and every class costs something.
func (m *master) enumerable() bool {
	if m.c.Tiered {
		return false
	}
	for ci := range m.classes {
		if cl := &m.classes[ci]; cl.resident != nil || cl.price <= 0 {
			return false
		}
	}
	return true
}

// enumerateWithin lists every pattern of reduced cost at most t (see enumerate) for the largest t, doubling from
// gap/16 up to gap, whose list is complete within enumLimit patterns and the deadline. With that list in the master, any plan
// cheaper than LP + t is in it, so min(LP + t, the integer master's bound) is a valid bound. It returns nil
// when even gap/16 lists too many.
func (m *master) enumerateWithin(ctx context.Context, d *lpDuals, gap float64, until time.Time) ([]pattern, float64) {
	var best []pattern
	bestT := 0.0
	for t := gap / 16; ; t *= 2 {
		t = math.Min(t, gap)
		ps, ok := m.enumerate(ctx, d, t, until, enumLimit)
		if !ok {
			break
		}
		best, bestT = ps, t
		if t >= gap {
			break
		}
	}
	return best, bestT
}

// enumerate lists every pattern whose reduced cost under d is at most gap (maximal in the groups free of zone
// caps; dominated classes left out, as pricing leaves them out), until the deadline and at most limit of them.
// It returns the patterns and whether the list is complete; an incomplete list is worthless as a proof and is
// not returned.
func (m *master) enumerate(ctx context.Context, d *lpDuals, gap float64, until time.Time, limit int) ([]pattern, bool) {
	conflict := m.conflictSets()
	var out []pattern
	for ci := range m.classes {
		cl := &m.classes[ci]
		if cl.dominated {
			continue
		}
		if ctx.Err() != nil || time.Now().After(until) {
			return nil, false
		}
		items, constant := m.enumItems(ci, d.y, conflict)
		if len(items) == 0 {
			continue
		}
		e := enumerator{items: items, res: append(prep.Vec(nil), m.knapsackRoom(ci)...), cnt: make([]int, len(items)),
			blocked: make([]int, len(items)), floor: cl.price - constant - gap - 1e-9*math.Max(1, cl.price),
			limit: limit - len(out), until: until}
		e.prepare()
		e.dfs(0, 0)
		if e.overflow {
			return nil, false
		}
		for _, cnt := range e.found {
			var uc []unitCount
			for a, n := range cnt {
				if n > 0 {
					uc = append(uc, unitCount{items[a].g, n})
				}
			}
			sort.Slice(uc, func(a, b int) bool { return uc[a].mg < uc[b].mg })
			out = append(out, pattern{ci, uc})
		}
	}
	return out, true
}

// enumItems lists every group that a node of class ci may hold, whatever its dual value (a pattern with a unit
// of negative value can still be needed where a zone row caps its positive part), with the class's constant
// dual cost. free marks groups without zone rows.
func (m *master) enumItems(ci int, y []float64, conflict [][]int) ([]enumItem, float64) {
	cl := &m.classes[ci]
	constant := m.classDuals(ci, y)
	var items []item
	for _, g := range cl.groups {
		i := m.mgOf[g]
		if most := min(m.groups[i].maxUnits, m.groups[i].units); most > 0 {
			items = append(items, item{g: i, w: m.unitValue(i, cl.zone, y), req: m.groups[i].req, max: most})
		}
	}
	// The most valuable first: the fractional bound then cuts sooner. Clashes are linked after sorting, as
	// they are positions in the slice.
	sort.SliceStable(items, func(a, b int) bool { return items[a].w > items[b].w })
	linkClashes(items, conflict)
	out := make([]enumItem, len(items))
	for a := range items {
		out[a] = enumItem{item: items[a], free: len(m.groupZoneRows(items[a].g)) == 0}
	}
	return out, constant
}

// enumItem is a pricing item with whether its group is free of zone rows (see enumerate).
type enumItem struct {
	item
	free bool
}

// enumerator is the depth-first listing of one class's patterns worth more than floor at the duals.
type enumerator struct {
	items    []enumItem
	res      prep.Vec
	cnt      []int
	blocked  []int
	floor    float64
	limit    int
	until    time.Time
	found    [][]int
	overflow bool
	steps    int
	// byRes[k] lists the items of positive value by value per unit of resource k, for the fractional bound.
	byRes [][]int
}

func (e *enumerator) prepare() {
	e.byRes = make([][]int, len(e.res))
	for k := range e.res {
		var o []int
		for a := range e.items {
			if e.items[a].w > 0 {
				o = append(o, a)
			}
		}
		sort.Slice(o, func(a, b int) bool {
			ra, rb := e.items[o[a]].req[k], e.items[o[b]].req[k]
			// Items needing none of the resource come first: they are not limited by it.
			if ra == 0 || rb == 0 {
				return ra == 0 && rb != 0
			}
			return e.items[o[a]].w/float64(ra) > e.items[o[b]].w/float64(rb)
		})
		e.byRes[k] = o
	}
}

// bound is an upper bound on the value the undecided items (from pos on) can add in the room left: for each
// resource alone the fractional knapsack of the items of positive value; the smallest.
func (e *enumerator) bound(pos int) float64 {
	best := math.Inf(1)
	for k, o := range e.byRes {
		left := float64(e.res[k])
		b := 0.0
		for _, a := range o {
			if a < pos || e.blocked[a] > 0 {
				continue
			}
			it := &e.items[a]
			units := float64(maxFit(&it.item, e.res))
			if units == 0 {
				continue
			}
			r := float64(it.req[k])
			if r == 0 {
				b += units * it.w
				continue
			}
			if units*r <= left {
				b += units * it.w
				left -= units * r
				continue
			}
			b += it.w * left / r
			break
		}
		best = math.Min(best, b)
	}
	return best
}

func (e *enumerator) dfs(pos int, val float64) {
	if e.overflow {
		return
	}
	if e.steps++; e.steps&1023 == 0 && time.Now().After(e.until) {
		e.overflow = true
		return
	}
	if val+e.bound(pos) < e.floor {
		return
	}
	if pos == len(e.items) {
		if val >= e.floor && e.maximal() {
			if len(e.found) >= e.limit {
				e.overflow = true
				return
			}
			e.found = append(e.found, append([]int(nil), e.cnt...))
		}
		return
	}
	it := &e.items[pos]
	most := 0
	if e.blocked[pos] == 0 {
		most = maxFit(&it.item, e.res)
	}
	for c := most; c >= 0 && !e.overflow; c-- {
		if c > 0 {
			for k := range e.res {
				e.res[k] -= int64(c) * it.req[k]
			}
			for _, j := range it.clash {
				e.blocked[j]++
			}
		}
		e.cnt[pos] = c
		e.dfs(pos+1, val+float64(c)*it.w)
		e.cnt[pos] = 0
		if c > 0 {
			for k := range e.res {
				e.res[k] += int64(c) * it.req[k]
			}
			for _, j := range it.clash {
				e.blocked[j]--
			}
		}
	}
}

// maximal reports whether the pattern is non-empty and no free group could take one more unit.
func (e *enumerator) maximal() bool {
	empty := true
	for a := range e.items {
		if e.cnt[a] > 0 {
			empty = false
		}
	}
	if empty {
		return false
	}
	for a := range e.items {
		it := &e.items[a]
		if !it.free || e.cnt[a] >= it.max || e.blocked[a] > 0 {
			continue
		}
		fits := true
		for k, r := range it.req {
			if r > e.res[k] {
				fits = false
				break
			}
		}
		if fits {
			return false
		}
	}
	return true
}

// addEnumerated adds the enumerated patterns to the master, freeing any that column generation had held at
// zero (holdPatternsFrom): the proof needs every one of them usable.
func (m *master) addEnumerated(ctx context.Context, ps []pattern) error {
	var held []int
	for _, p := range ps {
		if j, ok := m.colOf[patternKey(p.class, p.counts)]; ok && m.cols[j].hi == 0 {
			m.cols[j].hi = highs.Inf
			held = append(held, j)
		}
	}
	if len(held) > 0 {
		inf := make([]float64, len(held))
		for a := range inf {
			inf[a] = highs.Inf
		}
		if err := m.inst.SetColsBounds(ctx, held, make([]float64, len(held)), inf); err != nil {
			return err
		}
	}
	return m.addPatterns(ctx, ps)
}
