package main

// The family table: public facts about EC2 instance families (vCPU and memory per size, network interface
// limits, instance-store size, Linux on-demand list price in us-east-1), written from AWS's published instance
// specifications and price list. Prices of standard families scale linearly with size, so one price per
// "large" (2 vCPU) size describes the family; GPU families do not scale linearly and list every size.

// family describes one instance family.
type family struct {
	name     string
	category string
	arch     string
	// gen is the generation number in the name (5 for m5).
	gen int
	// gibPerCPU is memory per vCPU; memMiB overrides it per size where a family departs from it.
	gibPerCPU float64
	memMiB    map[string]int64
	// largePrice is the us-east-1 Linux on-demand price of the 2-vCPU size, USD/hour; a size with v vCPUs
	// costs largePrice*v/2.
	largePrice float64
	sizes      []string
	// metalCPU is the vCPU count of each bare-metal size.
	metalCPU map[string]int
	// nvmeGBPerCPU is instance-store capacity in decimal GB (as AWS publishes it) per vCPU; nvmeGB overrides
	// it per size.
	nvmeGBPerCPU float64
	nvmeGB       map[string]int64
	// eni overrides the default interface limits per size.
	eni map[string]eni
	// gpu describes a GPU family's sizes; when set, it replaces sizes, gibPerCPU and largePrice.
	gpu *gpuFamily
	// zones restricts the family to some zone letters ("bc"); empty means all three.
	zones string
}

type eni struct{ interfaces, ipv4 int }

type gpuFamily struct {
	name         string // lower-case, as Karpenter's instance-gpu-name label spells it
	manufacturer string
	memoryMiB    int64 // per GPU
	sizes        []gpuSize
}

type gpuSize struct {
	size   string
	vcpu   int
	memGiB int64
	gpus   int
	price  float64 // us-east-1 on-demand USD/hour
	nvmeGB int64
	eni    eni
}

// Size lists shared by many families.
var (
	sizesM5   = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"}
	sizesM5a  = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge"}
	sizesM6i  = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "metal"}
	sizesM6a  = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "48xlarge", "metal"}
	sizesM7i  = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge", "metal-24xl", "metal-48xl"}
	sizesM7a  = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "48xlarge", "metal-48xl"}
	sizesGrav = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"}
	sizesC5   = []string{"large", "xlarge", "2xlarge", "4xlarge", "9xlarge", "12xlarge", "18xlarge", "24xlarge", "metal"}
	sizesC5n  = []string{"large", "xlarge", "2xlarge", "4xlarge", "9xlarge", "18xlarge", "metal"}
	sizesT    = []string{"large", "xlarge", "2xlarge"}

	metal96  = map[string]int{"metal": 96}
	metal128 = map[string]int{"metal": 128}
	metal192 = map[string]int{"metal": 192}
	metal64  = map[string]int{"metal": 64}
	metal7   = map[string]int{"metal-24xl": 96, "metal-48xl": 192}
	metal7a  = map[string]int{"metal-48xl": 192}

	// Burstable types have 12 addresses per interface at large, unlike the Nitro default of 10.
	eniT = map[string]eni{"large": {3, 12}}

	// c5d's instance store does not grow linearly above 9xlarge.
	nvmeC5d = map[string]int64{"large": 50, "xlarge": 100, "2xlarge": 200, "4xlarge": 400, "9xlarge": 900,
		"12xlarge": 1800, "18xlarge": 1800, "24xlarge": 3600, "metal": 3600}
	// c5n has 5.25 GiB per vCPU up to 4xlarge and 5.33 above.
	memC5n = map[string]int64{"large": 5376, "xlarge": 10752, "2xlarge": 21504, "4xlarge": 43008,
		"9xlarge": 98304, "18xlarge": 196608, "metal": 196608}
)

