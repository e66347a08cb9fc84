package mip

import (
	"math"
	"slices"
	"sort"

	"github.com/packwright/packwright/solver/internal/prep"
)

// item is one pod group as the pricing knapsack sees it.
type item struct {
	g     int      // index into master.groups
	w     float64  // dual value of one unit
	req   prep.Vec // resources of one unit
	max   int      // most units on one node
	clash []int    // items (indices into the item slice) that may not share the node
}

// branchOrder is the order in which the knapsack's branch and bound takes the items.
type branchOrder int

const (
	// lpFirst searches first in decreasing reduced value w_i - lambda.r_i per unit of normalised size (with the
	// knapsack LP's multipliers), so that the first dives follow the LP optimum, and then, if that search runs out
	// of budget, again in value density from the best pattern found. On large nodes plain value density spends
	// the budget on items the LP leaves out (128 CPUs, 1 TiB: patterns 1-3% below the optimum, against 0-1%);
	// the second search keeps the patterns that density finds and the first misses, which the integer master
	// combines better (mixed/aws/1000: $17.8998/h in 5 of 5 runs, against $17.937-17.946/h with the LP's order
	// alone). The classes' knapsacks use it.
	lpFirst branchOrder = iota
	// byDensity searches in decreasing value per unit of normalised size only. Running nodes' rooms are small
	// and their fillings do better this way: consolidating 1,000 random nodes, the integer master took 2.1 s
	// instead of 0.3 s over the fillings that the LP's order had priced.
	byDensity
)

// knapsack finds a high-value pattern: integer counts n (n[i] <= items[i].max) with sum n_i req_i <= alloc and no
// two clashing items, maximising sum w_i n_i. Only patterns worth more than target matter (a column prices out
// only above its cost): the search cuts every branch that cannot beat it, so proving that none does is quick.
// It returns the best pattern found and a proven upper bound on the optimum: the best value when the search
// finished above target, at most max(best value, target) when it finished.
func knapsack(items []item, alloc prep.Vec, budget int, target float64, by branchOrder) (best []int, bestVal, upper float64) {
	n := len(items)
	if n == 0 {
		return nil, 0, 0
	}
	// The knapsack's LP relaxation (the simplex's multipliers) first: most classes in most rounds have no
	// pattern above target, and that bound alone usually shows it.
	lambda := lpMultipliers(items, alloc)
	lag := lagrangeValue(items, alloc, lambda, nil)
	upper = math.Min(fracBound(items, alloc, nil), lag)
	if upper <= target+1e-9 {
		return nil, 0, upper
	}
	if l, v := lagrange(items, alloc); v < lag {
		lambda, lag = l, v
		upper = math.Min(upper, lag)
	}
	// Heuristic starts: greedy fills under a few orderings.
	for _, score := range []func(it *item) float64{
		func(it *item) float64 { return it.w / normSum(it.req, alloc) },
		func(it *item) float64 { return it.w / normMax(it.req, alloc) },
		func(it *item) float64 { return it.w * float64(maxFit(it, alloc)) },
	} {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return score(&items[order[a]]) > score(&items[order[b]]) })
		cnt, val := greedyFill(items, alloc, order)
		if val > bestVal {
			best, bestVal = cnt, val
		}
	}
	if bestVal >= upper-1e-9 {
		return best, bestVal, bestVal
	}
	if upper <= target+1e-9 {
		return best, bestVal, math.Max(upper, bestVal)
	}
	// Depth-first branch and bound, bounded by the Lagrangian and fractional relaxations, in each order in turn.
	orders := [][]int{densityOrder(items, alloc)}
	if by == lpFirst {
		orders = [][]int{reducedOrder(items, alloc, lambda), orders[0]}
	}
	s := &search{items: items, cnt: make([]int, n), res: append(prep.Vec(nil), alloc...),
		best: best, bestVal: bestVal, floor: target, blocked: make([]int, n), lambda: lambda, rank: make([]int, n)}
	// Per-resource density orders for the fractional bounds at each search node.
	s.byRes = make([][]int, len(alloc))
	for k := range alloc {
		o := make([]int, 0, n)
		for i := range items {
			if items[i].req[k] > 0 {
				o = append(o, i)
			}
		}
		sort.Slice(o, func(a, b int) bool {
			return items[o[a]].w/float64(items[o[a]].req[k]) > items[o[b]].w/float64(items[o[b]].req[k])
		})
		s.byRes[k] = o
	}
	var order []int
	for _, order = range orders {
		s.order, s.budget = order, budget
		for p, i := range order {
			s.rank[i] = p
		}
		// A search stopped by its budget has undone its moves: cnt, res and blocked are as before it.
		s.dfs(0, 0)
		if s.budget > 0 { // finished: the best found is optimal, or nothing beats target
			return s.best, s.bestVal, math.Max(s.bestVal, target)
		}
	}
	best, bestVal = improve(items, alloc, s.best, s.bestVal, order)
	return best, bestVal, math.Max(bestVal, upper)
}

