package benchmarks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

// Consolidation is the workload name that selects the consolidation workloads (in `packwright bench
// --workloads`); their size is the cluster's node count, where a provisioning workload's is its pending pods.
const Consolidation = "consolidation"

// ConsolidationSummary is the consolidation workloads' line for help texts.
const ConsolidationSummary = "an over-provisioned cluster of N existing 4–16 vCPU nodes (10–45% full, pods of many " +
	"Deployments spread thinly, a DaemonSet pod per node, 5% of nodes pinned) to consolidate; size = nodes"

// ConsolidationDeadline is the deadline of one consolidation decision: the disruption controller's default.
const ConsolidationDeadline = 5 * time.Second

// Shapes and names of the consolidation workload's pods.
var (
	// daemonShape is the DaemonSet pod on every node (a log or metrics agent): it goes with its node.
	daemonShape = shape{100, 128 * mi}
	// pinnedShape is the pod that pins its node (annotated do-not-disrupt, like a batch job).
	pinnedShape = shape{500, 1 * gi}
)

// ConsolidationWorkload is one consolidation benchmark case: a cluster of Nodes existing nodes on a catalog.
type ConsolidationWorkload struct {
	// Name is "consolidation/<catalog>/<nodes>", e.g. "consolidation/kwok/1000".
	Name    string
	Catalog string
	Nodes   int
	Seed    int64
	// Input builds the cluster afresh on each call; every call returns an equal input.
	Input func() (*solver.ConsolidationInput, error)
}

// ConsolidationWorkloads returns one consolidation workload per (catalog, node count), catalog-major.
func ConsolidationWorkloads(sizes []int, catalogs []string, seed int64) ([]ConsolidationWorkload, error) {
	if len(sizes) == 0 {
		return nil, fmt.Errorf("consolidation workloads: no sizes")
	}
	if len(catalogs) == 0 {
		return nil, fmt.Errorf("consolidation workloads: no catalogs")
	}
	var out []ConsolidationWorkload
	for _, cname := range catalogs {
		cat, err := LoadCatalog(cname)
		if err != nil {
			return nil, err
		}
		for _, n := range sizes {
			if n < 1 {
				return nil, fmt.Errorf("consolidation workloads: size %d is not positive", n)
			}
			out = append(out, ConsolidationWorkload{
				Name:    fmt.Sprintf("%s/%s/%d", Consolidation, cname, n),
				Catalog: cname,
				Nodes:   n,
				Seed:    seed,
				Input:   func() (*solver.ConsolidationInput, error) { return GenerateConsolidation(cat, n, seed) },
			})
		}
	}
	return out, nil
}

// deployment is one Deployment of the consolidation workload.
type deployment struct {
	name     string
	shape    shape
	anti     bool // required hostname anti-affinity: at most one replica per node
	replicas int  // made so far, which numbers the next pod
}

