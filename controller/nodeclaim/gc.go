package nodeclaim

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/controller/metrics"
)

// GarbageCollector terminates instances that no NodeClaim owns (a launch whose claim was deleted before its
// status was written, a claim deleted by hand with its finalizer removed) and deletes NodeClaims whose instance
// is gone (for example reclaimed spot). An orphan must be seen twice in a row, one interval apart, before it is
// acted on, so that a launch under way is never mistaken for one.
type GarbageCollector struct {
	client   client.Client
	cloud    cloudprovider.CloudProvider
	recorder record.EventRecorder
	interval time.Duration

	suspects map[string]bool // providerIDs (instances) and claim names seen orphaned at the previous pass
}

// NeedLeaderElection says that only the leader collects garbage.
func (g *GarbageCollector) NeedLeaderElection() bool { return true }

// Start runs a pass every interval until ctx is done.
func (g *GarbageCollector) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("garbage-collection")
	t := time.NewTicker(g.interval)
	defer t.Stop()
	for {
		// The first pass runs at once: it only records suspects (an orphan needs two sightings), and it lets a
		// provider that took over from a restarted controller see its instances early.
		if err := g.Collect(ctx); err != nil {
			logger.Error(err, "garbage collection failed; will retry")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Collect runs one pass and updates the NodeClaims-by-phase gauge.
func (g *GarbageCollector) Collect(ctx context.Context) error {
	var claims apiv1.NodeClaimList
	if err := g.client.List(ctx, &claims); err != nil {
		return err
	}
	phases := map[string]int{"pending": 0, "launched": 0, "registered": 0, "initialized": 0, "terminating": 0}
	byName := map[string]*apiv1.NodeClaim{}
	byProvider := map[string]bool{}
	for i := range claims.Items {
		c := &claims.Items[i]
		byName[c.Name] = c
		if c.Status.ProviderID != "" {
			byProvider[c.Status.ProviderID] = true
		}
		phases[phase(c)]++
	}
	for p, n := range phases {
		metrics.NodeClaims.WithLabelValues(p).Set(float64(n))
	}
	instances, err := g.cloud.List(ctx)
	if err != nil {
		metrics.CloudProviderErrors.WithLabelValues(g.cloud.Name(), "List", "other").Inc()
		return err
	}
	suspects := map[string]bool{}
	alive := map[string]bool{}
	for _, inst := range instances {
		alive[inst.Status.ProviderID] = true
		if byProvider[inst.Status.ProviderID] || byName[inst.Name] != nil {
			continue
		}
		id := inst.Status.ProviderID
		if !g.suspects[id] {
			suspects[id] = true
			continue
		}
		if err := g.cloud.Delete(ctx, inst); cloudprovider.IgnoreNodeClaimNotFound(err) != nil {
			metrics.CloudProviderErrors.WithLabelValues(g.cloud.Name(), "Delete", "other").Inc()
			log.FromContext(ctx).Error(err, "terminate orphaned instance", "providerID", id)
			continue
		}
		metrics.NodesTerminated.WithLabelValues("garbage-collected").Inc()
		log.FromContext(ctx).Info("terminated instance without nodeclaim", "providerID", id)
	}
	for _, c := range byName {
		if c.DeletionTimestamp != nil || c.Status.ProviderID == "" || alive[c.Status.ProviderID] {
			continue
		}
		key := "claim/" + c.Name
		if !g.suspects[key] {
			suspects[key] = true
			continue
		}
		if g.recorder != nil {
			g.recorder.Eventf(c, corev1.EventTypeWarning, "InstanceGone", "Instance %s no longer exists, deleting", c.Status.ProviderID)
		}
		patch := client.MergeFrom(c.DeepCopy())
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[TerminationReasonAnnotationKey] = "instance-gone"
		if err := g.client.Patch(ctx, c, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
		if err := g.client.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	g.suspects = suspects
	return nil
}

// phase names a claim's lifecycle phase for the gauge.
func phase(c *apiv1.NodeClaim) string {
	switch {
	case c.DeletionTimestamp != nil:
		return "terminating"
	case apiv1.IsConditionTrue(c.Status.Conditions, apiv1.ConditionTypeInitialized):
		return "initialized"
	case apiv1.IsConditionTrue(c.Status.Conditions, apiv1.ConditionTypeRegistered):
		return "registered"
	case apiv1.IsConditionTrue(c.Status.Conditions, apiv1.ConditionTypeLaunched):
		return "launched"
	}
	return "pending"
}
