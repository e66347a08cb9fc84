package mip

import (
	"context"
	"math"
	"testing"
)

// A pattern priced in one zone is copied, pods and all, to the cheapest class of every other zone that holds
// them; duals that price the copies above maxRC keep them out.
func TestZoneCopiesOfAPattern(t *testing.T) {
	p, c := zoneSpreadWeb(t, 12, false)
	ctx := context.Background()

	tests := []struct {
		name  string
		duals bool    // zero duals: a copy's reduced cost is its price
		maxRC float64 // the copies' reduced-cost cut-off
		want  int     // copies expected
	}{
		{"no filter", false, math.Inf(1), 2},
		{"all priced out", true, 0.01, 0},
		{"all priced in", true, 10, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := builtMaster(t, ctx, c)
			if !m.zones {
				t.Fatal("zones do not matter to a zone-spread group's master")
			}
			// The cheapest class in z1 holding 4 pods.
			orig := -1
			for ci, cl := range m.classes {
				fits := true
				for k, r := range m.groups[0].req {
					fits = fits && 4*r <= cl.alloc[k]
				}
				if fits && cl.zone >= 0 && c.Zones[cl.zone] == "z1" && !cl.dominated && (orig < 0 || cl.price < m.classes[orig].price) {
					orig = ci
				}
			}
			if orig < 0 {
				t.Fatal("no class in z1 holds 4 pods")
			}
			counts := []unitCount{{0, 4}}
			if err := m.addPatterns(ctx, []pattern{{class: orig, counts: counts}}); err != nil {
				t.Fatal(err)
			}
			before := len(m.cols)
			var y []float64
			if tc.duals {
				y = make([]float64, m.nrows)
			}
			n, err := m.addZoneCopies(ctx, y, tc.maxRC)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want || len(m.cols)-before != n {
				t.Fatalf("%d copies (%d columns added), want %d", n, len(m.cols)-before, tc.want)
			}
			seen := map[string]bool{}
			origType := p.Offerings[m.classes[orig].rep].InstanceType
			for _, col := range m.cols[before:] {
				cl := m.classes[col.class]
				z := c.Zones[cl.zone]
				if col.kind != colPattern || len(col.counts) != 1 || col.counts[0] != counts[0] {
					t.Fatalf("copy %+v: want the pattern's 4 pods", col)
				}
				if z == "z1" || seen[z] {
					t.Fatalf("copy in zone %s: want one in each of z2 and z3", z)
				}
				seen[z] = true
				// Every zone offers the same shapes, so the cheapest that holds the pods is the same type.
				if got := p.Offerings[cl.rep].InstanceType; got != origType {
					t.Errorf("copy in %s on %s, want %s", z, got, origType)
				}
			}
		})
	}
}
