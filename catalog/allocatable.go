package catalog

import "github.com/packwright/packwright/model"

// Byte units.
const (
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

// Defaults of the EKS-style allocatable computation; docs/catalog-format.md explains each.
const (
	// DefaultRootVolumeGiB is the EBS root volume that provides ephemeral storage on types without local
	// storage.
	DefaultRootVolumeGiB = 20
	// DefaultKubeReservedStorage is kube-reserved ephemeral storage, as the EKS AMIs set it.
	DefaultKubeReservedStorage = 1 * GiB
	// DefaultEvictionMemory is the kubelet's default memory.available hard eviction threshold.
	DefaultEvictionMemory = 100 * MiB
	// DefaultEvictionStoragePercent is the kubelet's default nodefs.available hard eviction threshold.
	DefaultEvictionStoragePercent = 10
)

// KubeletConfig overrides the kubelet settings that allocatable depends on. A nil *KubeletConfig, a nil map or a
// missing key keeps the EKS default for that resource; a key that is present replaces the default for that
// resource only (as Karpenter's EC2NodeClass kubelet block does).
type KubeletConfig struct {
	// KubeReserved replaces the default kube-reserved cpu, memory and ephemeral-storage, per resource.
	KubeReserved model.Resources
	// SystemReserved is reserved for system daemons; the EKS default reserves nothing.
	SystemReserved model.Resources
	// EvictionHard is the hard eviction threshold per resource, as an absolute quantity (memory bytes,
	// ephemeral-storage bytes).
	EvictionHard model.Resources
	// MaxPods replaces the instance type's ENI-based pod limit, and with it the memory that kube-reserved sets
	// aside per pod.
	MaxPods *int32
}

// EffectiveMaxPods is the pod limit the kubelet enforces on this type under kubelet.
func (it *InstanceType) EffectiveMaxPods(kubelet *KubeletConfig) int32 {
	if kubelet != nil && kubelet.MaxPods != nil {
		return *kubelet.MaxPods
	}
	return it.MaxPods
}

// EphemeralStorageBytes is the node's ephemeral storage: local storage when the type has it, else the default
// root volume.
func (it *InstanceType) EphemeralStorageBytes() int64 {
	if it.LocalStorageGiB > 0 {
		return it.LocalStorageGiB * GiB
	}
	return DefaultRootVolumeGiB * GiB
}

// Capacity is the node's capacity as the kubelet reports it: cpu, memory, ephemeral-storage, pods and, for GPU
// types, nvidia.com/gpu.
func (it *InstanceType) Capacity(kubelet *KubeletConfig) model.Resources {
	r := model.Resources{
		model.CPU:              int64(it.VCPU) * 1000,
		model.Memory:           it.MemoryMiB * MiB,
		model.EphemeralStorage: it.EphemeralStorageBytes(),
		model.Pods:             int64(it.EffectiveMaxPods(kubelet)),
	}
	if it.GPUs > 0 {
		r[model.GPU] = int64(it.GPUs)
	}
	return r
}

// KubeReservedCPU is the EKS kube-reserved CPU in millicores: 6% of the first core, 1% of the second, 0.5% of
// the third and fourth and 0.25% of every core above four. The last tier is rounded down to whole millicores,
// as the kubelet cannot reserve less.
func KubeReservedCPU(vcpu int) int64 {
	cores := int64(vcpu)
	var m int64
	if cores >= 1 {
		m += 60
	}
	if cores >= 2 {
		m += 10
	}
	m += 5 * min(max(cores-2, 0), 2)
	m += max(cores-4, 0) * 25 / 10
	return m
}

// KubeReservedMemory is the EKS kube-reserved memory in bytes: 255 MiB plus 11 MiB per pod the node may run.
func KubeReservedMemory(maxPods int32) int64 {
	return 255*MiB + 11*MiB*int64(maxPods)
}

// KubeReserved is the kube-reserved vector under kubelet: the EKS defaults, each replaced by kubelet's entry
// where it has one.
func (it *InstanceType) KubeReserved(kubelet *KubeletConfig) model.Resources {
	r := model.Resources{
		model.CPU:              KubeReservedCPU(it.VCPU),
		model.Memory:           KubeReservedMemory(it.EffectiveMaxPods(kubelet)),
		model.EphemeralStorage: DefaultKubeReservedStorage,
	}
	if kubelet != nil {
		for k, v := range kubelet.KubeReserved {
			r[k] = v
		}
	}
	return r
}

// EvictionHard is the hard eviction threshold under kubelet: 100 MiB of memory and 10% of ephemeral storage,
// each replaced by kubelet's entry where it has one.
func (it *InstanceType) EvictionHard(kubelet *KubeletConfig) model.Resources {
	r := model.Resources{
		model.Memory:           DefaultEvictionMemory,
		model.EphemeralStorage: it.EphemeralStorageBytes() * DefaultEvictionStoragePercent / 100,
	}
	if kubelet != nil {
		for k, v := range kubelet.EvictionHard {
			r[k] = v
		}
	}
	return r
}

// Allocatable is capacity minus kube-reserved, system-reserved and the hard eviction threshold, per resource and
// never below zero. DaemonSet overhead is not subtracted here: it depends on the cluster, so the cluster package
// subtracts it per offering.
func (it *InstanceType) Allocatable(kubelet *KubeletConfig) model.Resources {
	r := it.Capacity(kubelet)
	sub := func(v model.Resources) {
		for k, q := range v {
			if _, ok := r[k]; ok {
				r[k] = max(r[k]-q, 0)
			}
		}
	}
	sub(it.KubeReserved(kubelet))
	if kubelet != nil {
		sub(kubelet.SystemReserved)
	}
	sub(it.EvictionHard(kubelet))
	return r
}
