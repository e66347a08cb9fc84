package model

import (
	"errors"
	"math"
	"testing"
)

func TestResourcesArithmetic(t *testing.T) {
	a := Resources{CPU: 1500, Memory: 2 * Gi}
	b := Resources{CPU: 500, Pods: 3}
	if got, want := a.Add(b), (Resources{CPU: 2000, Memory: 2 * Gi, Pods: 3}); !got.Equal(want) {
		t.Errorf("Add = %v, want %v", got, want)
	}
	if got, want := a.Sub(b), (Resources{CPU: 1000, Memory: 2 * Gi, Pods: -3}); !got.Equal(want) {
		t.Errorf("Sub = %v, want %v", got, want)
	}
	if got, want := a.Scale(3), (Resources{CPU: 4500, Memory: 6 * Gi}); !got.Equal(want) {
		t.Errorf("Scale = %v, want %v", got, want)
	}
	if got, want := a.Max(Resources{CPU: 100, Memory: 4 * Gi, GPU: 1}), (Resources{CPU: 1500, Memory: 4 * Gi, GPU: 1}); !got.Equal(want) {
		t.Errorf("Max = %v, want %v", got, want)
	}
	if a[CPU] != 1500 || len(a) != 2 {
		t.Errorf("operations mutated their receiver: %v", a)
	}
	var nilRes Resources
	if !nilRes.Add(nil).IsZero() || !nilRes.IsZero() || nilRes.Clone() != nil {
		t.Error("nil Resources should behave as zero")
	}
}

func TestResourcesSaturate(t *testing.T) {
	const max, min = math.MaxInt64, math.MinInt64
	tests := []struct {
		name string
		got  int64
		want int64
	}{
		{"add overflow", Resources{CPU: max - 1}.Add(Resources{CPU: 5})[CPU], max},
		{"add underflow", Resources{CPU: min + 1}.Add(Resources{CPU: -5})[CPU], min},
		{"sub overflow", Resources{CPU: max}.Sub(Resources{CPU: -1})[CPU], max},
		{"sub underflow", Resources{CPU: min}.Sub(Resources{CPU: 1})[CPU], min},
		{"sub minint", Resources{CPU: 0}.Sub(Resources{CPU: min})[CPU], max},
		{"scale overflow", Resources{Memory: 1 << 40}.Scale(1 << 30)[Memory], max},
		{"scale negative overflow", Resources{Memory: 1 << 40}.Scale(-(1 << 30))[Memory], min},
		{"scale neg*neg", Resources{Memory: -(1 << 40)}.Scale(-(1 << 30))[Memory], max},
		{"scale minint by -1", Resources{Memory: min}.Scale(-1)[Memory], max},
		{"scale to minint exactly", Resources{Memory: -(1 << 62)}.Scale(2)[Memory], min},
		{"scale exact", Resources{Memory: 3}.Scale(-4)[Memory], -12},
		{"scale zero", Resources{Memory: max}.Scale(0)[Memory], 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, tt.got, tt.want)
		}
	}
}

func TestResourcesChecked(t *testing.T) {
	if _, err := (Resources{CPU: math.MaxInt64 / 2}).ScaleChecked(3); !errors.Is(err, ErrOverflow) {
		t.Errorf("ScaleChecked overflow: err = %v, want ErrOverflow", err)
	}
	if r, err := (Resources{CPU: 7}).ScaleChecked(6); err != nil || r[CPU] != 42 {
		t.Errorf("ScaleChecked = %v, %v", r, err)
	}
	if _, err := (Resources{CPU: math.MaxInt64}).AddChecked(Resources{CPU: 1}); !errors.Is(err, ErrOverflow) {
		t.Errorf("AddChecked overflow: err = %v, want ErrOverflow", err)
	}
	if r, err := Resources(nil).AddChecked(Resources{CPU: 1}); err != nil || r[CPU] != 1 {
		t.Errorf("AddChecked = %v, %v", r, err)
	}
}

func TestResourcesFits(t *testing.T) {
	avail := Resources{CPU: 2000, Memory: 4 * Gi, Pods: 10}
	tests := []struct {
		name string
		req  Resources
		want bool
	}{
		{"exact", Resources{CPU: 2000, Memory: 4 * Gi, Pods: 10}, true},
		{"under", Resources{CPU: 1}, true},
		{"cpu over", Resources{CPU: 2001}, false},
		{"absent resource requested", Resources{GPU: 1}, false},
		{"absent resource requested zero", Resources{GPU: 0}, true},
		{"empty", nil, true},
	}
	for _, tt := range tests {
		if got := tt.req.Fits(avail); got != tt.want {
			t.Errorf("%s: Fits = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := (Resources{CPU: 3000, GPU: 1, Memory: 1}).Exceeds(avail); len(got) != 2 || got[0] != CPU || got[1] != GPU {
		t.Errorf("Exceeds = %v, want [cpu nvidia.com/gpu]", got)
	}
}

func TestResourcesString(t *testing.T) {
	tests := []struct {
		r    Resources
		want string
	}{
		{Resources{CPU: 1500, Memory: 2 * Gi, Pods: 3}, "{cpu: 1500m, memory: 2Gi, pods: 3}"},
		{Resources{CPU: 2000, Memory: 1536 * Mi}, "{cpu: 2, memory: 1536Mi}"},
		{Resources{Memory: 15834532 * Ki, GPU: 1, "example.com/fpga": 2}, "{memory: 15.1Gi, example.com/fpga: 2, nvidia.com/gpu: 1}"},
		{Resources{EphemeralStorage: 1000, Memory: 3 * Mi / 2}, "{memory: 1.5Mi, ephemeral-storage: 1000}"},
		{Resources{CPU: -250}, "{cpu: -250m}"},
		{nil, "{}"},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestResourcesCloneIndependent(t *testing.T) {
	a := Resources{CPU: 1}
	b := a.Clone()
	b[CPU] = 2
	if a[CPU] != 1 {
		t.Error("Clone shares memory")
	}
}
