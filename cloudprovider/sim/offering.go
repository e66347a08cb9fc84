package sim

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
)

// Offering is an instance type with a capacity type. An empty field matches any value, so
// Offering{CapacityType: "spot"} stands for all spot capacity.
type Offering struct {
	// InstanceType is the node.kubernetes.io/instance-type value, or empty for all.
	InstanceType string
	// CapacityType is the packwright.dev/capacity-type value (on-demand, spot), or empty for all.
	CapacityType string
}

// SetUnavailable makes Create fail with an InsufficientCapacityError for the offerings o matches (unavailable
// true) or lifts that (false).
func (p *Provider) SetUnavailable(o Offering, unavailable bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if unavailable {
		p.unavailable[o] = true
	} else {
		delete(p.unavailable, o)
	}
}

// isUnavailable reports whether an injected capacity error covers the instance type and capacity type.
func (p *Provider) isUnavailable(instanceType, capacityType string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unavailable[Offering{}] ||
		p.unavailable[Offering{InstanceType: instanceType, CapacityType: capacityType}] ||
		p.unavailable[Offering{InstanceType: instanceType}] ||
		p.unavailable[Offering{CapacityType: capacityType}]
}

// pick chooses the first instance type and capacity type, in the order of the claim's requirements, that fit the
// claim's requests and have no injected capacity error. Empty strings mean the claim does not constrain that key.
func (p *Provider) pick(claim *v1.NodeClaim) (instanceType, capacityType string, err error) {
	instanceTypes := inValues(claim.Spec.Requirements, corev1.LabelInstanceTypeStable)
	capacityTypes := inValues(claim.Spec.Requirements, v1.CapacityTypeLabelKey, v1.KarpenterCapacityTypeLabelKey)
	var tooSmall []error
	exhausted := false
	for _, it := range instanceTypes {
		if err := fits(p.capacity(claim, it), claim.Spec.Resources.Requests); err != nil {
			tooSmall = append(tooSmall, fmt.Errorf("instance type %q: %w", it, err))
			continue
		}
		for _, ct := range capacityTypes {
			if p.isUnavailable(it, ct) {
				exhausted = true
				continue
			}
			return it, ct, nil
		}
	}
	if exhausted {
		return "", "", &cloudprovider.InsufficientCapacityError{
			Err: fmt.Errorf("no capacity for instance types %q with capacity types %q", instanceTypes, capacityTypes),
		}
	}
	return "", "", fmt.Errorf("no instance type fits the claim's requests: %w", errors.Join(tooSmall...))
}

// capacity is the catalog capacity of the instance type, or the claim's requests when the catalog does not list
// it; either way with a pod capacity (110 unless given), which the scheduler needs.
func (p *Provider) capacity(claim *v1.NodeClaim, instanceType string) corev1.ResourceList {
	src, ok := p.opts.InstanceTypes[instanceType]
	if !ok || instanceType == "" {
		src = claim.Spec.Resources.Requests
	}
	capacity := src.DeepCopy()
	if capacity == nil {
		capacity = corev1.ResourceList{}
	}
	if _, ok := capacity[corev1.ResourcePods]; !ok {
		capacity[corev1.ResourcePods] = resource.MustParse("110")
	}
	return capacity
}

// fits returns an error naming the first request the capacity cannot hold.
func fits(capacity, requests corev1.ResourceList) error {
	for name, want := range requests {
		have, ok := capacity[name]
		if !ok || have.Cmp(want) < 0 {
			return fmt.Errorf("%s %s requested, %s offered", name, want.String(), have.String())
		}
	}
	return nil
}

// inValues returns the values of the first In requirement on any of the keys, or [""] when none constrains
// them.
func inValues(reqs []v1.NodeSelectorRequirementWithMinValues, keys ...string) []string {
	for _, r := range reqs {
		for _, k := range keys {
			if r.Key == k && r.Operator == corev1.NodeSelectorOpIn && len(r.Values) > 0 {
				return r.Values
			}
		}
	}
	return []string{""}
}

// nodeForOfferings builds the Node for the first offering the claim's packwright.dev/offerings annotation lists
// that has no injected capacity error and holds the claim's requests. It returns nil, nil when the claim lists
// no offerings or the provider has no Describe; then the claim's requirements decide (see pick).
func (p *Provider) nodeForOfferings(claim *v1.NodeClaim) (*corev1.Node, error) {
	offs, err := v1.ClaimOfferings(claim)
	if err != nil {
		return nil, err
	}
	if len(offs) == 0 || p.opts.Describe == nil {
		return nil, nil
	}
	var failed []error
	for _, o := range offs {
		if p.isUnavailable(o.InstanceType, o.CapacityType) {
			failed = append(failed, cloudprovider.NewInsufficientCapacityError(o.InstanceType, o.CapacityType, o.Zone, errors.New("injected capacity error")))
			continue
		}
		labels, capacity, alloc, ok := p.opts.Describe(o.InstanceType, o.Zone, o.CapacityType)
		if !ok {
			return nil, fmt.Errorf("offering %s is not in the catalog", o)
		}
		if _, ok := capacity[corev1.ResourcePods]; !ok {
			capacity = capacity.DeepCopy()
			capacity[corev1.ResourcePods] = resource.MustParse("110")
		}
		if _, ok := alloc[corev1.ResourcePods]; !ok {
			alloc = alloc.DeepCopy()
			alloc[corev1.ResourcePods] = capacity[corev1.ResourcePods]
		}
		if err := fits(alloc, claim.Spec.Resources.Requests); err != nil {
			return nil, fmt.Errorf("offering %s: %w", o, err)
		}
		node := nodeFor(claim, o.InstanceType, o.CapacityType, capacity)
		for k, v := range labels {
			if _, set := claim.Labels[k]; !set {
				node.Labels[k] = v
			}
		}
		node.Labels[corev1.LabelTopologyZone] = o.Zone
		node.Labels[corev1.LabelInstanceTypeStable] = o.InstanceType
		node.Labels[v1.CapacityTypeLabelKey] = o.CapacityType
		node.Labels[corev1.LabelHostname] = claim.Name
		node.Status.Allocatable = alloc.DeepCopy()
		return node, nil
	}
	return nil, errors.Join(failed...)
}
