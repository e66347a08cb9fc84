package benchmarks

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"

	"github.com/packwright/packwright/model"
)

// shape is a pod's cpu (millicores) and memory (bytes) request.
type shape struct {
	cpu, mem int64
}

// String names the shape, e.g. "cpu250m-mem512Mi"; groups of plain pods are named after it.
func (s shape) String() string {
	return "cpu" + model.FormatQuantity(model.CPU, s.cpu) + "-mem" + model.FormatQuantity(model.Memory, s.mem)
}

// requests is the shape as a request vector, with the pod slot every pod takes.
func (s shape) requests() model.Resources {
	return model.Resources{model.CPU: s.cpu, model.Memory: s.mem, model.Pods: 1}
}

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

// builder accumulates a generated problem. Pods of one service that share requests and constraints with pods of
// other services go into one group, as the cluster package groups them: the solver sees what it would see on
// a real cluster of that shape.
type builder struct {
	rng    *rand.Rand
	target int // pending pods to create
	made   int
	p      *model.Problem
	groups map[string]int // group name -> index in p.Groups
	nsvc   int
}

func newBuilder(seed uint64, pods int, p *model.Problem) *builder {
	// The stream constant is fixed so that a seed names the same problems forever (PCG is specified bit for bit).
	return &builder{rng: rand.New(rand.NewPCG(seed, 0x62656e6368)), target: pods, p: p, groups: map[string]int{}}
}

// remaining is the number of pending pods still to create.
func (b *builder) remaining() int { return b.target - b.made }

// replicas draws a service size log-uniformly in [lo, hi] (small services are common, large ones rare, as in
// real clusters), capped by the pods still to create.
func (b *builder) replicas(lo, hi int) int {
	l, h := math.Log(float64(lo)), math.Log(float64(hi)+1)
	n := int(math.Exp(l + b.rng.Float64()*(h-l)))
	return max(1, min(n, hi, b.remaining()))
}

// service returns a fresh service name with the given prefix, e.g. "web-0007".
func (b *builder) service(prefix string) string {
	b.nsvc++
	return fmt.Sprintf("%s-%04d", prefix, b.nsvc)
}

// pick returns a uniformly drawn element of xs.
func pick[T any](b *builder, xs []T) T { return xs[b.rng.IntN(len(xs))] }

// add creates n pending pods named "<svc>-<i>" in namespace ns and puts them in the group called name, which
// template creates when it does not exist yet. The template sets requests and constraints; add sets the name,
// namespace and pods.
func (b *builder) add(ns, name string, svc string, n int, template func() model.PodGroup) {
	full := ns + "/" + name
	gi, ok := b.groups[full]
	if !ok {
		g := template()
		g.Name, g.Namespace = full, ns
		b.p.Groups = append(b.p.Groups, g)
		gi = len(b.p.Groups) - 1
		b.groups[full] = gi
	}
	g := &b.p.Groups[gi]
	for i := range n {
		g.Pods = append(g.Pods, model.PodRef{Namespace: ns, Name: fmt.Sprintf("%s-%d", svc, i)})
	}
	b.made += n
}

// plain is a template for pods with requests s and no constraints.
func plain(s shape) func() model.PodGroup {
	return func() model.PodGroup { return model.PodGroup{Requests: s.requests()} }
}

// appSelector selects the pods labelled app=svc.
func appSelector(svc string) *model.LabelSelector {
	return &model.LabelSelector{MatchLabels: map[string]string{"app": svc}}
}

// existingNode turns an offering into an existing node named name, with no pods yet.
func existingNode(name string, o *model.Offering) model.ExistingNode {
	labels := maps.Clone(o.Labels)
	labels[model.LabelHostname] = name
	return model.ExistingNode{
		Name:         name,
		NodePool:     o.NodePool,
		InstanceType: o.InstanceType,
		Zone:         o.Zone,
		CapacityType: o.CapacityType,
		Price:        o.Price,
		Capacity:     maps.Clone(o.Capacity),
		Allocatable:  maps.Clone(o.Allocatable),
		Labels:       labels,
		Taints:       o.Taints,
	}
}
