package cluster

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// ProblemOptions configures State.Problem.
type ProblemOptions struct {
	// Kubelet overrides the kubelet settings that allocatable depends on, for every NodePool; nil keeps the
	// catalog's EKS defaults.
	Kubelet *catalog.KubeletConfig
	// DefaultNodePool replaces DefaultNodePool() as the pool used when the State has no NodePool.
	DefaultNodePool *model.NodePool
	// Now is the time at which ConsolidationInput evaluates disruption budgets' schedules and NodeClaims'
	// expireAfter; zero means time.Now().
	Now time.Time
}

// Problem converts the State into the optimisation problem, with offerings from cat:
//
//   - Groups: the pending pods (see IsPending), grouped into equivalence classes (see docs/snapshot-format.md).
//     Pods with scheduling gates are left out, as the scheduler leaves them, with an Issue.
//   - Pools and Offerings: each NodePool's offerings from cat, less the requests of the DaemonSets that would run
//     on them; offerings that cannot hold those are dropped. Without NodePools, the DefaultNodePool.
//   - Nodes: every Node, with the non-terminal pods bound to it, priced from cat by its labels.
//   - Zones: every zone of an offering or node.
//
// It fails when a NodePool's requirements contradict each other, when the catalog rejects a pool, or when the
// result does not validate (which means a bug here). Issues report what is approximated or impossible: pods
// nothing can ever hold, nodes without a price, pods bound to missing nodes.
func (s *State) Problem(cat *catalog.Catalog, opts ProblemOptions) (*model.Problem, []Issue, error) {
	if cat == nil {
		return nil, nil, errors.New("problem: no catalog")
	}
	s = s.sorted() // groups, names and the order of everything else follow object names, not arrival order
	var issues []Issue
	p := &model.Problem{}

	pools, err := s.pools(opts)
	if err != nil {
		return nil, nil, err
	}
	p.Pools = pools
	poolNames := make(map[string]bool, len(pools))
	for _, pl := range pools {
		poolNames[pl.Name] = true
	}

	offs, offIssues, err := s.offerings(cat, pools, opts)
	if err != nil {
		return nil, nil, err
	}
	p.Offerings = offs
	issues = append(issues, offIssues...)

	pending, bound, podIssues, err := s.pods()
	if err != nil {
		return nil, nil, err
	}
	issues = append(issues, podIssues...)
	p.Groups = groupPods(pending, s.selectorLabelKeys(pending, bound))
	notes := groupNotes(pending, p.Groups)
	for i := range p.Groups {
		g := &p.Groups[i]
		for _, n := range notes[g.Name] {
			issues = append(issues, Issue{Object: groupObject(g), Reason: n})
		}
	}

	for _, n := range s.Nodes {
		en, nodeIssues, err := existingNode(n, bound[n.Name], cat, poolNames)
		if err != nil {
			return nil, nil, err
		}
		issues = append(issues, nodeIssues...)
		p.Nodes = append(p.Nodes, en)
	}

	p.Zones = zones(p)

	f := newFeasibility(p)
	for i := range p.Groups {
		g := &p.Groups[i]
		if why := f.why(g); why != "" {
			issues = append(issues, Issue{Object: groupObject(g), Reason: why})
		}
	}

	if err := p.Validate(); err != nil {
		// Input is validated as it is read, so this is a conversion bug; say so rather than hand the solver
		// something it cannot trust.
		return nil, nil, fmt.Errorf("problem: internal error: converted problem does not validate: %w", err)
	}
	return p, issues, nil
}

// offerings returns every pool's offerings from cat, less the DaemonSets that would run on them.
func (s *State) offerings(cat *catalog.Catalog, pools []model.NodePool, opts ProblemOptions) ([]model.Offering, []Issue, error) {
	dss := make([]*daemonSet, 0, len(s.DaemonSets))
	for _, ds := range s.DaemonSets {
		d, err := newDaemonSet(ds)
		if err != nil {
			return nil, nil, err
		}
		dss = append(dss, d)
	}
	var out []model.Offering
	var issues []Issue
	for _, pool := range pools {
		offs, err := cat.Offerings(pool, opts.Kubelet)
		if err != nil {
			return nil, nil, fmt.Errorf("nodepool %s: %w", pool.Name, err)
		}
		all := len(offs)
		offs, dropped := applyDaemonSets(offs, dss)
		switch {
		case all == 0:
			issues = append(issues, Issue{Object: "nodepool " + pool.Name, Reason: "its requirements allow no instance type of catalog " + cat.Region})
		case dropped > 0:
			issues = append(issues, Issue{Object: "nodepool " + pool.Name, Reason: fmt.Sprintf("%d of %d offerings dropped: the DaemonSets that would run there do not fit", dropped, all)})
		}
		out = append(out, offs...)
	}
	return out, issues, nil
}

