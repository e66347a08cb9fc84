package v1

import corev1 "k8s.io/api/core/v1"

// NodeSelectorRequirementWithMinValues is a node selector requirement (key, operator, values) that may also ask
// for a minimum number of distinct values among the instance types a NodePool may launch.
//
// +kubebuilder:validation:XValidation:message="operator 'In' needs at least one value",rule="self.operator == 'In' ? (has(self.values) && self.values.size() != 0) : true"
// +kubebuilder:validation:XValidation:message="operators 'Gt' and 'Lt' need a single non-negative integer value",rule="(self.operator == 'Gt' || self.operator == 'Lt') ? (has(self.values) && self.values.size() == 1 && self.values[0].matches('^[0-9]+$')) : true"
// +kubebuilder:validation:XValidation:message="minValues needs at least that many values",rule="(self.operator == 'In' && has(self.minValues)) ? (has(self.values) && self.values.size() >= self.minValues) : true"
type NodeSelectorRequirementWithMinValues struct {
	// Key is the label key that the requirement applies to.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^(([a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*)/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	// +required
	Key string `json:"key"`
	// Operator relates the key to the values: In, NotIn, Exists, DoesNotExist, Gt or Lt.
	// +kubebuilder:validation:Enum:=In;NotIn;Exists;DoesNotExist;Gt;Lt
	// +required
	Operator corev1.NodeSelectorOperator `json:"operator"`
	// Values are the label values: one or more for In and NotIn, none for Exists and DoesNotExist, a single
	// integer for Gt and Lt.
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=atomic
	// +optional
	Values []string `json:"values,omitempty"`
	// MinValues is the minimum number of distinct values of Key that the launchable instance types must
	// cover, so that the scheduler keeps enough choice (e.g. for spot diversity).
	// +kubebuilder:validation:Minimum:=1
	// +kubebuilder:validation:Maximum:=50
	// +optional
	MinValues *int `json:"minValues,omitempty"`
}

// NodeClassReference names the cloud-provider specific node class (for example an EC2NodeClass) that
// configures the machines of a NodePool or NodeClaim.
type NodeClassReference struct {
	// Kind of the referent.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="kind may not be empty"
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +kubebuilder:validation:MaxLength=63
	// +required
	Kind string `json:"kind"`
	// Name of the referent.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="name may not be empty"
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Group of the referent, such as karpenter.k8s.aws.
	// +kubebuilder:validation:XValidation:rule="self != ''",message="group may not be empty"
	// +kubebuilder:validation:Pattern=`^[^/]*$`
	// +kubebuilder:validation:MaxLength=253
	// +required
	Group string `json:"group"`
}
