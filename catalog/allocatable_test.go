package catalog

import (
	"maps"
	"testing"

	"github.com/packwright/packwright/model"
)

func ptr[T any](v T) *T { return &v }

func TestKubeReservedCPU(t *testing.T) {
	for _, tc := range []struct {
		vcpu int
		want int64
	}{
		{1, 60},
		{2, 70},    // 60 + 10
		{3, 75},    // + 5
		{4, 80},    // + 5
		{5, 82},    // + 2.5, rounded down
		{8, 90},    // 80 + 4×2.5
		{96, 310},  // 80 + 92×2.5
		{192, 550}, // 80 + 188×2.5
		{0, 0},
	} {
		if got := KubeReservedCPU(tc.vcpu); got != tc.want {
			t.Errorf("KubeReservedCPU(%d) = %dm, want %dm", tc.vcpu, got, tc.want)
		}
	}
}

func TestAllocatable(t *testing.T) {
	m5large := InstanceType{Name: "m5.large", VCPU: 2, MemoryMiB: 8192, MaxPods: 29}
	m5_24 := InstanceType{Name: "m5.24xlarge", VCPU: 96, MemoryMiB: 393216, MaxPods: 737}
	m5dLarge := InstanceType{Name: "m5d.large", VCPU: 2, MemoryMiB: 8192, MaxPods: 29, LocalStorageGiB: 69}
	g5 := InstanceType{Name: "g5.xlarge", VCPU: 4, MemoryMiB: 16384, MaxPods: 58, GPUs: 1, GPUName: "a10g"}
	// Root volume: 20 GiB - 1 GiB kube-reserved - 10% (2 GiB) eviction = 17 GiB.
	rootAlloc := 17 * GiB
	for _, tc := range []struct {
		name        string
		it          InstanceType
		kubelet     *KubeletConfig
		capacity    model.Resources
		allocatable model.Resources
	}{
		{
			// cpu 2000m - 70m; memory 8192Mi - (255Mi + 11Mi×29 = 574Mi) - 100Mi = 7518Mi.
			name:        "m5.large",
			it:          m5large,
			capacity:    model.Resources{model.CPU: 2000, model.Memory: 8192 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 29},
			allocatable: model.Resources{model.CPU: 1930, model.Memory: 7518 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 29},
		},
		{
			// cpu 96000m - 310m; memory 393216Mi - (255Mi + 11Mi×737 = 8362Mi) - 100Mi = 384754Mi.
			name:        "m5.24xlarge",
			it:          m5_24,
			capacity:    model.Resources{model.CPU: 96000, model.Memory: 393216 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 737},
			allocatable: model.Resources{model.CPU: 95690, model.Memory: 384754 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 737},
		},
		{
			// Local NVMe replaces the root volume: 69 GiB - 1 GiB - floor(10% of 69 GiB).
			name:        "m5d.large local storage",
			it:          m5dLarge,
			capacity:    model.Resources{model.CPU: 2000, model.Memory: 8192 * MiB, model.EphemeralStorage: 69 * GiB, model.Pods: 29},
			allocatable: model.Resources{model.CPU: 1930, model.Memory: 7518 * MiB, model.EphemeralStorage: 69*GiB - GiB - 69*GiB/10, model.Pods: 29},
		},
		{
			// cpu 4000m - 80m; memory 16384Mi - (255 + 11×58 = 893Mi) - 100Mi = 15391Mi; the GPU is not reserved.
			name:        "g5.xlarge gpu",
			it:          g5,
			capacity:    model.Resources{model.CPU: 4000, model.Memory: 16384 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 58, model.GPU: 1},
			allocatable: model.Resources{model.CPU: 3920, model.Memory: 15391 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 58, model.GPU: 1},
		},
		{
			// maxPods 110 also raises kube-reserved memory: 255 + 11×110 = 1465Mi; 8192 - 1465 - 100 = 6627Mi.
			name:        "m5.large maxPods override",
			it:          m5large,
			kubelet:     &KubeletConfig{MaxPods: ptr(int32(110))},
			capacity:    model.Resources{model.CPU: 2000, model.Memory: 8192 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 110},
			allocatable: model.Resources{model.CPU: 1930, model.Memory: 6627 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 110},
		},
		{
			// kube-reserved cpu replaced (memory keeps its default), 200Mi system-reserved, 500Mi eviction:
			// memory 8192 - 574 - 200 - 500 = 6918Mi; storage eviction keeps its 10%.
			name: "m5.large reserved overrides",
			it:   m5large,
			kubelet: &KubeletConfig{
				KubeReserved:   model.Resources{model.CPU: 100},
				SystemReserved: model.Resources{model.Memory: 200 * MiB, model.CPU: 50},
				EvictionHard:   model.Resources{model.Memory: 500 * MiB},
			},
			capacity:    model.Resources{model.CPU: 2000, model.Memory: 8192 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 29},
			allocatable: model.Resources{model.CPU: 1850, model.Memory: 6918 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 29},
		},
		{
			// Reservations larger than capacity clamp at zero instead of going negative.
			name:        "clamped",
			it:          m5large,
			kubelet:     &KubeletConfig{KubeReserved: model.Resources{model.CPU: 5000}},
			capacity:    model.Resources{model.CPU: 2000, model.Memory: 8192 * MiB, model.EphemeralStorage: 20 * GiB, model.Pods: 29},
			allocatable: model.Resources{model.CPU: 0, model.Memory: 7518 * MiB, model.EphemeralStorage: rootAlloc, model.Pods: 29},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.it.Capacity(tc.kubelet); !maps.Equal(got, tc.capacity) {
				t.Errorf("Capacity = %v, want %v", got, tc.capacity)
			}
			if got := tc.it.Allocatable(tc.kubelet); !maps.Equal(got, tc.allocatable) {
				t.Errorf("Allocatable = %v, want %v", got, tc.allocatable)
			}
		})
	}
}

func TestENIMaxPods(t *testing.T) {
	for _, tc := range []struct {
		eni  ENILimits
		want int32
	}{
		{ENILimits{3, 10}, 29},   // m5.large
		{ENILimits{3, 12}, 35},   // t3.large
		{ENILimits{4, 15}, 58},   // m5.xlarge
		{ENILimits{8, 30}, 234},  // m5.4xlarge
		{ENILimits{15, 50}, 737}, // m5.24xlarge
	} {
		if got := tc.eni.MaxPods(); got != tc.want {
			t.Errorf("%+v.MaxPods() = %d, want %d", tc.eni, got, tc.want)
		}
	}
}
