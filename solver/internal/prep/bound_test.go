package prep

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/packwright/packwright/model"
)

// The compiled rules between groups and bound pods (nodes a group may join, bound pods its zone rules count)
// are computed over distinct kinds of bound pod; they must agree with a check of every bound pod of every node.
func TestBoundPodRulesMatchPerPodCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	apps := []string{"web", "db", "cache", "queue"}
	// Selectors by label pair go through the kinds' label index, those by expression only to every kind.
	sel := func(app string) *model.LabelSelector {
		if rng.IntN(4) == 0 {
			return &model.LabelSelector{MatchExpressions: model.Requirements{{Key: "app", Operator: model.OpIn, Values: []string{app}}}}
		}
		return &model.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	for trial := range 20 {
		p := &model.Problem{Zones: []string{"a", "b", "c"}}
		p.Offerings = []model.Offering{{ID: "o", Price: 1, Zone: "a", Labels: map[string]string{model.LabelZone: "a"},
			Allocatable: model.Resources{model.CPU: 64000, model.Pods: 110}}}
		for ni := range 12 {
			z := p.Zones[rng.IntN(3)]
			n := model.ExistingNode{Name: fmt.Sprintf("n%d", ni), Zone: z, Labels: map[string]string{model.LabelZone: z},
				Allocatable: model.Resources{model.CPU: 64000, model.Pods: 110}}
			for k := range rng.IntN(6) {
				app := apps[rng.IntN(len(apps))]
				bp := model.BoundPod{Ref: model.PodRef{Namespace: []string{"ns", "other"}[rng.IntN(2)], Name: fmt.Sprintf("b%d-%d", ni, k)},
					Labels: map[string]string{"app": app}, Requests: model.Resources{model.CPU: 100, model.Pods: 1}}
				if rng.IntN(3) == 0 {
					bp.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel(apps[rng.IntN(len(apps))]), TopologyKey: model.LabelHostname}}
				}
				n.Pods = append(n.Pods, bp)
			}
			p.Nodes = append(p.Nodes, n)
		}
		for gi, app := range apps {
			g := model.PodGroup{Name: app, Namespace: "ns", Labels: map[string]string{"app": app},
				Requests: model.Resources{model.CPU: 100, model.Pods: 1}, Pods: []model.PodRef{{Namespace: "ns", Name: app}}}
			switch gi % 3 {
			case 0:
				g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel(apps[rng.IntN(len(apps))]), TopologyKey: model.LabelHostname}}
			case 1:
				g.TopologySpread = []model.TopologySpread{{MaxSkew: 1, TopologyKey: model.LabelZone, WhenUnsatisfiable: model.DoNotSchedule, Selector: sel(app)}}
			case 2:
				g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: sel(app), TopologyKey: model.LabelZone}}
			}
			p.Groups = append(p.Groups, g)
		}
		c, err := Compile(p)
		if err != nil {
			t.Fatal(err)
		}
		for gi := range p.Groups {
			g := &p.Groups[gi]
			var nodes []int
			base := make([]int, len(c.Zones))
			for ni := range p.Nodes {
				ok := true
				for _, bp := range p.Nodes[ni].Pods {
					for _, tm := range g.PodAntiAffinity {
						if tm.TopologyKey == model.LabelHostname && tm.MatchesPod(g.Namespace, bp.Ref.Namespace, bp.Labels) {
							ok = false
						}
					}
					for _, tm := range bp.PodAntiAffinity {
						if tm.TopologyKey == model.LabelHostname && tm.MatchesPod(bp.Ref.Namespace, g.Namespace, g.Labels) {
							ok = false
						}
					}
					if c.countsForZone(g, bp) {
						base[c.Nodes[ni].Zone]++
					}
				}
				if ok {
					nodes = append(nodes, ni)
				}
			}
			if got := c.Groups[gi].Nodes; !slices.Equal(got, nodes) {
				t.Errorf("trial %d group %s: nodes %v, per-pod check %v", trial, g.Name, got, nodes)
			}
			if got := c.Groups[gi].ZoneBase; !slices.Equal(got, base) {
				t.Errorf("trial %d group %s: zone base %v, per-pod check %v", trial, g.Name, got, base)
			}
		}
	}
}
