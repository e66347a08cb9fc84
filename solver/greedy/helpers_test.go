package greedy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

const gi = model.Gi

// offering builds an offering of pool "default" unless pool is set, with 110 pods and the well-known labels.
func offering(id, zone string, cpu, memGi int64, price float64) model.Offering {
	return model.Offering{
		ID: id + "/" + zone, NodePool: "default", InstanceType: id, Zone: zone, CapacityType: model.OnDemand, Price: price,
		Capacity:    model.Resources{model.CPU: cpu * 1000, model.Memory: memGi * gi, model.Pods: 110},
		Allocatable: model.Resources{model.CPU: cpu * 1000, model.Memory: memGi * gi, model.Pods: 110},
		Labels: map[string]string{model.LabelZone: zone, model.LabelInstanceType: id,
			model.LabelNodePool: "default", "family": strings.TrimRight(id, "0123456789.xlarge")},
	}
}

// family returns the sizes 2..32 vCPU of one family in each zone, priced per vCPU.
func family(name string, gibPerCPU int64, perCPU float64, zones ...string) []model.Offering {
	var out []model.Offering
	for _, cpu := range []int64{2, 4, 8, 16, 32} {
		for _, z := range zones {
			o := offering(fmt.Sprintf("%s%d", name, cpu), z, cpu, cpu*gibPerCPU, perCPU*float64(cpu))
			o.Labels["family"] = name
			out = append(out, o)
		}
	}
	return out
}

// group builds a group of n pods requesting cpu millicores and mem bytes (and one pod slot).
func group(name string, n int, cpu, mem int64) model.PodGroup {
	g := model.PodGroup{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
		Requests: model.Resources{model.CPU: cpu, model.Memory: mem, model.Pods: 1}}
	for i := 0; i < n; i++ {
		g.Pods = append(g.Pods, model.PodRef{Namespace: "default", Name: fmt.Sprintf("%s-%d", name, i)})
	}
	return g
}

// existing builds an existing node of pool "default" in zone with the given allocatable.
func existing(name, zone string, cpu, memGi int64, price float64) model.ExistingNode {
	r := model.Resources{model.CPU: cpu * 1000, model.Memory: memGi * gi, model.Pods: 110}
	return model.ExistingNode{Name: name, NodePool: "default", Zone: zone, Price: price, Capacity: r.Clone(), Allocatable: r,
		Labels: map[string]string{model.LabelZone: zone, model.LabelHostname: name, model.LabelNodePool: "default"}}
}

func problem(groups []model.PodGroup, offs []model.Offering, zones ...string) *model.Problem {
	return &model.Problem{Groups: groups, Offerings: offs, Zones: zones, Pools: []model.NodePool{{Name: "default"}}}
}

// solve plans p and fails the test unless the plan validates, accounts for every pod and is a greedy plan.
func solve(t testing.TB, p *model.Problem) *model.Plan {
	t.Helper()
	if err := p.Validate(); err != nil {
		t.Fatalf("test problem is invalid: %v", err)
	}
	plan, err := Solve(p)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	checkPlan(t, p, plan)
	return plan
}

func checkPlan(t testing.TB, p *model.Problem, plan *model.Plan) {
	t.Helper()
	if err := plan.Validate(p); err != nil {
		t.Fatalf("plan does not validate: %v\nplan: %s", err, describePlan(p, plan))
	}
	got := make([]int, len(p.Groups))
	for _, nn := range plan.NewNodes {
		for _, gc := range nn.Pods {
			got[gc.Group] += gc.Count
		}
	}
	for _, ep := range plan.Existing {
		for _, gc := range ep.Pods {
			got[gc.Group] += gc.Count
		}
	}
	for _, u := range plan.Unschedulable {
		got[u.Group] += u.Count
	}
	for g := range p.Groups {
		if got[g] != p.Groups[g].Demand() {
			t.Fatalf("group %s: %d pods accounted for, demand %d", p.Groups[g].Name, got[g], p.Groups[g].Demand())
		}
	}
	if plan.Status != model.StatusGreedy || plan.Solver != Name {
		t.Fatalf("status %q solver %q", plan.Status, plan.Solver)
	}
	if plan.LowerBound < 0 || plan.LowerBound > plan.Cost+1e-9 {
		t.Fatalf("lower bound %v outside [0, cost %v]", plan.LowerBound, plan.Cost)
	}
}

// describePlan formats a plan for failure messages.
func describePlan(p *model.Problem, plan *model.Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cost %.4f bound %.4f\n", plan.Cost, plan.LowerBound)
	for i, nn := range plan.NewNodes {
		fmt.Fprintf(&b, "  new %d %s:", i, p.Offerings[nn.Offering].ID)
		for _, gc := range nn.Pods {
			fmt.Fprintf(&b, " %s×%d", p.Groups[gc.Group].Name, gc.Count)
		}
		b.WriteByte('\n')
	}
	for _, ep := range plan.Existing {
		fmt.Fprintf(&b, "  existing %s:", p.Nodes[ep.Node].Name)
		for _, gc := range ep.Pods {
			fmt.Fprintf(&b, " %s×%d", p.Groups[gc.Group].Name, gc.Count)
		}
		b.WriteByte('\n')
	}
	for _, u := range plan.Unschedulable {
		fmt.Fprintf(&b, "  unschedulable %s×%d: %s\n", p.Groups[u.Group].Name, u.Count, u.Reason)
	}
	return b.String()
}

// placedOn counts group g's pods per new-node offering ID, existing node name ("node:"+name) and
// "unschedulable".
func placedOn(p *model.Problem, plan *model.Plan, g int) map[string]int {
	out := map[string]int{}
	for _, nn := range plan.NewNodes {
		for _, gc := range nn.Pods {
			if gc.Group == g {
				out[p.Offerings[nn.Offering].ID] += gc.Count
			}
		}
	}
	for _, ep := range plan.Existing {
		for _, gc := range ep.Pods {
			if gc.Group == g {
				out["node:"+p.Nodes[ep.Node].Name] += gc.Count
			}
		}
	}
	for _, u := range plan.Unschedulable {
		if u.Group == g {
			out["unschedulable"] += u.Count
		}
	}
	return out
}

// perZone counts group g's pods per zone over new and existing nodes.
func perZone(p *model.Problem, plan *model.Plan, g int) map[string]int {
	out := map[string]int{}
	for _, nn := range plan.NewNodes {
		for _, gc := range nn.Pods {
			if gc.Group == g {
				out[p.Offerings[nn.Offering].Zone] += gc.Count
			}
		}
	}
	for _, ep := range plan.Existing {
		for _, gc := range ep.Pods {
			if gc.Group == g {
				out[p.Nodes[ep.Node].Zone] += gc.Count
			}
		}
	}
	return out
}

// nodesWith counts the new nodes holding pods of group g, and the most pods of g on one of them.
func nodesWith(plan *model.Plan, g int) (nodes, most int) {
	for _, nn := range plan.NewNodes {
		for _, gc := range nn.Pods {
			if gc.Group == g {
				nodes++
				most = max(most, gc.Count)
			}
		}
	}
	return nodes, most
}

func unschedulable(plan *model.Plan, g int) (int, string) {
	n, why := 0, ""
	for _, u := range plan.Unschedulable {
		if u.Group == g {
			n += u.Count
			why = u.Reason
		}
	}
	return n, why
}