// fromSeed maps a pattern (units per mgroup) onto this round's items, dropping the groups that are no longer
// items (no value left); it reports false when the result does not fit alloc, breaks a unit cap or a clash.
func fromSeed(items []item, alloc prep.Vec, seed []unitCount) ([]int, float64, bool) {
	cnt := make([]int, len(items))
	res := append(prep.Vec(nil), alloc...)
	val := 0.0
	for _, uc := range seed {
		a := slices.IndexFunc(items, func(it item) bool { return it.g == uc.mg })
		if a < 0 {
			continue
		}
		if uc.n > items[a].max {
			return nil, 0, false
		}
		cnt[a] = uc.n
		val += float64(uc.n) * items[a].w
		for k := range res {
			if res[k] -= int64(uc.n) * items[a].req[k]; res[k] < 0 {
				return nil, 0, false
			}
		}
	}
	for a := range items {
		for _, b := range items[a].clash {
			if cnt[a] > 0 && cnt[b] > 0 {
				return nil, 0, false
			}
		}
	}
	return cnt, val, true
}

// densityOrder lists the items by decreasing value per unit of normalised size.
func densityOrder(items []item, alloc prep.Vec) []int { return reducedOrder(items, alloc, nil) }

// reducedOrder lists the items by decreasing reduced value w_i - lambda.r_i per unit of normalised size; with
// lambda nil (or zero), that is value density.
func reducedOrder(items []item, alloc prep.Vec, lambda []float64) []int {
	score := make([]float64, len(items))
	order := make([]int, len(items))
	for i := range items {
		order[i] = i
		v := items[i].w
		for k, l := range lambda {
			v -= l * float64(items[i].req[k])
		}
		score[i] = v / normSum(items[i].req, alloc)
	}
	sort.SliceStable(order, func(a, b int) bool { return score[order[a]] > score[order[b]] })
	return order
}

// improve is a local search on a pattern: take r units of one item out and refill greedily in density order,
// keeping any change that raises the value.
func improve(items []item, alloc prep.Vec, cnt []int, val float64, order []int) ([]int, float64) {
	cnt = append([]int(nil), cnt...)
	for pass := 0; pass < 3; pass++ {
		better := false
		for i := range items {
			for r := 1; r <= cnt[i] && r <= 8; r++ {
				trial := append([]int(nil), cnt...)
				trial[i] -= r
				res := append(prep.Vec(nil), alloc...)
				blocked := make([]bool, len(items))
				v := 0.0
				for j, c := range trial {
					v += float64(c) * items[j].w
					for k := range res {
						res[k] -= int64(c) * items[j].req[k]
					}
					if c > 0 {
						for _, x := range items[j].clash {
							blocked[x] = true
						}
					}
				}
				for _, j := range order {
					if j == i || blocked[j] {
						continue
					}
					it := items[j]
					it.max -= trial[j]
					if c := maxFit(&it, res); c > 0 {
						trial[j] += c
						v += float64(c) * it.w
						for k := range res {
							res[k] -= int64(c) * it.req[k]
						}
					}
				}
				if v > val+1e-12 {
					cnt, val, better = trial, v, true
				}
			}
		}
		if !better {
			break
		}
	}
	return cnt, val
}

