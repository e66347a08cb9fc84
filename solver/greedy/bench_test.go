package greedy

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// largeProblem builds the benchmark workload: pods pods in groups groups (mixed cpu/memory shapes; about 10%
// spread over zones with maxSkew 1, 3% one per node, 5% pinned to a capacity type) against offers offerings
// in 3 zones, with 60 existing nodes partly filled.
func largeProblem(seed uint64, pods, groups, offers int) *model.Problem {
	r := rand.New(rand.NewPCG(seed, 42))
	zones := []string{"z1", "z2", "z3"}
	p := &model.Problem{Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
	sizes := []int64{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128}
	ratios := []int64{1, 2, 4, 8}
	for f := 0; len(p.Offerings) < offers; f++ {
		ratio := ratios[f%len(ratios)]
		perCPU := []float64{0.036, 0.0425, 0.048, 0.063}[f%len(ratios)] * (0.85 + 0.3*r.Float64())
		for _, cpu := range sizes {
			for zi, z := range zones {
				for _, ct := range []string{model.OnDemand, model.Spot} {
					if len(p.Offerings) == offers {
						break
					}
					price := perCPU * float64(cpu) * (1 + 0.02*float64(zi))
					if ct == model.Spot {
						price *= 0.3 + 0.2*r.Float64()
					}
					mem := cpu * ratio * gi
					podsCap := int64(110)
					if cpu <= 2 {
						podsCap = 29
					}
					id := fmt.Sprintf("f%d.%dx/%s/%s", f, cpu, z, ct)
					p.Offerings = append(p.Offerings, model.Offering{ID: id, NodePool: "default", InstanceType: fmt.Sprintf("f%d.%dx", f, cpu),
						Zone: z, CapacityType: ct, Price: price,
						Capacity: model.Resources{model.CPU: cpu * 1000, model.Memory: mem, model.Pods: podsCap},
						Allocatable: model.Resources{model.CPU: cpu*1000 - 100 - cpu*10, model.Memory: mem - gi/2 - mem/20,
							model.Pods: podsCap},
						Labels: map[string]string{model.LabelZone: z, model.LabelCapacityType: ct,
							model.LabelInstanceType: fmt.Sprintf("f%d.%dx", f, cpu)}})
				}
			}
		}
	}
	for i := 0; i < 60; i++ {
		z := zones[i%3]
		res := model.Resources{model.CPU: 16000, model.Memory: 64 * gi, model.Pods: 110}
		n := model.ExistingNode{Name: fmt.Sprintf("node-%d", i), NodePool: "default", Zone: z, Price: 0.8,
			Capacity: res.Clone(), Allocatable: res,
			Labels: map[string]string{model.LabelZone: z, model.LabelHostname: fmt.Sprintf("node-%d", i), model.LabelCapacityType: model.OnDemand}}
		for j := 0; j < r.IntN(20); j++ {
			n.Pods = append(n.Pods, model.BoundPod{Ref: model.PodRef{Namespace: "default", Name: fmt.Sprintf("bound-%d-%d", i, j)},
				Labels:   map[string]string{"app": fmt.Sprintf("g%d", r.IntN(groups))},
				Requests: model.Resources{model.CPU: 500, model.Memory: 2 * gi, model.Pods: 1}})
		}
		p.Nodes = append(p.Nodes, n)
	}
	weights := make([]float64, groups)
	sum := 0.0
	for g := range weights {
		weights[g] = 0.2 + r.ExpFloat64()
		sum += weights[g]
	}
	left := pods
	for g := 0; g < groups; g++ {
		name := fmt.Sprintf("g%d", g)
		n := int(float64(pods) * weights[g] / sum)
		if g == groups-1 {
			n = left
		}
		n = max(min(n, left), 0)
		cpu := []int64{100, 250, 500, 1000, 2000, 4000}[r.IntN(6)]
		memPerCPU := []float64{0.5, 1, 2, 4, 8, 16}[r.IntN(6)]
		pg := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
			Requests: model.Resources{model.CPU: cpu, model.Memory: int64(float64(cpu) * memPerCPU * float64(model.Mi)), model.Pods: 1}}
		switch x := r.Float64(); {
		case x < 0.10:
			pg.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule,
				Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": name}}}}
		case x < 0.13:
			n = min(n, 3+r.IntN(20))
			pg.PodAntiAffinity = []model.PodAffinityTerm{{Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": name}},
				TopologyKey: model.LabelHostname}}
		case x < 0.18:
			pg.NodeSelector = map[string]string{model.LabelCapacityType: []string{model.Spot, model.OnDemand}[r.IntN(2)]}
		}
		left -= n
		for i := 0; i < n; i++ {
			pg.Pods = append(pg.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i)})
		}
		p.Groups = append(p.Groups, pg)
	}
	return p
}

func demand(p *model.Problem) int {
	n := 0
	for _, g := range p.Groups {
		n += g.Demand()
	}
	return n
}

// TestLargeProblemValidates solves the benchmark workload once, checks the plan and logs its quality.
func TestLargeProblemValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("large problem")
	}
	p := largeProblem(1, 50000, 300, 2000)
	if len(p.Offerings) != 2000 || len(p.Groups) != 300 || demand(p) != 50000 {
		t.Fatalf("generator: %d offerings, %d groups, %d pods", len(p.Offerings), len(p.Groups), demand(p))
	}
	began := time.Now()
	plan := solve(t, p)
	t.Logf("50k pods: %d new nodes, cost %.2f, bound %.2f, gap %.1f%%, %d unschedulable entries, in %v (Duration %v)",
		len(plan.NewNodes), plan.Cost, plan.LowerBound, 100*plan.Gap(), len(plan.Unschedulable), time.Since(began), plan.Duration)
}

// BenchmarkGreedy50k plans 50,000 pods in 300 groups against 2,000 offerings in 3 zones, end to end (prep's
// compilation included) and from the compiled problem.
func BenchmarkGreedy50k(b *testing.B) {
	p := largeProblem(1, 50000, 300, 2000)
	b.Run("solve", func(b *testing.B) {
		var plan *model.Plan
		for b.Loop() {
			var err error
			if plan, err = Solve(p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(plan.NewNodes)), "nodes")
		b.ReportMetric(100*plan.Gap(), "gap%")
	})
	b.Run("compiled", func(b *testing.B) {
		c, err := prep.Compile(p)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := SolveCompiled(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
