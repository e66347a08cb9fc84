// Package v1 contains the Packwright custom resources of API group packwright.dev, version v1: NodePool and
// NodeClaim. Their fields mirror Karpenter's karpenter.sh/v1 resources field for field, so that manifests written
// for Karpenter decode into these types unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=packwright.dev
package v1
