// Package disruption keeps the cluster cheap and current: it periodically solves consolidation over the nodes
// Packwright manages (solver.Consolidate: delete empty nodes, delete or merge under-used ones, replace nodes by
// cheaper ones, and move the pods off expired and drifted nodes, in one solve) and carries out one decision at
// a time: launch the replacements and wait until they are ready, re-validate the decision against the cluster
// as it is then, and delete the removed nodes' NodeClaims, whose termination taints the node, drains it through
// the Eviction API (PodDisruptionBudgets respected) and terminates the instance.
package disruption

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/controller/metrics"
	"github.com/packwright/packwright/controller/nodeclaim"
	"github.com/packwright/packwright/controller/provisioning"
	"github.com/packwright/packwright/solver"
)

// DoNotDisruptAnnotationKey on a node or pod keeps the node out of consolidation.
const DoNotDisruptAnnotationKey = apiv1.GroupName + "/do-not-disrupt"

// Options configure the disruption controller.
type Options struct {
	// Interval between consolidation passes (default 30 s).
	Interval time.Duration
	// Deadline of each consolidation solve (default 5 s).
	Deadline time.Duration
	// ReplacementTimeout abandons a command whose replacements are not ready in time (default 10 min).
	ReplacementTimeout time.Duration
	// Catalog prices the offerings.
	Catalog *catalog.Catalog
	// Consolidation tunes the solve (move cost, minimum saving).
	Consolidation solver.ConsolidationOptions
	// Observe is called with every decision (tests, benchmarks).
	Observe func(*solver.Consolidation)
}

// Termination reasons the controller records on the NodeClaims it deletes.
const (
	ReasonConsolidated = "consolidated"
	ReasonDrifted      = "drifted"
	ReasonExpired      = "expired"
)

// Controller is the disruption loop. It runs as a manager Runnable on the leader only.
type Controller struct {
	client   client.Client
	recorder record.EventRecorder
	prov     *provisioning.Provisioner
	opts     Options
	now      func() time.Time
}

// New returns the disruption controller; prov gives it provisioning's view of the cluster and creates
// replacement NodeClaims as provisioning would.
func New(c client.Client, recorder record.EventRecorder, prov *provisioning.Provisioner, opts Options) *Controller {
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	if opts.Deadline <= 0 {
		opts.Deadline = 5 * time.Second
	}
	if opts.ReplacementTimeout <= 0 {
		opts.ReplacementTimeout = 10 * time.Minute
	}
	opts.Consolidation.Solve.Deadline = opts.Deadline
	return &Controller{client: c, recorder: recorder, prov: prov, opts: opts, now: time.Now}
}

// NeedLeaderElection makes the loop run on the leader only.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs passes until ctx ends. A failed pass is logged and the next one tried.
func (c *Controller) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("disruption")
	ctx = log.IntoContext(ctx, logger)
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := c.Pass(ctx); err != nil {
			logger.Error(err, "consolidation pass failed")
		}
	}
}

// Pass makes one consolidation decision and carries it out. It returns the decision, or nil when the cluster
// was not settled enough to decide (pods pending, NodeClaims launching or terminating).
func (c *Controller) Pass(ctx context.Context) (*solver.Consolidation, error) {
	logger := log.FromContext(ctx)
	state, pending, err := c.prov.State(ctx)
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		return nil, nil // provisioning's turn
	}
	var claims apiv1.NodeClaimList
	if err := c.client.List(ctx, &claims); err != nil {
		return nil, fmt.Errorf("list nodeclaims: %w", err)
	}
	claimOfNode := map[string]*apiv1.NodeClaim{}
	for i := range claims.Items {
		cl := &claims.Items[i]
		if cl.DeletionTimestamp != nil || !apiv1.IsConditionTrue(cl.Status.Conditions, apiv1.ConditionTypeInitialized) {
			return nil, nil // something is launching or terminating: decide on a settled cluster
		}
		claimOfNode[cl.Status.NodeName] = cl
	}
	c.markDrifted(ctx, state, claimOfNode)
	pinned := c.pinByPolicy(state, claimOfNode)
	cons, notCandidates, _, err := state.ConsolidationInput(c.opts.Catalog, cluster.ProblemOptions{Now: c.now()})
	if err != nil {
		return nil, fmt.Errorf("consolidation input: %w", err)
	}
	in := &solver.ConsolidationInput{Problem: cons.Problem, Candidates: cons.Candidates, Origin: cons.Origin, Forced: cons.Forced}
	opts := c.opts.Consolidation
	opts.MaxRemoved = cons.MaxRemoved
	for _, nc := range notCandidates {
		logger.V(1).Info("not a consolidation candidate", "node", nc.Node, "reason", nc.Reason)
	}
	decision, err := solver.Consolidate(ctx, in, opts)
	if err != nil {
		return nil, fmt.Errorf("consolidate %d candidates: %w", len(in.Candidates), err)
	}
	metrics.ConsolidationDecisions.WithLabelValues(action(decision)).Inc()
	if decision.Plan != nil {
		metrics.SolveDuration.WithLabelValues("consolidation-"+decision.Plan.Solver, string(decision.Status)).Observe(decision.Duration.Seconds())
	}
	if c.opts.Observe != nil {
		c.opts.Observe(decision)
	}
	if !decision.Act {
		logger.V(1).Info("no consolidation", "reason", decision.Reason, "candidates", len(in.Candidates), "pinnedByPolicy", pinned)
		return decision, nil
	}
	logger.Info("consolidating", "remove", decision.Removed, "forced", decision.Forced, "launch", len(decision.NewNodes), "saving", decision.Saving,
		"costBefore", decision.CostBefore, "costAfter", decision.CostAfter, "lowerBound", decision.LowerBound, "gap", decision.Gap(),
		"moves", len(decision.Moves), "duration", decision.Duration.String())
	return decision, c.execute(ctx, state, in, decision, claimOfNode)
}

