package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// Consolidation is a cluster prepared for consolidation, in model terms only (cluster does not import the
// solver): the fields are those of solver.ConsolidationInput, plus the per-pool removal budgets that go into
// solver.ConsolidationOptions.MaxRemoved.
type Consolidation struct {
	// Problem holds the nodes that stay whatever happens (pinned and unmanaged nodes, with all their pods
	// bound), the offerings, pools and zones, and as Groups the movable pods of the candidates.
	Problem model.Problem
	// Candidates are the nodes that may be removed or replaced; their Pods are the pods that go with the node
	// (DaemonSet pods, static pods' mirrors, terminating pods), never moved.
	Candidates []model.ExistingNode
	// Origin maps every movable pod to the index of the candidate it runs on.
	Origin map[model.PodRef]int
	// MaxRemoved is, per NodePool name, how many of its nodes consolidation may remove now beside the forced
	// ones; a pool without an active budget has no entry.
	MaxRemoved map[string]int
	// Forced maps the candidates that must go now, by node name, to why: their NodeClaim has expired or
	// drifted (see ExpiryReason and DriftReason). They are candidates like the others, but the solve may not
	// keep them; their pods are moved to kept or new nodes.
	Forced map[string]string
}

// NotCandidate is a node that consolidation keeps as it is, and why.
type NotCandidate struct {
	Node   string
	Reason string
}

// String returns "node: reason".
func (n NotCandidate) String() string { return n.Node + ": " + n.Reason }

// defaultBudget is the NodePool CRD's default disruption budget, used when a snapshot's NodePool has none.
const defaultBudget = "10%"

