package model

import (
	"strings"
	"testing"
)

func TestPodGroupCompatible(t *testing.T) {
	node := map[string]string{LabelArch: "amd64", LabelZone: "a", "cpu": "8"}
	gpuTaint := []Taint{{Key: "gpu", Value: "true", Effect: NoSchedule}}
	tests := []struct {
		name   string
		g      PodGroup
		taints []Taint
		why    string // "" when compatible
	}{
		{"nothing asked", PodGroup{}, nil, ""},
		{"nodeSelector match", PodGroup{NodeSelector: lbl(LabelArch, "amd64")}, nil, ""},
		{"nodeSelector mismatch", PodGroup{NodeSelector: lbl(LabelArch, "arm64")}, nil,
			"nodeSelector kubernetes.io/arch=arm64 not matched (node has kubernetes.io/arch=amd64)"},
		{"nodeSelector absent", PodGroup{NodeSelector: lbl("disk", "ssd")}, nil, "nodeSelector disk=ssd not matched (node has no disk label)"},
		{"affinity match", PodGroup{NodeAffinity: NodeSelectorTerms{{req("cpu", OpGt, "4")}}}, nil, ""},
		{"affinity mismatch", PodGroup{NodeAffinity: NodeSelectorTerms{{req("cpu", OpGt, "8")}}}, nil,
			"required node affinity not matched: cpu>8 fails (node has cpu=8)"},
		{"affinity two terms", PodGroup{NodeAffinity: NodeSelectorTerms{{req(LabelZone, OpIn, "b")}, {req("gpu", OpExists)}}}, nil,
			"none of 2 terms holds (term 0: topology.kubernetes.io/zone=b fails"},
		{"untolerated taint", PodGroup{}, gpuTaint, "untolerated taint gpu=true:NoSchedule"},
		{"tolerated taint", PodGroup{Tolerations: []Toleration{{Key: "gpu", Operator: TolerationExists}}}, gpuTaint, ""},
		{"prefer taint does not block", PodGroup{}, []Taint{{Key: "x", Effect: PreferNoSchedule}}, ""},
	}
	for _, tt := range tests {
		why := tt.g.Incompatibility(node, tt.taints)
		if got := tt.g.Compatible(node, tt.taints); got != (tt.why == "") {
			t.Errorf("%s: Compatible = %v, want %v", tt.name, got, tt.why == "")
		}
		if (why == "") != (tt.why == "") || !strings.Contains(why, tt.why) {
			t.Errorf("%s: Incompatibility = %q, want %q", tt.name, why, tt.why)
		}
	}
}

func TestPodAffinityTermMatchesPod(t *testing.T) {
	term := PodAffinityTerm{Selector: sel("app", "db"), TopologyKey: LabelZone}
	db := lbl("app", "db")
	if !term.MatchesPod("ns", "ns", db) {
		t.Error("same namespace, matching labels: no match")
	}
	if term.MatchesPod("ns", "other", db) {
		t.Error("empty Namespaces must mean the owner's namespace only")
	}
	if term.MatchesPod("ns", "ns", lbl("app", "web")) {
		t.Error("non-matching labels matched")
	}
	multi := PodAffinityTerm{Selector: sel("app", "db"), Namespaces: []string{"a", "b"}, TopologyKey: LabelZone}
	if !multi.MatchesPod("ns", "b", db) || multi.MatchesPod("ns", "ns", db) {
		t.Error("explicit Namespaces not honoured")
	}
	if (PodAffinityTerm{TopologyKey: LabelZone}).MatchesPod("ns", "ns", db) {
		t.Error("nil selector matched a pod")
	}
	if !(PodAffinityTerm{Selector: &LabelSelector{}}).MatchesPod("ns", "ns", nil) {
		t.Error("empty selector should match every pod of the namespace")
	}
}

func TestMaxPerNode(t *testing.T) {
	self := lbl("app", "web")
	tests := []struct {
		name string
		g    PodGroup
		want int
	}{
		{"unconstrained", PodGroup{Namespace: "ns", Labels: self}, UnlimitedPerNode},
		{"host port", PodGroup{Namespace: "ns", HostPorts: []int32{8080}}, 1},
		{"host port 0 is none", PodGroup{Namespace: "ns", HostPorts: []int32{0}}, UnlimitedPerNode},
		{"hostname anti-affinity on itself", PodGroup{Namespace: "ns", Labels: self,
			PodAntiAffinity: []PodAffinityTerm{{Selector: sel("app", "web"), TopologyKey: LabelHostname}}}, 1},
		{"hostname anti-affinity on others", PodGroup{Namespace: "ns", Labels: self,
			PodAntiAffinity: []PodAffinityTerm{{Selector: sel("app", "db"), TopologyKey: LabelHostname}}}, UnlimitedPerNode},
		{"anti-affinity in another namespace", PodGroup{Namespace: "ns", Labels: self,
			PodAntiAffinity: []PodAffinityTerm{{Selector: sel("app", "web"), Namespaces: []string{"other"}, TopologyKey: LabelHostname}}}, UnlimitedPerNode},
		{"zone anti-affinity", PodGroup{Namespace: "ns", Labels: self,
			PodAntiAffinity: []PodAffinityTerm{{Selector: sel("app", "web"), TopologyKey: LabelZone}}}, UnlimitedPerNode},
	}
	for _, tt := range tests {
		if got := tt.g.MaxPerNode(); got != tt.want {
			t.Errorf("%s: MaxPerNode = %d, want %d", tt.name, got, tt.want)
		}
	}
}
