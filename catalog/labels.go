package catalog

import (
	"strconv"
	"strings"

	"github.com/packwright/packwright/model"
)

// Well-known Kubernetes node labels that offerings carry (model defines zone, instance type, arch, os, and
// Packwright's capacity type and node pool).
const (
	LabelInstanceType = model.LabelInstanceType
	LabelZone         = model.LabelZone
	LabelRegion       = "topology.kubernetes.io/region"
	LabelArch         = model.LabelArch
	LabelOS           = model.LabelOS
	LabelCapacityType = model.LabelCapacityType
	LabelNodePool     = model.LabelNodePool
)

// Packwright's instance labels. Memory values are MiB, as Karpenter's are, so that selectors carry over.
const (
	LabelInstanceFamily     = "packwright.dev/instance-family"
	LabelInstanceSize       = "packwright.dev/instance-size"
	LabelInstanceCategory   = "packwright.dev/instance-category"
	LabelInstanceGeneration = "packwright.dev/instance-generation"
	LabelInstanceCPU        = "packwright.dev/instance-cpu"
	LabelInstanceMemory     = "packwright.dev/instance-memory"
	LabelInstanceGPUCount   = "packwright.dev/instance-gpu-count"
	LabelInstanceGPUName    = "packwright.dev/instance-gpu-name"
	LabelInstanceGPUMemory  = "packwright.dev/instance-gpu-memory"
)

// Karpenter's labels, set too so that pods and NodePools written for Karpenter select the same offerings.
const (
	KarpenterCapacityType            = "karpenter.sh/capacity-type"
	KarpenterNodePool                = "karpenter.sh/nodepool"
	KarpenterInstanceFamily          = "karpenter.k8s.aws/instance-family"
	KarpenterInstanceSize            = "karpenter.k8s.aws/instance-size"
	KarpenterInstanceCategory        = "karpenter.k8s.aws/instance-category"
	KarpenterInstanceGeneration      = "karpenter.k8s.aws/instance-generation"
	KarpenterInstanceCPU             = "karpenter.k8s.aws/instance-cpu"
	KarpenterInstanceMemory          = "karpenter.k8s.aws/instance-memory"
	KarpenterInstanceGPUCount        = "karpenter.k8s.aws/instance-gpu-count"
	KarpenterInstanceGPUName         = "karpenter.k8s.aws/instance-gpu-name"
	KarpenterInstanceGPUManufacturer = "karpenter.k8s.aws/instance-gpu-manufacturer"
	KarpenterInstanceGPUMemory       = "karpenter.k8s.aws/instance-gpu-memory"
	KarpenterInstanceLocalNVMe       = "karpenter.k8s.aws/instance-local-nvme"
)

// OSLinux is the only operating system Packwright launches.
const OSLinux = "linux"

// KarpenterCategory is the value of Karpenter's instance-category label: the letters that start the family
// name ("m" for m7i, "g" for g4dn, "inf" for inf2), not Packwright's descriptive Category.
func KarpenterCategory(family string) string {
	i := strings.IndexFunc(family, func(r rune) bool { return r < 'a' || r > 'z' })
	if i < 0 {
		return family
	}
	return family[:i]
}

// Labels returns the well-known labels of a node of this type launched in region and zone with capacityType for
// pool (pool may be empty, then no node-pool labels are set). GPU labels appear only on GPU types, as on
// Karpenter, except Packwright's gpu-count which is "0" elsewhere so that "Lt"/"Gt" selectors work on every node.
func (it *InstanceType) Labels(region, zone, capacityType, pool string) map[string]string {
	cpu := strconv.Itoa(it.VCPU)
	mem := strconv.FormatInt(it.MemoryMiB, 10)
	gen := strconv.Itoa(it.Generation)
	l := map[string]string{
		LabelInstanceType:           it.Name,
		LabelZone:                   zone,
		LabelRegion:                 region,
		LabelArch:                   it.Arch,
		LabelOS:                     OSLinux,
		LabelCapacityType:           capacityType,
		LabelInstanceFamily:         it.Family,
		LabelInstanceSize:           it.Size,
		LabelInstanceCategory:       string(it.Category),
		LabelInstanceGeneration:     gen,
		LabelInstanceCPU:            cpu,
		LabelInstanceMemory:         mem,
		LabelInstanceGPUCount:       strconv.Itoa(it.GPUs),
		KarpenterCapacityType:       capacityType,
		KarpenterInstanceFamily:     it.Family,
		KarpenterInstanceSize:       it.Size,
		KarpenterInstanceCategory:   KarpenterCategory(it.Family),
		KarpenterInstanceGeneration: gen,
		KarpenterInstanceCPU:        cpu,
		KarpenterInstanceMemory:     mem,
	}
	if region == "" {
		delete(l, LabelRegion)
	}
	if pool != "" {
		l[LabelNodePool] = pool
		l[KarpenterNodePool] = pool
	}
	if it.GPUs > 0 {
		gpuMem := strconv.FormatInt(it.GPUMemoryMiB, 10)
		l[LabelInstanceGPUName] = it.GPUName
		l[LabelInstanceGPUMemory] = gpuMem
		l[KarpenterInstanceGPUCount] = strconv.Itoa(it.GPUs)
		l[KarpenterInstanceGPUName] = it.GPUName
		l[KarpenterInstanceGPUMemory] = gpuMem
		if it.GPUManufacturer != "" {
			l[KarpenterInstanceGPUManufacturer] = it.GPUManufacturer
		}
	}
	if it.LocalStorageGiB > 0 {
		l[KarpenterInstanceLocalNVMe] = strconv.FormatInt(it.LocalStorageGiB, 10)
	}
	return l
}
