package mip

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
)

// runningProblem: running nodes with room for 1.5 pods each (1.5 CPU free) and pods of 1 CPU, beside one
// offering that holds one pod for $1/h. The per-group LP puts 1.5 pods on each running node and so needs
// (pods - 1.5 nodes) new nodes; whole fillings put 1 pod on each, and every plan needs pods - nodes new nodes.
func runningProblem(nodes, pods int) *model.Problem {
	p := &model.Problem{Zones: []string{"z1"}, Pools: []model.NodePool{{Name: "default"}}}
	one := model.Resources{model.CPU: 1000, model.Memory: 2 << 30, model.Pods: 110}
	p.Offerings = []model.Offering{{ID: "one/z1", NodePool: "default", InstanceType: "one", Zone: "z1",
		CapacityType: model.OnDemand, Price: 1, Capacity: one, Allocatable: one,
		Labels: map[string]string{model.LabelZone: "z1", model.LabelInstanceType: "one"}}}
	for i := range nodes {
		name := fmt.Sprintf("run-%d", i)
		alloc := model.Resources{model.CPU: 1500, model.Memory: 8 << 30, model.Pods: 110}
		p.Nodes = append(p.Nodes, model.ExistingNode{Name: name, NodePool: "default", InstanceType: "two", Zone: "z1",
			CapacityType: model.OnDemand, Price: 2, Capacity: alloc, Allocatable: alloc,
			Labels: map[string]string{model.LabelZone: "z1", model.LabelInstanceType: "two", model.LabelHostname: name}})
	}
	g := model.PodGroup{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"},
		Requests: model.Resources{model.CPU: 1000, model.Memory: 1 << 30, model.Pods: 1}}
	for i := range pods {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("web-%d", i)})
	}
	p.Groups = []model.PodGroup{g}
	return p
}

func TestFillingsTightenTheBound(t *testing.T) {
	for _, tc := range []struct{ nodes, pods int }{{1, 2}, {4, 10}, {10, 13}} {
		t.Run(fmt.Sprintf("%d-nodes-%d-pods", tc.nodes, tc.pods), func(t *testing.T) {
			p := runningProblem(tc.nodes, tc.pods)
			optimum := float64(tc.pods - tc.nodes)
			res := solveWithin(t, p, true, 2*time.Second)
			if res.Plan == nil || res.Plan.Validate(p) != nil {
				t.Fatalf("no valid plan: %+v", res)
			}
			if math.Abs(res.Plan.Cost-optimum) > 1e-6 {
				t.Errorf("plan $%.4f/h, want the optimum $%.0f/h", res.Plan.Cost, optimum)
			}
			// The per-group LP's value is pods - 1.5 nodes; only whole fillings reach the optimum. (The compact
			// model may prove the bound too, so the LP's own value is checked first.)
			if !res.Converged || math.Abs(res.LPValue-optimum) > 1e-6 {
				t.Errorf("LP $%.4f/h (converged %v), want the optimum $%.0f/h", res.LPValue, res.Converged, optimum)
			}
			if res.LowerBound < optimum-1e-6 || res.LowerBound > optimum+1e-6 {
				t.Errorf("lower bound $%.4f/h, want the optimum $%.0f/h (the per-group LP says $%.1f/h)",
					res.LowerBound, optimum, float64(tc.pods)-1.5*float64(tc.nodes))
			}
		})
	}
}