// ConsolidationInput prepares the State for consolidation with offerings from cat (see State.Problem for how
// pools, offerings and nodes are converted). Candidates are the nodes managed by a NodePool that are not
// pinned. A node is pinned, and stays with every pod bound to it, when:
//
//   - it is being deleted, or it or one of its pods has the annotation packwright.dev/do-not-disrupt or
//     karpenter.sh/do-not-disrupt set to "true";
//   - one of its movable pods has no controller (a bare pod would be lost), uses local storage (a hostPath
//     volume, or a PersistentVolumeClaim or generic ephemeral volume: a claim may be bound to a node-local or
//     zonal volume, which the model cannot follow, so every claim pins; emptyDir does not), or is selected
//     by a PodDisruptionBudget that allows no disruption;
//   - its NodePool's consolidationPolicy is WhenEmpty and it runs any movable pod.
//
// Pods that go with the node (DaemonSet pods, static pods' mirrors, terminating pods) are never moved and
// never pin it. Pending pods are left out: provisioning plans them. The budgets are the NodePools'
// disruption budgets (see disruptionBudget), evaluated at opts.Now.
//
// A candidate whose NodeClaim (State.NodeClaims, matched by status.nodeName) has expired is forced: it must
// go whatever it saves, and budgets do not hold it back (as Karpenter, expiry is forceful; PodDisruptionBudgets
// still govern the drain). A drifted candidate is forced while its pool's budget for the Drifted reason
// lasts, oldest NodeClaim first; the forced drifted nodes count against the pool's consolidation budget too.
// A forced node still pins for every reason above except its pool's WhenEmpty policy. NotCandidate lists
// every node that is not a candidate, in node order, with its reasons.
func (s *State) ConsolidationInput(cat *catalog.Catalog, opts ProblemOptions) (*Consolidation, []NotCandidate, []Issue, error) {
	if cat == nil {
		return nil, nil, nil, errors.New("consolidation: no catalog")
	}
	s = s.sorted()
	p, issues, err := s.Problem(cat, opts)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("consolidation: %w", err)
	}
	pending := 0
	for i := range p.Groups {
		pending += p.Groups[i].Demand()
	}
	if pending > 0 {
		issues = append(issues, Issue{Object: fmt.Sprintf("%d pending pods", pending), Reason: "left out of consolidation; provisioning plans them"})
	}
	_, bound, _, err := s.pods()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("consolidation: %w", err)
	}
	pdbs, pdbIssues := s.pdbChecks(bound)
	issues = append(issues, pdbIssues...)
	pools := make(map[string]*apiv1.NodePool, len(s.NodePools))
	for _, np := range s.NodePools {
		pools[np.Name] = np
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	claimOf := map[string]*apiv1.NodeClaim{}
	for _, c := range s.NodeClaims {
		if c.Status.NodeName != "" {
			claimOf[c.Status.NodeName] = c
		}
	}

	out := &Consolidation{Origin: map[model.PodRef]int{}, MaxRemoved: map[string]int{}, Forced: map[string]string{}}
	out.Problem = *p
	out.Problem.Groups = nil
	out.Problem.Nodes = nil
	var not []NotCandidate
	var wants []forceWish
	var movable []*podInfo
	origin := map[*podInfo]int{}
	poolNodes, poolDeleting := map[string]int{}, map[string]int{}
	for i, n := range s.Nodes {
		en := p.Nodes[i] // Problem converts s.Nodes in order
		if en.NodePool != "" {
			poolNodes[en.NodePool]++
			if n.DeletionTimestamp != nil {
				poolDeleting[en.NodePool]++
			}
		}
		var must string
		if en.NodePool != "" {
			must = cmp.Or(ExpiryReason(claimOf[n.Name], now), DriftReason(pools[en.NodePool], claimOf[n.Name], n))
		}
		reasons, withNode, move := s.pinReasons(n, en.NodePool, pools[en.NodePool], bound[n.Name], pdbs, must != "")
		if len(reasons) > 0 {
			why := strings.Join(reasons, "; ")
			if must != "" {
				why += " (" + must + ", but pinned)"
			}
			not = append(not, NotCandidate{Node: n.Name, Reason: why})
			out.Problem.Nodes = append(out.Problem.Nodes, en)
			continue
		}
		// The node's BoundPods follow bound[n.Name] one to one; keep only those that go with the node.
		var keep []model.BoundPod
		for j := range bound[n.Name] {
			if withNode[j] {
				keep = append(keep, en.Pods[j])
			}
		}
		en.Pods = keep
		for _, pi := range move {
			origin[pi] = len(out.Candidates)
			movable = append(movable, pi)
		}
		if must != "" {
			wants = append(wants, forceWish{node: n.Name, pool: en.NodePool, reason: must, claim: claimOf[n.Name]})
		}
		out.Candidates = append(out.Candidates, en)
	}
	slices.SortFunc(movable, func(a, b *podInfo) int { return byMeta(a.pod, b.pod) })
	out.Problem.Groups = groupPods(movable, s.selectorLabelKeys(movable, bound))
	for _, pi := range movable {
		out.Origin[model.PodRef{Namespace: pi.pod.Namespace, Name: pi.pod.Name}] = origin[pi]
	}
	driftLeft := map[string]int{}
	for _, np := range s.NodePools {
		b, ok, err := disruptionBudget(np, poolNodes[np.Name], poolDeleting[np.Name], now, apiv1.DisruptionReasonUnderutilized, apiv1.DisruptionReasonEmpty)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("consolidation: nodepool %s: %w", np.Name, err)
		}
		if ok {
			out.MaxRemoved[np.Name] = b
		}
		d, ok, err := disruptionBudget(np, poolNodes[np.Name], poolDeleting[np.Name], now, apiv1.DisruptionReasonDrifted)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("consolidation: nodepool %s: %w", np.Name, err)
		}
		if !ok {
			d = len(s.Nodes) // no budget applies to drift: no cap
		}
		driftLeft[np.Name] = d
	}
	// Expired nodes go in any case; drifted ones within their pool's drift budget, oldest first.
	slices.SortStableFunc(wants, func(a, b forceWish) int { return a.claim.CreationTimestamp.Compare(b.claim.CreationTimestamp.Time) })
	for _, w := range wants {
		expired := strings.HasPrefix(w.reason, ExpiredPrefix)
		if !expired {
			if driftLeft[w.pool] <= 0 {
				continue // stays a plain candidate; a later pass replaces it
			}
			driftLeft[w.pool]--
			if b, ok := out.MaxRemoved[w.pool]; ok {
				out.MaxRemoved[w.pool] = max(b-1, 0)
			}
		}
		out.Forced[w.node] = w.reason
	}
	return out, not, issues, nil
}

// forceWish is a candidate that has expired or drifted, before budgets decide whether it goes now.
type forceWish struct {
	node, pool, reason string
	claim              *apiv1.NodeClaim
}

