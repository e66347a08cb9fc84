package cluster

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/packwright/packwright/model"
)

// This file converts Kubernetes scheduling constructs into their model equivalents, rejecting operators and
// effects that Kubernetes validation would reject, since the model gives them no meaning.

// nodeSelectorRequirements converts the matchExpressions of a node selector term.
func nodeSelectorRequirements(rs []corev1.NodeSelectorRequirement, field string) (model.Requirements, error) {
	out := make(model.Requirements, 0, len(rs))
	for i, r := range rs {
		req := model.Requirement{Key: r.Key, Operator: model.Operator(r.Operator), Values: slices.Clone(r.Values)}
		// The model validates as the API server does (operator, value count, label syntax): a requirement the
		// API server would have rejected has no defined meaning.
		if err := req.Validate(); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		out = append(out, req)
	}
	return out, nil
}

// nodeAffinity converts a pod's required and preferred node affinity.
func nodeAffinity(a *corev1.Affinity) (model.NodeSelectorTerms, []model.PreferredTerm, error) {
	if a == nil || a.NodeAffinity == nil {
		return nil, nil, nil
	}
	na := a.NodeAffinity
	var required model.NodeSelectorTerms
	if ns := na.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		const field = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
		var err error
		if required, err = nodeSelectorTerms(ns.NodeSelectorTerms, field); err != nil {
			return nil, nil, err
		}
	}
	var preferred []model.PreferredTerm
	for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		field := fmt.Sprintf("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%d].preference", i)
		reqs, err := nodeSelectorRequirements(p.Preference.MatchExpressions, field+".matchExpressions")
		if err != nil {
			return nil, nil, err
		}
		fields, err := matchFields(p.Preference.MatchFields, field+".matchFields")
		if err != nil {
			return nil, nil, err
		}
		preferred = append(preferred, model.PreferredTerm{Weight: p.Weight, Term: append(reqs, fields...)})
	}
	return required, preferred, nil
}

// nodeSelectorTerms converts required node affinity terms (ORed). An empty term stays empty: it matches no
// node, in the model as in Kubernetes.
func nodeSelectorTerms(terms []corev1.NodeSelectorTerm, field string) (model.NodeSelectorTerms, error) {
	out := make(model.NodeSelectorTerms, 0, len(terms))
	for i, t := range terms {
		f := fmt.Sprintf("%s[%d]", field, i)
		reqs, err := nodeSelectorRequirements(t.MatchExpressions, f+".matchExpressions")
		if err != nil {
			return nil, err
		}
		fields, err := matchFields(t.MatchFields, f+".matchFields")
		if err != nil {
			return nil, err
		}
		out = append(out, append(reqs, fields...))
	}
	return out, nil
}

// matchFields converts node field selectors. Kubernetes supports only metadata.name, which names one node;
// the model has no field selectors, so it becomes a requirement on the hostname label, which equals the node
// name on the clouds Packwright supports. A new node never has that name, so such a pod can only go to that
// existing node.
func matchFields(rs []corev1.NodeSelectorRequirement, field string) (model.Requirements, error) {
	var out model.Requirements
	for i, r := range rs {
		if r.Key != "metadata.name" {
			return nil, fmt.Errorf("%s[%d]: unsupported field %q (only metadata.name)", field, i, r.Key)
		}
		if r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn {
			return nil, fmt.Errorf("%s[%d]: field selectors take In or NotIn, not %q", field, i, r.Operator)
		}
		if len(r.Values) != 1 {
			return nil, fmt.Errorf("%s[%d]: field selectors take exactly one value", field, i)
		}
		out = append(out, model.Requirement{Key: model.LabelHostname, Operator: model.Operator(r.Operator), Values: slices.Clone(r.Values)})
	}
	return out, nil
}

// tolerations converts pod tolerations; an empty operator means Equal, as in Kubernetes.
func tolerations(ts []corev1.Toleration) ([]model.Toleration, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]model.Toleration, 0, len(ts))
	for i, t := range ts {
		tol := model.Toleration{Key: t.Key, Operator: model.TolerationOperator(t.Operator), Value: t.Value, Effect: model.TaintEffect(t.Effect)}
		if tol.Operator == "" {
			tol.Operator = model.TolerationEqual
		}
		if err := tol.Validate(); err != nil {
			return nil, fmt.Errorf("spec.tolerations[%d]: %w", i, err)
		}
		out = append(out, tol)
	}
	return out, nil
}

func taintEffect(e corev1.TaintEffect, emptyOK bool) (model.TaintEffect, error) {
	switch e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return model.TaintEffect(e), nil
	case "":
		if emptyOK {
			return "", nil
		}
		return "", fmt.Errorf("taint has no effect")
	default:
		return "", fmt.Errorf("unknown taint effect %q", e)
	}
}

// taints converts node or NodePool taints; field names them in errors.
func taints(ts []corev1.Taint, field string) ([]model.Taint, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	out := make([]model.Taint, 0, len(ts))
	for i, t := range ts {
		if err := model.ValidateLabelKey(t.Key); err != nil {
			return nil, fmt.Errorf("%s[%d]: taint key: %w", field, i, err)
		}
		effect, err := taintEffect(t.Effect, false)
		if err != nil {
			return nil, fmt.Errorf("%s[%d] (key %s): %w", field, i, t.Key, err)
		}
		out = append(out, model.Taint{Key: t.Key, Value: t.Value, Effect: effect})
	}
	return out, nil
}

