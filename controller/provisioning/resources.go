package provisioning

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/packwright/packwright/model"
)

// ResourceList converts model resources (CPU in millicores, memory and storage in bytes, counts) into a
// Kubernetes ResourceList.
func ResourceList(r model.Resources) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, v := range r {
		switch name {
		case model.CPU:
			out[corev1.ResourceCPU] = *resource.NewMilliQuantity(v, resource.DecimalSI)
		case model.Memory, model.EphemeralStorage:
			out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.BinarySI)
		default:
			out[corev1.ResourceName(name)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}
