package solver

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/greedy"
	"github.com/packwright/packwright/solver/highs"
)

// weightProblem has a cheap pool "low" and a dear pool "high", each with one 4-cpu offering in zone a
// ($0.10 and $0.20), and optionally a pool "high2" of high's weight at $0.15. Group "web" has 10 one-cpu
// pods (4 per node).
type weightSetup struct {
	lowWeight, highWeight int32
	highLimit             int64 // cpu millicores, 0 for none
	highTaint             bool  // web tolerates it, batch (4 pods) does not
	high2                 bool
}

func (ws weightSetup) problem() *model.Problem {
	p := &model.Problem{Zones: []string{"a"}, Pools: []model.NodePool{{Name: "low", Weight: ws.lowWeight},
		{Name: "high", Weight: ws.highWeight}}}
	if ws.highLimit > 0 {
		p.Pools[1].Limits = model.Resources{model.CPU: ws.highLimit}
	}
	add := func(pool string, price float64, taints []model.Taint) {
		res := model.Resources{model.CPU: 4000, model.Memory: 16 * model.Gi, model.Pods: 110}
		id := pool + "-4"
		p.Offerings = append(p.Offerings, model.Offering{ID: id, NodePool: pool, InstanceType: id, Zone: "a",
			CapacityType: model.OnDemand, Price: price, Capacity: res.Clone(), Allocatable: res, Taints: taints,
			Labels: map[string]string{model.LabelZone: "a", model.LabelInstanceType: id, model.LabelNodePool: pool}})
	}
	var taints []model.Taint
	if ws.highTaint {
		taints = []model.Taint{{Key: "dedicated", Value: "high", Effect: model.NoSchedule}}
	}
	add("low", 0.10, nil)
	add("high", 0.20, taints)
	if ws.high2 {
		p.Pools = append(p.Pools, model.NodePool{Name: "high2", Weight: ws.highWeight})
		add("high2", 0.15, nil)
	}
	group := func(name string, n int, tolerate bool) model.PodGroup {
		g := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
			Requests: model.Resources{model.CPU: 1000, model.Memory: model.Gi, model.Pods: 1}}
		if tolerate {
			g.Tolerations = []model.Toleration{{Key: "dedicated", Operator: model.TolerationExists}}
		}
		for i := range n {
			g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i)})
		}
		return g
	}
	p.Groups = []model.PodGroup{group("web", 10, true)}
	if ws.highTaint {
		p.Groups = append(p.Groups, group("batch", 4, false))
	}
	return p
}

// podsPerPool counts the plan's pods on new nodes by NodePool.
func podsPerPool(p *model.Problem, pl *model.Plan) map[string]int {
	out := map[string]int{}
	for _, nn := range pl.NewNodes {
		for _, gc := range nn.Pods {
			out[p.Offerings[nn.Offering].NodePool] += gc.Count
		}
	}
	return out
}