// labelSelector converts a pod label selector; nil stays nil (matching nothing, as Kubernetes treats a nil
// selector in affinity and spread terms). extra are requirements derived from matchLabelKeys and
// mismatchLabelKeys, ANDed in.
func labelSelector(s *metav1.LabelSelector, field string, extra model.Requirements) (*model.LabelSelector, error) {
	if s == nil {
		return nil, nil
	}
	out := &model.LabelSelector{}
	if len(s.MatchLabels) > 0 {
		out.MatchLabels = maps.Clone(s.MatchLabels)
	}
	for _, e := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, model.Requirement{Key: e.Key, Operator: model.Operator(e.Operator), Values: slices.Clone(e.Values)})
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if len(extra) > 0 {
		out.MatchExpressions = append(out.MatchExpressions, extra...)
		// The extra values are the pod's own labels, which nothing else checks.
		if err := out.Validate(); err != nil {
			return nil, fmt.Errorf("%s with matchLabelKeys/mismatchLabelKeys: %w", field, err)
		}
	}
	return out, nil
}

// labelKeyRequirements turns matchLabelKeys (In the pod's own value) and mismatchLabelKeys (NotIn it) into
// selector requirements, as the scheduler does. Keys the pod does not carry are ignored, also as the scheduler
// does.
func labelKeyRequirements(podLabels map[string]string, match, mismatch []string) model.Requirements {
	var out model.Requirements
	for _, k := range match {
		if v, ok := podLabels[k]; ok {
			out = append(out, model.Requirement{Key: k, Operator: model.OpIn, Values: []string{v}})
		}
	}
	for _, k := range mismatch {
		if v, ok := podLabels[k]; ok {
			out = append(out, model.Requirement{Key: k, Operator: model.OpNotIn, Values: []string{v}})
		}
	}
	return out
}

// podAffinityTerms converts required or preferred inter-pod (anti-)affinity terms.
func podAffinityTerms(pod *corev1.Pod, terms []corev1.PodAffinityTerm, field string) ([]model.PodAffinityTerm, error) {
	var out []model.PodAffinityTerm
	for i := range terms {
		t := &terms[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		if err := model.ValidateLabelKey(t.TopologyKey); err != nil {
			return nil, fmt.Errorf("%s: topologyKey: %w", f, err)
		}
		sel, err := labelSelector(t.LabelSelector, f+".labelSelector", labelKeyRequirements(pod.Labels, t.MatchLabelKeys, t.MismatchLabelKeys))
		if err != nil {
			return nil, err
		}
		out = append(out, model.PodAffinityTerm{Selector: sel, Namespaces: slices.Clone(t.Namespaces), TopologyKey: t.TopologyKey})
	}
	return out, nil
}

// topologySpread converts topology spread constraints.
func topologySpread(pod *corev1.Pod, cs []corev1.TopologySpreadConstraint) ([]model.TopologySpread, error) {
	var out []model.TopologySpread
	for i := range cs {
		c := &cs[i]
		f := fmt.Sprintf("spec.topologySpreadConstraints[%d]", i)
		if c.MaxSkew <= 0 {
			return nil, fmt.Errorf("%s: maxSkew must be positive, got %d", f, c.MaxSkew)
		}
		if err := model.ValidateLabelKey(c.TopologyKey); err != nil {
			return nil, fmt.Errorf("%s: topologyKey: %w", f, err)
		}
		var action model.UnsatisfiableAction
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule:
			action = model.DoNotSchedule
		case corev1.ScheduleAnyway:
			action = model.ScheduleAnyway
		default:
			return nil, fmt.Errorf("%s: whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway, got %q", f, c.WhenUnsatisfiable)
		}
		var minDomains int32
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				return nil, fmt.Errorf("%s: minDomains must be positive, got %d", f, *c.MinDomains)
			}
			if action != model.DoNotSchedule {
				return nil, fmt.Errorf("%s: minDomains needs whenUnsatisfiable DoNotSchedule", f)
			}
			minDomains = *c.MinDomains
		}
		sel, err := labelSelector(c.LabelSelector, f+".labelSelector", labelKeyRequirements(pod.Labels, c.MatchLabelKeys, nil))
		if err != nil {
			return nil, err
		}
		out = append(out, model.TopologySpread{
			MaxSkew:           c.MaxSkew,
			TopologyKey:       c.TopologyKey,
			WhenUnsatisfiable: action,
			Selector:          sel,
			MinDomains:        minDomains,
		})
	}
	return out, nil
}

// checkHostPorts rejects host ports outside 0..65535 (0 meaning none), which the API server would reject too.
func checkHostPorts(spec *corev1.PodSpec) error {
	for _, cs := range []struct {
		field string
		list  []corev1.Container
	}{{"containers", spec.Containers}, {"initContainers", spec.InitContainers}} {
		for i := range cs.list {
			for j, p := range cs.list[i].Ports {
				if p.HostPort < 0 || p.HostPort > 65535 {
					return fmt.Errorf("spec.%s[%d].ports[%d].hostPort: %d is out of range", cs.field, i, j, p.HostPort)
				}
			}
		}
	}
	return nil
}

// hostPorts returns the distinct host ports of the pod's containers and sidecars, sorted. Regular init
// containers are left out: they have finished before the app containers bind their ports.
func hostPorts(spec *corev1.PodSpec) []int32 {
	var ports []int32
	add := func(c *corev1.Container) {
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p.HostPort)
			}
		}
	}
	for i := range spec.Containers {
		add(&spec.Containers[i])
	}
	for i := range spec.InitContainers {
		if isSidecar(&spec.InitContainers[i]) {
			add(&spec.InitContainers[i])
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
