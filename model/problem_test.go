package model

import (
	"math"
	"strings"
	"testing"
)

func TestProblemValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *Problem)
		want   string // "" when valid
	}{
		{"valid", func(p *Problem) {}, ""},
		{"duplicate group", func(p *Problem) { p.Groups = append(p.Groups, p.Groups[0]) }, `group "ns/web": duplicate name`},
		{"pod in two groups", func(p *Problem) {
			g := group("other", 0, 1, nil)
			g.Pods = []PodRef{p.Groups[0].Pods[0]}
			p.Groups = append(p.Groups, g)
		}, `group "ns/other": pod ns/web-0 also in group "ns/web"`},
		{"pod both pending and bound", func(p *Problem) {
			p.Nodes = []ExistingNode{existing("n1", "a", BoundPod{Ref: p.Groups[0].Pods[0]})}
		}, `node "n1": pod ns/web-0 also in group "ns/web"`},
		{"negative request", func(p *Problem) { p.Groups[0].Requests[CPU] = -1 }, `group "ns/web": requests: cpu is negative`},
		{"bad node affinity", func(p *Problem) {
			p.Groups[0].NodeAffinity = NodeSelectorTerms{{req("cpu", OpGt, "x")}}
		}, `group "ns/web": node affinity: term 0: requirement on "cpu"`},
		{"bad toleration", func(p *Problem) { p.Groups[0].Tolerations = []Toleration{{Value: "v"}} }, `group "ns/web": toleration`},
		{"bad host port", func(p *Problem) { p.Groups[0].HostPorts = []int32{70000} }, "host port 70000"},
		{"bad spread", func(p *Problem) {
			p.Groups[0].TopologySpread = []TopologySpread{{MaxSkew: 0, TopologyKey: LabelZone, WhenUnsatisfiable: DoNotSchedule}}
		}, "topology spread 0: maxSkew 0"},
		{"affinity without key", func(p *Problem) {
			p.Groups[0].PodAffinity = []PodAffinityTerm{{Selector: sel("a", "b")}}
		}, "pod affinity term 0: empty topology key"},
		{"duplicate offering", func(p *Problem) { p.Offerings[1].ID = p.Offerings[0].ID }, `offering "small-a": duplicate ID`},
		{"unknown pool", func(p *Problem) { p.Offerings[0].NodePool = "gpu" }, `offering "small-a": unknown NodePool "gpu"`},
		{"negative price", func(p *Problem) { p.Offerings[0].Price = -1 }, `offering "small-a": price -1`},
		{"NaN price", func(p *Problem) { p.Offerings[0].Price = math.NaN() }, `offering "small-a": price NaN`},
		{"negative allocatable", func(p *Problem) { p.Offerings[2].Allocatable[Memory] = -5 }, `offering "big-a": allocatable: memory is negative`},
		{"zone label disagrees", func(p *Problem) { p.Offerings[0].Zone = "b" }, `offering "small-a": label topology.kubernetes.io/zone=a disagrees`},
		{"duplicate node", func(p *Problem) { p.Nodes = []ExistingNode{existing("n", "a"), existing("n", "b")} }, `node "n": duplicate name`},
		{"node unknown pool", func(p *Problem) {
			n := existing("n", "a")
			n.NodePool = "x"
			p.Nodes = []ExistingNode{n}
		}, `node "n": unknown NodePool "x"`},
		{"contradictory pool", func(p *Problem) {
			p.Pools[0].Requirements = Requirements{req(LabelArch, OpIn, "amd64"), req(LabelArch, OpNotIn, "amd64")}
		}, `pool "default": requirements: requirements on "kubernetes.io/arch" contradict`},
		{"duplicate pool", func(p *Problem) { p.Pools = append(p.Pools, NodePool{Name: testPool}) }, `pool "default": duplicate name`},
		{"negative limit", func(p *Problem) { p.Pools[0].Limits = Resources{CPU: -1} }, `pool "default": limits: cpu is negative`},
		{"bad taint", func(p *Problem) { p.Offerings[0].Taints = []Taint{{Key: "k", Effect: "Never"}} }, `unknown effect "Never"`},
		{"residents", func(p *Problem) {
			p.Offerings[0].MaxCount, p.Offerings[0].Resident = 1, []GroupCount{{Group: 0, Count: 2}}
		}, ""},
		{"residents without max count 1", func(p *Problem) { p.Offerings[0].Resident = []GroupCount{{Group: 0, Count: 1}} },
			`offering "small-a": resident pods need a max count of 1, not 0`},
		{"more residents than pods", func(p *Problem) {
			p.Offerings[0].MaxCount, p.Offerings[0].Resident = 1, []GroupCount{{Group: 0, Count: 3}}
		}, `offering "small-a": 3 resident pods of group "ns/web", which has 2`},
		{"resident group out of range", func(p *Problem) {
			p.Offerings[0].MaxCount, p.Offerings[0].Resident = 1, []GroupCount{{Group: 4, Count: 1}}
		}, `offering "small-a": resident group index 4 out of range`},
		{"duplicate zone", func(p *Problem) { p.Zones = []string{"a", "a"} }, `duplicate zone "a"`},
	}
	for _, tt := range tests {
		p := baseProblem(group("web", 2, 500, lbl("app", "web")))
		tt.mutate(p)
		err := p.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: Validate() = %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: Validate() = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestProblemValidateListsAll(t *testing.T) {
	p := baseProblem(group("web", 1, 500, nil))
	p.Offerings[0].Price = -1
	p.Offerings[1].NodePool = "nope"
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "small-a") || !strings.Contains(err.Error(), "small-b") {
		t.Errorf("Validate() = %v, want both offerings named", err)
	}
}

func TestPlanPlaced(t *testing.T) {
	tests := []struct {
		plan Plan
		want int
	}{
		{Plan{}, 0},
		{Plan{NewNodes: []NewNode{{Pods: []GroupCount{{0, 2}, {1, 3}}}}}, 5},
		{Plan{NewNodes: []NewNode{{Pods: []GroupCount{{0, 1}}}}, Existing: []ExistingPlacement{{Node: 0, Pods: []GroupCount{{1, 4}}}},
			Unschedulable: []Unschedulable{{Group: 0, Count: 7}}}, 5},
	}
	for i, tt := range tests {
		if got := tt.plan.Placed(); got != tt.want {
			t.Errorf("case %d: Placed() = %d, want %d", i, got, tt.want)
		}
	}
}