func TestNodePoolWeights(t *testing.T) {
	if !highs.Available() {
		t.Fatal("HiGHS is not linked: build with cgo and hack/install-highs.sh")
	}
	for _, tc := range []struct {
		name  string
		setup weightSetup
		pods  map[string]int
		cost  float64
	}{
		{"higher weight wins over price", weightSetup{highWeight: 10}, map[string]int{"high": 10}, 0.60},
		{"a limit on the higher weight overflows to the lower", weightSetup{highWeight: 10, highLimit: 8000},
			map[string]int{"high": 8, "low": 2}, 0.50},
		{"incompatible pods go to the lower weight", weightSetup{highWeight: 10, highTaint: true},
			map[string]int{"high": 10, "low": 4}, 0.70},
		{"equal weights: the cheapest", weightSetup{}, map[string]int{"low": 10}, 0.30},
		{"price decides within a weight", weightSetup{highWeight: 10, high2: true}, map[string]int{"high2": 10}, 0.45},
		{"negative weights order too", weightSetup{lowWeight: -5, highWeight: -1}, map[string]int{"high": 10}, 0.60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup.problem()
			if err := p.Validate(); err != nil {
				t.Fatalf("test problem invalid: %v", err)
			}
			check := func(what string, pl *model.Plan) {
				t.Helper()
				if err := pl.Validate(p); err != nil {
					t.Fatalf("%s: invalid plan: %v", what, err)
				}
				if got := podsPerPool(p, pl); fmt.Sprint(got) != fmt.Sprint(tc.pods) {
					t.Fatalf("%s: pods per pool %v, want %v", what, got, tc.pods)
				}
				if math.Abs(pl.Cost-tc.cost) > 1e-9 {
					t.Fatalf("%s: cost $%.4f/h, want $%.4f/h", what, pl.Cost, tc.cost)
				}
				if pl.LowerBound < 0 || pl.LowerBound > pl.Cost+1e-9 {
					t.Fatalf("%s: bound %v outside [0, cost %v]", what, pl.LowerBound, pl.Cost)
				}
			}
			for _, kind := range []Kind{Greedy, Auto} {
				pl, err := Solve(context.Background(), p, Options{Kind: kind, Deadline: 2 * time.Second})
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				check(string(kind), pl)
			}
			// The MIP on its own, without the greedy plan to fall back on or to start from.
			c, res := mipAlone(t, p)
			check("mip", res.Plan)
			if b := res.LowerBound - c.PlanPenalty(res.Plan); b > res.Plan.Cost+1e-6 {
				t.Fatalf("mip: bound %v (less the plan's weight penalty) above cost %v", b, res.Plan.Cost)
			}
		})
	}
}

// The bound with weights bounds the plans that honour them as well as the plan does: here every plan that
// keeps all pods on the dear pool costs at least 2.5 nodes' worth, which the cheap pool alone would undercut.
func TestNodePoolWeightsBound(t *testing.T) {
	p := weightSetup{highWeight: 10}.problem()
	pl, err := Solve(context.Background(), p, Options{Deadline: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g, err := greedy.Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	if pl.LowerBound < 0.5-1e-6 || pl.LowerBound > pl.Cost+1e-9 {
		t.Fatalf("bound $%.4f/h, want within [$0.50, cost $%.4f]; greedy's own bound $%.4f/h (status %s: %s)",
			pl.LowerBound, pl.Cost, g.LowerBound, pl.Status, pl.StatusReason)
	}
}

// The portfolio property test with NodePool weights: the offerings of featureProblem are split between two
// pools of random weights (one sometimes limited), and every plan must validate (weights included), cost no
// more than greedy and keep its bound within [0, cost]. The MIP's plan must win some of the time: a MIP
// that ignored weights would always be rejected.
func TestPortfolioPropertiesWeighted(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	mipWins, tiered, broke := 0, 0, 0
	for trial := 0; trial < 40; trial++ {
		p := featureProblem(r)
		p.Pools[0].Weight = int32(r.IntN(3)) * 10
		spare := model.NodePool{Name: "spare", Weight: int32(r.IntN(3)) * 10}
		if r.IntN(3) == 0 {
			spare.Limits = model.Resources{model.CPU: int64(2+r.IntN(12)) * 1000}
		}
		p.Pools = append(p.Pools, spare)
		for i := range p.Offerings {
			if i%2 == 1 {
				p.Offerings[i].NodePool = "spare"
			}
		}
		if _, differ := p.OfferingWeights(); differ {
			tiered++
		}
		_, plan := portfolioVsGreedy(t, trial, p, 300*time.Millisecond)
		if plan.Solver != greedy.Name {
			mipWins++
		}
		// A MIP stopped by the deadline may return an incumbent that is not lexicographically optimal, which
		// validation rightly rejects; on problems this small that should be rare.
		if plan.Status == model.StatusGreedyFallback && strings.Contains(plan.StatusReason, "could take it") {
			broke++
			t.Logf("trial %d: the MIP's plan broke the weights: %s", trial, plan.StatusReason)
		}
	}
	t.Logf("%d of 40 problems tiered, MIP plan returned in %d, MIP plan rejected for weights in %d", tiered, mipWins, broke)
	if tiered < 15 || mipWins == 0 || broke > 2 {
		t.Fatalf("%d tiered problems, %d MIP plans, %d MIP plans against the weights", tiered, mipWins, broke)
	}
}
