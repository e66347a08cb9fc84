package cluster

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// Node labels read besides the well-known ones that model defines. The beta labels are still set by some
// clusters; EKS managed node groups give the capacity type under their own key and in their own spelling.
const (
	labelInstanceTypeBeta = "beta.kubernetes.io/instance-type"
	labelZoneBeta         = "failure-domain.beta.kubernetes.io/zone"
	labelEKSCapacityType  = "eks.amazonaws.com/capacityType"
	// TaintUnschedulable is the taint that stands for spec.unschedulable (a cordoned node), as the node
	// lifecycle controller sets it.
	TaintUnschedulable = "node.kubernetes.io/unschedulable"
)

// nodeCapacityType returns the node's capacity type (on-demand or spot) from Packwright's, Karpenter's or EKS's
// label, in that order of preference.
func nodeCapacityType(labels map[string]string) (string, bool) {
	for _, k := range []string{apiv1.CapacityTypeLabelKey, apiv1.KarpenterCapacityTypeLabelKey} {
		if v, ok := labels[k]; ok && v != "" {
			return v, true
		}
	}
	switch labels[labelEKSCapacityType] {
	case "ON_DEMAND":
		return model.OnDemand, true
	case "SPOT":
		return model.Spot, true
	}
	return "", false
}

func firstLabel(labels map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// existingNode converts a Node and the pods bound to it. Its labels are kept exactly as they are, with no
// Packwright labels added: the kube-scheduler matches pods against the real labels, so the plan must too.
func existingNode(n *corev1.Node, bound []*podInfo, cat *catalog.Catalog, pools map[string]bool) (model.ExistingNode, []Issue, error) {
	var issues []Issue
	obj := "node " + n.Name
	capacity, err := resources(n.Status.Capacity, "status.capacity")
	if err != nil {
		return model.ExistingNode{}, nil, fmt.Errorf("%s: %w", obj, err)
	}
	alloc, err := resources(n.Status.Allocatable, "status.allocatable")
	if err != nil {
		return model.ExistingNode{}, nil, fmt.Errorf("%s: %w", obj, err)
	}
	if len(alloc) == 0 && len(capacity) > 0 {
		// The kubelet always reports both; a hand-written snapshot may give only capacity.
		alloc = maps.Clone(capacity)
		issues = append(issues, Issue{Object: obj, Reason: "no status.allocatable; using status.capacity"})
	}
	ts, err := taints(n.Spec.Taints, "spec.taints")
	if err != nil {
		return model.ExistingNode{}, nil, fmt.Errorf("%s: %w", obj, err)
	}
	// A cordoned or deleting node takes no new pods. The node lifecycle controller adds the taint for a cordon;
	// a snapshot may have been taken before it did, and a deleting node may not be cordoned at all.
	if n.Spec.Unschedulable || n.DeletionTimestamp != nil {
		unsched := model.Taint{Key: TaintUnschedulable, Effect: model.NoSchedule}
		if !slices.Contains(ts, unsched) {
			ts = append(ts, unsched)
		}
	}

	labels := n.Labels
	en := model.ExistingNode{
		Name:         n.Name,
		InstanceType: firstLabel(labels, model.LabelInstanceType, labelInstanceTypeBeta),
		Zone:         firstLabel(labels, model.LabelZone, labelZoneBeta),
		Capacity:     capacity,
		Allocatable:  alloc,
		Labels:       maps.Clone(labels),
		Taints:       ts,
	}
	if pool := firstLabel(labels, apiv1.NodePoolLabelKey, apiv1.KarpenterNodePoolLabelKey); pool != "" {
		if pools[pool] {
			en.NodePool = pool
		} else {
			issues = append(issues, Issue{Object: obj, Reason: fmt.Sprintf("labelled for NodePool %s, which the snapshot does not have; treated as unmanaged", pool)})
		}
	}

	ct, ok := nodeCapacityType(labels)
	if !ok {
		ct = model.OnDemand
		issues = append(issues, Issue{Object: obj, Reason: "no capacity-type label (" + apiv1.CapacityTypeLabelKey + ", " + apiv1.KarpenterCapacityTypeLabelKey + " or " + labelEKSCapacityType + "); priced as on-demand"})
	}
	en.CapacityType = ct
	switch {
	case en.InstanceType == "":
		issues = append(issues, Issue{Object: obj, Reason: "no " + model.LabelInstanceType + " label; priced at 0"})
	case cat == nil:
	default:
		if price, ok := cat.Price(en.InstanceType, en.Zone, ct); ok {
			en.Price = price
		} else {
			issues = append(issues, Issue{Object: obj, Reason: fmt.Sprintf("the catalog has no %s price for %s in zone %q; priced at 0", ct, en.InstanceType, en.Zone)})
		}
	}

	for _, pi := range bound {
		en.Pods = append(en.Pods, model.BoundPod{
			Ref:             model.PodRef{Namespace: pi.pod.Namespace, Name: pi.pod.Name},
			Labels:          maps.Clone(pi.pod.Labels),
			Requests:        pi.requests.Clone(),
			HostPorts:       slices.Clone(pi.hostPorts),
			PodAntiAffinity: slices.Clone(pi.podAntiAffinity),
		})
	}
	return en, issues, nil
}
