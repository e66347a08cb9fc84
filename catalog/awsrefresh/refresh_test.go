package awsrefresh

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/internal/moto"
)

// testTypes are asked of moto: general, arm64, GPU (with a four-card network), burstable, and a Mac that
// the refresh must leave out.
var testTypes = []string{"m5.large", "m5.24xlarge", "c7g.xlarge", "g5.xlarge", "p4d.24xlarge", "t3.large", "mac1.metal"}

// testPrices is the fake price list: the test types in us-east-1 (t3.large left out on purpose, so it keeps
// only spot offerings), decoys that the filters must drop, and another region.
var testPrices = []priceDoc{
	linuxDoc("m5.large", "us-east-1", "0.0960000000"),
	linuxDoc("m5.24xlarge", "us-east-1", "4.6080000000"),
	linuxDoc("c7g.xlarge", "us-east-1", "0.1450000000"),
	linuxDoc("g5.xlarge", "us-east-1", "1.0060000000"),
	linuxDoc("p4d.24xlarge", "us-east-1", "32.7726000000"),
	linuxDoc("mac1.metal", "us-east-1", "1.0830000000"),
	linuxDoc("m5.large", "eu-west-1", "0.1070000000"),
	{"m5.large", "us-east-1", "Windows", "Shared", "NA", "Used", "0.1880000000"},
	{"m5.large", "us-east-1", "Linux", "Dedicated", "NA", "Used", "0.1060000000"},
	{"m5.large", "us-east-1", "Linux", "Shared", "SQL Web", "Used", "0.1130000000"},
	{"m5.large", "us-east-1", "Linux", "Shared", "NA", "UnusedCapacityReservation", "0.0960000000"},
}

func testOptions(t *testing.T, pricingURL string) Options {
	t.Helper()
	return Options{
		Region:          "us-east-1",
		EC2Endpoint:     motoURL(t),
		PricingEndpoint: pricingURL,
		Credentials:     credentials.NewStaticCredentialsProvider("AKIAPACKWRIGHTTEST", "packwright-test-secret", ""),
		InstanceTypes:   testTypes,
		Now:             func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) },
		Logf:            t.Logf,
	}
}

func TestRefreshAgainstMoto(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fake, srv := newFakePricing(t, testPrices)
	var skipped []string
	opts := testOptions(t, srv.URL)
	opts.Logf = func(format string, args ...any) {
		t.Logf(format, args...)
		if len(args) > 1 {
			skipped = append(skipped, args[1].(string))
		}
	}
	path := filepath.Join(t.TempDir(), "aws-us-east-1.json")
	c, err := RefreshFile(ctx, opts, path)
	if err != nil {
		t.Fatal(err)
	}
	// What was written is what Load reads back.
	back, err := catalog.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.InstanceTypes) != len(c.InstanceTypes) {
		t.Errorf("file has %d types, refresh returned %d", len(back.InstanceTypes), len(c.InstanceTypes))
	}
	if c.Region != "us-east-1" || c.SnapshotDate != "2026-11-30" || !strings.Contains(c.Source, "DescribeInstanceTypes") {
		t.Errorf("region %q snapshot %q source %q", c.Region, c.SnapshotDate, c.Source)
	}
	var names []string
	for _, it := range c.InstanceTypes {
		names = append(names, it.Name)
	}
	want := []string{"c7g.xlarge", "g5.xlarge", "m5.24xlarge", "m5.large", "p4d.24xlarge", "t3.large"}
	if !slices.Equal(names, want) {
		t.Fatalf("instance types %v, want %v", names, want)
	}
	if !slices.Contains(skipped, "mac1.metal") {
		t.Errorf("mac1.metal was not reported as skipped (skipped: %v)", skipped)
	}

	for _, tc := range []struct {
		name                string
		family, size, arch  string
		category            catalog.Category
		generation, vcpu    int
		memMiB              int64
		maxPods             int32
		gpus                int
		gpuName             string
		gpuMemMiB, localGiB int64
		onDemand            float64 // 0: no on-demand offerings
	}{
		{"m5.large", "m5", "large", catalog.AMD64, catalog.General, 5, 2, 8192, 29, 0, "", 0, 0, 0.096},
		{"m5.24xlarge", "m5", "24xlarge", catalog.AMD64, catalog.General, 5, 96, 393216, 737, 0, "", 0, 0, 4.608},
		{"c7g.xlarge", "c7g", "xlarge", catalog.ARM64, catalog.Compute, 7, 4, 8192, 58, 0, "", 0, 0, 0.145},
		// 250 GB of NVMe is 232 GiB.
		{"g5.xlarge", "g5", "xlarge", catalog.AMD64, catalog.GPU, 5, 4, 16384, 58, 1, "a10g", 22888, 232, 1.006},
		// Four network cards of 15 interfaces: max pods counts the default card only, as EKS does.
		{"p4d.24xlarge", "p4d", "24xlarge", catalog.AMD64, catalog.GPU, 4, 96, 1179648, 737, 8, "a100", 40960, 7450, 32.7726},
		{"t3.large", "t3", "large", catalog.AMD64, catalog.Burstable, 3, 2, 8192, 35, 0, "", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it, ok := c.ByName(tc.name)
			if !ok {
				t.Fatal("missing")
			}
			got := []any{it.Family, it.Size, it.Arch, it.Category, it.Generation, it.VCPU, it.MemoryMiB, it.MaxPods, it.GPUs, it.GPUName, it.GPUMemoryMiB, it.LocalStorageGiB}
			exp := []any{tc.family, tc.size, tc.arch, tc.category, tc.generation, tc.vcpu, tc.memMiB, tc.maxPods, tc.gpus, tc.gpuName, tc.gpuMemMiB, tc.localGiB}
			if !slices.Equal(got, exp) {
				t.Errorf("family size arch category gen vcpu mem pods gpus gpuName gpuMem local =\n%v, want\n%v", got, exp)
			}
			if it.GPUs > 0 && it.GPUManufacturer != "nvidia" {
				t.Errorf("gpu manufacturer %q", it.GPUManufacturer)
			}
			zones := map[string]bool{}
			var od, spot int
			for _, o := range it.Offerings {
				zones[o.Zone] = true
				if !strings.HasPrefix(o.Zone, "us-east-1") {
					t.Errorf("zone %s outside the region", o.Zone)
				}
				switch o.CapacityType {
				case catalog.OnDemand:
					od++
					if o.Price != tc.onDemand {
						t.Errorf("%s on-demand %v, want %v", o.Zone, o.Price, tc.onDemand)
					}
				case catalog.Spot:
					spot++
					if o.Price != 0.00001 { // moto's fixed spot price
						t.Errorf("%s spot %v, want moto's 0.00001", o.Zone, o.Price)
					}
				}
			}
			if len(zones) == 0 || spot != len(zones) {
				t.Errorf("%d zones, %d spot offerings: want spot in every zone", len(zones), spot)
			}
			if tc.onDemand == 0 && od != 0 || tc.onDemand != 0 && od != len(zones) {
				t.Errorf("%d on-demand offerings in %d zones", od, len(zones))
			}
		})
	}

	// The Price List API was asked for Linux, shared tenancy, on-demand prices of the region, over several pages.
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for k, v := range map[string]string{"regionCode": "us-east-1", "operatingSystem": "Linux", "tenancy": "Shared",
		"preInstalledSw": "NA", "capacitystatus": "Used", "licenseModel": "No License required"} {
		if fake.filters[k] != v {
			t.Errorf("pricing filter %s = %q, want %q", k, fake.filters[k], v)
		}
	}
	if fake.requests < 3 {
		t.Errorf("%d GetProducts requests: pagination was not followed", fake.requests)
	}
}

