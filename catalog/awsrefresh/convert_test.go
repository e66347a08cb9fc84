package awsrefresh

import (
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/packwright/packwright/catalog"
)

func itoa(n int) string { return strconv.Itoa(n) }

func TestGeneration(t *testing.T) {
	for fam, want := range map[string]int{"m5": 5, "m7i-flex": 7, "g4dn": 4, "u-6tb1": 6, "x2iedn": 2, "mac": 0, "c6gn": 6} {
		if got := generation(fam); got != want {
			t.Errorf("generation(%q) = %d, want %d", fam, got, want)
		}
	}
}

func TestCategory(t *testing.T) {
	gpu := &types.GpuInfo{Gpus: []types.GpuDeviceInfo{{Manufacturer: aws.String("AMD"), Count: aws.Int32(1), Name: aws.String("Radeon Pro V520")}}}
	for _, tc := range []struct {
		family string
		info   types.InstanceTypeInfo
		nvidia bool
		want   catalog.Category
	}{
		{"m5", types.InstanceTypeInfo{}, false, catalog.General},
		{"c6gn", types.InstanceTypeInfo{}, false, catalog.Compute},
		{"r7iz", types.InstanceTypeInfo{}, false, catalog.Memory},
		{"x2idn", types.InstanceTypeInfo{}, false, catalog.Memory},
		{"i4i", types.InstanceTypeInfo{}, false, catalog.Storage},
		{"t3", types.InstanceTypeInfo{BurstablePerformanceSupported: aws.Bool(true)}, false, catalog.Burstable},
		{"g5", types.InstanceTypeInfo{}, true, catalog.GPU},
		{"g4ad", types.InstanceTypeInfo{GpuInfo: gpu}, false, catalog.Accelerated},
		{"inf2", types.InstanceTypeInfo{InferenceAcceleratorInfo: &types.InferenceAcceleratorInfo{}}, false, catalog.Accelerated},
		{"trn1", types.InstanceTypeInfo{}, false, catalog.Accelerated},
	} {
		if got := category(tc.family, tc.info, tc.nvidia); got != tc.want {
			t.Errorf("category(%s) = %s, want %s", tc.family, got, tc.want)
		}
	}
}

func TestConvertSkips(t *testing.T) {
	ok := types.InstanceTypeInfo{
		InstanceType:  "m5.large",
		ProcessorInfo: &types.ProcessorInfo{SupportedArchitectures: []types.ArchitectureType{"i386", "x86_64"}},
		VCpuInfo:      &types.VCpuInfo{DefaultVCpus: aws.Int32(2)},
		MemoryInfo:    &types.MemoryInfo{SizeInMiB: aws.Int64(8192)},
		NetworkInfo:   &types.NetworkInfo{MaximumNetworkInterfaces: aws.Int32(3), Ipv4AddressesPerInterface: aws.Int32(10)},
	}
	it, why := convert(ok)
	if why != "" || it.Arch != catalog.AMD64 || it.MaxPods != 29 {
		t.Fatalf("convert(m5.large) = %+v, %q", it, why)
	}
	for name, edit := range map[string]func(*types.InstanceTypeInfo){
		"mac": func(i *types.InstanceTypeInfo) {
			i.ProcessorInfo.SupportedArchitectures = []types.ArchitectureType{"x86_64_mac"}
		},
		"no vcpu":    func(i *types.InstanceTypeInfo) { i.VCpuInfo = nil },
		"no memory":  func(i *types.InstanceTypeInfo) { i.MemoryInfo.SizeInMiB = aws.Int64(0) },
		"no network": func(i *types.InstanceTypeInfo) { i.NetworkInfo = nil },
		"bad name":   func(i *types.InstanceTypeInfo) { i.InstanceType = "m5" },
	} {
		info := ok
		p := *ok.ProcessorInfo
		m := *ok.MemoryInfo
		info.ProcessorInfo, info.MemoryInfo = &p, &m
		edit(&info)
		if _, why := convert(info); why == "" {
			t.Errorf("%s: converted, want a skip reason", name)
		}
	}
}

func TestParseProduct(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    priceDoc
		region string
		want   float64 // 0: not a plain Linux on-demand price
	}{
		{"linux", linuxDoc("m5.large", "us-east-1", "0.0960000000"), "us-east-1", 0.096},
		{"other region", linuxDoc("m5.large", "eu-west-1", "0.107"), "us-east-1", 0},
		{"windows", priceDoc{"m5.large", "us-east-1", "Windows", "Shared", "NA", "Used", "0.188"}, "us-east-1", 0},
		{"dedicated", priceDoc{"m5.large", "us-east-1", "Linux", "Dedicated", "NA", "Used", "0.106"}, "us-east-1", 0},
		{"zero price", linuxDoc("m5.large", "us-east-1", "0.0000000000"), "us-east-1", 0},
	} {
		name, price, err := parseProduct(tc.doc.json(), tc.region)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.want == 0 && name != "" || tc.want != 0 && (name != "m5.large" || price != tc.want) {
			t.Errorf("%s: parseProduct = %q %v, want %v", tc.name, name, price, tc.want)
		}
	}
	if _, _, err := parseProduct("{not json", "us-east-1"); err == nil {
		t.Error("malformed document accepted")
	}
}

func TestOfferingsCombine(t *testing.T) {
	zones := []string{"z-b", "z-a", "z-b"}
	onDemand := map[string]float64{"x.large": 1}
	spot := map[typeZone]float64{{"x.large", "z-a"}: 0.3}
	got := offerings("x.large", zones, []types.UsageClassType{"on-demand", "spot"}, onDemand, spot)
	want := []catalog.Offering{
		{Zone: "z-a", CapacityType: catalog.OnDemand, Price: 1},
		{Zone: "z-a", CapacityType: catalog.Spot, Price: 0.3},
		{Zone: "z-b", CapacityType: catalog.OnDemand, Price: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("offerings = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("offerings[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := offerings("x.large", zones, []types.UsageClassType{"on-demand"}, onDemand, spot); len(got) != 2 {
		t.Errorf("a type not sold as spot got %v", got)
	}
}
