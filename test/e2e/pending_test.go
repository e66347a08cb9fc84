package e2e

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
)

// pendingTracker measures, while it runs, how long the scenario's pods stay pending (from creation until the
// scheduler binds them, or until now for those still pending) and how long NodeClaims take to launch (from
// creation until Initialized): disruption must not leave a pod pending longer than a launch. Timestamps of
// the API server have one-second resolution.
type pendingTracker struct {
	mu         sync.Mutex
	maxPending time.Duration
	podPending string
	maxLaunch  time.Duration
	seen       map[string]bool // UIDs of the pods created while tracking
	done       chan struct{}
}

func trackPending(ctx context.Context, scenario string) (*pendingTracker, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	tr := &pendingTracker{done: make(chan struct{}), seen: map[string]bool{}}
	started := time.Now()
	go func() {
		defer close(tr.done)
		for ctx.Err() == nil {
			tr.sample(ctx, scenario, started)
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return tr, func() { cancel(); <-tr.done }
}

func (tr *pendingTracker) sample(ctx context.Context, scenario string, started time.Time) {
	var pods corev1.PodList
	var claims v1.NodeClaimList
	if harness.Client.List(ctx, &pods, client.MatchingLabels{scenarioLabel: scenario}) != nil || harness.Client.List(ctx, &claims) != nil {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, p := range pods.Items {
		if p.CreationTimestamp.Time.Before(started.Truncate(time.Second)) {
			continue // pending before tracking began (the initial provisioning)
		}
		tr.seen[string(p.UID)] = true
		d := time.Since(p.CreationTimestamp.Time)
		if p.Spec.NodeName != "" {
			d = 0
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
					d = c.LastTransitionTime.Sub(p.CreationTimestamp.Time)
				}
			}
		}
		if d > tr.maxPending {
			tr.maxPending, tr.podPending = d, p.Name
		}
	}
	for _, cl := range claims.Items {
		for _, c := range cl.Status.Conditions {
			if c.Type == v1.ConditionTypeInitialized && c.Status == "True" {
				tr.maxLaunch = max(tr.maxLaunch, c.LastTransitionTime.Sub(cl.CreationTimestamp.Time))
			}
		}
	}
}

// result returns the longest pending time (and the pod), the longest launch seen, and how many pods were
// created while tracking.
func (tr *pendingTracker) result() (time.Duration, string, time.Duration, int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.maxPending, tr.podPending, tr.maxLaunch, len(tr.seen)
}
