package greedy

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// randomProblem builds a small problem that exercises every rule Plan.Validate checks: selectors, taints,
// GPUs, host ports, pod slots not declared, required (anti-)affinity within and across groups and against
// bound pods, DoNotSchedule spread on zone, hostname and a custom key (with minDomains), nodes lacking a
// topology label, and NodePool limits.
func randomProblem(seed uint64) *model.Problem {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	chance := func(p float64) bool { return r.Float64() < p }

	zones := []string{"a", "b", "c"}[:1+r.IntN(3)]
	p := &model.Problem{Zones: append([]string(nil), zones...)}
	if chance(0.2) {
		p.Zones = append(p.Zones, "d") // a zone without offerings
	}
	def := model.NodePool{Name: "default"}
	if chance(0.3) {
		def.Limits = model.Resources{model.CPU: int64(4+r.IntN(40)) * 1000}
	}
	if chance(0.15) {
		def.Limits = def.Limits.Add(model.Resources{model.Memory: int64(8+r.IntN(64)) * gi})
	}
	p.Pools = []model.NodePool{def, {Name: "special", Taints: []model.Taint{{Key: "dedicated", Value: "x", Effect: model.NoSchedule}}}}

	nOff := 3 + r.IntN(10)
	for i := 0; i < nOff; i++ {
		fam := pick("c", "m", "r")
		ratio := map[string]int64{"c": 2, "m": 4, "r": 8}[fam]
		cpu := []int64{1, 2, 4, 8, 16}[r.IntN(5)]
		zone := zones[r.IntN(len(zones))]
		pool := "default"
		var taints []model.Taint
		if chance(0.2) {
			pool = "special"
			taints = p.Pools[1].Taints
		}
		pods := []int64{4, 8, 110}[r.IntN(3)]
		alloc := model.Resources{model.CPU: cpu*1000 - 100, model.Memory: cpu*ratio*gi - gi/2, model.Pods: pods}
		capy := model.Resources{model.CPU: cpu * 1000, model.Memory: cpu * ratio * gi, model.Pods: pods}
		labels := map[string]string{model.LabelZone: zone, "family": fam, model.LabelNodePool: pool}
		if chance(0.1) {
			delete(labels, model.LabelZone) // the Zone field stands in
		}
		if chance(0.7) {
			labels["rack"] = pick("r1", "r2", "r3")
		}
		if chance(0.15) {
			gpus := int64(1 + r.IntN(2))
			alloc[model.GPU], capy[model.GPU] = gpus, gpus
			labels["accelerator"] = "nvidia"
		}
		id := fmt.Sprintf("%s%d-%d", fam, cpu, i)
		labels[model.LabelInstanceType] = id
		p.Offerings = append(p.Offerings, model.Offering{ID: id, NodePool: pool, InstanceType: id, Zone: zone,
			CapacityType: model.OnDemand, Price: float64(cpu) * 0.05 * (1 + 0.3*r.Float64()), Capacity: capy,
			Allocatable: alloc, Labels: labels, Taints: taints})
	}

	nGroups := 1 + r.IntN(6)
	app := func(i int) string { return fmt.Sprintf("g%d", i) }
	selector := func(self int) *model.LabelSelector {
		switch r.IntN(3) {
		case 0:
			return &model.LabelSelector{MatchLabels: map[string]string{"app": app(self)}}
		case 1:
			return &model.LabelSelector{MatchLabels: map[string]string{"app": app(r.IntN(nGroups))}}
		}
		return &model.LabelSelector{MatchLabels: map[string]string{"tier": pick("web", "db")}}
	}

	for i := 0; i < r.IntN(4); i++ {
		zone := zones[r.IntN(len(zones))]
		cpu := int64(2 + r.IntN(8))
		res := model.Resources{model.CPU: cpu * 1000, model.Memory: cpu * 4 * gi, model.Pods: 20}
		n := model.ExistingNode{Name: fmt.Sprintf("node-%d", i), NodePool: pick("default", ""), Zone: zone, Price: 0.1,
			Capacity: res.Clone(), Allocatable: res,
			Labels: map[string]string{model.LabelZone: zone, model.LabelHostname: fmt.Sprintf("node-%d", i), "family": pick("c", "m")}}
		if chance(0.1) {
			n.Zone = ""
			delete(n.Labels, model.LabelZone) // a node without the zone key
		}
		if chance(0.2) {
			delete(n.Labels, model.LabelHostname) // its name stands in
		}
		if chance(0.5) {
			n.Labels["rack"] = pick("r1", "r2", "r3")
		}
		if chance(0.2) {
			n.Taints = []model.Taint{{Key: "dedicated", Value: "x", Effect: model.NoSchedule}}
		}
		for j := 0; j < r.IntN(5); j++ {
			bp := model.BoundPod{Ref: model.PodRef{Namespace: "default", Name: fmt.Sprintf("bound-%d-%d", i, j)},
				Labels:   map[string]string{"app": app(r.IntN(nGroups + 1)), "tier": pick("web", "db")},
				Requests: model.Resources{model.CPU: int64(100 + r.IntN(1000)), model.Memory: int64(1+r.IntN(4)) * gi}}
			if chance(0.3) {
				bp.Requests[model.Pods] = 1
			}
			if chance(0.1) {
				bp.HostPorts = []int32{8080}
			}
			if chance(0.2) {
				bp.PodAntiAffinity = []model.PodAffinityTerm{{Selector: selector(nGroups),
					TopologyKey: pick(model.LabelHostname, model.LabelZone, "rack")}}
			}
			n.Pods = append(n.Pods, bp)
		}
		p.Nodes = append(p.Nodes, n)
	}

	for gi := 0; gi < nGroups; gi++ {
		ns := "default"
		if chance(0.15) {
			ns = "other"
		}
		g := model.PodGroup{Name: app(gi), Namespace: ns, Labels: map[string]string{"app": app(gi), "tier": pick("web", "db")},
			Requests: model.Resources{model.CPU: int64(100 + r.IntN(3000)), model.Memory: int64(128+r.IntN(8192)) << 20}}
		if chance(0.8) {
			g.Requests[model.Pods] = 1
		}
		if chance(0.1) {
			g.Requests[model.GPU] = 1
		}
		for j := 0; j < 1+r.IntN(15); j++ {
			g.Pods = append(g.Pods, model.PodRef{Namespace: ns, Name: fmt.Sprintf("%s-%d", app(gi), j)})
		}
		if chance(0.2) {
			if chance(0.5) {
				g.NodeSelector = map[string]string{"family": pick("c", "m", "r")}
			} else {
				g.NodeAffinity = model.NodeSelectorTerms{{{Key: "rack", Operator: model.OpIn, Values: []string{"r1", "r2"}}}}
			}
		}
		if chance(0.3) {
			g.Tolerations = []model.Toleration{{Key: "dedicated", Operator: model.TolerationExists}}
		}
		if chance(0.1) {
			g.HostPorts = []int32{[]int32{8080, 9090, 0}[r.IntN(3)]}
		}
		term := func(keys ...string) model.PodAffinityTerm {
			t := model.PodAffinityTerm{Selector: selector(gi), TopologyKey: pick(keys...)}
			if chance(0.15) {
				t.Namespaces = []string{"default", "other"}
			}
			return t
		}
		for n := 0; chance(0.3) && n < 2; n++ {
			g.PodAntiAffinity = append(g.PodAntiAffinity, term(model.LabelHostname, model.LabelZone, "rack"))
		}
		for n := 0; chance(0.2) && n < 2; n++ {
			g.PodAffinity = append(g.PodAffinity, term(model.LabelHostname, model.LabelZone))
		}
		for n := 0; chance(0.35) && n < 2; n++ {
			sc := model.TopologySpread{MaxSkew: int32(1 + r.IntN(2)), TopologyKey: pick(model.LabelZone, model.LabelZone, model.LabelHostname, "rack"),
				WhenUnsatisfiable: model.DoNotSchedule, Selector: selector(gi)}
			if chance(0.2) {
				sc.WhenUnsatisfiable = model.ScheduleAnyway
			} else if chance(0.2) {
				sc.MinDomains = int32(1 + r.IntN(4))
			}
			g.TopologySpread = append(g.TopologySpread, sc)
		}
		p.Groups = append(p.Groups, g)
	}
	return p
}