type search struct {
	items   []item
	order   []int
	cnt     []int
	res     prep.Vec
	best    []int
	bestVal float64
	floor   float64 // branches that cannot beat this are cut too (knapsack's target)
	budget  int
	blocked []int // >0 when a clashing item is in the pattern
	lambda  []float64
	rank    []int   // position of each item in order
	byRes   [][]int // items by value per unit of each resource
	fit     [][]int // per search depth: each undecided item's fit in the room left (scratch)
}

// fracBound is the smallest single-resource fractional bound over the undecided items (from pos on).
func (s *search) fracBound(pos int, fit []int) float64 {
	best := math.Inf(1)
	for k, o := range s.byRes {
		left := float64(s.res[k])
		b := 0.0
		for _, i := range o {
			if s.rank[i] < pos || s.blocked[i] > 0 {
				continue
			}
			it := &s.items[i]
			units := float64(fit[i])
			if units == 0 {
				continue
			}
			need := units * float64(it.req[k])
			if need <= left {
				b += units * it.w
				left -= need
				continue
			}
			b += it.w * left / float64(it.req[k])
			break
		}
		// Items that use none of resource k are not limited by it.
		for _, i := range s.order[pos:] {
			if it := &s.items[i]; it.req[k] == 0 && s.blocked[i] == 0 {
				b += it.w * float64(fit[i])
			}
		}
		if b < best {
			best = b
		}
	}
	return best
}

// bound is the Lagrangian bound of the items from pos on with the residual capacity, for the fixed multipliers:
// any lambda >= 0 gives a valid bound, lambda.res + sum_i n_i^max (w_i - lambda.r_i)^+.
func (s *search) bound(pos int, fit []int) float64 {
	b := 0.0
	for k, l := range s.lambda {
		b += l * float64(s.res[k])
	}
	for _, i := range s.order[pos:] {
		it := &s.items[i]
		if s.blocked[i] > 0 {
			continue
		}
		v := it.w
		for k, l := range s.lambda {
			v -= l * float64(it.req[k])
		}
		if v > 0 {
			b += v * float64(fit[i])
		}
	}
	return b
}

func (s *search) dfs(pos int, val float64) {
	if s.budget <= 0 {
		return
	}
	s.budget--
	if val > s.bestVal+1e-12 {
		s.bestVal = val
		s.best = append(s.best[:0:0], s.cnt...)
	}
	if pos == len(s.order) {
		return
	}
	// Both bounds need every undecided item's fit in the room left: computed once per node, and the cheaper
	// Lagrangian bound is tried first (a node is cut when either bound cuts it).
	if len(s.fit) <= pos {
		s.fit = append(s.fit, make([][]int, pos+1-len(s.fit))...)
	}
	if s.fit[pos] == nil {
		s.fit[pos] = make([]int, len(s.items))
	}
	fit := s.fit[pos]
	for _, j := range s.order[pos:] {
		fit[j] = maxFit(&s.items[j], s.res)
	}
	if cut := math.Max(s.bestVal, s.floor) + 1e-9; val+s.bound(pos, fit) <= cut || val+s.fracBound(pos, fit) <= cut {
		return
	}
	i := s.order[pos]
	it := &s.items[i]
	most := 0
	if s.blocked[i] == 0 {
		most = maxFit(it, s.res)
	}
	for c := most; c >= 0; c-- {
		if c > 0 {
			for k := range s.res {
				s.res[k] -= int64(c) * it.req[k]
			}
			s.cnt[i] = c
			for _, j := range it.clash {
				s.blocked[j]++
			}
		}
		s.dfs(pos+1, val+float64(c)*it.w)
		if c > 0 {
			for k := range s.res {
				s.res[k] += int64(c) * it.req[k]
			}
			s.cnt[i] = 0
			for _, j := range it.clash {
				s.blocked[j]--
			}
		}
		if s.budget <= 0 {
			return
		}
	}
}