func TestRefreshWithoutInstanceTypeFilter(t *testing.T) {
	// moto answers for its whole instance-type database; this checks paging and that every type it knows
	// converts or is skipped for a stated reason, never failing the refresh. It takes ~7 s (~30 s with -race).
	if testing.Short() {
		t.Skip("the whole moto database is slow; -short skips it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, srv := newFakePricing(t, testPrices)
	opts := testOptions(t, srv.URL)
	opts.InstanceTypes = nil
	opts.Logf = nil
	c, err := Refresh(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.InstanceTypes) < 300 {
		t.Errorf("only %d instance types from moto's database", len(c.InstanceTypes))
	}
	cats := map[catalog.Category]int{}
	for _, it := range c.InstanceTypes {
		cats[it.Category]++
	}
	for _, cat := range []catalog.Category{catalog.General, catalog.Compute, catalog.Memory, catalog.Burstable, catalog.GPU, catalog.Accelerated, catalog.Storage} {
		if cats[cat] == 0 {
			t.Errorf("no %s instance types", cat)
		}
	}
	t.Logf("%d instance types from moto, by category %v", len(c.InstanceTypes), cats)
}

func TestRefreshErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := New(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "region is required") {
		t.Errorf("New without region: %v", err)
	}
	// A pricing endpoint that refuses the call fails the refresh with the API named.
	_, srv := newFakePricing(t, testPrices)
	opts := testOptions(t, srv.URL+"/")
	opts.PricingEndpoint = motoURL(t) // moto has no Price List API
	_, err := Refresh(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), "awsrefresh us-east-1: pricing GetProducts") {
		t.Errorf("refresh against a server without the Price List API: %v", err)
	}
	// An EC2 endpoint nobody listens on fails with the EC2 call named.
	port, perr := moto.FreePort()
	if perr != nil {
		t.Fatal(perr)
	}
	opts = testOptions(t, srv.URL)
	opts.EC2Endpoint = "http://127.0.0.1:" + itoa(port)
	ctx2, cancel2 := context.WithTimeout(ctx, 20*time.Second)
	defer cancel2()
	_, err = Refresh(ctx2, opts)
	if err == nil || !strings.Contains(err.Error(), "DescribeInstanceTypes") {
		t.Errorf("refresh against a closed port: %v", err)
	}
	// No priced type at all is an error rather than an empty (invalid) catalog.
	_, empty := newFakePricing(t, nil)
	opts = testOptions(t, empty.URL)
	opts.InstanceTypes = []string{"no-such.type"}
	_, err = Refresh(ctx, opts)
	if err == nil {
		t.Error("refresh with no instance types succeeded")
	}
}