// pinReasons says why node n (of NodePool pool, "" when unmanaged) must stay; when it may go, withNode marks
// the pods (by index into pods) that go with it and move lists the others.
func (s *State) pinReasons(n *corev1.Node, pool string, np *apiv1.NodePool, pods []*podInfo, pdbs []pdbCheck, forced bool) (reasons []string, withNode []bool, move []*podInfo) {
	if pool == "" {
		return []string{"not managed by a NodePool"}, nil, nil
	}
	if n.DeletionTimestamp != nil {
		reasons = append(reasons, "being deleted")
	}
	if k := doNotDisrupt(n.Annotations); k != "" {
		reasons = append(reasons, "annotated "+k)
	}
	withNode = make([]bool, len(pods))
	for j, pi := range pods {
		pod := pi.pod
		name := "pod " + pod.Namespace + "/" + pod.Name
		if pod.DeletionTimestamp != nil || IsDaemonSetPod(pod) || isMirror(pod) {
			withNode[j] = true
			if pod.DeletionTimestamp == nil {
				if k := doNotDisrupt(pod.Annotations); k != "" {
					reasons = append(reasons, name+" is annotated "+k)
				}
			}
			continue
		}
		move = append(move, pi)
		if k := doNotDisrupt(pod.Annotations); k != "" {
			reasons = append(reasons, name+" is annotated "+k)
		}
		if metav1.GetControllerOf(pod) == nil {
			reasons = append(reasons, name+" has no controller")
		}
		if why := localStorage(pod); why != "" {
			reasons = append(reasons, name+" uses "+why)
		}
		for _, c := range pdbs {
			if c.blocks(pod) {
				reasons = append(reasons, fmt.Sprintf("%s is covered by PodDisruptionBudget %s/%s, which allows no disruption", name, c.pdb.Namespace, c.pdb.Name))
			}
		}
	}
	if !forced && np != nil && np.Spec.Disruption.ConsolidationPolicy == apiv1.ConsolidationPolicyWhenEmpty && len(move) > 0 {
		reasons = append(reasons, fmt.Sprintf("nodepool %s consolidates only empty nodes (WhenEmpty) and the node runs %d pods", pool, len(move)))
	}
	return reasons, withNode, move
}

// doNotDisrupt returns the do-not-disrupt annotation set to "true" among annotations, or "".
func doNotDisrupt(annotations map[string]string) string {
	for _, k := range []string{apiv1.DoNotDisruptAnnotationKey, apiv1.KarpenterDoNotDisruptAnnotationKey} {
		if annotations[k] == "true" {
			return k
		}
	}
	return ""
}

// isMirror reports whether pod is the API server's mirror of a static pod, which its node's kubelet runs.
func isMirror(pod *corev1.Pod) bool {
	if _, ok := pod.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return true
	}
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "Node"
}

// localStorage names the first volume of pod that ties it to its node, or "".
func localStorage(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.HostPath != nil:
			return "hostPath volume " + v.Name
		case v.PersistentVolumeClaim != nil:
			return "PersistentVolumeClaim " + v.PersistentVolumeClaim.ClaimName
		case v.Ephemeral != nil:
			return "generic ephemeral volume " + v.Name
		}
	}
	return ""
}

// pdbCheck is a PodDisruptionBudget that allows no disruption, with its parsed selector.
type pdbCheck struct {
	pdb *policyv1.PodDisruptionBudget
	sel labels.Selector
}

func (c pdbCheck) blocks(pod *corev1.Pod) bool {
	return pod.Namespace == c.pdb.Namespace && c.sel.Matches(labels.Set(pod.Labels))
}

// pdbChecks returns the PodDisruptionBudgets that allow no disruption now. When the disruption controller has
// observed a budget (status.observedGeneration > 0), its status.disruptionsAllowed decides. Otherwise (a
// hand-written snapshot) the allowance is derived from the spec, counting the running pods it selects as
// healthy: maxUnavailable, or the selected pods less minAvailable (percentages rounded up, as the
// disruption controller does). A budget with a nil selector selects nothing; one with neither field set
// does not block.
func (s *State) pdbChecks(bound map[string][]*podInfo) ([]pdbCheck, []Issue) {
	var out []pdbCheck
	var issues []Issue
	for _, pdb := range s.PodDisruptionBudgets {
		obj := "poddisruptionbudget " + pdb.Namespace + "/" + pdb.Name
		if pdb.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			issues = append(issues, Issue{Object: obj, Reason: fmt.Sprintf("spec.selector: %v; ignored", err)})
			continue
		}
		c := pdbCheck{pdb: pdb, sel: sel}
		allowed, err := c.allowed(bound)
		if err != nil {
			issues = append(issues, Issue{Object: obj, Reason: err.Error() + "; treated as allowing no disruption"})
			allowed = 0
		}
		if allowed <= 0 {
			out = append(out, c)
		}
	}
	return out, issues
}

