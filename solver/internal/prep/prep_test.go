package prep

import (
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

func TestCompile(t *testing.T) {
	gpuOff := model.Offering{ID: "gpu", NodePool: "p", Zone: "a", Price: 1,
		Allocatable: model.Resources{model.CPU: 4000, model.Memory: 16 << 30, model.Pods: 110, model.GPU: 1},
		Labels:      map[string]string{model.LabelZone: "a", "gpu": "true"}, Taints: []model.Taint{{Key: "gpu", Value: "true", Effect: model.NoSchedule}}}
	cpuOff := model.Offering{ID: "cpu", NodePool: "p", Zone: "b", Price: 0.5,
		Allocatable: model.Resources{model.CPU: 4000, model.Memory: 16 << 30, model.Pods: 110}, Labels: map[string]string{model.LabelZone: "b"}}
	sel := &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	tests := []struct {
		name  string
		group model.PodGroup
		check func(t *testing.T, g Group)
	}{
		{"plain pod fits the untainted offering only", model.PodGroup{Requests: model.Resources{model.CPU: 1000, model.Pods: 1}},
			func(t *testing.T, g Group) {
				if len(g.Offerings) != 1 || g.Offerings[0] != 1 || g.Cap != -1 {
					t.Fatalf("offerings %v cap %d", g.Offerings, g.Cap)
				}
			}},
		{"toleration admits the gpu offering", model.PodGroup{Requests: model.Resources{model.GPU: 1, model.Pods: 1},
			Tolerations: []model.Toleration{{Key: "gpu", Operator: model.TolerationExists}}},
			func(t *testing.T, g Group) {
				if len(g.Offerings) != 1 || g.Offerings[0] != 0 {
					t.Fatalf("offerings %v", g.Offerings)
				}
			}},
		{"three gpus are impossible, with the reason", model.PodGroup{Requests: model.Resources{model.GPU: 3, model.Pods: 1},
			Tolerations: []model.Toleration{{Operator: model.TolerationExists}}},
			func(t *testing.T, g Group) {
				if !strings.Contains(g.Impossible, "requests 3 nvidia.com/gpu; the largest allowed offering has 1") {
					t.Fatalf("impossible = %q", g.Impossible)
				}
			}},
		{"hostname anti-affinity to itself caps one per node", model.PodGroup{Labels: map[string]string{"app": "web"},
			Requests:        model.Resources{model.CPU: 100, model.Pods: 1},
			PodAntiAffinity: []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}},
			func(t *testing.T, g Group) {
				if g.Cap != 1 {
					t.Fatalf("cap = %d", g.Cap)
				}
			}},
		{"zone spread over the zones it can use", model.PodGroup{Labels: map[string]string{"app": "web"},
			Requests:       model.Resources{model.CPU: 100, model.Pods: 1},
			TopologySpread: []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel}}},
			func(t *testing.T, g Group) {
				if g.ZoneSkew != 1 || len(g.Zones) != 1 {
					t.Fatalf("skew %d zones %v", g.ZoneSkew, g.Zones)
				}
			}},
		{"self hostname affinity co-locates", model.PodGroup{Labels: map[string]string{"app": "web"},
			Requests:    model.Resources{model.CPU: 1500, model.Pods: 1},
			PodAffinity: []model.PodAffinityTerm{{Selector: sel, TopologyKey: model.LabelHostname}}},
			func(t *testing.T, g Group) {
				// 3 pods of 1.5 cores need 4.5 cores on one node: nothing holds them.
				if !g.CoLocate || g.Impossible == "" {
					t.Fatalf("co-locate %v impossible %q", g.CoLocate, g.Impossible)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := tc.group
			g.Name, g.Namespace = "g", "default"
			for i := 0; i < 3; i++ {
				g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: "p"})
			}
			p := &model.Problem{Groups: []model.PodGroup{g}, Offerings: []model.Offering{gpuOff, cpuOff},
				Pools: []model.NodePool{{Name: "p"}}, Zones: []string{"a", "b"}}
			c, err := Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c.Groups[0])
		})
	}
}
