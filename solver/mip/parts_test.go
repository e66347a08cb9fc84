package mip

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
)

// Repacking the parts of a plan that launches one node too many finds a cheaper plan: a part that holds the
// needless node and the node its pod came from closes it. What it returns is valid.
func TestRepackPartsDropsANeedlessNode(t *testing.T) {
	tried := 0
	for seed := uint64(1); seed <= 10; seed++ {
		p := compactProblem(seed)
		// Four times the pods, for plans of more nodes than a part.
		for i := range p.Groups {
			g := &p.Groups[i]
			for n := len(g.Pods); len(g.Pods) < 4*n; {
				g.Pods = append(g.Pods, model.PodRef{Namespace: g.Namespace, Name: fmt.Sprintf("%s-x%d", g.Name, len(g.Pods))})
			}
		}
		m, g, w, ok := needlessNodeCase(t, p, partsMinNodes)
		if !ok {
			continue
		}
		tried++
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		pp, note := m.repackParts(ctx, w, seed)
		cancel()
		if pp == nil {
			t.Fatalf("seed %d: repacking parts of $%.4f/h (%d nodes, greedy's $%.4f/h) found nothing%s", seed, w.Cost, len(w.NewNodes), g.Cost, note)
		}
		if err := pp.Validate(p); err != nil {
			t.Fatalf("seed %d: plan invalid: %v", seed, err)
		}
		if pp.Cost >= w.Cost-1e-9 {
			t.Fatalf("seed %d: plan $%.4f/h no cheaper than $%.4f/h%s", seed, pp.Cost, w.Cost, note)
		}
		t.Logf("seed %d: %d nodes $%.4f/h -> $%.4f/h (greedy $%.4f/h)%s", seed, len(w.NewNodes), w.Cost, pp.Cost, g.Cost, note)
	}
	if tried < 5 {
		t.Fatalf("only %d of 10 problems gave a valid plan with needless nodes", tried)
	}
}