// GenerateConsolidation builds an over-provisioned cluster of nodes existing nodes to consolidate, against cat,
// deterministically in (seed, nodes): each node is a 4, 8 or 16 vCPU offering of the default pool (one in five
// spot), holds one DaemonSet pod and is filled to a random 10–45% of its cpu and memory with pods drawn from
// max(4, nodes/10) Deployments (web and memory-heavy sizes; one in ten with required hostname anti-affinity).
// One node in twenty also runs a do-not-disrupt pod: it stays, with all its pods bound. The others are the
// candidates; their Deployment pods are the movable pods, grouped by requests (anti-affinity Deployments by
// Deployment), as the cluster package groups them. The offerings' allocatable leaves room for the DaemonSet
// pod, which a new node runs too.
func GenerateConsolidation(cat *catalog.Catalog, nodes int, seed int64) (*solver.ConsolidationInput, error) {
	if nodes < 1 {
		return nil, fmt.Errorf("consolidation workload: nodes must be positive (got %d)", nodes)
	}
	pools := Pools(false)
	offs, zones, err := offeringsFor(cat, pools)
	if err != nil {
		return nil, fmt.Errorf("consolidation workload: %w", err)
	}
	var onDemand, spot []*model.Offering
	for i := range offs {
		o := &offs[i]
		if cpu := o.Labels[catalog.LabelInstanceCPU]; cpu != "4" && cpu != "8" && cpu != "16" {
			continue
		}
		if o.CapacityType == model.Spot {
			spot = append(spot, o)
		} else {
			onDemand = append(onDemand, o)
		}
	}
	if len(onDemand) == 0 || len(spot) == 0 {
		return nil, fmt.Errorf("consolidation workload: catalog %s has no 4, 8 or 16 vCPU offerings of both capacity types", cat.Source)
	}
	b := newBuilder(workloadSeed(seed, Consolidation, nodes), 0, &model.Problem{Pools: pools, Offerings: offs, Zones: zones})
	in := &solver.ConsolidationInput{Origin: map[model.PodRef]int{}}

	deps := make([]deployment, max(4, nodes/10))
	for i := range deps {
		d := &deps[i]
		d.name, d.shape, d.anti = b.service("app"), pick(b, boundShapes), b.rng.IntN(10) == 0
	}
	groupOf := map[string]int{} // group name -> index, for the movable pods
	groupFor := func(d *deployment) int {
		name := "apps/" + d.shape.String()
		if d.anti {
			name = "apps/" + d.name
		}
		if gi, ok := groupOf[name]; ok {
			return gi
		}
		g := model.PodGroup{Name: name, Namespace: "apps", Requests: d.shape.requests()}
		if d.anti {
			g.Labels = map[string]string{"app": d.name}
			g.PodAntiAffinity = []model.PodAffinityTerm{{Selector: appSelector(d.name), TopologyKey: model.LabelHostname}}
		}
		b.p.Groups = append(b.p.Groups, g)
		groupOf[name] = len(b.p.Groups) - 1
		return len(b.p.Groups) - 1
	}

	for i := range nodes {
		pool := onDemand
		if b.rng.IntN(5) == 0 {
			pool = spot
		}
		n := existingNode(fmt.Sprintf("node-%05d", i+1), pick(b, pool))
		n.Pods = append(n.Pods, model.BoundPod{
			Ref:    model.PodRef{Namespace: "kube-system", Name: fmt.Sprintf("node-agent-%05d", i+1)},
			Labels: map[string]string{"app": "node-agent"}, Requests: daemonShape.requests(),
		})
		pinned := b.rng.IntN(20) == 0
		used := daemonShape.requests()
		if pinned {
			used = used.Add(pinnedShape.requests())
			n.Pods = append(n.Pods, model.BoundPod{
				Ref:    model.PodRef{Namespace: "batch", Name: fmt.Sprintf("job-%05d", i+1)},
				Labels: map[string]string{"app": "batch"}, Requests: pinnedShape.requests(),
			})
		}
		fill := 0.10 + 0.35*b.rng.Float64()
		var movable []*deployment
		for misses := 0; misses < 3; {
			d := &deps[b.rng.IntN(len(deps))]
			next := used.Add(d.shape.requests())
			if (d.anti && slices.Contains(movable, d)) || !next.Fits(n.Allocatable) ||
				float64(next[model.CPU]) > fill*float64(n.Allocatable[model.CPU]) ||
				float64(next[model.Memory]) > fill*float64(n.Allocatable[model.Memory]) {
				misses++ // a few misses in a row end the node: it is as full as its fill level allows
				continue
			}
			misses, used = 0, next
			movable = append(movable, d)
		}
		ci := len(in.Candidates)
		for _, d := range movable {
			ref := model.PodRef{Namespace: "apps", Name: fmt.Sprintf("%s-%d", d.name, d.replicas)}
			d.replicas++
			if pinned {
				bp := model.BoundPod{Ref: ref, Requests: d.shape.requests()}
				if d.anti {
					bp.Labels = map[string]string{"app": d.name}
					bp.PodAntiAffinity = []model.PodAffinityTerm{{Selector: appSelector(d.name), TopologyKey: model.LabelHostname}}
				}
				n.Pods = append(n.Pods, bp)
				continue
			}
			g := &b.p.Groups[groupFor(d)]
			g.Pods = append(g.Pods, ref)
			in.Origin[ref] = ci
		}
		if pinned {
			b.p.Nodes = append(b.p.Nodes, n)
		} else {
			in.Candidates = append(in.Candidates, n)
		}
	}
	// New nodes run the DaemonSet pod too: the offerings' room is what is left after it, as the cluster
	// package computes it. The existing nodes keep their whole allocatable, with the DaemonSet pod bound.
	for i := range b.p.Offerings {
		o := &b.p.Offerings[i]
		o.Allocatable = o.Allocatable.Clone()
		for k, v := range daemonShape.requests() {
			o.Allocatable[k] = max(0, o.Allocatable[k]-v)
		}
	}
	in.Problem = *b.p
	if err := in.Problem.Validate(); err != nil {
		// The generator only builds valid problems; this is a bug in it.
		return nil, fmt.Errorf("consolidation workload (%d nodes): generated problem is invalid: %w", nodes, err)
	}
	return in, nil
}

// WorkloadNames lists every workload name `packwright bench --workloads` accepts: the generators and
// Consolidation.
func WorkloadNames() []string {
	return append(GeneratorNames(), Consolidation)
}

// SplitWorkloadNames splits workload names into generators and whether Consolidation is among them. No names
// means all: every generator and consolidation.
func SplitWorkloadNames(names []string) (generators []string, consolidation bool, err error) {
	if len(names) == 0 {
		return GeneratorNames(), true, nil
	}
	for _, n := range names {
		if n == Consolidation {
			consolidation = true
			continue
		}
		if _, err := LookupGenerator(n); err != nil {
			return nil, false, fmt.Errorf("unknown workload %q (want one of %s)", n, strings.Join(WorkloadNames(), ", "))
		}
		if !slices.Contains(generators, n) {
			generators = append(generators, n)
		}
	}
	return generators, consolidation, nil
}