// TestRandomProblemsValidate is the property test: over 200 seeded random problems every plan validates and
// accounts for every pod, and the lower bound stays within [0, cost].
func TestRandomProblemsValidate(t *testing.T) {
	placed, total := 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		p := randomProblem(seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			plan := solve(t, p)
			for _, g := range p.Groups {
				total += g.Demand()
				placed += g.Demand()
			}
			for _, u := range plan.Unschedulable {
				placed -= u.Count
			}
		})
	}
	// Guard against a solver that passes by placing nothing.
	if placed < total/2 {
		t.Errorf("only %d of %d pods placed over all problems", placed, total)
	}
}

// TestSolveCompiledSharesNothing runs two solves of one compiled problem at once (the portfolio shares it
// with the MIP): under the race detector any write to it fails, and the plans must be identical.
func TestSolveCompiledSharesNothing(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		p := randomProblem(seed)
		c, err := prep.Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		plans := make([]*model.Plan, 2)
		var wg sync.WaitGroup
		for i := range plans {
			wg.Go(func() {
				pl, err := SolveCompiled(c)
				if err != nil {
					t.Error(err)
					return
				}
				pl.Duration = 0
				plans[i] = pl
			})
		}
		wg.Wait()
		if !reflect.DeepEqual(plans[0], plans[1]) {
			t.Fatalf("seed %d: two solves differ:\n%s\n%s", seed, describePlan(p, plans[0]), describePlan(p, plans[1]))
		}
	}
}

