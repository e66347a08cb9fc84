package model

import (
	"fmt"
	"slices"
	"strings"
)

// UnlimitedPerNode is what MaxPerNode returns when nothing caps a group's pods per node.
const UnlimitedPerNode = -1

// MatchesNodeLabels reports whether a node with these labels satisfies the group's nodeSelector and its
// required node affinity. Taints are not considered: this is the node-inclusion test that topology spread
// applies by default (nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore).
func (g *PodGroup) MatchesNodeLabels(labels map[string]string) bool {
	for k, v := range g.NodeSelector {
		if have, ok := labels[k]; !ok || have != v {
			return false
		}
	}
	return g.NodeAffinity.Matches(labels)
}

// Compatible reports whether the group's pods may run on a node with these labels and taints: nodeSelector,
// required node affinity and tolerations of every NoSchedule/NoExecute taint.
func (g *PodGroup) Compatible(labels map[string]string, taints []Taint) bool {
	return g.MatchesNodeLabels(labels) && Tolerates(g.Tolerations, taints)
}

// Incompatibility explains why the group may not run on a node with these labels and taints, e.g.
// "nodeSelector kubernetes.io/arch=arm64 not matched (node has kubernetes.io/arch=amd64)" or
// "untolerated taint gpu=true:NoSchedule"; "" when Compatible.
func (g *PodGroup) Incompatibility(labels map[string]string, taints []Taint) string {
	for _, k := range sortedKeys(g.NodeSelector) {
		want := g.NodeSelector[k]
		have, ok := labels[k]
		if !ok {
			return fmt.Sprintf("nodeSelector %s=%s not matched (node has no %s label)", k, want, k)
		}
		if have != want {
			return fmt.Sprintf("nodeSelector %s=%s not matched (node has %s=%s)", k, want, k, have)
		}
	}
	if !g.NodeAffinity.Matches(labels) {
		return "required node affinity not matched: " + explainTerms(g.NodeAffinity, labels)
	}
	if t, ok := UntoleratedTaint(g.Tolerations, taints); ok {
		return "untolerated taint " + t.String()
	}
	return ""
}

// explainTerms says, for every term of a failing disjunction, which requirement fails.
func explainTerms(ts NodeSelectorTerms, labels map[string]string) string {
	why := make([]string, len(ts))
	for i, t := range ts {
		why[i] = explainTerm(t, labels)
	}
	if len(ts) == 1 {
		return why[0]
	}
	for i := range why {
		why[i] = fmt.Sprintf("term %d: %s", i, why[i])
	}
	return fmt.Sprintf("none of %d terms holds (%s)", len(ts), strings.Join(why, "; "))
}

func explainTerm(t Requirements, labels map[string]string) string {
	if len(t) == 0 {
		return "empty term matches no node"
	}
	for _, r := range t {
		if r.Matches(labels) {
			continue
		}
		if v, ok := labels[r.Key]; ok {
			return fmt.Sprintf("%s fails (node has %s=%s)", r, r.Key, v)
		}
		return fmt.Sprintf("%s fails (node has no %s label)", r, r.Key)
	}
	return "matched" // unreachable for a failing term
}

// MatchesPod reports whether a pod in podNamespace with podLabels is selected by the term of a pod in
// termOwnerNamespace: its namespace is one of Namespaces (the owner's own namespace when Namespaces is
// empty) and Selector matches its labels (a nil Selector matches no pod).
func (t PodAffinityTerm) MatchesPod(termOwnerNamespace, podNamespace string, podLabels map[string]string) bool {
	if len(t.Namespaces) == 0 {
		if podNamespace != termOwnerNamespace {
			return false
		}
	} else if !slices.Contains(t.Namespaces, podNamespace) {
		return false
	}
	return t.Selector.Matches(podLabels)
}

// String formats the term for messages: "{app=web} on kubernetes.io/hostname" with the namespaces when set.
func (t PodAffinityTerm) String() string {
	s := "{" + t.Selector.String() + "} on " + t.TopologyKey
	if len(t.Namespaces) > 0 {
		s += " in namespaces " + strings.Join(t.Namespaces, ",")
	}
	return s
}

// MaxPerNode is the most pods of the group that one node can hold whatever its size: 1 when the group uses
// a host port (two pods cannot bind it on one node) or has a required anti-affinity term on
// kubernetes.io/hostname that selects the group's own pods; UnlimitedPerNode (-1) otherwise. A self-matching
// anti-affinity term on a wider key (such as the zone) also implies 1 per node, but it caps the whole domain
// and is left to the topology constraints.
func (g *PodGroup) MaxPerNode() int {
	if len(g.hostPorts()) > 0 {
		return 1
	}
	for _, t := range g.PodAntiAffinity {
		if t.TopologyKey == LabelHostname && t.MatchesPod(g.Namespace, g.Namespace, g.Labels) {
			return 1
		}
	}
	return UnlimitedPerNode
}

// hostPorts returns the group's host ports without 0 (0 means "no host port" in a pod spec) and duplicates.
func (g *PodGroup) hostPorts() []int32 { return normalizePorts(g.HostPorts) }

func normalizePorts(ports []int32) []int32 {
	var out []int32
	for _, p := range ports {
		if p != 0 && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// MentionsHostname reports whether the group's node selection (nodeSelector, required node affinity) looks at
// the hostname label, in which case compatibility depends on the node and not only on its offering.
func (g *PodGroup) MentionsHostname() bool {
	if _, ok := g.NodeSelector[LabelHostname]; ok {
		return true
	}
	for _, t := range g.NodeAffinity {
		for _, r := range t {
			if r.Key == LabelHostname {
				return true
			}
		}
	}
	return false
}