// markDrifted sets the Drifted condition on the NodeClaims that no longer match their NodePool (and clears it
// on those that match again), so that `kubectl get nodeclaims` shows what consolidation will replace. A
// failed update is logged and retried on the next pass: the condition is information, the decision is
// ConsolidationInput's.
func (c *Controller) markDrifted(ctx context.Context, state *cluster.State, claimOfNode map[string]*apiv1.NodeClaim) {
	pools := map[string]*apiv1.NodePool{}
	for _, np := range state.NodePools {
		pools[np.Name] = np
	}
	for _, n := range state.Nodes {
		cl := claimOfNode[n.Name]
		if cl == nil {
			continue
		}
		why := cluster.DriftReason(pools[cl.Labels[apiv1.NodePoolLabelKey]], cl, n)
		if (why != "") == apiv1.IsConditionTrue(cl.Status.Conditions, apiv1.ConditionTypeDrifted) {
			continue
		}
		cl = cl.DeepCopy()
		status, reason := metav1.ConditionFalse, "NotDrifted"
		if why != "" {
			status, reason = metav1.ConditionTrue, "Drifted"
		}
		meta.SetStatusCondition(&cl.Status.Conditions, metav1.Condition{Type: apiv1.ConditionTypeDrifted, Status: status,
			Reason: reason, Message: why, ObservedGeneration: cl.Generation})
		if err := c.client.Status().Update(ctx, cl); err != nil {
			log.FromContext(ctx).V(1).Info("drift condition not recorded", "nodeclaim", cl.Name, "error", err.Error())
			continue
		}
		if why != "" {
			c.recorder.Eventf(cl, corev1.EventTypeNormal, "Drifted", "NodeClaim %s has drifted: %s", cl.Name, why)
		}
	}
}

// pinByPolicy marks, in state, the nodes their NodePool's disruption policy keeps now: consolidateAfter not
// elapsed since the node was initialised (or since a pod last landed on it), or WhenEmpty with pods. The mark is
// the do-not-disrupt annotation on the state's copy of the Node, which ConsolidationInput honours. Expired and
// drifted nodes are left unmarked: consolidateAfter delays consolidation, not their replacement.
func (c *Controller) pinByPolicy(state *cluster.State, claimOfNode map[string]*apiv1.NodeClaim) int {
	pools := map[string]*apiv1.NodePool{}
	for _, np := range state.NodePools {
		pools[np.Name] = np
	}
	lastPod := map[string]time.Time{}
	for _, p := range state.Pods {
		if p.Spec.NodeName != "" && p.CreationTimestamp.After(lastPod[p.Spec.NodeName]) {
			lastPod[p.Spec.NodeName] = p.CreationTimestamp.Time
		}
	}
	pinned := 0
	for _, n := range state.Nodes {
		cl := claimOfNode[n.Name]
		if cl == nil {
			continue
		}
		np := pools[cl.Labels[apiv1.NodePoolLabelKey]]
		if cluster.ExpiryReason(cl, c.now()) != "" || cluster.DriftReason(np, cl, n) != "" {
			continue
		}
		keep := np == nil
		if np != nil {
			after := np.Spec.Disruption.ConsolidateAfter.Duration
			since := lastPod[n.Name]
			if init := conditionTime(cl, apiv1.ConditionTypeInitialized); init.After(since) {
				since = init
			}
			switch {
			case after == nil: // consolidateAfter: Never
				keep = true
			case c.now().Sub(since) < *after:
				keep = true
			}
		}
		if keep {
			if n.Annotations == nil {
				n.Annotations = map[string]string{}
			}
			n.Annotations[DoNotDisruptAnnotationKey] = "true"
			pinned++
		}
	}
	return pinned
}

