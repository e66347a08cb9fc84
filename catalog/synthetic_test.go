package catalog

import (
	"bytes"
	"slices"
	"testing"
)

func TestKwokLike(t *testing.T) {
	c := KwokLike()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if want := 3 * len(KwokSizes); len(c.InstanceTypes) != want {
		t.Fatalf("%d instance types, want %d", len(c.InstanceTypes), want)
	}
	if len(KwokSizes) != 12 {
		t.Errorf("KwokSizes has %d sizes, want 12", len(KwokSizes))
	}
	if !slices.Equal(c.Zones(), KwokZones) {
		t.Errorf("zones = %v", c.Zones())
	}
	perFamily := map[string]int{}
	for _, it := range c.InstanceTypes {
		perFamily[it.Family]++
		if len(it.Offerings) != 6 {
			t.Errorf("%s: %d offerings, want 6 (3 zones × on-demand/spot)", it.Name, len(it.Offerings))
		}
		wantGiB := map[string]int64{"c": 2, "m": 4, "r": 8}[it.Family]
		if it.MemoryMiB != int64(it.VCPU)*wantGiB*1024 {
			t.Errorf("%s: %d MiB for %d vCPU", it.Name, it.MemoryMiB, it.VCPU)
		}
		od := SyntheticOnDemandPrice(it.VCPU, it.MemoryMiB, 0)
		for _, o := range it.Offerings {
			switch o.CapacityType {
			case OnDemand:
				if o.Price != od {
					t.Errorf("%s %s on-demand %v, want %v", it.Name, o.Zone, o.Price, od)
				}
			case Spot:
				if r := o.Price / od; r < SyntheticSpotMin-0.001 || r > SyntheticSpotMax+0.001 {
					t.Errorf("%s %s spot ratio %v", it.Name, o.Zone, r)
				}
			}
		}
	}
	for _, f := range []string{"c", "m", "r"} {
		if perFamily[f] != 12 {
			t.Errorf("family %s has %d sizes, want 12", f, perFamily[f])
		}
	}
	// m-4x: 4 vCPU × 0.036 + 16 GiB × 0.003 = 0.192.
	if p, ok := c.Price("m-4x", "kwok-a", OnDemand); !ok || p != 0.192 {
		t.Errorf("m-4x on-demand = %v, %v; want 0.192", p, ok)
	}
	// Spot prices differ between zones (the fraction is per zone), which gives zone choice meaning.
	a, _ := c.Price("m-4x", "kwok-a", Spot)
	b, _ := c.Price("m-4x", "kwok-b", Spot)
	cc, _ := c.Price("m-4x", "kwok-c", Spot)
	if a == b && b == cc {
		t.Errorf("spot prices equal in every zone: %v", a)
	}
}

func TestRandomReproducible(t *testing.T) {
	write := func(c *Catalog) string {
		var buf bytes.Buffer
		if err := c.Write(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, n := range []int{1, 10, 300} {
		a, b := Random(42, n), Random(42, n)
		if write(a) != write(b) {
			t.Errorf("Random(42, %d) differs between calls", n)
		}
		if len(a.InstanceTypes) != n {
			t.Errorf("Random(42, %d) has %d types", n, len(a.InstanceTypes))
		}
		if err := a.Validate(); err != nil {
			t.Errorf("Random(42, %d): %v", n, err)
		}
	}
	if write(Random(1, 50)) == write(Random(2, 50)) {
		t.Error("different seeds gave the same catalog")
	}
	// A fixed fingerprint guards against an accidental change of the generator, which would silently change
	// every benchmark that uses it.
	c := Random(1, 3)
	var got []string
	for _, it := range c.InstanceTypes {
		got = append(got, it.Name)
	}
	if want := []string{"m7g.32x-0", "r7g.24x-1", "p1.96x-2"}; !slices.Equal(got, want) {
		t.Errorf("Random(1, 3) names = %v, want %v", got, want)
	}
	if len(Random(5, 0).InstanceTypes) != 0 {
		t.Error("Random(_, 0) not empty")
	}
}

func TestRandomIsHeterogeneous(t *testing.T) {
	c := Random(3, 200)
	cats, archs := map[Category]bool{}, map[string]bool{}
	spot, gpu := 0, 0
	for _, it := range c.InstanceTypes {
		cats[it.Category] = true
		archs[it.Arch] = true
		if it.GPUs > 0 {
			gpu++
		}
		for _, o := range it.Offerings {
			if o.CapacityType == Spot {
				spot++
			}
		}
	}
	if len(cats) < 4 || len(archs) != 2 || spot == 0 || gpu == 0 {
		t.Errorf("categories %v archs %v spot %d gpu %d: not heterogeneous", cats, archs, spot, gpu)
	}
}
