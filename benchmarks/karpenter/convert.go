package main

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"
)

// Labels whose values differ between the offerings of one instance type: they become offering requirements.
const (
	labelZone             = corev1.LabelTopologyZone
	labelCapacityType     = v1.CapacityTypeLabelKey
	labelPackwrightCT     = "packwright.dev/capacity-type"
	labelKarpenterPool    = v1.NodePoolLabelKey
	labelPackwrightPool   = "packwright.dev/nodepool"
	resourcePods          = "pods"
	resourceCPU           = "cpu"
	byteResourcesHugepage = "hugepages-"
)

// input is a Packwright problem translated into Karpenter's scheduler input.
type input struct {
	nodePools     []*v1.NodePool
	instanceTypes map[string][]*cloudprovider.InstanceType // by NodePool
	pods          []*corev1.Pod
	// groupOf maps a pod's UID to its group index; offeringOf maps "pool/type/zone/capacityType" to the offering.
	groupOf    map[types.UID]int
	offeringOf map[string]int
}

// unsupported says what in p the adapter cannot hand to Karpenter's scheduler, or "".
func unsupported(p *problem) string {
	switch {
	case len(p.Nodes) > 0:
		return "existing nodes are not adapted (Karpenter would need them as cluster state with bound pods)"
	case len(p.Groups) == 0:
		return "no pending pods"
	}
	return ""
}

// translate builds Karpenter's input. Each (pool, instance type) becomes one cloudprovider.InstanceType whose
// capacity is Packwright's allocatable and whose overhead is zero, so that both schedulers pack into exactly the
// same room; its labels become requirements, and each (zone, capacity type) an offering at Packwright's price.
func translate(p *problem) (*input, error) {
	in := &input{instanceTypes: map[string][]*cloudprovider.InstanceType{}, groupOf: map[types.UID]int{}, offeringOf: map[string]int{}}
	poolLabels := map[string]map[string]string{}
	for _, pl := range p.Pools {
		np, err := nodePoolOf(pl)
		if err != nil {
			return nil, err
		}
		in.nodePools = append(in.nodePools, np)
		poolLabels[pl.Name] = pl.Labels
	}

	// Karpenter only narrows and matches requirements on labels it knows; register every label the offerings
	// carry, as a cloud provider registers its own (karpenter.k8s.aws/*). Its own domain is already known.
	for i := range p.Offerings {
		for k := range p.Offerings[i].Labels {
			if !strings.HasPrefix(k, "karpenter.sh/") {
				v1.WellKnownLabels.Insert(k)
			}
		}
	}

	type key struct{ pool, name string }
	byType := map[key]*cloudprovider.InstanceType{}
	var order []key
	for i := range p.Offerings {
		o := &p.Offerings[i]
		in.offeringOf[offeringKey(o.NodePool, o.InstanceType, o.Zone, o.CapacityType)] = i
		k := key{o.NodePool, o.InstanceType}
		it, ok := byType[k]
		if !ok {
			it = &cloudprovider.InstanceType{
				Name:         o.InstanceType,
				Requirements: scheduling.NewRequirements(),
				Capacity:     resourceList(o.Allocatable, true),
				Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: corev1.ResourceList{}, SystemReserved: corev1.ResourceList{}, EvictionThreshold: corev1.ResourceList{}},
			}
			for lk, lv := range o.Labels {
				switch lk {
				case labelZone, labelCapacityType, labelPackwrightCT, labelKarpenterPool:
					continue // per offering, or set by Karpenter from the NodePool
				}
				if _, fromPool := poolLabels[o.NodePool][lk]; fromPool {
					continue // the NodePool template sets it
				}
				it.Requirements.Add(scheduling.NewRequirement(lk, corev1.NodeSelectorOpIn, lv))
			}
			byType[k] = it
			order = append(order, k)
		}
		if !sameResources(o.Allocatable, it.Capacity) {
			return nil, fmt.Errorf("offering %s: allocatable differs from the type's other offerings; Karpenter's instance types have one capacity", o.ID)
		}
		it.Offerings = append(it.Offerings, &cloudprovider.Offering{
			Available: true,
			Price:     o.Price,
			Requirements: scheduling.NewLabelRequirements(map[string]string{
				labelZone: o.Zone, labelCapacityType: o.CapacityType, labelPackwrightCT: o.CapacityType,
			}),
		})
	}
	for _, k := range order {
		it := byType[k]
		zones, cts := []string{}, []string{}
		for _, of := range it.Offerings {
			zones = appendNew(zones, of.Requirements.Get(labelZone).Any())
			cts = appendNew(cts, of.Requirements.Get(labelCapacityType).Any())
		}
		it.Requirements.Add(
			scheduling.NewRequirement(labelZone, corev1.NodeSelectorOpIn, zones...),
			scheduling.NewRequirement(labelCapacityType, corev1.NodeSelectorOpIn, cts...),
			scheduling.NewRequirement(labelPackwrightCT, corev1.NodeSelectorOpIn, cts...),
		)
		in.instanceTypes[k.pool] = append(in.instanceTypes[k.pool], it)
	}

	for gi := range p.Groups {
		g := &p.Groups[gi]
		for _, ref := range g.Pods {
			pod, err := podOf(g, ref)
			if err != nil {
				return nil, fmt.Errorf("group %s: %w", g.Name, err)
			}
			in.groupOf[pod.UID] = gi
			in.pods = append(in.pods, pod)
		}
	}
	return in, nil
}