// execute carries out one decision: replacements first, then re-validation, then the removals.
func (c *Controller) execute(ctx context.Context, state *cluster.State, in *solver.ConsolidationInput, d *solver.Consolidation, claimOfNode map[string]*apiv1.NodeClaim) error {
	logger := log.FromContext(ctx)
	podsBefore := podsOn(state, d.Removed)
	var replacements []*apiv1.NodeClaim
	for i := range d.NewNodes {
		cl, err := c.prov.CreateNodeClaim(ctx, d.Model, &d.NewNodes[i], state.NodePools, "consolidation")
		if err != nil {
			c.abandon(ctx, replacements)
			return fmt.Errorf("launch replacement: %w", err)
		}
		replacements = append(replacements, cl)
	}
	if len(replacements) > 0 {
		err := wait.PollUntilContextTimeout(ctx, time.Second, c.opts.ReplacementTimeout, true, func(ctx context.Context) (bool, error) {
			for _, r := range replacements {
				got := &apiv1.NodeClaim{}
				if err := c.client.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
					return false, client.IgnoreNotFound(err) // a claim deleted for capacity errors times out below
				}
				if !apiv1.IsConditionTrue(got.Status.Conditions, apiv1.ConditionTypeInitialized) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			c.abandon(ctx, replacements)
			metrics.ConsolidationDecisions.WithLabelValues("abandoned").Inc()
			return fmt.Errorf("replacements not ready within %s, command abandoned: %w", c.opts.ReplacementTimeout, err)
		}
	}
	// Re-validate: the removed nodes must still be there and hold the same pods, and nothing may be pending.
	now, pending, err := c.prov.State(ctx)
	if err != nil {
		return err
	}
	if reason := changed(podsBefore, podsOn(now, d.Removed), len(pending)); reason != "" {
		logger.Info("consolidation abandoned: the cluster changed", "reason", reason)
		metrics.ConsolidationDecisions.WithLabelValues("abandoned").Inc()
		// Replacements stay: they are ready capacity the next pass accounts for (and may remove).
		return nil
	}
	for _, name := range d.Removed {
		cl := claimOfNode[name]
		if cl == nil {
			continue
		}
		patch := client.MergeFrom(cl.DeepCopy())
		if cl.Annotations == nil {
			cl.Annotations = map[string]string{}
		}
		reason := ReasonConsolidated
		why := d.Forced[name]
		switch {
		case strings.HasPrefix(why, cluster.ExpiredPrefix):
			reason = ReasonExpired
		case why != "":
			reason = ReasonDrifted
		}
		cl.Annotations[nodeclaim.TerminationReasonAnnotationKey] = reason
		if err := c.client.Patch(ctx, cl, patch); err != nil {
			return fmt.Errorf("annotate nodeclaim %s: %w", cl.Name, err)
		}
		verb := "deleting"
		if len(replacements) > 0 {
			verb = "replacing with " + names(replacements)
		}
		if why != "" {
			c.recorder.Eventf(cl, corev1.EventTypeNormal, "Disrupting", "Disruption is %s node %s, which must go: %s (cluster %.4f/h to %.4f/h, lower bound %.4f/h)",
				verb, name, why, d.CostBefore, d.CostAfter, d.LowerBound)
		} else {
			c.recorder.Eventf(cl, corev1.EventTypeNormal, "Consolidating", "Consolidation is %s node %s: saves %.4f/h (cluster %.4f/h to %.4f/h, lower bound %.4f/h)",
				verb, name, d.Saving, d.CostBefore, d.CostAfter, d.LowerBound)
		}
		metrics.NodesDisrupted.WithLabelValues(reason).Inc()
		if err := c.client.Delete(ctx, cl); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete nodeclaim %s: %w", cl.Name, err)
		}
	}
	metrics.ConsolidationSaving.Set(d.Saving)
	return nil
}

// abandon deletes replacements launched for a command that will not go ahead.
func (c *Controller) abandon(ctx context.Context, replacements []*apiv1.NodeClaim) {
	for _, r := range replacements {
		_ = c.client.Delete(ctx, r)
	}
}

// podsOn lists the pods (namespace/name/uid) on each named node.
func podsOn(state *cluster.State, nodes []string) map[string][]string {
	out := map[string][]string{}
	for _, n := range nodes {
		out[n] = []string{}
	}
	for _, p := range state.Pods {
		if _, ok := out[p.Spec.NodeName]; ok && p.DeletionTimestamp == nil {
			out[p.Spec.NodeName] = append(out[p.Spec.NodeName], p.Namespace+"/"+p.Name+"/"+string(p.UID))
		}
	}
	present := map[string]bool{}
	for _, n := range state.Nodes {
		present[n.Name] = true
	}
	for n := range out {
		if !present[n] {
			out[n] = nil // gone
		}
		slices.Sort(out[n])
	}
	return out
}

// changed says why a decision no longer holds, or "".
func changed(before, after map[string][]string, pending int) string {
	if pending > 0 {
		return fmt.Sprintf("%d pods pending", pending)
	}
	for n, pods := range before {
		if after[n] == nil {
			return "node " + n + " is gone"
		}
		if !slices.Equal(pods, after[n]) {
			return "the pods on node " + n + " changed"
		}
	}
	return ""
}

func action(d *solver.Consolidation) string {
	switch {
	case !d.Act:
		return "none"
	case len(d.NewNodes) > 0:
		return "replace"
	default:
		return "delete"
	}
}

func names(cs []*apiv1.NodeClaim) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return strings.Join(out, ", ")
}

func conditionTime(cl *apiv1.NodeClaim, t string) time.Time {
	for _, c := range cl.Status.Conditions {
		if c.Type == t {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