// greedyFill takes items in order, as many units as fit, skipping clashes.
func greedyFill(items []item, alloc prep.Vec, order []int) ([]int, float64) {
	res := append(prep.Vec(nil), alloc...)
	cnt := make([]int, len(items))
	blocked := make([]bool, len(items))
	val := 0.0
	for _, i := range order {
		if blocked[i] {
			continue
		}
		it := &items[i]
		c := maxFit(it, res)
		if c == 0 {
			continue
		}
		cnt[i] = c
		val += float64(c) * it.w
		for k := range res {
			res[k] -= int64(c) * it.req[k]
		}
		for _, j := range it.clash {
			blocked[j] = true
		}
	}
	return cnt, val
}

// maxFit is how many units of it fit in res, capped by it.max.
func maxFit(it *item, res prep.Vec) int {
	m := it.max
	for k, r := range it.req {
		if r <= 0 {
			continue
		}
		if f := res[k] / r; f < int64(m) {
			m = int(f)
		}
	}
	if m < 0 {
		return 0
	}
	return m
}

// fracBound is a valid upper bound on the knapsack over the items in subset (all when nil) with capacity res:
// for each resource alone, the fractional knapsack; the smallest of these. Clashes are ignored (a relaxation).
func fracBound(items []item, res prep.Vec, subset []int) float64 {
	idx := subset
	if idx == nil {
		idx = make([]int, len(items))
		for i := range idx {
			idx[i] = i
		}
	}
	best := math.Inf(1)
	free := 0.0 // items needing none of any resource... cannot exist with "pods" requested; handled per k below
	_ = free
	for k := range res {
		type d struct {
			ratio float64
			req   int64
			units int
			w     float64
		}
		ds := make([]d, 0, len(idx))
		bound := 0.0
		for _, i := range idx {
			it := &items[i]
			units := it.max
			if r := it.req[k]; r > 0 {
				ds = append(ds, d{it.w / float64(r), r, units, it.w})
			} else {
				bound += float64(units) * it.w
			}
		}
		sort.Slice(ds, func(a, b int) bool { return ds[a].ratio > ds[b].ratio })
		left := float64(res[k])
		for _, x := range ds {
			if left <= 0 {
				break
			}
			take := math.Min(float64(x.units), left/float64(x.req))
			bound += take * x.w
			left -= take * float64(x.req)
		}
		if bound < best {
			best = bound
		}
	}
	return best
}

func normSum(req, alloc prep.Vec) float64 {
	s := 0.0
	for k := range req {
		if alloc[k] > 0 {
			s += float64(req[k]) / float64(alloc[k])
		}
	}
	return math.Max(s, 1e-12)
}

func normMax(req, alloc prep.Vec) float64 {
	s := 0.0
	for k := range req {
		if alloc[k] > 0 {
			s = math.Max(s, float64(req[k])/float64(alloc[k]))
		}
	}
	return math.Max(s, 1e-12)
}

