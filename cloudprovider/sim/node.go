package sim

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/packwright/packwright/api/v1"
)

// ImageID is the image every simulated instance reports.
const ImageID = "sim"

// nodeFor builds the Node that stands for the claim: named like it, labelled with the claim's labels, every
// single-valued In requirement, the chosen instance type, capacity type and zone, the hostname and the
// kubelet's os/arch defaults; tainted with the claim's taints and startup taints (startup taints are someone
// else's to remove); NotReady, with the given capacity as capacity and allocatable.
func nodeFor(claim *v1.NodeClaim, instanceType, capacityType string, capacity corev1.ResourceList) *corev1.Node {
	labels := map[string]string{
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	maps.Copy(labels, claim.Labels)
	for _, r := range claim.Spec.Requirements {
		if r.Operator == corev1.NodeSelectorOpIn && len(r.Values) == 1 {
			labels[r.Key] = r.Values[0]
		}
	}
	if instanceType != "" {
		labels[corev1.LabelInstanceTypeStable] = instanceType
	}
	if capacityType != "" {
		labels[v1.CapacityTypeLabelKey] = capacityType
	}
	if zone := inValues(claim.Spec.Requirements, corev1.LabelTopologyZone)[0]; zone != "" {
		labels[corev1.LabelTopologyZone] = zone
	}
	labels[corev1.LabelHostname] = claim.Name

	var taints []corev1.Taint
	taints = append(taints, claim.Spec.Taints...)
	taints = append(taints, claim.Spec.StartupTaints...)

	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: claim.Name, Labels: labels},
		Spec:       corev1.NodeSpec{ProviderID: ProviderIDPrefix + claim.Name, Taints: taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type:               corev1.NodeReady,
				Status:             corev1.ConditionFalse,
				Reason:             "SimulatedNodeStarting",
				Message:            "the simulated node is starting",
				LastHeartbeatTime:  metav1.Now(),
				LastTransitionTime: metav1.Now(),
			}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: claim.Name}},
			NodeInfo: corev1.NodeSystemInfo{
				OperatingSystem: labels[corev1.LabelOSStable],
				Architecture:    labels[corev1.LabelArchStable],
			},
		},
	}
}

// claimFor returns a copy of claim with the node's labels merged into its labels and its status describing the
// node.
func claimFor(claim *v1.NodeClaim, node *corev1.Node) *v1.NodeClaim {
	out := claim.DeepCopy()
	if out.Name == "" {
		out.Name = node.Name
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, node.Labels)
	out.Status.ProviderID = node.Spec.ProviderID
	out.Status.NodeName = node.Name
	out.Status.ImageID = ImageID
	out.Status.Capacity = node.Status.Capacity.DeepCopy()
	out.Status.Allocatable = node.Status.Allocatable.DeepCopy()
	return out
}
