package cluster

import (
	corev1 "k8s.io/api/core/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// Validation at Add time makes a State safe to convert: every quantity is in range and every scheduling
// construct has a meaning, so Problem fails only on problems of the whole (such as a contradictory NodePool).

// validatePodTemplate validates a DaemonSet's pod template.
func validatePodTemplate(t *corev1.PodTemplateSpec, namespace string) error {
	_, err := newPodInfo(templatePod(t, namespace))
	return err
}

// templatePod returns a pod as a controller would create it from t.
func templatePod(t *corev1.PodTemplateSpec, namespace string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: t.Spec}
	p.Namespace = namespace
	return p
}

func validateNode(n *corev1.Node) error {
	if _, err := resources(n.Status.Capacity, "status.capacity"); err != nil {
		return err
	}
	if _, err := resources(n.Status.Allocatable, "status.allocatable"); err != nil {
		return err
	}
	if _, err := taints(n.Spec.Taints, "spec.taints"); err != nil {
		return err
	}
	return nil
}

func validateNodePool(np *apiv1.NodePool) error {
	_, err := nodePoolToModel(np)
	return err
}
