package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// requiredFamilies must be in every embedded region.
var requiredFamilies = []string{
	"m5", "m6i", "m6a", "m7i", "m7g", "c5", "c6i", "c6a", "c7i", "c7g",
	"r5", "r6i", "r7i", "r7g", "t3", "g4dn", "g5", "g6", "p4d",
}

func TestRegions(t *testing.T) {
	want := []string{"eu-west-1", "us-east-1", "us-west-2"}
	if got := Regions(); !slices.Equal(got, want) {
		t.Fatalf("Regions() = %v, want %v", got, want)
	}
}

func TestEmbeddedCatalogs(t *testing.T) {
	for _, region := range Regions() {
		t.Run(region, func(t *testing.T) {
			c, err := Embedded(region)
			if err != nil {
				t.Fatal(err)
			}
			if c.Region != region {
				t.Errorf("region = %q", c.Region)
			}
			if c.SnapshotDate == "" || c.Source == "" {
				t.Error("snapshotDate and source must be stamped")
			}
			if n := len(c.InstanceTypes); n < 250 {
				t.Errorf("%d instance types, want at least 250", n)
			}
			fams := c.Families()
			for _, f := range requiredFamilies {
				if !slices.Contains(fams, f) {
					t.Errorf("family %s missing", f)
				}
			}
			wantZones := []string{region + "a", region + "b", region + "c"}
			if got := c.Zones(); !slices.Equal(got, wantZones) {
				t.Errorf("zones = %v, want %v", got, wantZones)
			}
			var spot, od, arm, gpu int
			for _, it := range c.InstanceTypes {
				if it.ENI == nil || it.ENI.MaxPods() != it.MaxPods {
					t.Errorf("%s: maxPods %d does not follow its ENI limits %+v", it.Name, it.MaxPods, it.ENI)
				}
				hasSpot, hasOD := false, false
				for _, o := range it.Offerings {
					if o.Price <= 0 {
						t.Errorf("%s %s %s: price %v", it.Name, o.Zone, o.CapacityType, o.Price)
					}
					switch o.CapacityType {
					case Spot:
						spot++
						hasSpot = true
						if odp, _ := c.Price(it.Name, o.Zone, OnDemand); o.Price >= odp {
							t.Errorf("%s %s: spot %v not below on-demand %v", it.Name, o.Zone, o.Price, odp)
						}
					case OnDemand:
						od++
						hasOD = true
					}
				}
				if !hasSpot || !hasOD {
					t.Errorf("%s: want both spot and on-demand offerings", it.Name)
				}
				if it.Arch == ARM64 {
					arm++
				}
				if it.GPUs > 0 {
					gpu++
				}
				// Sizes run from large up; nothing smaller is embedded.
				if strings.Contains(it.Size, "medium") || strings.Contains(it.Size, "small") || strings.Contains(it.Size, "micro") {
					t.Errorf("%s: size below large", it.Name)
				}
			}
			if spot == 0 || od == 0 || arm == 0 || gpu == 0 {
				t.Errorf("spot=%d on-demand=%d arm64=%d gpu=%d offerings/types, want all > 0", spot, od, arm, gpu)
			}
			t.Logf("%s: %d instance types, %d families, %d on-demand and %d spot offerings", region, len(c.InstanceTypes), len(fams), od, spot)
		})
	}
}

func TestEmbeddedFacts(t *testing.T) {
	c, err := Embedded("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		vcpu    int
		memMiB  int64
		maxPods int32
		gpus    int
		od      float64
	}{
		{"m5.large", 2, 8192, 29, 0, 0.096},
		{"m5.24xlarge", 96, 393216, 737, 0, 4.608},
		{"c5.9xlarge", 36, 73728, 234, 0, 1.53},
		{"t3.large", 2, 8192, 35, 0, 0.0832},
		{"m7g.16xlarge", 64, 262144, 737, 0, 2.6112},
		{"g4dn.xlarge", 4, 16384, 29, 1, 0.526},
		{"g5.48xlarge", 192, 786432, 345, 8, 16.288},
		{"p4d.24xlarge", 96, 1179648, 737, 8, 32.7726},
	} {
		it, ok := c.ByName(tc.name)
		if !ok {
			t.Errorf("%s missing", tc.name)
			continue
		}
		if it.VCPU != tc.vcpu || it.MemoryMiB != tc.memMiB || it.MaxPods != tc.maxPods || it.GPUs != tc.gpus {
			t.Errorf("%s = %d vCPU %d MiB %d pods %d GPUs, want %d %d %d %d", tc.name, it.VCPU, it.MemoryMiB, it.MaxPods, it.GPUs,
				tc.vcpu, tc.memMiB, tc.maxPods, tc.gpus)
		}
		zone := it.Offerings[0].Zone
		if p, ok := c.Price(tc.name, zone, OnDemand); !ok || p != tc.od {
			t.Errorf("%s on-demand in %s = %v, want %v", tc.name, zone, p, tc.od)
		}
	}
}

func TestEmbeddedReturnsCopies(t *testing.T) {
	a, err := Embedded("us-west-2")
	if err != nil {
		t.Fatal(err)
	}
	a.InstanceTypes[0].Offerings[0].Price = 1e6
	a.InstanceTypes = a.InstanceTypes[:1]
	b, err := Embedded("us-west-2")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.InstanceTypes) < 250 || b.InstanceTypes[0].Offerings[0].Price == 1e6 {
		t.Error("a change to one Embedded result leaked into the next")
	}
}

func TestEmbeddedUnknownRegion(t *testing.T) {
	_, err := Embedded("mars-north-1")
	if err == nil {
		t.Fatal("unknown region accepted")
	}
	for _, w := range []string{"mars-north-1", "unknown region", "eu-west-1, us-east-1, us-west-2"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestResolve(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mine.json")
	data, err := os.ReadFile(filepath.Join("testdata", "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec       string
		wantRegion string
		wantErr    string
	}{
		{spec: "aws/us-east-1", wantRegion: "us-east-1"},
		{spec: "aws/eu-west-1", wantRegion: "eu-west-1"},
		{spec: "synthetic/kwok", wantRegion: KwokRegion},
		{spec: file, wantRegion: "test-1"},
		{spec: "testdata/minimal.json", wantRegion: "test-1"},
		{spec: "aws/ap-south-9", wantErr: "known"},
		{spec: "", wantErr: "empty spec"},
		{spec: "no/such/file.json", wantErr: "not a readable file"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			c, err := Resolve(tc.spec)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve(%q) error = %v, want %q", tc.spec, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "us-east-1") {
					t.Errorf("error %q does not list the known regions", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Region != tc.wantRegion {
				t.Errorf("region = %q, want %q", c.Region, tc.wantRegion)
			}
		})
	}
}

func TestEmbeddedJSON(t *testing.T) {
	data, err := EmbeddedJSON("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(strings.NewReader(string(data))); err != nil {
		t.Fatal(err)
	}
	if _, err := EmbeddedJSON("nowhere"); err == nil {
		t.Error("EmbeddedJSON(nowhere) succeeded")
	}
}
