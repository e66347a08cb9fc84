package catalog

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadMinimalFile(t *testing.T) {
	c, err := LoadFile(filepath.Join("testdata", "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Region != "test-1" || len(c.InstanceTypes) != 2 {
		t.Fatalf("got region %q with %d types", c.Region, len(c.InstanceTypes))
	}
	m5, ok := c.ByName("m5.large")
	if !ok {
		t.Fatal("ByName(m5.large) not found")
	}
	want := InstanceType{
		Name: "m5.large", Family: "m5", Category: General, Generation: 5, Size: "large", Arch: AMD64,
		VCPU: 2, MemoryMiB: 8192, MaxPods: 29,
		Offerings: []Offering{{"test-1a", OnDemand, 0.096}, {"test-1a", Spot, 0.035}},
	}
	if !reflect.DeepEqual(*m5, want) {
		t.Errorf("m5.large = %+v\nwant %+v", *m5, want)
	}
	if p, ok := c.Price("g5.xlarge", "test-1b", OnDemand); !ok || p != 1.006 {
		t.Errorf("Price(g5.xlarge, test-1b, on-demand) = %v, %v", p, ok)
	}
	if _, ok := c.Price("g5.xlarge", "test-1b", Spot); ok {
		t.Error("Price of an offering that does not exist reported ok")
	}
	if _, ok := c.Price("nope", "test-1b", Spot); ok {
		t.Error("Price of an unknown type reported ok")
	}
	if _, ok := c.ByName("nope"); ok {
		t.Error("ByName(nope) found something")
	}
	if got := c.Zones(); !reflect.DeepEqual(got, []string{"test-1a", "test-1b"}) {
		t.Errorf("Zones = %v", got)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	c := Random(7, 40)
	c.SnapshotDate = "2026-01-31"
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.Write(&again); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	_ = c.Write(&first)
	if first.String() != again.String() {
		t.Error("Write(Load(Write(c))) differs from Write(c)")
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := back.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err != nil {
		t.Fatal(err)
	}
}

// validCatalog is one correct instance type, the base that each validation case breaks in one way.
func validCatalog() *Catalog {
	return &Catalog{Region: "test-1", InstanceTypes: []InstanceType{{
		Name: "m5.large", Family: "m5", Category: General, Generation: 5, Size: "large", Arch: AMD64,
		VCPU: 2, MemoryMiB: 8192, MaxPods: 29,
		Offerings: []Offering{{"test-1a", OnDemand, 0.096}, {"test-1a", Spot, 0.03}},
	}}}
}

func TestValidationErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *Catalog, it *InstanceType)
		wants []string // substrings of the error
	}{
		{"no region", func(c *Catalog, _ *InstanceType) { c.Region = "" }, []string{"region: must not be empty"}},
		{"bad snapshot date", func(c *Catalog, _ *InstanceType) { c.SnapshotDate = "01/02/2026" }, []string{"snapshotDate"}},
		{"no instance types", func(c *Catalog, _ *InstanceType) { c.InstanceTypes = nil }, []string{"instanceTypes: must not be empty"}},
		{"no name", func(_ *Catalog, it *InstanceType) { it.Name = "" }, []string{"instanceTypes[0]: name: must not be empty"}},
		{"duplicate name", func(c *Catalog, it *InstanceType) { c.InstanceTypes = append(c.InstanceTypes, *it) },
			[]string{`instance type "m5.large": name: duplicate of instanceTypes[0]`}},
		{"no family", func(_ *Catalog, it *InstanceType) { it.Family = "" }, []string{`instance type "m5.large": family: must not be empty`}},
		{"no size", func(_ *Catalog, it *InstanceType) { it.Size = "" }, []string{`"m5.large": size: must not be empty`}},
		{"unknown category", func(_ *Catalog, it *InstanceType) { it.Category = "fast" }, []string{`"m5.large": category: unknown category "fast"`}},
		{"negative generation", func(_ *Catalog, it *InstanceType) { it.Generation = -1 }, []string{`"m5.large": generation: must not be negative`}},
		{"unknown arch", func(_ *Catalog, it *InstanceType) { it.Arch = "x86_64" }, []string{`"m5.large": arch: unknown architecture "x86_64"`}},
		{"zero vcpu", func(_ *Catalog, it *InstanceType) { it.VCPU = 0 }, []string{`instance type "m5.large": vcpu: must be positive (got 0)`}},
		{"zero memory", func(_ *Catalog, it *InstanceType) { it.MemoryMiB = 0 }, []string{`"m5.large": memoryMiB: must be positive`}},
		{"zero max pods", func(_ *Catalog, it *InstanceType) { it.MaxPods = 0 }, []string{`"m5.large": maxPods: must be positive`}},
		{"negative local storage", func(_ *Catalog, it *InstanceType) { it.LocalStorageGiB = -5 }, []string{`"m5.large": localStorageGiB: must not be negative`}},
		{"negative gpus", func(_ *Catalog, it *InstanceType) { it.GPUs = -1 }, []string{`"m5.large": gpus: must not be negative`}},
		{"gpu name without gpus", func(_ *Catalog, it *InstanceType) { it.GPUName = "t4" }, []string{`"m5.large": gpus: is 0 but gpuName`}},
		{"gpus without name", func(_ *Catalog, it *InstanceType) { it.GPUs = 1 }, []string{`"m5.large": gpuName: must be set when gpus is 1`}},
		{"negative gpu memory", func(_ *Catalog, it *InstanceType) { it.GPUs, it.GPUName, it.GPUMemoryMiB = 1, "t4", -1 },
			[]string{`"m5.large": gpuMemoryMiB: must not be negative`}},
		{"bad eni", func(_ *Catalog, it *InstanceType) { it.ENI = &ENILimits{0, 1} },
			[]string{`"m5.large": eni.maxInterfaces: must be positive`, `"m5.large": eni.ipv4PerInterface: must be at least 2`}},
		{"no offerings", func(_ *Catalog, it *InstanceType) { it.Offerings = nil }, []string{`"m5.large": offerings: must not be empty`}},
		{"no zone", func(_ *Catalog, it *InstanceType) { it.Offerings[0].Zone = "" }, []string{`"m5.large": offerings[0].zone: must not be empty`}},
		{"unknown capacity type", func(_ *Catalog, it *InstanceType) { it.Offerings[1].CapacityType = "reserved" },
			[]string{`instance type "m5.large": offerings[1].capacityType: unknown capacity type "reserved"`}},
		{"negative price", func(_ *Catalog, it *InstanceType) { it.Offerings[1].Price = -0.1 },
			[]string{`instance type "m5.large": offerings[1].price: must not be negative (got -0.1)`}},
		{"infinite price", func(_ *Catalog, it *InstanceType) { it.Offerings[0].Price = math.Inf(1) }, []string{`offerings[0].price: must be a finite number`}},
		{"duplicate offering", func(_ *Catalog, it *InstanceType) { it.Offerings[1].CapacityType = OnDemand },
			[]string{`"m5.large": offerings[1]: duplicate of offerings[0] (test-1a on-demand)`}},
		{"several problems", func(_ *Catalog, it *InstanceType) { it.VCPU, it.Offerings[0].Price = -2, -1 },
			[]string{`vcpu: must be positive (got -2)`, `offerings[0].price: must not be negative`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validCatalog()
			tc.edit(c, &c.InstanceTypes[0])
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate accepted an invalid catalog")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			// The same problem must surface through Load when the catalog comes from a file, unless it cannot
			// be written as JSON at all.
			if tc.name == "infinite price" {
				return
			}
			data, merr := json.Marshal(c)
			if merr != nil {
				t.Fatal(merr)
			}
			if _, lerr := Load(bytes.NewReader(data)); lerr == nil || !strings.Contains(lerr.Error(), tc.wants[0]) {
				t.Errorf("Load error = %v, want it to contain %q", lerr, tc.wants[0])
			}
		})
	}
	if err := validCatalog().Validate(); err != nil {
		t.Fatalf("the base catalog is invalid: %v", err)
	}
}

