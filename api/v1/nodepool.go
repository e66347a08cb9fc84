package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodePool is a template for the nodes Packwright may launch, the limits on their total capacity and how
// they may be disrupted. It is field-for-field compatible with Karpenter's karpenter.sh/v1 NodePool.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=nodepools,scope=Cluster,categories=packwright
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="NodeClass",type="string",JSONPath=".spec.template.spec.nodeClassRef.name"
// +kubebuilder:printcolumn:name="Nodes",type="string",JSONPath=".status.resources.nodes"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type==\"Ready\")].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Weight",type="integer",JSONPath=".spec.weight",priority=1
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.resources.cpu",priority=1
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.resources.memory",priority=1
type NodePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state of the NodePool.
	// +required
	Spec NodePoolSpec `json:"spec"`
	// Status is the observed state of the NodePool.
	// +optional
	Status NodePoolStatus `json:"status,omitempty"`
}

// NodePoolList is a list of NodePools.
//
// +kubebuilder:object:root=true
type NodePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the NodePools.
	Items []NodePool `json:"items"`
}

// NodePoolSpec is the desired state of a NodePool.
type NodePoolSpec struct {
	// Template describes the NodeClaims, and so the nodes, that the NodePool launches.
	// +required
	Template NodeClaimTemplate `json:"template"`
	// Disruption says when and how fast the NodePool's nodes may be consolidated away.
	// +kubebuilder:default:={consolidateAfter: "0s"}
	// +optional
	Disruption Disruption `json:"disruption"`
	// Limits caps the total resources (cpu, memory, nvidia.com/gpu, nodes...) of the NodePool's nodes.
	// +optional
	Limits Limits `json:"limits,omitempty"`
	// Weight orders NodePools: a higher weight is tried first. Unset weighs least.
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=100
	// +optional
	Weight *int32 `json:"weight,omitempty"`
}

// Limits caps the total resources of a NodePool's nodes. A resource that is not listed is unlimited.
type Limits corev1.ResourceList

