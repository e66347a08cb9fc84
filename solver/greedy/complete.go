package greedy

import (
	"fmt"
	"slices"

	"github.com/packwright/packwright/model"
)

// Complete places the pods a partial plan leaves out: it builds the residual problem, in which the partial
// plan's pods are bound pods and its new nodes are existing nodes, solves it with the greedy and merges the two.
func Complete(p *model.Problem, partial *model.Plan) (*model.Plan, error) {
	r := *p
	r.Groups = make([]model.PodGroup, len(p.Groups))
	copy(r.Groups, p.Groups)
	r.Nodes = make([]model.ExistingNode, len(p.Nodes), len(p.Nodes)+len(partial.NewNodes))
	copy(r.Nodes, p.Nodes)
	// bind moves n pods of group g from pending to node e of the residual problem.
	bind := func(e int, gc model.GroupCount) error {
		g := &r.Groups[gc.Group]
		if gc.Count > len(g.Pods) {
			return fmt.Errorf("partial plan places %d pods of group %s, %d left", gc.Count, g.Name, len(g.Pods))
		}
		moved := g.Pods[len(g.Pods)-gc.Count:]
		g.Pods = g.Pods[:len(g.Pods)-gc.Count]
		n := &r.Nodes[e]
		pods := make([]model.BoundPod, len(n.Pods), len(n.Pods)+len(moved))
		copy(pods, n.Pods)
		for _, ref := range moved {
			pods = append(pods, model.BoundPod{Ref: ref, Labels: g.Labels, Requests: g.Requests, HostPorts: g.HostPorts,
				PodAntiAffinity: g.PodAntiAffinity})
		}
		n.Pods = pods
		return nil
	}
	for _, ep := range partial.Existing {
		for _, gc := range ep.Pods {
			if err := bind(ep.Node, gc); err != nil {
				return nil, err
			}
		}
	}
	first := len(r.Nodes)
	for k, nn := range partial.NewNodes {
		o := &p.Offerings[nn.Offering]
		name := fmt.Sprintf("packwright-planned-%d", k)
		r.Nodes = append(r.Nodes, model.ExistingNode{Name: name, NodePool: o.NodePool, InstanceType: o.InstanceType,
			Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Capacity: o.Capacity, Allocatable: o.Allocatable,
			Labels: model.WithLabel(o.Labels, model.LabelHostname, name), Taints: o.Taints})
		for _, gc := range nn.Pods {
			if err := bind(first+k, gc); err != nil {
				return nil, err
			}
		}
	}
	// Offerings with a MaxCount that the partial plan used up must not be launched again: with no allocatable
	// (not even a pod slot) no group is compatible with them. Nor may an offering with residents that the partial
	// plan left out: the greedy would open it without them.
	used := map[int]int{}
	unused := false
	for _, nn := range partial.NewNodes {
		if p.Offerings[nn.Offering].MaxCount > 0 {
			used[nn.Offering]++
		}
	}
	for oi := range p.Offerings {
		if len(p.Offerings[oi].Resident) > 0 && used[oi] == 0 {
			unused = true
		}
	}
	if len(used) > 0 || unused {
		r.Offerings = slices.Clone(p.Offerings)
		for oi := range r.Offerings {
			o := &r.Offerings[oi]
			switch n := used[oi]; {
			case n == 0 && len(o.Resident) > 0, n > 0 && n >= o.MaxCount:
				o.Allocatable = model.Resources{}
			case n > 0:
				o.MaxCount -= n
			}
		}
	}
	rest, err := Solve(&r)
	if err != nil {
		return nil, fmt.Errorf("complete the rounded plan: %w", err)
	}
	out := &model.Plan{Solver: partial.Solver, Existing: append([]model.ExistingPlacement(nil), partial.Existing...),
		Unschedulable: rest.Unschedulable}
	for _, nn := range partial.NewNodes {
		out.NewNodes = append(out.NewNodes, model.NewNode{Offering: nn.Offering, Pods: append([]model.GroupCount(nil), nn.Pods...)})
	}
	for _, ep := range rest.Existing {
		if ep.Node >= first {
			nn := &out.NewNodes[ep.Node-first]
			nn.Pods = append(nn.Pods, ep.Pods...)
		} else {
			out.Existing = append(out.Existing, ep)
		}
	}
	out.NewNodes = append(out.NewNodes, rest.NewNodes...)
	for _, nn := range out.NewNodes {
		out.Cost += p.Offerings[nn.Offering].Price
	}
	return out, nil
}
