package nodeclaim

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/controller/metrics"
)

// drainRetry is how soon a drain blocked by a PodDisruptionBudget or by terminating pods is looked at again.
const drainRetry = 5 * time.Second

// terminate drains the claim's node, terminates its instance, deletes the Node and releases the finalizer.
func (c *Controller) terminate(ctx context.Context, claim *apiv1.NodeClaim) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(claim, TerminationFinalizer) {
		return reconcile.Result{}, nil
	}
	node, err := c.nodeFor(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node != nil {
		done, err := c.drain(ctx, claim, node)
		if err != nil {
			return reconcile.Result{}, err
		}
		if !done {
			return reconcile.Result{RequeueAfter: drainRetry}, nil
		}
	}
	if claim.Status.ProviderID != "" {
		if err := c.cloud.Delete(ctx, claim); cloudprovider.IgnoreNodeClaimNotFound(err) != nil {
			metrics.CloudProviderErrors.WithLabelValues(c.cloud.Name(), "Delete", "other").Inc()
			return reconcile.Result{}, fmt.Errorf("terminate instance %s of nodeclaim %s: %w", claim.Status.ProviderID, claim.Name, err)
		}
	}
	if node != nil {
		if err := c.client.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("delete node %s of nodeclaim %s: %w", node.Name, claim.Name, err)
		}
	}
	patch := client.MergeFrom(claim.DeepCopy())
	controllerutil.RemoveFinalizer(claim, TerminationFinalizer)
	if err := c.client.Patch(ctx, claim, patch); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	reason := claim.Annotations[TerminationReasonAnnotationKey]
	if reason == "" {
		reason = "deleted"
	}
	if claim.Status.ProviderID != "" {
		metrics.NodesTerminated.WithLabelValues(reason).Inc()
	}
	log.FromContext(ctx).Info("terminated", "reason", reason, "providerID", claim.Status.ProviderID)
	return reconcile.Result{}, nil
}

// drain taints the node so nothing new lands on it and evicts its pods through the Eviction API, which
// enforces PodDisruptionBudgets. It reports done when every pod that needs to leave has left, or is
// terminating past its deadline, or the claim's terminationGracePeriod has run out.
func (c *Controller) drain(ctx context.Context, claim *apiv1.NodeClaim, node *corev1.Node) (bool, error) {
	if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == DisruptedTaintKey }) {
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule})
		if err := c.client.Patch(ctx, node, patch); err != nil {
			return false, fmt.Errorf("taint node %s for draining: %w", node.Name, err)
		}
	}
	var pods corev1.PodList
	if err := c.client.List(ctx, &pods, client.MatchingFields{NodeNameIndex: node.Name}); err != nil {
		return false, fmt.Errorf("list pods of node %s: %w", node.Name, err)
	}
	forced := claim.Spec.TerminationGracePeriod != nil && claim.DeletionTimestamp != nil &&
		time.Since(claim.DeletionTimestamp.Time) > claim.Spec.TerminationGracePeriod.Duration
	waiting, blocked := 0, 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if !mustLeave(pod) {
			continue
		}
		if pod.DeletionTimestamp != nil {
			if time.Now().Before(pod.DeletionTimestamp.Time) && !forced {
				waiting++
			}
			continue
		}
		if forced {
			continue
		}
		err := c.evict(ctx, pod)
		switch {
		case err == nil:
			waiting++
		case apierrors.IsNotFound(err):
		case apierrors.IsTooManyRequests(err):
			blocked++ // a PodDisruptionBudget allows no disruption now
		default:
			c.event(claim, corev1.EventTypeWarning, "DrainFailed", "Evicting pod %s/%s from node %s: %v", pod.Namespace, pod.Name, node.Name, err)
			return false, fmt.Errorf("evict pod %s/%s from node %s: %w", pod.Namespace, pod.Name, node.Name, err)
		}
	}
	log.FromContext(ctx).V(1).Info("draining", "node", node.Name, "pods", len(pods.Items), "waiting", waiting, "blocked", blocked)
	if blocked > 0 {
		c.event(claim, corev1.EventTypeWarning, "DrainBlocked", "%d pods on node %s cannot be evicted now (PodDisruptionBudget)", blocked, node.Name)
	}
	return waiting == 0 && blocked == 0, nil
}

// mustLeave reports whether a pod must be evicted before its node goes: not a DaemonSet's or a mirror pod
// (those go with the node), not finished.
func mustLeave(pod *corev1.Pod) bool {
	if cluster.IsDaemonSetPod(pod) || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	_, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]
	return !mirror
}

// evict evicts pod through the configured Evictor or, without one, the controller-runtime client (whose
// client-go retries a refused eviction before returning).
func (c *Controller) evict(ctx context.Context, pod *corev1.Pod) error {
	if c.opts.Evictor != nil {
		return c.opts.Evictor.Evict(ctx, pod)
	}
	return c.client.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
	})
}