// weighted turns a random problem into one with NodePool weights: the two pools get random weights, and a
// third pool "backup" offers a copy of some offerings at a lower price, with a random weight and sometimes a
// cpu limit, so that weights, prices and limits pull in different directions.
func weighted(p *model.Problem, seed uint64) *model.Problem {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	w := func() int32 { return []int32{0, 10, 50}[r.IntN(3)] }
	q := *p
	q.Pools = append([]model.NodePool(nil), p.Pools...)
	q.Offerings = append([]model.Offering(nil), p.Offerings...)
	q.Pools[0].Weight, q.Pools[1].Weight = w(), w()
	backup := model.NodePool{Name: "backup", Weight: w()}
	if r.IntN(3) == 0 {
		backup.Limits = model.Resources{model.CPU: int64(2+r.IntN(16)) * 1000}
	}
	q.Pools = append(q.Pools, backup)
	for _, o := range p.Offerings {
		if o.NodePool != "default" || r.IntN(2) == 0 {
			continue
		}
		o.ID += "-backup"
		o.NodePool = "backup"
		o.Price *= 0.7
		o.Labels = model.WithLabel(o.Labels, model.LabelNodePool, "backup")
		o.Labels = model.WithLabel(o.Labels, model.LabelInstanceType, o.ID)
		q.Offerings = append(q.Offerings, o)
	}
	return &q
}

// TestRandomWeightedProblemsValidate is the property test with NodePool weights: every plan validates
// (Plan.Validate includes the weight rule) and accounts for every pod.
func TestRandomWeightedProblemsValidate(t *testing.T) {
	tiered := 0
	for seed := uint64(1); seed <= 500; seed++ {
		p := weighted(randomProblem(seed), seed)
		if _, differ := p.OfferingWeights(); differ {
			tiered++
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { solve(t, p) })
	}
	if tiered < 250 {
		t.Errorf("only %d of 500 problems have pools of different weights", tiered)
	}
}
