package mip

import (
	"context"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
)

// withNeedlessNode is plan with one pod of its first new node moved onto a node of its own, of the cheapest
// offering in the same zone that holds it: a valid plan (when plan is one and the pod's rules allow it) that
// costs that node more, and whose neighbourhood holds plan itself.
func withNeedlessNode(p *model.Problem, plan *model.Plan) *model.Plan {
	w := *plan
	w.NewNodes = nil
	for _, nn := range plan.NewNodes {
		w.NewNodes = append(w.NewNodes, model.NewNode{Offering: nn.Offering, Pods: append([]model.GroupCount(nil), nn.Pods...)})
	}
	first := &w.NewNodes[0]
	g := first.Pods[0].Group
	if first.Pods[0].Count--; first.Pods[0].Count == 0 {
		first.Pods = first.Pods[1:]
	}
	zone := p.Offerings[first.Offering].Zone
	cheapest := -1
	for o := range p.Offerings {
		off := &p.Offerings[o]
		if off.Zone != zone || !p.Groups[g].Requests.Fits(off.Allocatable) {
			continue
		}
		if cheapest < 0 || off.Price < p.Offerings[cheapest].Price {
			cheapest = o
		}
	}
	w.NewNodes = append(w.NewNodes, model.NewNode{Offering: cheapest, Pods: []model.GroupCount{{Group: g, Count: 1}}})
	w.Cost = 0
	for _, nn := range w.NewNodes {
		w.Cost += p.Offerings[nn.Offering].Price
	}
	return &w
}

// needlessNodeCase compiles p, plans it with the greedy and adds a needless node to that plan (withNeedlessNode),
// returning a master for p with both plans; ok is false when the greedy plan has at most minNodes nodes or the
// moved pod's rules keep it where it was.
func needlessNodeCase(t *testing.T, p *model.Problem, minNodes int) (m *master, g, w *model.Plan, ok bool) {
	t.Helper()
	c, g := compiledWithGreedy(t, p)
	if len(g.NewNodes) <= minNodes {
		return nil, g, nil, false
	}
	if w = withNeedlessNode(p, g); w.Validate(p) != nil {
		return nil, g, nil, false
	}
	m, err := newMaster(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return m, g, w, true
}

// Repacking a plan that launches one node too many finds a plan no dearer than the plan without it, since that
// plan is in its neighbourhood; what it returns is valid and cheaper than what it was given.
func TestRepackDropsANeedlessNode(t *testing.T) {
	tried := 0
	for seed := uint64(1); seed <= 10; seed++ {
		p := compactProblem(seed)
		m, g, w, ok := needlessNodeCase(t, p, 0)
		if !ok {
			continue
		}
		tried++
		if slots, _ := m.repackSlots(w); slots == nil {
			t.Fatalf("seed %d: no repack model for a plan of %d nodes", seed, len(w.NewNodes))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rp, note, _ := m.repack(ctx, w)
		cancel()
		if rp == nil {
			t.Fatalf("seed %d: repacking $%.4f/h (greedy's $%.4f/h and a needless node) found nothing%s", seed, w.Cost, g.Cost, note)
		}
		if err := rp.Validate(p); err != nil {
			t.Fatalf("seed %d: repacked plan invalid: %v", seed, err)
		}
		if rp.Cost > g.Cost+1e-9 {
			t.Fatalf("seed %d: repacked plan $%.4f/h dearer than greedy's $%.4f/h, which it could keep%s", seed, rp.Cost, g.Cost, note)
		}
		t.Logf("seed %d: $%.4f/h -> $%.4f/h (greedy $%.4f/h)%s", seed, w.Cost, rp.Cost, g.Cost, note)
	}
	if tried < 5 {
		t.Fatalf("only %d of 10 problems gave a valid plan with a needless node", tried)
	}
}