// lagrange minimises the Lagrangian dual of the knapsack's LP relaxation over the capacity multipliers by a
// projected subgradient method. Every multiplier vector it visits gives a valid upper bound; it returns the
// best one and its bound.
func lagrange(items []item, alloc prep.Vec) ([]float64, float64) {
	m := len(alloc)
	eval := func(l, grad []float64) float64 { return lagrangeValue(items, alloc, l, grad) }
	// Start from the best single-resource critical ratio.
	best := make([]float64, m)
	bestVal := eval(best, nil)
	for k := 0; k < m; k++ {
		if alloc[k] <= 0 {
			continue
		}
		l := make([]float64, m)
		l[k] = criticalRatio(items, alloc, k)
		if v := eval(l, nil); v < bestVal {
			best, bestVal = l, v
		}
	}
	// Exact coordinate descent: along one multiplier the bound is convex and piecewise linear, so its minimum
	// is where the slope b_k - sum of the still-profitable items' use of k turns non-negative.
	cur := append([]float64(nil), best...)
	for sweep := 0; sweep < 8; sweep++ {
		moved := false
		for k := 0; k < m; k++ {
			if alloc[k] <= 0 {
				continue
			}
			if nl := lineMin(items, alloc, cur, k); math.Abs(nl-cur[k]) > 1e-15 {
				old := cur[k]
				cur[k] = nl
				if v := eval(cur, nil); v < bestVal-1e-12 {
					best, bestVal = append(best[:0:0], cur...), v
					moved = true
				} else {
					cur[k] = old
				}
			}
		}
		if !moved {
			break
		}
	}
	cur = append(cur[:0:0], best...)
	grad := make([]float64, m)
	scale := make([]float64, m) // work in units of each resource's capacity
	for k := range scale {
		scale[k] = math.Max(float64(alloc[k]), 1)
	}
	theta := 1.0
	stall := 0
	for iter := 0; iter < 60; iter++ {
		v := eval(cur, grad)
		if v < bestVal-1e-12 {
			best, bestVal = append(best[:0:0], cur...), v
			stall = 0
		} else if stall++; stall >= 5 {
			theta /= 2
			stall = 0
		}
		norm := 0.0
		for k := range grad {
			g := grad[k] * scale[k] / scale[k] // gradient in capacity units
			norm += (g / scale[k]) * (g / scale[k])
		}
		if norm < 1e-18 || theta < 1e-4 {
			break
		}
		step := theta * math.Max(v*0.05, 1e-9) / norm
		for k := range cur {
			cur[k] = math.Max(0, cur[k]-step*grad[k]/(scale[k]*scale[k]))
		}
	}
	return best, bestVal
}

// criticalRatio is the value per unit of resource k of the item where the fractional knapsack on k alone
// stops: the optimal multiplier of that one-constraint relaxation.
func criticalRatio(items []item, alloc prep.Vec, k int) float64 {
	idx := make([]int, 0, len(items))
	for i := range items {
		if items[i].req[k] > 0 {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		return items[idx[a]].w/float64(items[idx[a]].req[k]) > items[idx[b]].w/float64(items[idx[b]].req[k])
	})
	left := float64(alloc[k])
	for _, i := range idx {
		need := float64(items[i].max) * float64(items[i].req[k])
		if need >= left {
			return items[i].w / float64(items[i].req[k])
		}
		left -= need
	}
	return 0
}

// lineMin minimises the Lagrangian bound over lambda[k] with the other multipliers fixed.
func lineMin(items []item, alloc prep.Vec, lambda []float64, k int) float64 {
	type bp struct {
		at  float64 // lambda[k] at which the item stops being profitable
		use float64 // units * r_k it stops using
	}
	var bps []bp
	for i := range items {
		it := &items[i]
		rest := it.w
		for j, l := range lambda {
			if j != k {
				rest -= l * float64(it.req[j])
			}
		}
		if rest <= 0 || it.req[k] <= 0 {
			continue // never profitable, or profitable whatever lambda[k] is (no slope contribution)
		}
		bps = append(bps, bp{rest / float64(it.req[k]), float64(it.max) * float64(it.req[k])})
	}
	sort.Slice(bps, func(a, b int) bool { return bps[a].at < bps[b].at })
	slope := float64(alloc[k])
	for _, b := range bps {
		slope -= b.use
	}
	if slope >= 0 {
		return 0
	}
	for _, b := range bps {
		slope += b.use
		if slope >= 0 {
			return b.at
		}
	}
	return bps[len(bps)-1].at
}

// diverse returns up to k patterns, each filling first with one of the k most valuable items (by value density)
// and then the rest in density order.
func diverse(items []item, alloc prep.Vec, k int) [][]int {
	order := densityOrder(items, alloc)
	var out [][]int
	for lead := 1; lead < len(order) && lead <= k; lead++ {
		o := append([]int{order[lead]}, order[:lead]...)
		o = append(o, order[lead+1:]...)
		cnt, _ := greedyFill(items, alloc, o)
		out = append(out, cnt)
	}
	return out
}
