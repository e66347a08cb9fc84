package catalog

import (
	"maps"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

func TestOfferingsFilterByPoolRequirements(t *testing.T) {
	c, err := Embedded("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Offerings(model.NodePool{Name: "all"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, it := range c.InstanceTypes {
		total += len(it.Offerings)
	}
	if len(all) != total {
		t.Fatalf("a pool without requirements got %d offerings, want all %d", len(all), total)
	}
	for _, tc := range []struct {
		name  string
		reqs  model.Requirements
		check func(o model.Offering) bool
	}{
		{
			name: "karpenter spot",
			reqs: model.Requirements{{Key: KarpenterCapacityType, Operator: model.OpIn, Values: []string{Spot}}},
			check: func(o model.Offering) bool {
				return o.CapacityType == Spot
			},
		},
		{
			name: "spot arm64",
			reqs: model.Requirements{
				{Key: KarpenterCapacityType, Operator: model.OpIn, Values: []string{Spot}},
				{Key: LabelArch, Operator: model.OpIn, Values: []string{ARM64}},
			},
			check: func(o model.Offering) bool {
				it, _ := c.ByName(o.InstanceType)
				return o.CapacityType == Spot && it.Arch == ARM64 && o.Labels[LabelArch] == ARM64
			},
		},
		{
			name: "karpenter category and cpu",
			reqs: model.Requirements{
				{Key: KarpenterInstanceCategory, Operator: model.OpIn, Values: []string{"c", "m"}},
				{Key: KarpenterInstanceCPU, Operator: model.OpGt, Values: []string{"15"}},
				{Key: LabelZone, Operator: model.OpNotIn, Values: []string{"us-east-1a"}},
			},
			check: func(o model.Offering) bool {
				it, _ := c.ByName(o.InstanceType)
				return (it.Category == General || it.Category == Compute) && it.VCPU >= 16 && o.Zone != "us-east-1a"
			},
		},
		{
			name: "gpu",
			reqs: model.Requirements{{Key: KarpenterInstanceGPUName, Operator: model.OpIn, Values: []string{"a10g"}}},
			check: func(o model.Offering) bool {
				return strings.HasPrefix(o.InstanceType, "g5.")
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := model.NodePool{Name: "p", Requirements: tc.reqs}
			got, err := c.Offerings(pool, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatal("no offerings")
			}
			// Every offering the filter kept satisfies the requirement, and every one it dropped violates it.
			kept := map[string]bool{}
			for _, o := range got {
				kept[o.ID] = true
				if !tc.check(o) {
					t.Errorf("offering %s should have been filtered out", o.ID)
				}
			}
			for _, o := range all {
				id := "p" + strings.TrimPrefix(o.ID, "all")
				if !kept[id] && tc.check(o) {
					t.Errorf("offering %s was filtered out but satisfies the requirements", id)
				}
			}
			t.Logf("%d of %d offerings", len(got), len(all))
		})
	}
}

func TestOfferingContents(t *testing.T) {
	c, err := LoadFile("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	taints := []model.Taint{{Key: "team", Value: "ml", Effect: model.NoSchedule}}
	pool := model.NodePool{Name: "gpu", Taints: taints, Labels: map[string]string{"team": "ml"},
		Requirements: model.Requirements{{Key: LabelInstanceGPUCount, Operator: model.OpGt, Values: []string{"0"}}}}
	offs, err := c.Offerings(pool, &KubeletConfig{MaxPods: ptr(int32(110))})
	if err != nil {
		t.Fatal(err)
	}
	if len(offs) != 1 {
		t.Fatalf("got %d offerings, want 1 (g5.xlarge on-demand)", len(offs))
	}
	o := offs[0]
	if o.ID != "gpu/g5.xlarge/test-1b/on-demand" || o.NodePool != "gpu" || o.InstanceType != "g5.xlarge" ||
		o.Zone != "test-1b" || o.CapacityType != OnDemand || o.Price != 1.006 {
		t.Errorf("offering = %+v", o)
	}
	it, _ := c.ByName("g5.xlarge")
	kc := &KubeletConfig{MaxPods: ptr(int32(110))}
	if !maps.Equal(o.Capacity, it.Capacity(kc)) || !maps.Equal(o.Allocatable, it.Allocatable(kc)) {
		t.Errorf("capacity %v allocatable %v", o.Capacity, o.Allocatable)
	}
	if o.Allocatable[model.Pods] != 110 || o.Allocatable[model.GPU] != 1 {
		t.Errorf("allocatable pods %d gpus %d", o.Allocatable[model.Pods], o.Allocatable[model.GPU])
	}
	if len(o.Taints) != 1 || o.Taints[0] != taints[0] {
		t.Errorf("taints = %v", o.Taints)
	}
	wantLabels := map[string]string{
		LabelInstanceType:           "g5.xlarge",
		LabelZone:                   "test-1b",
		LabelRegion:                 "test-1",
		LabelArch:                   AMD64,
		LabelOS:                     "linux",
		LabelCapacityType:           OnDemand,
		LabelNodePool:               "gpu",
		LabelInstanceFamily:         "g5",
		LabelInstanceSize:           "xlarge",
		LabelInstanceCategory:       "gpu",
		LabelInstanceGeneration:     "5",
		LabelInstanceCPU:            "4",
		LabelInstanceMemory:         "16384",
		LabelInstanceGPUCount:       "1",
		LabelInstanceGPUName:        "a10g",
		LabelInstanceGPUMemory:      "22888",
		KarpenterCapacityType:       OnDemand,
		KarpenterNodePool:           "gpu",
		KarpenterInstanceFamily:     "g5",
		KarpenterInstanceSize:       "xlarge",
		KarpenterInstanceCategory:   "g",
		KarpenterInstanceGeneration: "5",
		KarpenterInstanceCPU:        "4",
		KarpenterInstanceMemory:     "16384",
		KarpenterInstanceGPUCount:   "1",
		KarpenterInstanceGPUName:    "a10g",
		KarpenterInstanceGPUMemory:  "22888",
		"team":                      "ml",
	}
	if !maps.Equal(o.Labels, wantLabels) {
		for k, v := range wantLabels {
			if o.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, o.Labels[k], v)
			}
		}
		for k, v := range o.Labels {
			if _, ok := wantLabels[k]; !ok {
				t.Errorf("unexpected label %s=%q", k, v)
			}
		}
	}
	// Offerings must not share maps or slices: the cluster package subtracts DaemonSet overhead in place.
	all, _ := c.Offerings(model.NodePool{Name: "x"}, nil)
	all[0].Allocatable[model.CPU] = -1
	all[0].Labels["x"] = "y"
	again, _ := c.Offerings(model.NodePool{Name: "x"}, nil)
	if again[0].Allocatable[model.CPU] == -1 || all[1].Allocatable[model.CPU] == -1 || again[0].Labels["x"] == "y" {
		t.Error("offerings share state")
	}
}