// pools converts the NodePools, or returns the default pool when there are none.
func (s *State) pools(opts ProblemOptions) ([]model.NodePool, error) {
	if len(s.NodePools) == 0 {
		def := DefaultNodePool()
		if opts.DefaultNodePool != nil {
			def = *opts.DefaultNodePool
		}
		if err := checkSatisfiable(def); err != nil {
			return nil, err
		}
		return []model.NodePool{def}, nil
	}
	out := make([]model.NodePool, 0, len(s.NodePools))
	for _, np := range s.NodePools {
		pl, err := NodePoolToModel(np)
		if err != nil {
			return nil, err
		}
		if err := checkSatisfiable(pl); err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

// pods converts every pod, returning the pending ones in State order and the bound ones by node name.
func (s *State) pods() (pending []*podInfo, bound map[string][]*podInfo, issues []Issue, err error) {
	nodes := make(map[string]bool, len(s.Nodes))
	for _, n := range s.Nodes {
		nodes[n.Name] = true
	}
	bound = make(map[string][]*podInfo, len(s.Nodes))
	for _, pod := range s.Pods {
		switch {
		case pod.Spec.NodeName != "":
			if isTerminal(pod) {
				continue
			}
			// A terminating pod still holds its node's resources until it is gone, so it stays bound.
			if !nodes[pod.Spec.NodeName] {
				issues = append(issues, Issue{Object: "pod " + pod.Namespace + "/" + pod.Name, Reason: fmt.Sprintf("bound to node %s, which the snapshot does not have; ignored", pod.Spec.NodeName)})
				continue
			}
		case !IsPending(pod):
			continue
		case len(pod.Spec.SchedulingGates) > 0:
			gates := make([]string, len(pod.Spec.SchedulingGates))
			for i, g := range pod.Spec.SchedulingGates {
				gates[i] = g.Name
			}
			issues = append(issues, Issue{Object: "pod " + pod.Namespace + "/" + pod.Name, Reason: "has scheduling gates (" + strings.Join(gates, ", ") + "); not planned until they are removed"})
			continue
		}
		pi, err := s.podInfo(pod)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if pod.Spec.NodeName != "" {
			bound[pod.Spec.NodeName] = append(bound[pod.Spec.NodeName], pi)
		} else {
			pending = append(pending, pi)
		}
	}
	return pending, bound, issues, nil
}

// selectorLabelKeys returns every label key that a pod selector of a pending pod, or an anti-affinity term of a
// bound pod (which also repels new pods), refers to. Only these labels can tell pods apart for the solver.
func (s *State) selectorLabelKeys(pending []*podInfo, bound map[string][]*podInfo) map[string]bool {
	keys := map[string]bool{}
	add := func(k string) { keys[k] = true }
	for _, pi := range pending {
		pi.selectorKeys(add)
	}
	for _, pis := range bound {
		for _, pi := range pis {
			for _, t := range pi.podAntiAffinity {
				if t.Selector != nil {
					for k := range t.Selector.MatchLabels {
						add(k)
					}
					for _, r := range t.Selector.MatchExpressions {
						add(r.Key)
					}
				}
			}
		}
	}
	return keys
}

// groupNotes returns the conversion notes of each group's pods, deduplicated, by group name.
func groupNotes(pending []*podInfo, groups []model.PodGroup) map[string][]string {
	byPod := map[model.PodRef][]string{}
	for _, pi := range pending {
		if len(pi.notes) > 0 {
			byPod[model.PodRef{Namespace: pi.pod.Namespace, Name: pi.pod.Name}] = pi.notes
		}
	}
	if len(byPod) == 0 {
		return nil
	}
	out := map[string][]string{}
	for _, g := range groups {
		for _, r := range g.Pods {
			for _, n := range byPod[r] {
				if !slices.Contains(out[g.Name], n) {
					out[g.Name] = append(out[g.Name], n)
				}
			}
		}
	}
	return out
}

// zones returns the sorted zones of all offerings and nodes.
func zones(p *model.Problem) []string {
	set := map[string]bool{}
	for i := range p.Offerings {
		if z := p.Offerings[i].Zone; z != "" {
			set[z] = true
		}
	}
	for i := range p.Nodes {
		if z := p.Nodes[i].Zone; z != "" {
			set[z] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
