package mip

import (
	"context"
	"fmt"
	"time"
)

// addZoneCopies adds, for every pattern column of a class in one zone, the same pods on the cheapest class of
// each other zone that holds them (same NodePool and weight, no limit, every group allowed there). With duals y,
// only copies whose reduced cost is at most maxRC are added: with the master's columns at reduced cost zero or
// more, a copy priced above the gap between the best plan and the LP value hardly ever helps a cheaper plan.
// It returns how many columns it added.
func (m *master) addZoneCopies(ctx context.Context, y []float64, maxRC float64) (int, error) {
	if !m.zones {
		return 0, nil
	}
	compat := make([]map[int]bool, len(m.classes))
	for ci := range m.classes {
		compat[ci] = make(map[int]bool, len(m.classes[ci].groups))
		for _, g := range m.classes[ci].groups {
			compat[ci][g] = true
		}
	}
	nz := len(m.c.Zones)
	n := len(m.cols)
	var ps []pattern
	for j := 0; j < n; j++ {
		col := &m.cols[j]
		if col.kind != colPattern {
			continue
		}
		cl := &m.classes[col.class]
		if cl.zone < 0 || cl.resident != nil {
			continue
		}
		use := make([]int64, len(cl.alloc))
		for _, uc := range col.counts {
			for k, r := range m.groups[uc.mg].req {
				use[k] += r * int64(uc.n)
			}
		}
		best := make([]int, nz)
		for z := range best {
			best[z] = -1
		}
		for ck := range m.classes {
			k := &m.classes[ck]
			if k.zone < 0 || k.zone == cl.zone || k.resident != nil || k.dominated || k.limit > 0 || k.pool != cl.pool || k.weight != cl.weight {
				continue
			}
			if best[k.zone] >= 0 && m.classes[best[k.zone]].price <= k.price {
				continue
			}
			ok := true
			for kk := range use {
				if use[kk] > k.alloc[kk] {
					ok = false
					break
				}
			}
			for _, uc := range col.counts {
				if !ok || !compat[ck][m.groups[uc.mg].g] {
					ok = false
					break
				}
			}
			if ok {
				best[k.zone] = ck
			}
		}
		for _, ck := range best {
			if ck >= 0 && y != nil {
				rows, vals := m.patternEntries(ck, col.counts)
				rc := m.patternCost(ck, col.counts)
				for r := range rows {
					rc -= y[rows[r]] * vals[r]
				}
				if rc > maxRC {
					continue
				}
			}
			if ck >= 0 {
				ps = append(ps, pattern{class: ck, counts: col.counts})
			}
		}
	}
	before := len(m.cols)
	err := m.addPatterns(ctx, ps)
	return len(m.cols) - before, err
}

// searchZoneCopies adds the zone copies of the master's patterns (addZoneCopies) whose reduced cost under the LP
// duals y could still pay off (at most the gap between res.Plan and the LP value lpValue), then runs the integer
// master again from res.Plan until the deadline, keeping a cheaper plan. It returns a note for the status.
func (m *master) searchZoneCopies(ctx context.Context, res *Result, y []float64, lpValue float64, deadline time.Time) string {
	best := res.Plan
	if !m.zones || best == nil || !m.placesAll(best) || res.LowerBound >= best.Cost*(1-0.002) ||
		time.Until(deadline) < 100*time.Millisecond {
		return ""
	}
	if res.Fixed {
		if err := m.unfix(ctx); err != nil {
			return "; zone copies: " + err.Error()
		}
		res.Fixed = false
	}
	n, err := m.addZoneCopies(ctx, y, best.Cost-lpValue)
	if err != nil {
		return "; zone copies: " + err.Error()
	}
	if n == 0 {
		return ""
	}
	start, whole, err := m.addWarm(ctx, best)
	if err != nil {
		return "; zone copies: " + err.Error()
	}
	if err := m.makeInteger(ctx); err != nil {
		return "; zone copies: " + err.Error()
	}
	if whole {
		full := make(map[int]float64, len(m.cols))
		for j := range m.cols {
			full[j] = start[j]
		}
		if err := m.inst.SetStart(ctx, full); err != nil {
			return "; zone copies: " + err.Error()
		}
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	ip, err := m.inst.Run(sctx)
	if err != nil {
		if ctx.Err() != nil {
			return ""
		}
		return "; zone copies: " + err.Error()
	}
	res.Columns = len(m.cols)
	p, _ := m.decode(ip, deadline)
	if p != nil && p.Cost < best.Cost-1e-9 {
		res.Plan = p
	}
	return fmt.Sprintf("; zone copies (%d): %s", n, ip.Status)
}