var families = []family{
	// General purpose.
	{name: "m5", category: "general", arch: "amd64", gen: 5, gibPerCPU: 4, largePrice: 0.096, sizes: sizesM5, metalCPU: metal96},
	{name: "m5a", category: "general", arch: "amd64", gen: 5, gibPerCPU: 4, largePrice: 0.086, sizes: sizesM5a},
	{name: "m5d", category: "general", arch: "amd64", gen: 5, gibPerCPU: 4, largePrice: 0.113, sizes: sizesM5, metalCPU: metal96, nvmeGBPerCPU: 37.5},
	{name: "m6i", category: "general", arch: "amd64", gen: 6, gibPerCPU: 4, largePrice: 0.096, sizes: sizesM6i, metalCPU: metal128},
	{name: "m6id", category: "general", arch: "amd64", gen: 6, gibPerCPU: 4, largePrice: 0.11865, sizes: sizesM6i, metalCPU: metal128, nvmeGBPerCPU: 59.375},
	{name: "m6a", category: "general", arch: "amd64", gen: 6, gibPerCPU: 4, largePrice: 0.0864, sizes: sizesM6a, metalCPU: metal192},
	{name: "m6g", category: "general", arch: "arm64", gen: 6, gibPerCPU: 4, largePrice: 0.077, sizes: sizesGrav, metalCPU: metal64},
	{name: "m7i", category: "general", arch: "amd64", gen: 7, gibPerCPU: 4, largePrice: 0.1008, sizes: sizesM7i, metalCPU: metal7},
	{name: "m7a", category: "general", arch: "amd64", gen: 7, gibPerCPU: 4, largePrice: 0.11592, sizes: sizesM7a, metalCPU: metal7a},
	{name: "m7g", category: "general", arch: "arm64", gen: 7, gibPerCPU: 4, largePrice: 0.0816, sizes: sizesGrav, metalCPU: metal64},

	// Compute optimised.
	{name: "c5", category: "compute", arch: "amd64", gen: 5, gibPerCPU: 2, largePrice: 0.085, sizes: sizesC5, metalCPU: metal96},
	{name: "c5a", category: "compute", arch: "amd64", gen: 5, gibPerCPU: 2, largePrice: 0.077, sizes: sizesM5a},
	{name: "c5d", category: "compute", arch: "amd64", gen: 5, gibPerCPU: 2, largePrice: 0.096, sizes: sizesC5, metalCPU: metal96, nvmeGB: nvmeC5d},
	{name: "c5n", category: "compute", arch: "amd64", gen: 5, memMiB: memC5n, largePrice: 0.108, sizes: sizesC5n, metalCPU: map[string]int{"metal": 72}},
	{name: "c6i", category: "compute", arch: "amd64", gen: 6, gibPerCPU: 2, largePrice: 0.085, sizes: sizesM6i, metalCPU: metal128},
	{name: "c6id", category: "compute", arch: "amd64", gen: 6, gibPerCPU: 2, largePrice: 0.1008, sizes: sizesM6i, metalCPU: metal128, nvmeGBPerCPU: 59.375},
	{name: "c6a", category: "compute", arch: "amd64", gen: 6, gibPerCPU: 2, largePrice: 0.0765, sizes: sizesM6a, metalCPU: metal192},
	{name: "c6g", category: "compute", arch: "arm64", gen: 6, gibPerCPU: 2, largePrice: 0.068, sizes: sizesGrav, metalCPU: metal64},
	{name: "c6gn", category: "compute", arch: "arm64", gen: 6, gibPerCPU: 2, largePrice: 0.0864, sizes: sizesGrav[:7]},
	{name: "c7i", category: "compute", arch: "amd64", gen: 7, gibPerCPU: 2, largePrice: 0.08925, sizes: sizesM7i, metalCPU: metal7},
	{name: "c7a", category: "compute", arch: "amd64", gen: 7, gibPerCPU: 2, largePrice: 0.10264, sizes: sizesM7a, metalCPU: metal7a},
	{name: "c7g", category: "compute", arch: "arm64", gen: 7, gibPerCPU: 2, largePrice: 0.0725, sizes: sizesGrav, metalCPU: metal64},

	// Memory optimised.
	{name: "r5", category: "memory", arch: "amd64", gen: 5, gibPerCPU: 8, largePrice: 0.126, sizes: sizesM5, metalCPU: metal96},
	{name: "r5a", category: "memory", arch: "amd64", gen: 5, gibPerCPU: 8, largePrice: 0.113, sizes: sizesM5a},
	{name: "r5d", category: "memory", arch: "amd64", gen: 5, gibPerCPU: 8, largePrice: 0.144, sizes: sizesM5, metalCPU: metal96, nvmeGBPerCPU: 37.5},
	{name: "r6i", category: "memory", arch: "amd64", gen: 6, gibPerCPU: 8, largePrice: 0.126, sizes: sizesM6i, metalCPU: metal128},
	{name: "r6id", category: "memory", arch: "amd64", gen: 6, gibPerCPU: 8, largePrice: 0.1512, sizes: sizesM6i, metalCPU: metal128, nvmeGBPerCPU: 59.375},
	{name: "r6a", category: "memory", arch: "amd64", gen: 6, gibPerCPU: 8, largePrice: 0.1134, sizes: sizesM6a, metalCPU: metal192},
	{name: "r6g", category: "memory", arch: "arm64", gen: 6, gibPerCPU: 8, largePrice: 0.1008, sizes: sizesGrav, metalCPU: metal64},
	{name: "r7i", category: "memory", arch: "amd64", gen: 7, gibPerCPU: 8, largePrice: 0.1323, sizes: sizesM7i, metalCPU: metal7},
	{name: "r7a", category: "memory", arch: "amd64", gen: 7, gibPerCPU: 8, largePrice: 0.15215, sizes: sizesM7a, metalCPU: metal7a},
	{name: "r7g", category: "memory", arch: "arm64", gen: 7, gibPerCPU: 8, largePrice: 0.1071, sizes: sizesGrav, metalCPU: metal64},

	// Burstable.
	{name: "t3", category: "burstable", arch: "amd64", gen: 3, gibPerCPU: 4, largePrice: 0.0832, sizes: sizesT, eni: eniT},
	{name: "t3a", category: "burstable", arch: "amd64", gen: 3, gibPerCPU: 4, largePrice: 0.0752, sizes: sizesT, eni: eniT},
	{name: "t4g", category: "burstable", arch: "arm64", gen: 4, gibPerCPU: 4, largePrice: 0.0672, sizes: sizesT, eni: eniT},

	// GPU.
	{name: "g4dn", category: "gpu", arch: "amd64", gen: 4, gpu: &gpuFamily{name: "t4", manufacturer: "nvidia", memoryMiB: 16384, sizes: []gpuSize{
		{"xlarge", 4, 16, 1, 0.526, 125, eni{3, 10}},
		{"2xlarge", 8, 32, 1, 0.752, 225, eni{3, 10}},
		{"4xlarge", 16, 64, 1, 1.204, 225, eni{3, 10}},
		{"8xlarge", 32, 128, 1, 2.176, 900, eni{4, 15}},
		{"12xlarge", 48, 192, 4, 3.912, 900, eni{8, 30}},
		{"16xlarge", 64, 256, 1, 4.352, 900, eni{4, 15}},
		{"metal", 96, 384, 8, 7.824, 1800, eni{15, 50}},
	}}},
	{name: "g5", category: "gpu", arch: "amd64", gen: 5, gpu: &gpuFamily{name: "a10g", manufacturer: "nvidia", memoryMiB: 22888, sizes: []gpuSize{
		{"xlarge", 4, 16, 1, 1.006, 250, eni{4, 15}},
		{"2xlarge", 8, 32, 1, 1.212, 450, eni{4, 15}},
		{"4xlarge", 16, 64, 1, 1.624, 600, eni{8, 30}},
		{"8xlarge", 32, 128, 1, 2.448, 900, eni{8, 30}},
		{"12xlarge", 48, 192, 4, 5.672, 3800, eni{15, 50}},
		{"16xlarge", 64, 256, 1, 4.096, 1900, eni{8, 30}},
		{"24xlarge", 96, 384, 4, 8.144, 3800, eni{15, 50}},
		{"48xlarge", 192, 768, 8, 16.288, 7600, eni{7, 50}},
	}}},
	{name: "g6", category: "gpu", arch: "amd64", gen: 6, gpu: &gpuFamily{name: "l4", manufacturer: "nvidia", memoryMiB: 22888, sizes: []gpuSize{
		{"xlarge", 4, 16, 1, 0.8048, 250, eni{4, 15}},
		{"2xlarge", 8, 32, 1, 0.9776, 450, eni{4, 15}},
		{"4xlarge", 16, 64, 1, 1.3232, 600, eni{8, 30}},
		{"8xlarge", 32, 128, 1, 2.0144, 900, eni{8, 30}},
		{"12xlarge", 48, 192, 4, 4.6016, 3760, eni{8, 30}},
		{"16xlarge", 64, 256, 1, 3.3968, 1880, eni{15, 50}},
		{"24xlarge", 96, 384, 4, 6.6752, 3760, eni{15, 50}},
		{"48xlarge", 192, 768, 8, 13.3504, 7520, eni{15, 50}},
	}}},
	// p4d is capacity-constrained: it is offered in two of the three zones of each region.
	{name: "p4d", category: "gpu", arch: "amd64", gen: 4, zones: "bc", gpu: &gpuFamily{name: "a100", manufacturer: "nvidia", memoryMiB: 40960, sizes: []gpuSize{
		{"24xlarge", 96, 1152, 8, 32.7726, 8000, eni{15, 50}},
	}}},
}

// region describes one embedded region.
type region struct {
	name string
	// priceFactor scales us-east-1 on-demand prices per category ("" is the default); us-west-2 lists the same
	// prices as us-east-1 for these families, eu-west-1 about 10-13% more.
	priceFactor map[string]float64
	// familyFactor overrides priceFactor for one family.
	familyFactor map[string]float64
	// spotShift moves the region's spot discount, as its spot market is more or less contended.
	spotShift float64
}

var regions = []region{
	{name: "us-east-1", priceFactor: map[string]float64{"": 1}},
	{name: "us-west-2", priceFactor: map[string]float64{"": 1}, spotShift: -0.02},
	{name: "eu-west-1", priceFactor: map[string]float64{
		"": 1.115, "general": 1.115, "compute": 1.13, "memory": 1.12, "burstable": 1.096, "gpu": 1.116,
	}, familyFactor: map[string]float64{"p4d": 1.08}, spotShift: 0.03},
}

// spotBase is the typical spot price as a fraction of on-demand per category; each (type, zone) varies around
// it by up to ±spotJitter.
var spotBase = map[string]float64{
	"general": 0.40, "compute": 0.38, "memory": 0.36, "burstable": 0.33, "gpu": 0.42,
}

const spotJitter = 0.08