// ObjectMeta is the subset of object metadata that a NodeClaim template carries to the nodes it describes.
type ObjectMeta struct {
	// Labels are set on every node of the NodePool.
	// +kubebuilder:validation:MaxProperties=100
	// +kubebuilder:validation:XValidation:message="label packwright.dev/nodepool is set by Packwright",rule="!('packwright.dev/nodepool' in self)"
	// +kubebuilder:validation:XValidation:message="label kubernetes.io/hostname may not be set",rule="!('kubernetes.io/hostname' in self)"
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on every node of the NodePool.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// NodeClaimTemplate is the template from which a NodePool creates NodeClaims.
type NodeClaimTemplate struct {
	// ObjectMeta holds the labels and annotations of the nodes.
	// +optional
	ObjectMeta `json:"metadata,omitempty"`
	// Spec fixes the taints, requirements and lifetimes of the nodes.
	// +required
	Spec NodeClaimTemplateSpec `json:"spec"`
}

// NodeClaimTemplateSpec is the part of a NodeClaimSpec that a NodePool fixes for all of its nodes; resource
// requests are chosen per NodeClaim.
type NodeClaimTemplateSpec struct {
	// Taints are put on every node; pods must tolerate them to run there.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// StartupTaints are put on nodes when they start and are expected to be removed by another component
	// (a CNI, a device plugin); pods need not tolerate them.
	// +optional
	StartupTaints []corev1.Taint `json:"startupTaints,omitempty"`
	// Requirements restrict the instance types, zones, capacity types and other labels of the nodes.
	// +kubebuilder:validation:MaxItems:=100
	// +kubebuilder:validation:XValidation:message="label packwright.dev/nodepool is set by the NodePool and may not be required",rule="self.all(x, x.key != 'packwright.dev/nodepool' && x.key != 'karpenter.sh/nodepool')"
	// +kubebuilder:validation:XValidation:message="label kubernetes.io/hostname may not be required",rule="self.all(x, x.key != 'kubernetes.io/hostname')"
	// +required
	Requirements []NodeSelectorRequirementWithMinValues `json:"requirements"`
	// NodeClassRef names the cloud-provider node class of the nodes.
	// +required
	NodeClassRef *NodeClassReference `json:"nodeClassRef"`
	// TerminationGracePeriod is how long a node may drain before its remaining pods are deleted forcibly.
	// Unset waits forever.
	// +kubebuilder:validation:Pattern=`^([0-9]+(s|m|h))+$`
	// +kubebuilder:validation:Type="string"
	// +optional
	TerminationGracePeriod *metav1.Duration `json:"terminationGracePeriod,omitempty"`
	// ExpireAfter is the age at which a node is replaced, or Never.
	// +kubebuilder:default:="720h"
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +optional
	ExpireAfter NillableDuration `json:"expireAfter,omitempty"`
}

// ConsolidationPolicy says which nodes consolidation may remove or replace.
//
// +kubebuilder:validation:Enum:={WhenEmpty,WhenEmptyOrUnderutilized}
type ConsolidationPolicy string

// Consolidation policies.
const (
	// ConsolidationPolicyWhenEmpty removes only nodes without (non-DaemonSet) pods.
	ConsolidationPolicyWhenEmpty ConsolidationPolicy = "WhenEmpty"
	// ConsolidationPolicyWhenEmptyOrUnderutilized also moves pods to pack nodes tighter or cheaper.
	ConsolidationPolicyWhenEmptyOrUnderutilized ConsolidationPolicy = "WhenEmptyOrUnderutilized"
)

// DisruptionReason is why a node is disrupted, as budgets name it.
//
// +kubebuilder:validation:Enum:={Underutilized,Empty,Drifted}
type DisruptionReason string

// Disruption reasons.
const (
	// DisruptionReasonUnderutilized is consolidation of a node whose pods fit elsewhere or on a cheaper node.
	DisruptionReasonUnderutilized DisruptionReason = "Underutilized"
	// DisruptionReasonEmpty is removal of a node without (non-DaemonSet) pods.
	DisruptionReasonEmpty DisruptionReason = "Empty"
	// DisruptionReasonDrifted is replacement of a node that no longer matches its NodePool.
	DisruptionReasonDrifted DisruptionReason = "Drifted"
)

// Disruption configures consolidation of a NodePool's nodes.
type Disruption struct {
	// ConsolidateAfter is how long a node must have had no pod added or removed before consolidation may
	// consider it, or Never.
	// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
	// +kubebuilder:validation:Type="string"
	// +kubebuilder:validation:Schemaless
	// +required
	ConsolidateAfter NillableDuration `json:"consolidateAfter"`
	// ConsolidationPolicy says which nodes may be consolidated.
	// +kubebuilder:default:=WhenEmptyOrUnderutilized
	// +optional
	ConsolidationPolicy ConsolidationPolicy `json:"consolidationPolicy,omitempty"`
	// Budgets cap how many nodes may be disrupted at once; the most restrictive active budget applies.
	// +kubebuilder:validation:XValidation:message="'schedule' must be set with 'duration'",rule="self.all(x, has(x.schedule) == has(x.duration))"
	// +kubebuilder:default:={{nodes: "10%"}}
	// +kubebuilder:validation:MaxItems=50
	// +optional
	Budgets []Budget `json:"budgets,omitempty"`
}

// Budget caps the number of a NodePool's nodes that may be disrupted at once, optionally only during a
// schedule and only for some reasons.
type Budget struct {
	// Reasons are the disruption reasons the budget applies to; empty means all.
	// +optional
	Reasons []DisruptionReason `json:"reasons,omitempty"`
	// Nodes is the number ("5") or percentage ("10%") of the NodePool's nodes that may be disrupted.
	// +kubebuilder:validation:Pattern:="^((100|[0-9]{1,2})%|[0-9]+)$"
	// +kubebuilder:default:="10%"
	// +optional
	Nodes string `json:"nodes"`
	// Schedule is a cron schedule (UTC) at which the budget becomes active, for Duration. Unset means
	// always active. Macros such as @daily are accepted.
	// +kubebuilder:validation:Pattern:=`^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$`
	// +optional
	Schedule *string `json:"schedule,omitempty"`
	// Duration is how long the budget is active after each Schedule time.
	// +kubebuilder:validation:Pattern=`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`
	// +kubebuilder:validation:Type="string"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// NodePoolStatus is the observed state of a NodePool.
type NodePoolStatus struct {
	// Resources is the total capacity of the NodePool's nodes, including a "nodes" count.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// NodeClassObservedGeneration is the generation of the node class last reconciled into the status.
	// +optional
	NodeClassObservedGeneration int64 `json:"nodeClassObservedGeneration,omitempty"`
	// Conditions describe the NodePool's state; Ready is true when it can launch nodes.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
