package cluster

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"

	"github.com/packwright/packwright/model"
)

// podInfo is what scheduling sees of a pod, in model terms. Converting once per pod keeps grouping, bound-pod
// conversion and DaemonSet overhead on the same rules.
type podInfo struct {
	pod                   *corev1.Pod
	requests              model.Resources
	nodeSelector          map[string]string
	nodeAffinity          model.NodeSelectorTerms
	preferredAffinity     []model.PreferredTerm
	tolerations           []model.Toleration
	hostPorts             []int32
	podAffinity           []model.PodAffinityTerm
	podAntiAffinity       []model.PodAffinityTerm
	preferredAntiAffinity []model.PodAffinityTerm
	spread                []model.TopologySpread
	// notes are approximations made while converting (e.g. a namespaceSelector the model cannot express).
	notes []string
}

// newPodInfo converts pod; errors name the field, not the pod (the caller adds it).
func newPodInfo(pod *corev1.Pod) (*podInfo, error) {
	spec := &pod.Spec
	req, err := podSpecRequests(spec)
	if err != nil {
		return nil, err
	}
	if err := checkHostPorts(spec); err != nil {
		return nil, err
	}
	pi := &podInfo{pod: pod, requests: req, hostPorts: hostPorts(spec)}
	if len(spec.NodeSelector) > 0 {
		pi.nodeSelector = maps.Clone(spec.NodeSelector)
		for k, v := range spec.NodeSelector {
			r := model.Requirement{Key: k, Operator: model.OpIn, Values: []string{v}}
			if err := r.Validate(); err != nil {
				return nil, fmt.Errorf("spec.nodeSelector: %w", err)
			}
		}
	}
	if pi.nodeAffinity, pi.preferredAffinity, err = nodeAffinity(spec.Affinity); err != nil {
		return nil, err
	}
	if pi.tolerations, err = tolerations(spec.Tolerations); err != nil {
		return nil, err
	}
	if a := spec.Affinity; a != nil {
		if pa := a.PodAffinity; pa != nil {
			const f = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"
			if pi.podAffinity, err = podAffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution, f); err != nil {
				return nil, err
			}
			pi.noteNamespaceSelectors(pa.RequiredDuringSchedulingIgnoredDuringExecution, f)
		}
		if paa := a.PodAntiAffinity; paa != nil {
			const f = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution"
			if pi.podAntiAffinity, err = podAffinityTerms(pod, paa.RequiredDuringSchedulingIgnoredDuringExecution, f); err != nil {
				return nil, err
			}
			pi.noteNamespaceSelectors(paa.RequiredDuringSchedulingIgnoredDuringExecution, f)
			preferred := make([]corev1.PodAffinityTerm, len(paa.PreferredDuringSchedulingIgnoredDuringExecution))
			for i, w := range paa.PreferredDuringSchedulingIgnoredDuringExecution {
				preferred[i] = w.PodAffinityTerm
			}
			const pf = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
			if pi.preferredAntiAffinity, err = podAffinityTerms(pod, preferred, pf); err != nil {
				return nil, err
			}
		}
	}
	if pi.spread, err = topologySpread(pod, spec.TopologySpreadConstraints); err != nil {
		return nil, err
	}
	return pi, nil
}

// noteNamespaceSelectors records terms whose namespaceSelector the model cannot express: the snapshot has no
// Namespace objects to resolve it against, so such a term counts only the namespaces it lists by name (or the
// pod's own).
func (pi *podInfo) noteNamespaceSelectors(terms []corev1.PodAffinityTerm, field string) {
	for i, t := range terms {
		if t.NamespaceSelector != nil {
			pi.notes = append(pi.notes, fmt.Sprintf("%s[%d].namespaceSelector is ignored; the term applies to its listed namespaces or the pod's own", field, i))
		}
	}
}

// hasPodTerms reports whether the pod constrains its placement relative to other pods.
func (pi *podInfo) hasPodTerms() bool {
	return len(pi.podAffinity) > 0 || len(pi.podAntiAffinity) > 0 || len(pi.preferredAntiAffinity) > 0 || len(pi.spread) > 0
}

// selectorKeys calls f with every label key that a pod selector of pi refers to.
func (pi *podInfo) selectorKeys(f func(string)) {
	sel := func(s *model.LabelSelector) {
		if s == nil {
			return
		}
		for k := range s.MatchLabels {
			f(k)
		}
		for _, r := range s.MatchExpressions {
			f(r.Key)
		}
	}
	for _, ts := range [][]model.PodAffinityTerm{pi.podAffinity, pi.podAntiAffinity, pi.preferredAntiAffinity} {
		for _, t := range ts {
			sel(t.Selector)
		}
	}
	for _, s := range pi.spread {
		sel(s.Selector)
	}
}
