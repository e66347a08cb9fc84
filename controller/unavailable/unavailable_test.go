package unavailable

import (
	"testing"
	"time"
)

func TestOfferings(t *testing.T) {
	now := time.Unix(1000, 0)
	o := New(time.Minute)
	o.now = func() time.Time { return now }
	o.MarkUnavailable(Key{InstanceType: "m5.large", Zone: "a", CapacityType: "spot"})
	o.MarkUnavailable(Key{CapacityType: "spot", Zone: "b"})
	tests := []struct {
		it, zone, ct string
		after        time.Duration
		want         bool
	}{
		{"m5.large", "a", "spot", 0, true},
		{"m5.large", "a", "on-demand", 0, false},
		{"m5.xlarge", "a", "spot", 0, false},
		{"m5.xlarge", "b", "spot", 0, true},
		{"m5.xlarge", "b", "on-demand", 0, false},
		{"m5.large", "a", "spot", 59 * time.Second, true},
		{"m5.large", "a", "spot", 61 * time.Second, false},
		{"m5.xlarge", "b", "spot", 61 * time.Second, false},
	}
	for _, tt := range tests {
		now = time.Unix(1000, 0).Add(tt.after)
		if got := o.IsUnavailable(tt.it, tt.zone, tt.ct); got != tt.want {
			t.Errorf("after %v IsUnavailable(%s, %s, %s) = %v, want %v", tt.after, tt.it, tt.zone, tt.ct, got, tt.want)
		}
	}
	if n := o.Len(); n != 0 {
		t.Errorf("Len after expiry = %d, want 0", n)
	}
}
