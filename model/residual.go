package model

import (
	"fmt"
	"slices"
)

// Residual is the problem left once a partial plan is placed: the partial plan's pods are bound pods of the
// nodes it puts them on, its new nodes are existing nodes (from First on, in its order), and the pending pods
// are those it leaves out. Solving the residual problem and merging its plan back completes the partial plan
// with every rule still counted: spread and anti-affinity see the placed pods as bound pods.
type Residual struct {
	// Problem is the residual problem.
	Problem *Problem
	// First is the index in Problem.Nodes of the partial plan's first new node.
	First   int
	src     *Problem
	partial *Plan
}

// NewResidual builds the residual problem of p once partial is placed. Offerings whose MaxCount the partial
// plan used up cannot be launched in it (no allocatable, so no group is compatible), nor can offerings with
// residents that the partial plan left out (a solver would open them without their residents).
func NewResidual(p *Problem, partial *Plan) (*Residual, error) {
	r := *p
	r.Groups = make([]PodGroup, len(p.Groups))
	copy(r.Groups, p.Groups)
	r.Nodes = make([]ExistingNode, len(p.Nodes), len(p.Nodes)+len(partial.NewNodes))
	copy(r.Nodes, p.Nodes)
	// bind moves n pods of group g from pending to node e of the residual problem.
	bind := func(e int, gc GroupCount) error {
		if gc.Group < 0 || gc.Group >= len(r.Groups) {
			return fmt.Errorf("partial plan places pods of group %d, which does not exist", gc.Group)
		}
		g := &r.Groups[gc.Group]
		if gc.Count > len(g.Pods) {
			return fmt.Errorf("partial plan places %d pods of group %s, %d left", gc.Count, g.Name, len(g.Pods))
		}
		moved := g.Pods[len(g.Pods)-gc.Count:]
		g.Pods = g.Pods[:len(g.Pods)-gc.Count]
		n := &r.Nodes[e]
		pods := make([]BoundPod, len(n.Pods), len(n.Pods)+len(moved))
		copy(pods, n.Pods)
		for _, ref := range moved {
			pods = append(pods, BoundPod{Ref: ref, Labels: g.Labels, Requests: g.Requests, HostPorts: g.HostPorts,
				PodAntiAffinity: g.PodAntiAffinity})
		}
		n.Pods = pods
		return nil
	}
	for _, ep := range partial.Existing {
		if ep.Node < 0 || ep.Node >= len(p.Nodes) {
			return nil, fmt.Errorf("partial plan places pods on node %d, which does not exist", ep.Node)
		}
		for _, gc := range ep.Pods {
			if err := bind(ep.Node, gc); err != nil {
				return nil, err
			}
		}
	}
	first := len(r.Nodes)
	for k, nn := range partial.NewNodes {
		if nn.Offering < 0 || nn.Offering >= len(p.Offerings) {
			return nil, fmt.Errorf("partial plan launches offering %d, which does not exist", nn.Offering)
		}
		o := &p.Offerings[nn.Offering]
		name := fmt.Sprintf("packwright-planned-%d", k)
		r.Nodes = append(r.Nodes, ExistingNode{Name: name, NodePool: o.NodePool, InstanceType: o.InstanceType,
			Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Capacity: o.Capacity, Allocatable: o.Allocatable,
			Labels: WithLabel(o.Labels, LabelHostname, name), Taints: o.Taints})
		for _, gc := range nn.Pods {
			if err := bind(first+k, gc); err != nil {
				return nil, err
			}
		}
	}
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
				o.Allocatable = Resources{}
			case n > 0:
				o.MaxCount -= n
			}
		}
	}
	return &Residual{Problem: &r, First: first, src: p, partial: partial}, nil
}

// Merge returns the plan of the whole problem that places the partial plan's pods as it does and the rest as
// rest, a plan of the residual problem, does: rest's pods on the partial plan's new nodes join those nodes, and
// its pods on a running node join the partial plan's placement there (one placement per node, as a reader of
// the plan expects). It keeps the partial plan's Solver and rest's unschedulable pods; the cost is that of
// every new node.
func (r *Residual) Merge(rest *Plan) *Plan {
	out := &Plan{Solver: r.partial.Solver, Unschedulable: rest.Unschedulable}
	at := map[int]int{} // running node -> its placement in out.Existing
	for _, ep := range r.partial.Existing {
		at[ep.Node] = len(out.Existing)
		out.Existing = append(out.Existing, ExistingPlacement{Node: ep.Node, Pods: slices.Clone(ep.Pods)})
	}
	for _, nn := range r.partial.NewNodes {
		out.NewNodes = append(out.NewNodes, NewNode{Offering: nn.Offering, Pods: slices.Clone(nn.Pods)})
	}
	for _, ep := range rest.Existing {
		switch i, ok := at[ep.Node]; {
		case ep.Node >= r.First:
			nn := &out.NewNodes[ep.Node-r.First]
			nn.Pods = append(nn.Pods, ep.Pods...)
		case ok:
			out.Existing[i].Pods = append(out.Existing[i].Pods, ep.Pods...)
		default:
			at[ep.Node] = len(out.Existing)
			out.Existing = append(out.Existing, ExistingPlacement{Node: ep.Node, Pods: slices.Clone(ep.Pods)})
		}
	}
	out.NewNodes = append(out.NewNodes, rest.NewNodes...)
	for _, nn := range out.NewNodes {
		out.Cost += r.src.Offerings[nn.Offering].Price
	}
	return out
}
