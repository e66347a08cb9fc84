// Package cluster turns Kubernetes objects into Packwright's optimisation problem.
//
// A State holds one consistent set of Pods, Nodes, DaemonSets, PodDisruptionBudgets, NodePools and NodeClaims,
// read from a snapshot file (ReadSnapshot) or added object by object (State.Add, for live informers).
// State.Problem converts it, with an instance-type catalog, into a model.Problem: pending pods grouped into
// equivalence classes, the offerings each NodePool may launch (less the DaemonSets that would run there) and the
// existing nodes with the pods bound to them. Non-fatal findings, such as a pod that nothing can ever hold, are
// returned as Issues beside the problem.
//
// NodePools of Karpenter's karpenter.sh/v1 are read as Packwright NodePools, and Karpenter's well-known labels
// are understood on nodes and in pod selectors, so that a cluster run by Karpenter can be planned unchanged.
// docs/snapshot-format.md describes the accepted input.
package cluster