func TestLoadRejectsMalformedJSON(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("testdata", "minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(base)
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown top-level field", strings.Replace(doc, `"region"`, `"zone": "x", "region"`, 1), `unknown field "zone"`},
		{"unknown instance type field", strings.Replace(doc, `"vcpu": 2`, `"vcpu": 2, "cores": 1`, 1), `instance type "m5.large": unknown field "cores"`},
		{"misspelt case", strings.Replace(doc, `"vcpu": 4`, `"VCPU": 4`, 1), `instance type "g5.xlarge": unknown field "VCPU" (did you mean "vcpu"?)`},
		{"unknown offering field", strings.Replace(doc, `"price": 1.006`, `"price": 1.006, "currency": "EUR"`, 1),
			`instance type "g5.xlarge": offerings[0]: unknown field "currency"`},
		{"unknown eni field", strings.Replace(doc, `"maxPods": 29,`, `"maxPods": 29, "eni": {"maxInterfaces": 3, "ips": 10},`, 1),
			`instance type "m5.large": eni: unknown field "ips"`},
		{"wrong type", strings.Replace(doc, `"vcpu": 2`, `"vcpu": "2"`, 1), `decode:`},
		{"trailing data", doc + `{}`, `unexpected data after the catalog object`},
		{"syntax error", doc[:len(doc)/2], `decode:`},
		{"not an object", `[]`, `decode:`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadFileErrorNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"region": "x", "instanceTypes": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	if err == nil || !strings.Contains(err.Error(), "catalog "+path+":") {
		t.Errorf("LoadFile error = %v, want it to name %s", err, path)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("LoadFile of a missing file succeeded")
	}
}
