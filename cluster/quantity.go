package cluster

import (
	"fmt"
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/packwright/packwright/model"
)

// maxQuantity bounds every quantity read (2^50: a pebibyte of memory, or a trillion cores in millicores) so
// that sums over tens of thousands of pods cannot overflow int64. Real clusters are many orders of magnitude
// below it.
const maxQuantity = int64(1) << 50

var (
	maxQuantityValue = *resource.NewQuantity(maxQuantity, resource.BinarySI)
	maxCPUValue      = *resource.NewMilliQuantity(maxQuantity, resource.DecimalSI)
)

// quantityValue converts q to the integer unit of model.Resources: millicores for cpu, rounded up, and the
// value rounded up for everything else (bytes for memory and storage, counts for extended resources).
func quantityValue(name corev1.ResourceName, q resource.Quantity) (int64, error) {
	if q.Sign() < 0 {
		return 0, fmt.Errorf("quantity %s is negative", q.String())
	}
	if name == corev1.ResourceCPU {
		if q.Cmp(maxCPUValue) > 0 {
			return 0, fmt.Errorf("quantity %s is too large", q.String())
		}
		return q.MilliValue(), nil
	}
	if q.Cmp(maxQuantityValue) > 0 {
		return 0, fmt.Errorf("quantity %s is too large", q.String())
	}
	return q.Value(), nil
}

// resources converts a ResourceList; field names the list in errors, e.g. "resources.requests".
func resources(rl corev1.ResourceList, field string) (model.Resources, error) {
	if len(rl) == 0 {
		return nil, nil
	}
	out := make(model.Resources, len(rl))
	for name, q := range rl {
		v, err := quantityValue(name, q)
		if err != nil {
			return nil, firstBadQuantity(rl, field)
		}
		out[model.ResourceName(name)] = v
	}
	return out, nil
}

// firstBadQuantity reports the first bad entry of rl in name order, so that the error does not depend on map
// order. It is kept off the fast path of resources, which runs for every container of every pod.
func firstBadQuantity(rl corev1.ResourceList, field string) error {
	for _, name := range slices.Sorted(maps.Keys(rl)) {
		if _, err := quantityValue(name, rl[name]); err != nil {
			return fmt.Errorf("%s[%s]: %w", field, name, err)
		}
	}
	return nil
}

// addSat returns a+b, saturating at math.MaxInt64 instead of wrapping: inputs are bounded by maxQuantity, so
// this only matters for pathological snapshots, where a huge value is still a correct "does not fit".
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// addTo adds r into acc, saturating.
func addTo(acc, r model.Resources) {
	for k, v := range r {
		acc[k] = addSat(acc[k], v)
	}
}

// maxInto raises each entry of acc to at least r's.
func maxInto(acc, r model.Resources) {
	for k, v := range r {
		if v > acc[k] {
			acc[k] = v
		}
	}
}