func offeringKey(pool, it, zone, ct string) string { return pool + "/" + it + "/" + zone + "/" + ct }

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// nodePoolOf converts a Packwright NodePool. Without limits it gets effectively unlimited ones, because
// test.NodePool would otherwise cap it at 2,000 CPUs.
func nodePoolOf(pl nodePool) (*v1.NodePool, error) {
	var reqs []v1.NodeSelectorRequirementWithMinValues
	for _, r := range pl.Requirements {
		reqs = append(reqs, v1.NodeSelectorRequirementWithMinValues{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	var taints []corev1.Taint
	for _, t := range pl.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	limits := v1.Limits{corev1.ResourceCPU: resource.MustParse("100000000"), corev1.ResourceMemory: resource.MustParse("100000000Gi")}
	if len(pl.Limits) > 0 {
		limits = v1.Limits(resourceList(pl.Limits, true))
	}
	np := v1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: pl.Name}}
	np.Spec.Limits = limits
	np.Spec.Template.Labels = pl.Labels
	np.Spec.Template.Spec.Requirements = reqs
	np.Spec.Template.Spec.Taints = taints
	if pl.Weight != 0 {
		w := pl.Weight
		np.Spec.Weight = &w
	}
	return test.NodePool(np), nil
}

// podUID is the UID of the pod ref names.
func podUID(ref podRef) types.UID { return types.UID(ref.Namespace + "/" + ref.Name) }

// podOf builds one pending pod of group g.
func podOf(g *podGroup, ref podRef) (*corev1.Pod, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ref.Namespace, Name: ref.Name, Labels: g.Labels,
			// Karpenter caches per-pod data by UID: every pod needs its own.
			UID: podUID(ref),
		},
		Spec: corev1.PodSpec{
			NodeSelector: g.NodeSelector,
			Containers: []corev1.Container{{
				Name:      "main",
				Resources: corev1.ResourceRequirements{Requests: resourceList(g.Requests, false)},
			}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		}}},
	}
	for _, port := range g.HostPorts {
		pod.Spec.Containers[0].Ports = append(pod.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
	}
	for _, t := range g.Tolerations {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect),
		})
	}
	aff := &corev1.Affinity{}
	if len(g.NodeAffinity) > 0 || len(g.PreferredAffinity) > 0 {
		aff.NodeAffinity = &corev1.NodeAffinity{}
		if len(g.NodeAffinity) > 0 {
			aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
			for _, term := range g.NodeAffinity {
				aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
					aff.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: nodeReqs(term)})
			}
		}
		for _, pt := range g.PreferredAffinity {
			aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.PreferredSchedulingTerm{Weight: pt.Weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: nodeReqs(pt.Term)}})
		}
	}
	if len(g.PodAffinity) > 0 {
		aff.PodAffinity = &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinityTerms(g.PodAffinity)}
	}
	if len(g.PodAntiAffinity) > 0 || len(g.PreferredAntiAffinity) > 0 {
		aff.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinityTerms(g.PodAntiAffinity)}
		for _, t := range affinityTerms(g.PreferredAntiAffinity) {
			aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(aff.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: t})
		}
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		pod.Spec.Affinity = aff
	}
	for _, c := range g.TopologySpread {
		tsc := corev1.TopologySpreadConstraint{
			MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, WhenUnsatisfiable: corev1.UnsatisfiableConstraintAction(c.WhenUnsatisfiable),
			LabelSelector: selectorOf(c.Selector),
		}
		if c.MinDomains > 0 {
			md := c.MinDomains
			tsc.MinDomains = &md
		}
		pod.Spec.TopologySpreadConstraints = append(pod.Spec.TopologySpreadConstraints, tsc)
	}
	return pod, nil
}

func nodeReqs(rs []requirement) []corev1.NodeSelectorRequirement {
	out := make([]corev1.NodeSelectorRequirement, 0, len(rs))
	for _, r := range rs {
		out = append(out, corev1.NodeSelectorRequirement{Key: r.Key, Operator: corev1.NodeSelectorOperator(r.Operator), Values: r.Values})
	}
	return out
}

func affinityTerms(ts []podAffinityTerm) []corev1.PodAffinityTerm {
	var out []corev1.PodAffinityTerm
	for _, t := range ts {
		out = append(out, corev1.PodAffinityTerm{LabelSelector: selectorOf(t.Selector), Namespaces: t.Namespaces, TopologyKey: t.TopologyKey})
	}
	return out
}

func selectorOf(s *labelSelector) *metav1.LabelSelector {
	if s == nil {
		return nil
	}
	out := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values,
		})
	}
	return out
}

// resourceList converts Packwright's integer resources (millicores for cpu, bytes, counts) to quantities.
// Pod requests leave out "pods": Karpenter counts each pod itself.
func resourceList(r resources, withPods bool) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, v := range r {
		switch {
		case name == resourcePods && !withPods:
			continue
		case name == resourceCPU:
			out[corev1.ResourceName(name)] = *resource.NewMilliQuantity(v, resource.DecimalSI)
		case name == "memory" || name == "ephemeral-storage" || strings.HasPrefix(name, byteResourcesHugepage):
			out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.BinarySI)
		default:
			out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}

func sameResources(r resources, l corev1.ResourceList) bool {
	got := resourceList(r, true)
	if len(got) != len(l) {
		return false
	}
	for k, q := range got {
		if o, ok := l[k]; !ok || o.Cmp(q) != 0 {
			return false
		}
	}
	return true
}
