package cluster

import (
	"cmp"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/packwright/packwright/model"
)

// groupPods partitions pending pods into equivalence classes: pods in one class are interchangeable for every
// constraint the model knows, so the solver may treat them as a count. Two pods share a class when they have
// the same namespace, requests, nodeSelector, required and preferred node affinity, tolerations, host ports,
// pod (anti-)affinity and spread terms, and the same values of every label that any pod selector in the
// cluster refers to (labelKeys). Pods with inter-pod terms are also split by controller owner, so that a group
// never mixes the replicas of two workloads whose terms only look alike.
//
// pending must be sorted by namespace and name; groups come out sorted by name, and each group's pods in
// input order, so the result is deterministic.
func groupPods(pending []*podInfo, labelKeys map[string]bool) []model.PodGroup {
	keys := slices.Sorted(maps.Keys(labelKeys))
	index := map[string]int{}
	var groups []model.PodGroup
	var owners [][]string // distinct owners per group, for naming
	var kb keyBuilder
	for _, pi := range pending {
		key := kb.podKey(pi, keys)
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, newGroup(pi))
			owners = append(owners, nil)
		}
		g := &groups[i]
		g.Pods = append(g.Pods, model.PodRef{Namespace: pi.pod.Namespace, Name: pi.pod.Name})
		if o := ownerName(pi); !slices.Contains(owners[i], o) {
			owners[i] = append(owners[i], o)
		}
	}
	nameGroups(groups, owners)
	slices.SortFunc(groups, func(a, b model.PodGroup) int { return cmp.Compare(a.Name, b.Name) })
	return groups
}

// newGroup starts a group from its first pod. Its top-level maps and slices are copies: a podInfo is cached in the State and
// shared by every Problem made from it, and a caller editing one Problem must not change the next.
func newGroup(pi *podInfo) model.PodGroup {
	return model.PodGroup{
		Namespace:             pi.pod.Namespace,
		Requests:              pi.requests.Clone(),
		Labels:                maps.Clone(pi.pod.Labels),
		NodeSelector:          maps.Clone(pi.nodeSelector),
		NodeAffinity:          slices.Clone(pi.nodeAffinity),
		PreferredAffinity:     slices.Clone(pi.preferredAffinity),
		Tolerations:           slices.Clone(pi.tolerations),
		HostPorts:             slices.Clone(pi.hostPorts),
		PodAffinity:           slices.Clone(pi.podAffinity),
		PodAntiAffinity:       slices.Clone(pi.podAntiAffinity),
		PreferredAntiAffinity: slices.Clone(pi.preferredAntiAffinity),
		TopologySpread:        slices.Clone(pi.spread),
	}
}

// ownerName is the name a pod's group is called by: its workload (the Deployment for a ReplicaSet's pods, found
// by the pod-template-hash suffix), else its controller, else the pod itself.
func ownerName(pi *podInfo) string {
	ref := metav1.GetControllerOf(pi.pod)
	if ref == nil {
		return pi.pod.Name
	}
	if ref.Kind == "ReplicaSet" {
		if h := pi.pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
			if d, ok := strings.CutSuffix(ref.Name, "-"+h); ok && d != "" {
				return d
			}
		}
	}
	return ref.Name
}

// nameGroups names each group namespace/owner, with "+N" when the group merges N further owners, and a "-2",
// "-3"... suffix in first-pod order when two groups would share a name (two ReplicaSets of one Deployment
// during a rollout, say).
func nameGroups(groups []model.PodGroup, owners [][]string) {
	used := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		base := g.Namespace + "/" + owners[i][0]
		if n := len(owners[i]) - 1; n > 0 {
			base += "+" + strconv.Itoa(n)
		}
		name := base
		for n := 2; used[name]; n++ {
			name = base + "-" + strconv.Itoa(n)
		}
		used[name] = true
		g.Name = name
	}
}

// keyBuilder writes a canonical encoding of a pod's scheduling signature. Strings are length-prefixed so that
// no two different signatures encode alike; its buffer is reused across pods to keep grouping cheap.
type keyBuilder struct {
	b []byte
}

