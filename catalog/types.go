package catalog

import "github.com/packwright/packwright/model"

// Category is the broad purpose of an instance family.
type Category string

// Instance categories. Storage is an extension for storage-optimised families (i, d, h) that an AWS refresh may
// discover; the embedded catalogs do not use it.
const (
	General     Category = "general"
	Compute     Category = "compute"
	Memory      Category = "memory"
	Burstable   Category = "burstable"
	GPU         Category = "gpu"
	Accelerated Category = "accelerated"
	Storage     Category = "storage"
)

// Categories lists every valid Category, in documentation order.
var Categories = []Category{General, Compute, Memory, Burstable, GPU, Accelerated, Storage}

// CPU architectures, spelled as the kubernetes.io/arch label spells them.
const (
	AMD64 = "amd64"
	ARM64 = "arm64"
)

// Capacity types, the same strings as model.OnDemand and model.Spot.
const (
	OnDemand = model.OnDemand
	Spot     = model.Spot
)

// Catalog is the set of instance types of one region with their offerings. Build it with Load, Embedded,
// KwokLike, Random or a literal; after changing InstanceTypes by hand, call Validate, which also refreshes the
// name index that ByName uses.
type Catalog struct {
	// Region is the cloud region, e.g. "us-east-1"; it becomes the topology.kubernetes.io/region label.
	Region string `json:"region"`
	// SnapshotDate is the day the prices were taken (YYYY-MM-DD); empty when unknown.
	SnapshotDate string `json:"snapshotDate,omitempty"`
	// Source says where the data came from, for people reading the file.
	Source string `json:"source,omitempty"`
	// InstanceTypes are sorted by name in files written by Write.
	InstanceTypes []InstanceType `json:"instanceTypes"`

	index map[string]int
}

// InstanceType is one machine shape and the zones and capacity types it can be bought in.
type InstanceType struct {
	// Name is unique in a catalog, e.g. "m5.large".
	Name string `json:"name"`
	// Family is the part of the name before the size, e.g. "m5".
	Family   string   `json:"family"`
	Category Category `json:"category"`
	// Generation is the family's generation number, e.g. 5 for m5.
	Generation int `json:"generation"`
	// Size is the part of the name after the family, e.g. "large" or "metal-48xl".
	Size string `json:"size"`
	// Arch is AMD64 or ARM64.
	Arch      string `json:"arch"`
	VCPU      int    `json:"vcpu"`
	MemoryMiB int64  `json:"memoryMiB"`
	// GPUs is the number of NVIDIA GPUs (the nvidia.com/gpu resource); GPUName is e.g. "a10g" and GPUMemoryMiB
	// is the memory of one GPU.
	GPUs         int    `json:"gpus"`
	GPUName      string `json:"gpuName"`
	GPUMemoryMiB int64  `json:"gpuMemoryMiB"`
	// GPUManufacturer is e.g. "nvidia"; optional, it only feeds the instance-gpu-manufacturer label.
	GPUManufacturer string `json:"gpuManufacturer,omitempty"`
	// MaxPods is the kubelet's pod limit; on AWS with the VPC CNI it is enis*(ipsPerENI-1)+2.
	MaxPods int32 `json:"maxPods"`
	// LocalStorageGiB is the instance-store (NVMe) capacity; 0 means EBS only, when the root volume provides
	// ephemeral storage.
	LocalStorageGiB int64 `json:"localStorageGiB,omitempty"`
	// ENI records the network limits MaxPods was derived from; optional.
	ENI *ENILimits `json:"eni,omitempty"`
	// Offerings are the (zone, capacity type) pairs the type is sold in, with prices.
	Offerings []Offering `json:"offerings"`
}

// ENILimits are the elastic network interface limits of an AWS instance type.
type ENILimits struct {
	MaxInterfaces    int `json:"maxInterfaces"`
	IPv4PerInterface int `json:"ipv4PerInterface"`
}

// MaxPods is the VPC CNI pod limit without prefix delegation: every interface but its primary address gives one
// pod address, plus two host-network pods (aws-node and kube-proxy) that need no address of their own.
func (e ENILimits) MaxPods() int32 {
	return int32(e.MaxInterfaces*(e.IPv4PerInterface-1) + 2)
}

// Offering is one zone and capacity type an instance type is sold in.
type Offering struct {
	Zone string `json:"zone"`
	// CapacityType is OnDemand or Spot.
	CapacityType string `json:"capacityType"`
	// Price is USD per hour.
	Price float64 `json:"price"`
}
