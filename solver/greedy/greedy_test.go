package greedy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver/internal/prep"
)

// kwok is a c/m/r catalog (2/4/8 GiB per vCPU) with linear prices in the given zones.
func kwok(zones ...string) []model.Offering {
	return slices.Concat(family("c", 2, 0.0425, zones...), family("m", 4, 0.048, zones...), family("r", 8, 0.063, zones...))
}

func selfAnti(g *model.PodGroup, key string) {
	g.PodAntiAffinity = append(g.PodAntiAffinity, model.PodAffinityTerm{
		Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": g.Name}}, TopologyKey: key})
}

func zoneSpread(g *model.PodGroup, skew int32) {
	g.TopologySpread = append(g.TopologySpread, model.TopologySpread{MaxSkew: skew, TopologyKey: model.LabelZone,
		WhenUnsatisfiable: model.DoNotSchedule, Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": g.Name}}})
}

func TestScenarios(t *testing.T) {
	tests := []struct {
		name  string
		build func() *model.Problem
		check func(t *testing.T, p *model.Problem, plan *model.Plan)
	}{
		{
			name: "existing nodes are used before new ones",
			build: func() *model.Problem {
				p := problem([]model.PodGroup{group("web", 6, 1000, gi)}, kwok("a"), "a")
				p.Nodes = []model.ExistingNode{existing("n1", "a", 4, 16, 0.2)}
				return p
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				on := placedOn(p, plan, 0)
				if on["node:n1"] != 4 {
					t.Errorf("existing node holds %d pods, want 4 (all it has room for): %v", on["node:n1"], on)
				}
				if n, _ := unschedulable(plan, 0); n != 0 {
					t.Errorf("%d unschedulable", n)
				}
				if math.Abs(plan.Cost-2*0.0425) > 1e-9 {
					t.Errorf("cost %v, want one c2 for the 2 pods left (0.085)", plan.Cost)
				}
			},
		},
		{
			name:  "memory-heavy pods go to the r family",
			build: func() *model.Problem { return problem([]model.PodGroup{group("cache", 40, 500, 4*gi)}, kwok("a"), "a") },
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				for _, nn := range plan.NewNodes {
					if f := p.Offerings[nn.Offering].Labels["family"]; f != "r" {
						t.Errorf("node of family %s, want r", f)
					}
				}
				// 20 vCPU and 160 GiB: r16 + r4 is the optimum.
				if math.Abs(plan.Cost-20*0.063) > 1e-9 {
					t.Errorf("cost %v, want %v", plan.Cost, 20*0.063)
				}
			},
		},
		{
			name:  "cpu-heavy pods go to the c family",
			build: func() *model.Problem { return problem([]model.PodGroup{group("batch", 30, 2000, gi)}, kwok("a"), "a") },
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				for _, nn := range plan.NewNodes {
					if f := p.Offerings[nn.Offering].Labels["family"]; f != "c" {
						t.Errorf("node of family %s, want c", f)
					}
				}
			},
		},
		{
			name: "hostname anti-affinity puts one pod per node",
			build: func() *model.Problem {
				g := group("etcd", 5, 500, gi)
				selfAnti(&g, model.LabelHostname)
				return problem([]model.PodGroup{g}, kwok("a"), "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if nodes, most := nodesWith(plan, 0); nodes != 5 || most != 1 {
					t.Errorf("%d nodes, at most %d pods on one; want 5 and 1", nodes, most)
				}
			},
		},
		{
			name: "zone spread maxSkew 1 balances three zones",
			build: func() *model.Problem {
				g := group("api", 10, 1000, gi)
				zoneSpread(&g, 1)
				offs := kwok("a", "b")
				for _, o := range kwok("c") { // the dearest zone must still get its share
					o.Price *= 1.3
					offs = append(offs, o)
				}
				return problem([]model.PodGroup{g}, offs, "a", "b", "c")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				z := perZone(p, plan, 0)
				counts := []int{z["a"], z["b"], z["c"]}
				slices.Sort(counts)
				if !slices.Equal(counts, []int{3, 3, 4}) {
					t.Errorf("per zone %v, want 3/3/4", z)
				}
			},
		},
		{
			name: "zone spread counts bound pods",
			build: func() *model.Problem {
				g := group("api", 6, 1000, gi)
				zoneSpread(&g, 1)
				n := existing("n1", "a", 16, 64, 0.8)
				for i := 0; i < 3; i++ {
					n.Pods = append(n.Pods, model.BoundPod{Ref: model.PodRef{Namespace: "default", Name: "old-" + string(rune('0'+i))},
						Labels: map[string]string{"app": "api"}, Requests: model.Resources{model.CPU: 1000, model.Pods: 1}})
				}
				p := problem([]model.PodGroup{g}, kwok("a", "b", "c"), "a", "b", "c")
				p.Nodes = []model.ExistingNode{n}
				return p
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				z := perZone(p, plan, 0)
				if z["a"] != 0 || z["b"] != 3 || z["c"] != 3 {
					t.Errorf("per zone %v, want a:0 b:3 c:3 (a already has 3)", z)
				}
			},
		},
		{
			name: "NodePool limit is respected and the excess reported",
			build: func() *model.Problem {
				p := problem([]model.PodGroup{group("web", 12, 1000, gi)}, family("c", 2, 0.0425, "a"), "a")
				p.Pools[0].Limits = model.Resources{model.CPU: 8000}
				return p
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				n, why := unschedulable(plan, 0)
				if n != 4 {
					t.Errorf("%d unschedulable, want 4 (8 vCPU limit)", n)
				}
				if !strings.Contains(why, "nodepool default: cpu limit reached") {
					t.Errorf("reason %q does not name the pool limit", why)
				}
			},
		},
		{
			name: "NodePool limit on a resource no pod requests",
			build: func() *model.Problem {
				offs := family("c", 2, 0.0425, "a")
				for i := range offs {
					offs[i].Capacity[model.GPU] = 1 // every node would bring a GPU
				}
				p := problem([]model.PodGroup{group("web", 6, 1000, gi)}, offs, "a")
				p.Pools[0].Limits = model.Resources{model.GPU: 1}
				return p
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if len(plan.NewNodes) != 1 {
					t.Errorf("%d new nodes, want 1 (GPU limit 1)", len(plan.NewNodes))
				}
				if _, why := unschedulable(plan, 0); !strings.Contains(why, "nvidia.com/gpu limit reached") {
					t.Errorf("reason %q", why)
				}
			},
		},
		{
			name: "impossible pod is reported with prep's reason",
			build: func() *model.Problem {
				return problem([]model.PodGroup{group("huge", 2, 100000, gi), group("ok", 1, 1000, gi)}, kwok("a"), "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				n, why := unschedulable(plan, 0)
				if n != 2 || !strings.Contains(why, "cpu") {
					t.Errorf("%d unschedulable with %q, want 2 naming cpu", n, why)
				}
				if n, _ := unschedulable(plan, 1); n != 0 {
					t.Errorf("the possible group has %d unschedulable", n)
				}
			},
		},
		{
			name: "taints keep intolerant pods off and tolerant pods use the cheaper nodes",
			build: func() *model.Problem {
				offs := kwok("a")
				for _, o := range family("m", 4, 0.02, "a") { // cheap but tainted
					o.ID = "spot-" + o.ID
					o.Taints = []model.Taint{{Key: "spot", Value: "true", Effect: model.NoSchedule}}
					offs = append(offs, o)
				}
				tol := group("tolerant", 8, 1000, 2*gi)
				tol.Tolerations = []model.Toleration{{Key: "spot", Operator: model.TolerationEqual, Value: "true", Effect: model.NoSchedule}}
				return problem([]model.PodGroup{group("intolerant", 8, 1000, 2*gi), tol}, offs, "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				for _, nn := range plan.NewNodes {
					tainted := len(p.Offerings[nn.Offering].Taints) > 0
					for _, gc := range nn.Pods {
						if gc.Group == 0 && tainted {
							t.Errorf("intolerant pods on tainted %s", p.Offerings[nn.Offering].ID)
						}
						if gc.Group == 1 && !tainted {
							t.Errorf("tolerant pods on dearer untainted %s", p.Offerings[nn.Offering].ID)
						}
					}
				}
			},
		},
		{
			name: "GPU pods go to GPU nodes by selector, and others stay off them",
			build: func() *model.Problem {
				offs := kwok("a")
				for _, gpus := range []int64{1, 4} {
					o := offering("g4."+string(rune('0'+gpus)), "a", 4*gpus, 16*gpus, 0.5*float64(gpus))
					o.Labels["accelerator"] = "nvidia"
					o.Allocatable[model.GPU], o.Capacity[model.GPU] = gpus, gpus
					o.Taints = []model.Taint{{Key: "nvidia.com/gpu", Effect: model.NoSchedule}}
					offs = append(offs, o)
				}
				train := group("train", 3, 2000, 8*gi)
				train.Requests[model.GPU] = 1
				train.NodeSelector = map[string]string{"accelerator": "nvidia"}
				train.Tolerations = []model.Toleration{{Key: "nvidia.com/gpu", Operator: model.TolerationExists}}
				return problem([]model.PodGroup{train, group("web", 4, 1000, gi)}, offs, "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				for _, nn := range plan.NewNodes {
					gpu := p.Offerings[nn.Offering].Allocatable[model.GPU] > 0
					for _, gc := range nn.Pods {
						if (gc.Group == 0) != gpu {
							t.Errorf("group %s on %s", p.Groups[gc.Group].Name, p.Offerings[nn.Offering].ID)
						}
					}
				}
				if n, _ := unschedulable(plan, 0); n != 0 {
					t.Errorf("%d GPU pods unschedulable", n)
				}
			},
		},
		{
			name: "a pod slot is charged even when not requested",
			build: func() *model.Problem {
				g := group("tiny", 10, 100, 64<<20)
				delete(g.Requests, model.Pods)
				offs := kwok("a")
				for i := range offs {
					offs[i].Allocatable[model.Pods] = 3
				}
				return problem([]model.PodGroup{g}, offs, "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if _, most := nodesWith(plan, 0); most > 3 {
					t.Errorf("%d pods on one node with 3 pod slots", most)
				}
			},
		},
		{
			name: "zone anti-affinity allows one pod per zone",
			build: func() *model.Problem {
				g := group("leader", 5, 1000, gi)
				selfAnti(&g, model.LabelZone)
				return problem([]model.PodGroup{g}, kwok("a", "b", "c"), "a", "b", "c")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				z := perZone(p, plan, 0)
				if z["a"] != 1 || z["b"] != 1 || z["c"] != 1 {
					t.Errorf("per zone %v, want one each", z)
				}
				if n, why := unschedulable(plan, 0); n != 2 || !strings.Contains(why, "anti-affinity") {
					t.Errorf("%d unschedulable with %q, want 2 naming anti-affinity", n, why)
				}
			},
		},
		{
			name: "bound pods' zone anti-affinity keeps the group out, the reason naming three of them",
			build: func() *model.Problem {
				p := problem([]model.PodGroup{group("web", 2, 250, gi)}, kwok("a"), "a")
				repel := []model.PodAffinityTerm{{Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					TopologyKey: model.LabelZone}}
				for i := range 5 {
					n := existing(fmt.Sprintf("n%d", i), "a", 4, 16, 0.2)
					n.Pods = []model.BoundPod{{Ref: model.PodRef{Namespace: "default", Name: fmt.Sprintf("guard-%d", i)},
						Labels: map[string]string{"app": "guard"}, Requests: model.Resources{model.CPU: 100, model.Pods: 1},
						PodAntiAffinity: repel}}
					p.Nodes = append(p.Nodes, n)
				}
				return p
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				n, why := unschedulable(plan, 0)
				if n != 2 || !strings.Contains(why, "of bound pod default/guard-0") ||
					!strings.Contains(why, "default/guard-2") || strings.Contains(why, "guard-3") ||
					!strings.Contains(why, "(and 2 more terms of other pods)") {
					t.Errorf("%d unschedulable with %q, want 2 naming guard-0 to guard-2 and 2 more", n, why)
				}
			},
		},
		{
			name: "required hostname affinity follows the target group",
			build: func() *model.Problem {
				sidecar := group("sidecar", 3, 250, gi)
				sidecar.PodAffinity = []model.PodAffinityTerm{{
					Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: model.LabelHostname}}
				return problem([]model.PodGroup{sidecar, group("web", 4, 1000, gi)}, kwok("a"), "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if n, why := unschedulable(plan, 0); n != 0 {
					t.Errorf("%d sidecars unschedulable: %s", n, why)
				}
			},
		},
		{
			name: "self hostname affinity co-locates on the cheapest node holding all",
			build: func() *model.Problem {
				g := group("pack", 6, 1000, 2*gi)
				g.PodAffinity = []model.PodAffinityTerm{{
					Selector: &model.LabelSelector{MatchLabels: map[string]string{"app": "pack"}}, TopologyKey: model.LabelHostname}}
				return problem([]model.PodGroup{g}, kwok("a"), "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if len(plan.NewNodes) != 1 || p.Offerings[plan.NewNodes[0].Offering].InstanceType != "c8" {
					t.Errorf("want one c8 node: %s", describePlan(p, plan))
				}
			},
		},
		{
			name: "groups sharing a host port never share a node",
			build: func() *model.Problem {
				a, b := group("a", 3, 500, gi), group("b", 3, 500, gi)
				a.HostPorts, b.HostPorts = []int32{8080}, []int32{8080, 9090}
				return problem([]model.PodGroup{a, b}, kwok("a"), "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if len(plan.NewNodes) != 6 {
					t.Errorf("%d nodes, want 6", len(plan.NewNodes))
				}
			},
		},
		{
			name: "lower bound is the fractional optimum",
			build: func() *model.Problem {
				o := offering("m4", "a", 4, 16, 1)
				return problem([]model.PodGroup{group("web", 10, 1000, gi)}, []model.Offering{o}, "a")
			},
			check: func(t *testing.T, p *model.Problem, plan *model.Plan) {
				if math.Abs(plan.Cost-3) > 1e-9 || math.Abs(plan.LowerBound-2.5) > 1e-6 {
					t.Errorf("cost %v bound %v, want 3 and 2.5", plan.Cost, plan.LowerBound)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.build()
			plan := solve(t, p)
			tc.check(t, p, plan)
		})
	}
}

// TestShrinkLowersCost checks the final step on a plan whose nodes were sized for more pods than they got: a
// DoNotSchedule zone spread whose third zone is a domain (an existing, tainted node matches the pods' node
// selection) but cannot take pods, so each other zone is held to one pod.
func TestShrinkLowersCost(t *testing.T) {
	g := group("api", 10, 1000, 2*gi)
	zoneSpread(&g, 1)
	n := existing("tainted", "c", 8, 32, 0.4)
	n.Taints = []model.Taint{{Key: "dedicated", Value: "db", Effect: model.NoSchedule}}
	p := problem([]model.PodGroup{g}, kwok("a", "b"), "a", "b", "c")
	p.Nodes = []model.ExistingNode{n}

	c, err := prep.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSolver(c)
	if err != nil {
		t.Fatal(err)
	}
	s.placeAll()
	before := s.plan()
	checkPlan(t, p, before)
	s.shrink()
	after := s.plan()
	checkPlan(t, p, after)
	if !(after.Cost < before.Cost-1e-9) {
		t.Fatalf("shrink did not lower the cost: %v -> %v\nbefore: %s", before.Cost, after.Cost, describePlan(p, before))
	}
	if n, why := unschedulable(after, 0); n != 8 || !strings.Contains(why, "topology spread") {
		t.Errorf("%d unschedulable with %q, want 8 naming the spread", n, why)
	}
	// And through the public entry point.
	if plan := solve(t, p); math.Abs(plan.Cost-after.Cost) > 1e-9 {
		t.Errorf("Solve cost %v, want %v", plan.Cost, after.Cost)
	}
}
