package provisioning

import (
	"context"
	"sync"
	"time"
)

// Batcher gathers triggers into batches: a batch closes when no trigger came for the idle time or when the
// max time has passed since its first trigger, so a burst of pods is solved once, and a steady trickle is not
// delayed forever.
type Batcher struct {
	idle, max time.Duration

	mu      sync.Mutex
	pending bool
	first   time.Time
	last    time.Time
	wake    chan struct{}
}

// NewBatcher returns a Batcher with the given idle and max windows.
func NewBatcher(idle, max time.Duration) *Batcher {
	if max < idle {
		max = idle
	}
	return &Batcher{idle: idle, max: max, wake: make(chan struct{}, 1)}
}

// Trigger records that something changed and a batch should be solved.
func (b *Batcher) Trigger() {
	b.mu.Lock()
	now := time.Now()
	if !b.pending {
		b.pending = true
		b.first = now
	}
	b.last = now
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Wait blocks until a batch has closed and returns true, or returns false when ctx is done.
func (b *Batcher) Wait(ctx context.Context) bool {
	for {
		b.mu.Lock()
		pending, first, last := b.pending, b.first, b.last
		b.mu.Unlock()
		if !pending {
			select {
			case <-ctx.Done():
				return false
			case <-b.wake:
				continue
			}
		}
		now := time.Now()
		deadline := last.Add(b.idle)
		if hard := first.Add(b.max); hard.Before(deadline) {
			deadline = hard
		}
		if !now.Before(deadline) {
			b.mu.Lock()
			b.pending = false
			b.mu.Unlock()
			return true
		}
		t := time.NewTimer(deadline.Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-b.wake:
			t.Stop()
		case <-t.C:
		}
	}
}