// allowed is how many of the budget's pods may be disrupted now.
func (c pdbCheck) allowed(bound map[string][]*podInfo) (int, error) {
	if c.pdb.Status.ObservedGeneration > 0 {
		return int(c.pdb.Status.DisruptionsAllowed), nil
	}
	spec := &c.pdb.Spec
	if spec.MaxUnavailable == nil && spec.MinAvailable == nil {
		return 1, nil
	}
	running := 0
	for _, pis := range bound {
		for _, pi := range pis {
			if pi.pod.DeletionTimestamp == nil && c.blocks(pi.pod) {
				running++
			}
		}
	}
	if spec.MaxUnavailable != nil {
		v, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, running, true)
		if err != nil {
			return 0, fmt.Errorf("spec.maxUnavailable: %w", err)
		}
		return v, nil
	}
	v, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, running, true)
	if err != nil {
		return 0, fmt.Errorf("spec.minAvailable: %w", err)
	}
	return running - v, nil
}

// disruptionBudget returns how many of np's nodes may be disrupted now for any of reasons, and whether any
// budget applies: the least over the active budgets whose reasons are empty or name one of reasons, of their
// nodes ("3", or "20%" of the pool's nodes, rounded up), less the pool's nodes already being deleted. A budget
// with a schedule is active from each time its cron schedule (UTC) fires until its duration has passed. A pool
// without budgets gets the CRD's default, 10%.
func disruptionBudget(np *apiv1.NodePool, nodes, deleting int, now time.Time, reasons ...apiv1.DisruptionReason) (int, bool, error) {
	budgets := np.Spec.Disruption.Budgets
	if len(budgets) == 0 {
		budgets = []apiv1.Budget{{Nodes: defaultBudget}}
	}
	best, found := 0, false
	for i, b := range budgets {
		active, err := budgetActive(b, now)
		if err != nil {
			return 0, false, fmt.Errorf("spec.disruption.budgets[%d]: %w", i, err)
		}
		if !active {
			continue
		}
		if len(b.Reasons) > 0 && !slices.ContainsFunc(reasons, func(r apiv1.DisruptionReason) bool { return slices.Contains(b.Reasons, r) }) {
			continue
		}
		v, err := budgetNodes(cmp.Or(b.Nodes, defaultBudget), nodes)
		if err != nil {
			return 0, false, fmt.Errorf("spec.disruption.budgets[%d].nodes: %w", i, err)
		}
		if !found || v < best {
			best, found = v, true
		}
	}
	return max(best-deleting, 0), found, nil
}

// budgetActive reports whether budget b applies at now: always without a schedule, otherwise when the
// schedule fired at most its duration ago (the first firing after now-duration is not after now).
func budgetActive(b apiv1.Budget, now time.Time) (bool, error) {
	if b.Schedule == nil {
		return true, nil
	}
	if b.Duration == nil || b.Duration.Duration <= 0 {
		return false, errors.New("a schedule needs a positive duration")
	}
	sched, err := cron.ParseStandard(*b.Schedule)
	if err != nil {
		return false, fmt.Errorf("schedule %q: %w", *b.Schedule, err)
	}
	now = now.UTC()
	next := sched.Next(now.Add(-b.Duration.Duration))
	return !next.IsZero() && !next.After(now), nil
}

// budgetNodes evaluates a budget's nodes field against a pool of n nodes.
func budgetNodes(s string, n int) (int, error) {
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.Atoi(pct)
		if err != nil || v < 0 || v > 100 {
			return 0, fmt.Errorf("%q is not a percentage from 0%% to 100%%", s)
		}
		return (v*n + 99) / 100, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative count or percentage", s)
	}
	return v, nil
}
