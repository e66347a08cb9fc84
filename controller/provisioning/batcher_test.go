package provisioning

import (
	"context"
	"testing"
	"time"
)

func TestBatcherIdleWindow(t *testing.T) {
	b := NewBatcher(50*time.Millisecond, time.Second)
	start := time.Now()
	b.Trigger()
	go func() {
		for range 5 {
			time.Sleep(20 * time.Millisecond)
			b.Trigger()
		}
	}()
	if !b.Wait(context.Background()) {
		t.Fatal("Wait returned false")
	}
	// Five triggers 20 ms apart keep the 50 ms idle window open for at least 100 ms.
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("batch closed after %v, before the triggers stopped", d)
	}
}

func TestBatcherMaxWindow(t *testing.T) {
	b := NewBatcher(50*time.Millisecond, 200*time.Millisecond)
	stop := make(chan struct{})
	defer close(stop)
	b.Trigger()
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				b.Trigger()
			}
		}
	}()
	start := time.Now()
	if !b.Wait(context.Background()) {
		t.Fatal("Wait returned false")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("batch under constant triggers closed after %v, want about the 200ms max", d)
	}
}

func TestBatcherCancel(t *testing.T) {
	b := NewBatcher(time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	b.Trigger()
	cancel()
	if b.Wait(ctx) {
		t.Error("Wait returned true after cancel")
	}
}
