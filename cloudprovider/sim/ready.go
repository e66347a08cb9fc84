package sim

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// readyTimeout bounds one delayed readiness update.
const readyTimeout = 30 * time.Second

// markReadyLater marks the node Ready after the ReadyDelay, unless Close comes first. Failures are logged with
// the logger of ctx.
func (p *Provider) markReadyLater(ctx context.Context, name string) {
	log := logf.FromContext(ctx).WithValues("node", name)
	p.mu.Lock()
	if p.readying[name] {
		p.mu.Unlock()
		return
	}
	p.readying[name] = true
	p.mu.Unlock()
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		defer func() {
			p.mu.Lock()
			delete(p.readying, name)
			p.mu.Unlock()
		}()
		timer := time.NewTimer(p.opts.ReadyDelay)
		defer timer.Stop()
		select {
		case <-p.ctx.Done():
			return
		case <-timer.C:
		}
		ctx, cancel := context.WithTimeout(logf.IntoContext(p.ctx, log), readyTimeout)
		defer cancel()
		if err := p.markReady(ctx, name); err != nil && p.ctx.Err() == nil {
			log.Error(err, "marking simulated node ready")
		}
	}()
}

// markReady does what the kubelet and the node lifecycle controller would: it sets the Ready condition through
// the status subresource, then removes the node.kubernetes.io/not-ready taint that the TaintNodesByCondition
// admission plugin put on the new Node.
func (p *Provider) markReady(ctx context.Context, name string) error {
	key := client.ObjectKey{Name: name}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := p.client.Get(ctx, key, node); err != nil {
			return err
		}
		setReady(node, metav1.Now())
		return p.client.Status().Update(ctx, node)
	})
	if err != nil {
		return fmt.Errorf("sim: setting node %s Ready: %w", name, err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := &corev1.Node{}
		if err := p.client.Get(ctx, key, node); err != nil {
			return err
		}
		taints, removed := withoutTaint(node.Spec.Taints, corev1.TaintNodeNotReady)
		if !removed {
			return nil
		}
		node.Spec.Taints = taints
		return p.client.Update(ctx, node)
	})
	if err != nil {
		return fmt.Errorf("sim: removing taint %s from node %s: %w", corev1.TaintNodeNotReady, name, err)
	}
	return nil
}

// setReady sets the node's Ready condition to True.
func setReady(node *corev1.Node, now metav1.Time) {
	ready := corev1.NodeCondition{
		Type:               corev1.NodeReady,
		Status:             corev1.ConditionTrue,
		Reason:             "KubeletReady",
		Message:            "the simulated node is ready",
		LastHeartbeatTime:  now,
		LastTransitionTime: now,
	}
	for i, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				ready.LastTransitionTime = c.LastTransitionTime
			}
			node.Status.Conditions[i] = ready
			return
		}
	}
	node.Status.Conditions = append(node.Status.Conditions, ready)
}

// withoutTaint returns the taints without those with the key, and whether there were any.
func withoutTaint(taints []corev1.Taint, key string) ([]corev1.Taint, bool) {
	out := make([]corev1.Taint, 0, len(taints))
	for _, t := range taints {
		if t.Key != key {
			out = append(out, t)
		}
	}
	return out, len(out) != len(taints)
}

// isReady reports whether the node's Ready condition is True.
func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
