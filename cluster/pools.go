package cluster

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/model"
)

// DefaultNodePoolName names the NodePool used when a snapshot has none.
const DefaultNodePoolName = "default"

// DefaultNodePool is the pool Problem uses when the State has no NodePool: on-demand linux/amd64 nodes of any
// instance type and zone of the catalog, without taints, labels or limits. It mirrors what a fresh Karpenter
// install's example NodePool allows, so that a snapshot of pods alone can still be planned.
func DefaultNodePool() model.NodePool {
	return model.NodePool{
		Name: DefaultNodePoolName,
		Requirements: model.Requirements{
			{Key: model.LabelCapacityType, Operator: model.OpIn, Values: []string{model.OnDemand}},
			{Key: model.LabelArch, Operator: model.OpIn, Values: []string{"amd64"}},
			{Key: model.LabelOS, Operator: model.OpIn, Values: []string{"linux"}},
		},
	}
}

// NodePoolToModel converts a NodePool (Packwright's or Karpenter's) to the model: requirements (minValues is
// not modelled), taints, startup taints, template labels, limits and weight. It checks each field but not
// whether the requirements can be met together; Problem does that.
func NodePoolToModel(np *apiv1.NodePool) (model.NodePool, error) {
	out, err := nodePoolToModel(np)
	if err != nil {
		return model.NodePool{}, fmt.Errorf("nodepool %s: %w", np.Name, err)
	}
	return out, nil
}

func nodePoolToModel(np *apiv1.NodePool) (model.NodePool, error) {
	spec := &np.Spec.Template.Spec
	out := model.NodePool{Name: np.Name, Labels: maps.Clone(np.Spec.Template.Labels)}
	if np.Spec.Weight != nil {
		out.Weight = *np.Spec.Weight
	}
	for i, r := range spec.Requirements {
		req := model.Requirement{Key: r.Key, Operator: model.Operator(r.Operator), Values: slices.Clone(r.Values)}
		if err := req.Validate(); err != nil {
			return model.NodePool{}, fmt.Errorf("spec.template.spec.requirements[%d]: %w", i, err)
		}
		out.Requirements = append(out.Requirements, req)
	}
	for k, v := range np.Spec.Template.Labels {
		// A label is a requirement the pool's nodes meet by construction; validating it as one checks its syntax.
		if err := (model.Requirement{Key: k, Operator: model.OpIn, Values: []string{v}}).Validate(); err != nil {
			return model.NodePool{}, fmt.Errorf("spec.template.metadata.labels: %w", err)
		}
	}
	var err error
	if out.Taints, err = taints(spec.Taints, "spec.template.spec.taints"); err != nil {
		return model.NodePool{}, err
	}
	if out.StartupTaints, err = taints(spec.StartupTaints, "spec.template.spec.startupTaints"); err != nil {
		return model.NodePool{}, err
	}
	if out.Limits, err = resources(corev1.ResourceList(np.Spec.Limits), "spec.limits"); err != nil {
		return model.NodePool{}, err
	}
	return out, nil
}

// checkSatisfiable fails when no node could meet the pool's requirements and carry its labels at once, e.g.
// capacity-type In [spot] with NotIn [spot], or a label team=a with a requirement team In [b].
func checkSatisfiable(p model.NodePool) error {
	reqs := slices.Clone(p.Requirements)
	for _, k := range slices.Sorted(maps.Keys(p.Labels)) {
		reqs = append(reqs, model.Requirement{Key: k, Operator: model.OpIn, Values: []string{p.Labels[k]}})
	}
	if err := reqs.Satisfiable(); err != nil {
		return fmt.Errorf("nodepool %s: requirements contradict each other: %w", p.Name, err)
	}
	return nil
}
