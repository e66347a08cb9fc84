package awsrefresh

import (
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/packwright/packwright/catalog"
)

// convert reads the limits of one EC2 instance type. It returns a reason instead when Packwright cannot use
// the type (Mac hosts, 32-bit only) or EC2 left out a limit that allocatable depends on.
func convert(info types.InstanceTypeInfo) (catalog.InstanceType, string) {
	name := string(info.InstanceType)
	family, size, ok := strings.Cut(name, ".")
	if !ok || family == "" || size == "" {
		return catalog.InstanceType{}, "name is not FAMILY.SIZE"
	}
	arch := architecture(info.ProcessorInfo)
	if arch == "" {
		return catalog.InstanceType{}, "no amd64 or arm64 architecture (Mac or 32-bit only)"
	}
	if info.VCpuInfo == nil || aws.ToInt32(info.VCpuInfo.DefaultVCpus) <= 0 {
		return catalog.InstanceType{}, "no vCPU count"
	}
	if info.MemoryInfo == nil || aws.ToInt64(info.MemoryInfo.SizeInMiB) <= 0 {
		return catalog.InstanceType{}, "no memory size"
	}
	eni, ok := eniLimits(info.NetworkInfo)
	if !ok {
		return catalog.InstanceType{}, "no network interface limits, so no max pods"
	}
	it := catalog.InstanceType{
		Name:       name,
		Family:     family,
		Generation: generation(family),
		Size:       size,
		Arch:       arch,
		VCPU:       int(aws.ToInt32(info.VCpuInfo.DefaultVCpus)),
		MemoryMiB:  aws.ToInt64(info.MemoryInfo.SizeInMiB),
		ENI:        &eni,
		MaxPods:    eni.MaxPods(),
	}
	if s := info.InstanceStorageInfo; s != nil && aws.ToInt64(s.TotalSizeInGB) > 0 {
		// EC2 reports instance store in decimal GB; rounding down keeps ephemeral-storage from being overstated.
		it.LocalStorageGiB = aws.ToInt64(s.TotalSizeInGB) * 1_000_000_000 / catalog.GiB
	}
	nvidia := false
	if g := info.GpuInfo; g != nil {
		for _, d := range g.Gpus {
			// Only NVIDIA GPUs are the nvidia.com/gpu resource; AMD and others count as accelerators.
			if !strings.EqualFold(aws.ToString(d.Manufacturer), "nvidia") || aws.ToInt32(d.Count) <= 0 {
				continue
			}
			nvidia = true
			it.GPUs += int(aws.ToInt32(d.Count))
			if it.GPUName == "" {
				it.GPUName = strings.ToLower(aws.ToString(d.Name))
				it.GPUManufacturer = "nvidia"
				if d.MemoryInfo != nil {
					it.GPUMemoryMiB = int64(aws.ToInt32(d.MemoryInfo.SizeInMiB))
				}
			}
		}
		if it.GPUName == "" && it.GPUs > 0 {
			it.GPUName = "nvidia"
		}
	}
	it.Category = category(family, info, nvidia)
	return it, ""
}

// architecture maps EC2's names to kubernetes.io/arch; x86_64 wins when a type lists i386 too.
func architecture(p *types.ProcessorInfo) string {
	if p == nil {
		return ""
	}
	switch {
	case slices.Contains(p.SupportedArchitectures, types.ArchitectureTypeX8664):
		return catalog.AMD64
	case slices.Contains(p.SupportedArchitectures, types.ArchitectureTypeArm64):
		return catalog.ARM64
	}
	return ""
}

// eniLimits reads the interfaces of the default network card: the VPC CNI attaches pod interfaces there only,
// so a p4d's 60 interfaces over four cards give the 737 pods of its first card's 15, as on EKS.
func eniLimits(n *types.NetworkInfo) (catalog.ENILimits, bool) {
	if n == nil {
		return catalog.ENILimits{}, false
	}
	interfaces := aws.ToInt32(n.MaximumNetworkInterfaces)
	def := aws.ToInt32(n.DefaultNetworkCardIndex)
	for _, card := range n.NetworkCards {
		if aws.ToInt32(card.NetworkCardIndex) == def && aws.ToInt32(card.MaximumNetworkInterfaces) > 0 {
			interfaces = aws.ToInt32(card.MaximumNetworkInterfaces)
		}
	}
	ips := aws.ToInt32(n.Ipv4AddressesPerInterface)
	if interfaces <= 0 || ips < 2 {
		return catalog.ENILimits{}, false
	}
	return catalog.ENILimits{MaxInterfaces: int(interfaces), IPv4PerInterface: int(ips)}, true
}

// generation is the first number in a family name: 5 for m5, 7 for m7i-flex, 6 for u-6tb1; 0 when none.
func generation(family string) int {
	start := strings.IndexAny(family, "0123456789")
	if start < 0 {
		return 0
	}
	end := start
	for end < len(family) && family[end] >= '0' && family[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(family[start:end])
	return n
}

// category classifies a family by EC2's naming scheme (the letters before the generation), refined by what the
// type reports: burstable credits, NVIDIA GPUs, other accelerators.
func category(family string, info types.InstanceTypeInfo, nvidia bool) catalog.Category {
	switch {
	case nvidia:
		return catalog.GPU
	case info.GpuInfo != nil || info.InferenceAcceleratorInfo != nil || info.NeuronInfo != nil ||
		info.FpgaInfo != nil || info.MediaAcceleratorInfo != nil:
		return catalog.Accelerated
	case aws.ToBool(info.BurstablePerformanceSupported):
		return catalog.Burstable
	}
	switch prefix := catalog.KarpenterCategory(family); prefix {
	case "t":
		return catalog.Burstable
	case "c":
		return catalog.Compute
	case "r", "x", "z", "u":
		return catalog.Memory
	case "i", "d", "h", "im", "is":
		return catalog.Storage
	case "g", "p", "inf", "trn", "dl", "f", "vt":
		return catalog.Accelerated
	}
	return catalog.General
}
