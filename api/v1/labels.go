package v1

// Labels and annotations that Packwright sets or reads. Karpenter's equivalents are accepted on input so that
// clusters and workloads written for Karpenter keep working.
const (
	// NodePoolLabelKey names the NodePool that launched a node.
	NodePoolLabelKey = GroupName + "/nodepool"
	// CapacityTypeLabelKey is the capacity type of a node: on-demand or spot.
	CapacityTypeLabelKey = GroupName + "/capacity-type"
	// DoNotDisruptAnnotationKey on a pod or node keeps consolidation from moving or removing it.
	DoNotDisruptAnnotationKey = GroupName + "/do-not-disrupt"

	// KarpenterNodePoolLabelKey is Karpenter's karpenter.sh/nodepool label.
	KarpenterNodePoolLabelKey = KarpenterGroupName + "/nodepool"
	// KarpenterCapacityTypeLabelKey is Karpenter's karpenter.sh/capacity-type label.
	KarpenterCapacityTypeLabelKey = KarpenterGroupName + "/capacity-type"
	// KarpenterDoNotDisruptAnnotationKey is Karpenter's karpenter.sh/do-not-disrupt annotation.
	KarpenterDoNotDisruptAnnotationKey = KarpenterGroupName + "/do-not-disrupt"
)

// Condition types of NodePool and NodeClaim status.
const (
	// ConditionTypeReady is true when the object is ready for use.
	ConditionTypeReady = "Ready"
	// ConditionTypeLaunched is true when a NodeClaim's instance has been created.
	ConditionTypeLaunched = "Launched"
	// ConditionTypeRegistered is true when a NodeClaim's Node has joined the cluster.
	ConditionTypeRegistered = "Registered"
	// ConditionTypeInitialized is true when a NodeClaim's Node is ready and its startup taints are gone.
	ConditionTypeInitialized = "Initialized"
	// ConditionTypeDrifted is true when a NodeClaim no longer matches its NodePool.
	ConditionTypeDrifted = "Drifted"
)
