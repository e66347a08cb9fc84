package cluster

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/model"
)

// DriftReason says why the node of claim no longer matches its NodePool np, or "" when it still does:
//
//   - the NodePool's TemplateHash differs from the one recorded on the NodeClaim at launch (labels,
//     annotations, taints, node class, lifetimes changed); a NodeClaim without a recorded hash is not judged
//     on it;
//   - the node's labels (the NodeClaim's when node is nil) no longer satisfy one of the NodePool's
//     requirements. A requirement on a label the node does not carry counts only for Exists, since the other
//     operators may name labels that only pods select on.
func DriftReason(np *apiv1.NodePool, claim *apiv1.NodeClaim, node *corev1.Node) string {
	if np == nil || claim == nil {
		return ""
	}
	if h, ok := claim.Annotations[apiv1.NodePoolHashAnnotationKey]; ok && h != np.TemplateHash() {
		return fmt.Sprintf("nodepool %s's template changed since the node was launched", np.Name)
	}
	labels := claim.Labels
	if node != nil {
		labels = node.Labels
	}
	for _, r := range np.Spec.Template.Spec.Requirements {
		_, has := labels[r.Key]
		if !has && r.Operator != corev1.NodeSelectorOpExists {
			continue
		}
		req := model.Requirement{Key: r.Key, Operator: model.Operator(r.Operator), Values: r.Values}
		if !req.Matches(labels) {
			return fmt.Sprintf("the node's label %s=%q no longer satisfies nodepool %s's requirement %s", r.Key, labels[r.Key], np.Name, req)
		}
	}
	return ""
}

// ExpiredPrefix begins every ExpiryReason, so that a forced node's reason tells expiry from drift.
const ExpiredPrefix = "expired: "

// ExpiryReason says why claim's node has outlived its expireAfter at now, or "" when it has not (or never
// expires).
func ExpiryReason(claim *apiv1.NodeClaim, now time.Time) string {
	if claim == nil || claim.Spec.ExpireAfter.Duration == nil || claim.CreationTimestamp.IsZero() {
		return ""
	}
	after := *claim.Spec.ExpireAfter.Duration
	if age := now.Sub(claim.CreationTimestamp.Time); age >= after {
		return fmt.Sprintf("%slaunched %s ago, expireAfter %s", ExpiredPrefix, age.Round(time.Second), after)
	}
	return ""
}
