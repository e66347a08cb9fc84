// Package unavailable remembers offerings that recently failed with insufficient capacity, so that the
// provisioner leaves them out of its next solves until a TTL runs out (spot capacity comes back; Karpenter uses
// three minutes too).
package unavailable

import (
	"sync"
	"time"

	"github.com/packwright/packwright/controller/metrics"
)

// DefaultTTL is how long an offering stays unavailable after a capacity error.
const DefaultTTL = 3 * time.Minute

// Key names an offering. An empty field matches every value, so {CapacityType: "spot", Zone: "us-east-1a"} marks
// all spot capacity in a zone.
type Key struct {
	InstanceType, Zone, CapacityType string
}

// Offerings is a set of unavailable offerings with expiry. The zero value is not usable; call New. It is safe
// for concurrent use.
type Offerings struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	expires map[Key]time.Time
}

// New returns an empty set whose entries last ttl (DefaultTTL when ttl <= 0).
func New(ttl time.Duration) *Offerings {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Offerings{ttl: ttl, now: time.Now, expires: map[Key]time.Time{}}
}

// MarkUnavailable records k as unavailable for the TTL from now.
func (o *Offerings) MarkUnavailable(k Key) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expires[k] = o.now().Add(o.ttl)
	o.gaugeLocked()
}

// IsUnavailable reports whether an unexpired entry covers the offering.
func (o *Offerings) IsUnavailable(instanceType, zone, capacityType string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	for _, its := range [2]string{instanceType, ""} {
		for _, z := range [2]string{zone, ""} {
			for _, ct := range [2]string{capacityType, ""} {
				if exp, ok := o.expires[Key{its, z, ct}]; ok {
					if now.Before(exp) {
						return true
					}
					delete(o.expires, Key{its, z, ct})
				}
			}
		}
	}
	return false
}

// Len returns the number of unexpired entries.
func (o *Offerings) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gaugeLocked()
}

func (o *Offerings) gaugeLocked() int {
	now := o.now()
	for k, exp := range o.expires {
		if !now.Before(exp) {
			delete(o.expires, k)
		}
	}
	metrics.OfferingsUnavailable.Set(float64(len(o.expires)))
	return len(o.expires)
}