func (k *keyBuilder) str(s string) {
	k.b = strconv.AppendInt(k.b, int64(len(s)), 10)
	k.b = append(k.b, ':')
	k.b = append(k.b, s...)
}

func (k *keyBuilder) int(v int64) {
	k.b = strconv.AppendInt(k.b, v, 10)
	k.b = append(k.b, ';')
}

func (k *keyBuilder) tag(t byte, n int) {
	k.b = append(k.b, t)
	k.int(int64(n))
}

func (k *keyBuilder) stringMap(t byte, m map[string]string) {
	k.tag(t, len(m))
	for _, key := range slices.Sorted(maps.Keys(m)) {
		k.str(key)
		k.str(m[key])
	}
}

func (k *keyBuilder) requirements(rs model.Requirements) {
	k.tag('r', len(rs))
	for _, r := range rs {
		k.str(r.Key)
		k.str(string(r.Operator))
		k.int(int64(len(r.Values)))
		for _, v := range r.Values {
			k.str(v)
		}
	}
}

func (k *keyBuilder) selector(s *model.LabelSelector) {
	if s == nil {
		k.b = append(k.b, 'n')
		return
	}
	k.stringMap('l', s.MatchLabels)
	k.requirements(s.MatchExpressions)
}

func (k *keyBuilder) terms(t byte, ts []model.PodAffinityTerm) {
	k.tag(t, len(ts))
	for _, term := range ts {
		k.selector(term.Selector)
		k.int(int64(len(term.Namespaces)))
		for _, ns := range term.Namespaces {
			k.str(ns)
		}
		k.str(term.TopologyKey)
	}
}

func (k *keyBuilder) podKey(pi *podInfo, labelKeys []string) string {
	k.b = k.b[:0]
	k.str(pi.pod.Namespace)
	k.tag('R', len(pi.requests))
	for _, name := range slices.Sorted(maps.Keys(pi.requests)) {
		k.str(string(name))
		k.int(pi.requests[name])
	}
	k.stringMap('S', pi.nodeSelector)
	k.tag('A', len(pi.nodeAffinity))
	for _, t := range pi.nodeAffinity {
		k.requirements(t)
	}
	k.tag('P', len(pi.preferredAffinity))
	for _, t := range pi.preferredAffinity {
		k.int(int64(t.Weight))
		k.requirements(t.Term)
	}
	// Toleration order has no meaning, so it must not split groups.
	tols := slices.Clone(pi.tolerations)
	slices.SortFunc(tols, func(a, b model.Toleration) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Operator, b.Operator), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Effect, b.Effect))
	})
	tols = slices.Compact(tols)
	k.tag('T', len(tols))
	for _, t := range tols {
		k.str(t.Key)
		k.str(string(t.Operator))
		k.str(t.Value)
		k.str(string(t.Effect))
	}
	k.tag('H', len(pi.hostPorts))
	for _, p := range pi.hostPorts {
		k.int(int64(p))
	}
	k.terms('a', pi.podAffinity)
	k.terms('x', pi.podAntiAffinity)
	k.terms('y', pi.preferredAntiAffinity)
	k.tag('s', len(pi.spread))
	for _, s := range pi.spread {
		k.int(int64(s.MaxSkew))
		k.str(s.TopologyKey)
		k.str(string(s.WhenUnsatisfiable))
		k.int(int64(s.MinDomains))
		k.selector(s.Selector)
	}
	// Only the labels that some selector can see distinguish pods; the rest (pod-template-hash of a selector
	// that ignores it, say) would split groups for nothing.
	k.b = append(k.b, 'L')
	for _, key := range labelKeys {
		if v, ok := pi.pod.Labels[key]; ok {
			k.str(key)
			k.str(v)
		}
	}
	if pi.hasPodTerms() {
		k.b = append(k.b, 'O')
		if ref := metav1.GetControllerOf(pi.pod); ref != nil {
			k.str(ref.Kind)
			k.str(ref.Name)
		}
	}
	return string(k.b)
}