func TestOfferingsOrderAndNonGPULabels(t *testing.T) {
	c, err := LoadFile("testdata/minimal.json")
	if err != nil {
		t.Fatal(err)
	}
	offs, err := c.Offerings(model.NodePool{Name: "d"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range offs {
		ids = append(ids, o.ID)
	}
	want := "d/g5.xlarge/test-1b/on-demand d/m5.large/test-1a/on-demand d/m5.large/test-1a/spot"
	if strings.Join(ids, " ") != want {
		t.Errorf("IDs = %v, want %s", ids, want)
	}
	m5 := offs[1].Labels
	if m5[LabelInstanceGPUCount] != "0" {
		t.Errorf("packwright gpu-count on a CPU type = %q, want 0", m5[LabelInstanceGPUCount])
	}
	for _, k := range []string{KarpenterInstanceGPUCount, KarpenterInstanceGPUName, LabelInstanceGPUName, KarpenterInstanceLocalNVMe} {
		if v, ok := m5[k]; ok {
			t.Errorf("label %s=%q on a type without GPUs or local storage", k, v)
		}
	}
}

func TestOfferingsErrors(t *testing.T) {
	c := validCatalog()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		pool    model.NodePool
		kubelet *KubeletConfig
		want    string
	}{
		{"no pool name", model.NodePool{}, nil, "no name"},
		{"label clash", model.NodePool{Name: "p", Labels: map[string]string{LabelZone: "elsewhere"}}, nil,
			"node pool p: label topology.kubernetes.io/zone is set by the catalog"},
		{"bad requirement", model.NodePool{Name: "p", Requirements: model.Requirements{{Key: LabelArch, Operator: model.OpIn}}}, nil,
			"node pool p: requirement on"},
		{"bad max pods", model.NodePool{Name: "p"}, &KubeletConfig{MaxPods: ptr(int32(0))}, "maxPods must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Offerings(tc.pool, tc.kubelet)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKarpenterCategory(t *testing.T) {
	for fam, want := range map[string]string{"m5": "m", "m7i-flex": "m", "g4dn": "g", "inf2": "inf", "x2idn": "x", "mac": "mac"} {
		if got := KarpenterCategory(fam); got != want {
			t.Errorf("KarpenterCategory(%q) = %q, want %q", fam, got, want)
		}
	}
}
