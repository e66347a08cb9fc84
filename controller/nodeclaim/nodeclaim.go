// Package nodeclaim runs NodeClaims through their life: launch through the cloud provider, registration of the
// Node, initialisation, liveness timeouts, and termination behind a finalizer (drain through the Eviction API,
// terminate the instance, delete the Node). It also garbage-collects instances that no NodeClaim owns.
package nodeclaim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/controller/metrics"
	"github.com/packwright/packwright/controller/unavailable"
)

const (
	// TerminationFinalizer holds a NodeClaim until its node is drained and its instance terminated.
	TerminationFinalizer = apiv1.GroupName + "/termination"
	// TerminationReasonAnnotationKey says why a NodeClaim was deleted, for events and metrics; whoever deletes
	// a claim sets it first (consolidation, expiry, timeouts).
	TerminationReasonAnnotationKey = apiv1.GroupName + "/termination-reason"
	// DisruptedTaintKey marks a node being drained, so the scheduler places no new pod on it.
	DisruptedTaintKey = apiv1.GroupName + "/disrupted"

	// ProviderIDIndex indexes Nodes by spec.providerID.
	ProviderIDIndex = "spec.providerID"
	// NodeNameIndex indexes Pods by spec.nodeName.
	NodeNameIndex = "spec.nodeName"
)

// Options configure the NodeClaim controllers.
type Options struct {
	// LaunchTimeout deletes a claim whose instance could not be launched for this long (default 5 min).
	LaunchTimeout time.Duration
	// RegistrationTimeout deletes a launched claim whose Node has not registered for this long (default 15 min).
	RegistrationTimeout time.Duration
	// GCInterval is how often garbage collection lists the provider's instances (default 1 min).
	GCInterval time.Duration
	// Unavailable receives offerings that failed with insufficient capacity.
	Unavailable *unavailable.Offerings
	// OnCapacityError is called after a claim is deleted for insufficient capacity, so that its pods are
	// provisioned again without waiting for the next pod event.
	OnCapacityError func()
	// Evictor evicts pods when draining; see NewEvictor. Without one, the manager's client is used.
	Evictor Evictor
}

func (o *Options) defaults() {
	if o.LaunchTimeout <= 0 {
		o.LaunchTimeout = 5 * time.Minute
	}
	if o.RegistrationTimeout <= 0 {
		o.RegistrationTimeout = 15 * time.Minute
	}
	if o.GCInterval <= 0 {
		o.GCInterval = time.Minute
	}
	if o.Unavailable == nil {
		o.Unavailable = unavailable.New(0)
	}
}

// Controller reconciles NodeClaims.
type Controller struct {
	client   client.Client
	cloud    cloudprovider.CloudProvider
	recorder record.EventRecorder
	opts     Options
}

// New returns the NodeClaim controller.
func New(c client.Client, cloud cloudprovider.CloudProvider, recorder record.EventRecorder, opts Options) *Controller {
	opts.defaults()
	return &Controller{client: c, cloud: cloud, recorder: recorder, opts: opts}
}

// SetupIndexes registers the field indexes the controllers query by.
func SetupIndexes(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Node{}, ProviderIDIndex, func(o client.Object) []string {
		if id := o.(*corev1.Node).Spec.ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index nodes by providerID: %w", err)
	}
	if err := idx.IndexField(ctx, &corev1.Pod{}, NodeNameIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index pods by nodeName: %w", err)
	}
	return nil
}

// SetupWithManager registers the lifecycle controller (which also terminates) and garbage collection.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	nodeToClaim := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		node := o.(*corev1.Node)
		var claims apiv1.NodeClaimList
		if err := c.client.List(ctx, &claims); err != nil {
			return nil
		}
		for i := range claims.Items {
			cl := &claims.Items[i]
			if (node.Spec.ProviderID != "" && cl.Status.ProviderID == node.Spec.ProviderID) || cl.Status.NodeName == node.Name {
				return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(cl)}}
			}
		}
		return nil
	})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("nodeclaim").
		For(&apiv1.NodeClaim{}).
		Watches(&corev1.Node{}, nodeToClaim).
		WithOptions(controller.Options{MaxConcurrentReconciles: 16}).
		Complete(c)
	if err != nil {
		return fmt.Errorf("nodeclaim controller: %w", err)
	}
	return mgr.Add(&GarbageCollector{client: c.client, cloud: c.cloud, recorder: c.recorder, interval: c.opts.GCInterval})
}

// Reconcile moves one NodeClaim a step through its life.
func (c *Controller) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	claim := &apiv1.NodeClaim{}
	if err := c.client.Get(ctx, req.NamespacedName, claim); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("nodeclaim", claim.Name))
	if claim.DeletionTimestamp != nil {
		return c.terminate(ctx, claim)
	}
	if !controllerutil.ContainsFinalizer(claim, TerminationFinalizer) {
		patch := client.MergeFrom(claim.DeepCopy())
		controllerutil.AddFinalizer(claim, TerminationFinalizer)
		if err := c.client.Patch(ctx, claim, patch); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
	}
	if !apiv1.IsConditionTrue(claim.Status.Conditions, apiv1.ConditionTypeLaunched) {
		return c.launch(ctx, claim)
	}
	if !apiv1.IsConditionTrue(claim.Status.Conditions, apiv1.ConditionTypeRegistered) {
		return c.register(ctx, claim)
	}
	if !apiv1.IsConditionTrue(claim.Status.Conditions, apiv1.ConditionTypeInitialized) {
		return c.initialize(ctx, claim)
	}
	return c.checkNode(ctx, claim)
}

// launch creates the claim's instance. The provider's Create is idempotent (it finds an instance already
// launched for the claim), so a retry after a crash or a failed status write never launches twice.
func (c *Controller) launch(ctx context.Context, claim *apiv1.NodeClaim) (reconcile.Result, error) {
	launched, err := c.cloud.Create(ctx, claim)
	if err != nil {
		if cloudprovider.IsInsufficientCapacity(err) {
			metrics.CloudProviderErrors.WithLabelValues(c.cloud.Name(), "Create", "insufficient-capacity").Inc()
			return c.capacityError(ctx, claim, err)
		}
		metrics.CloudProviderErrors.WithLabelValues(c.cloud.Name(), "Create", "other").Inc()
		if time.Since(claim.CreationTimestamp.Time) > c.opts.LaunchTimeout {
			c.event(claim, corev1.EventTypeWarning, "LaunchTimeout", "Launch failed for %s, deleting: %v", c.opts.LaunchTimeout, err)
			return reconcile.Result{}, c.delete(ctx, claim, "launch-timeout")
		}
		if claim.SetCondition(apiv1.ConditionTypeLaunched, metav1.ConditionFalse, "LaunchFailed", truncate(err.Error())) {
			_ = c.client.Status().Update(ctx, claim) // best effort: the error is logged and retried anyway
		}
		return reconcile.Result{}, fmt.Errorf("launch nodeclaim %s: %w", claim.Name, err)
	}
	// Labels first: when the status write fails, the retry's Create finds the instance again.
	if !mapsContain(claim.Labels, launched.Labels) {
		patch := client.MergeFrom(claim.DeepCopy())
		if claim.Labels == nil {
			claim.Labels = map[string]string{}
		}
		maps.Copy(claim.Labels, launched.Labels)
		if err := c.client.Patch(ctx, claim, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("label nodeclaim %s: %w", claim.Name, err)
		}
	}
	claim.Status.ProviderID = launched.Status.ProviderID
	claim.Status.ImageID = launched.Status.ImageID
	claim.Status.Capacity = launched.Status.Capacity
	claim.Status.Allocatable = launched.Status.Allocatable
	claim.SetCondition(apiv1.ConditionTypeLaunched, metav1.ConditionTrue, "Launched", "")
	if err := c.client.Status().Update(ctx, claim); err != nil {
		return reconcile.Result{}, fmt.Errorf("record launch of nodeclaim %s: %w", claim.Name, err)
	}
	metrics.NodesLaunched.WithLabelValues(claim.Labels[apiv1.NodePoolLabelKey], claim.Labels[apiv1.CapacityTypeLabelKey]).Inc()
	c.event(claim, corev1.EventTypeNormal, "Launched", "Launched %s %s in %s (%s)", claim.Labels[corev1.LabelInstanceTypeStable],
		claim.Labels[apiv1.CapacityTypeLabelKey], claim.Labels[corev1.LabelTopologyZone], claim.Status.ProviderID)
	return reconcile.Result{RequeueAfter: 2 * time.Second}, nil
}

// capacityError marks the offerings that failed unavailable, deletes the claim and asks for a new solve, which
// will pick other offerings (spot falls back to on-demand when all spot is gone).
func (c *Controller) capacityError(ctx context.Context, claim *apiv1.NodeClaim, err error) (reconcile.Result, error) {
	var ice *cloudprovider.InsufficientCapacityError
	marked := 0
	for _, e := range flatten(err) {
		if errors.As(e, &ice) && (ice.InstanceType != "" || ice.Zone != "" || ice.CapacityType != "") {
			c.opts.Unavailable.MarkUnavailable(unavailable.Key{InstanceType: ice.InstanceType, Zone: ice.Zone, CapacityType: ice.CapacityType})
			marked++
		}
	}
	if marked == 0 {
		// The provider did not say which offering failed: all those the claim allowed did.
		offs, _ := apiv1.ClaimOfferings(claim)
		for _, o := range offs {
			c.opts.Unavailable.MarkUnavailable(unavailable.Key{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType})
		}
	}
	c.event(claim, corev1.EventTypeWarning, "InsufficientCapacity", "Deleting, no capacity for its offerings: %v", err)
	log.FromContext(ctx).Info("insufficient capacity; deleting nodeclaim and re-solving", "error", err.Error())
	if err := c.delete(ctx, claim, "insufficient-capacity"); err != nil {
		return reconcile.Result{}, err
	}
	if c.opts.OnCapacityError != nil {
		c.opts.OnCapacityError()
	}
	return reconcile.Result{}, nil
}

// flatten lists err and the errors it joins, recursively.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, flatten(e)...)
		}
	case interface{ Unwrap() error }:
		out = append(out, flatten(u.Unwrap())...)
	}
	return out
}

// register finds the claim's Node by providerID and gives it the claim's labels and taints.
func (c *Controller) register(ctx context.Context, claim *apiv1.NodeClaim) (reconcile.Result, error) {
	node, err := c.nodeFor(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node == nil {
		launched := meta(claim, apiv1.ConditionTypeLaunched)
		if launched != nil && time.Since(launched.LastTransitionTime.Time) > c.opts.RegistrationTimeout {
			c.event(claim, corev1.EventTypeWarning, "RegistrationTimeout", "No node registered within %s, deleting", c.opts.RegistrationTimeout)
			return reconcile.Result{}, c.delete(ctx, claim, "registration-timeout")
		}
		return reconcile.Result{RequeueAfter: 5 * time.Second}, nil
	}
	patch := client.MergeFrom(node.DeepCopy())
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	maps.Copy(node.Labels, claim.Labels)
	for _, t := range append(slices.Clone(claim.Spec.Taints), claim.Spec.StartupTaints...) {
		if !slices.ContainsFunc(node.Spec.Taints, func(n corev1.Taint) bool { return n.MatchTaint(&t) }) {
			node.Spec.Taints = append(node.Spec.Taints, t)
		}
	}
	if err := c.client.Patch(ctx, node, patch); err != nil {
		return reconcile.Result{}, fmt.Errorf("label node %s of nodeclaim %s: %w", node.Name, claim.Name, err)
	}
	claim.Status.NodeName = node.Name
	claim.SetCondition(apiv1.ConditionTypeRegistered, metav1.ConditionTrue, "Registered", "")
	if err := c.client.Status().Update(ctx, claim); err != nil {
		return reconcile.Result{}, fmt.Errorf("record registration of nodeclaim %s: %w", claim.Name, err)
	}
	return c.initialize(ctx, claim)
}

// initialize waits for the Node to be Ready, removes the claim's startup taints and marks the claim ready.
func (c *Controller) initialize(ctx context.Context, claim *apiv1.NodeClaim) (reconcile.Result, error) {
	node, err := c.nodeFor(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node == nil {
		return reconcile.Result{}, c.delete(ctx, claim, "node-deleted")
	}
	if !nodeReady(node) {
		return reconcile.Result{RequeueAfter: 5 * time.Second}, nil
	}
	if len(claim.Spec.StartupTaints) > 0 {
		patch := client.MergeFrom(node.DeepCopy())
		n := len(node.Spec.Taints)
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return slices.ContainsFunc(claim.Spec.StartupTaints, func(s corev1.Taint) bool { return s.MatchTaint(&t) })
		})
		if len(node.Spec.Taints) != n {
			if err := c.client.Patch(ctx, node, patch); err != nil {
				return reconcile.Result{}, fmt.Errorf("remove startup taints of node %s: %w", node.Name, err)
			}
		}
	}
	claim.SetCondition(apiv1.ConditionTypeInitialized, metav1.ConditionTrue, "Initialized", "")
	claim.SetCondition(apiv1.ConditionTypeReady, metav1.ConditionTrue, "Ready", "")
	if err := c.client.Status().Update(ctx, claim); err != nil {
		return reconcile.Result{}, fmt.Errorf("record initialisation of nodeclaim %s: %w", claim.Name, err)
	}
	c.event(claim, corev1.EventTypeNormal, "Initialized", "Node %s is ready", node.Name)
	return reconcile.Result{}, nil
}

// checkNode deletes a ready claim whose Node was deleted behind its back.
func (c *Controller) checkNode(ctx context.Context, claim *apiv1.NodeClaim) (reconcile.Result, error) {
	node, err := c.nodeFor(ctx, claim)
	if err != nil {
		return reconcile.Result{}, err
	}
	if node == nil {
		return reconcile.Result{}, c.delete(ctx, claim, "node-deleted")
	}
	return reconcile.Result{}, nil
}

// nodeFor returns the claim's Node, or nil when none has registered.
func (c *Controller) nodeFor(ctx context.Context, claim *apiv1.NodeClaim) (*corev1.Node, error) {
	if claim.Status.ProviderID == "" {
		return nil, nil
	}
	var nodes corev1.NodeList
	if err := c.client.List(ctx, &nodes, client.MatchingFields{ProviderIDIndex: claim.Status.ProviderID}); err != nil {
		return nil, fmt.Errorf("find node of nodeclaim %s: %w", claim.Name, err)
	}
	if len(nodes.Items) == 0 {
		return nil, nil
	}
	return &nodes.Items[0], nil
}

// delete deletes the claim, recording why; termination does the rest.
func (c *Controller) delete(ctx context.Context, claim *apiv1.NodeClaim, reason string) error {
	if claim.Annotations[TerminationReasonAnnotationKey] == "" {
		patch := client.MergeFrom(claim.DeepCopy())
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		claim.Annotations[TerminationReasonAnnotationKey] = reason
		if err := c.client.Patch(ctx, claim, patch); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("annotate nodeclaim %s: %w", claim.Name, err)
		}
	}
	if err := c.client.Delete(ctx, claim); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete nodeclaim %s: %w", claim.Name, err)
	}
	return nil
}

func (c *Controller) event(claim *apiv1.NodeClaim, kind, reason, format string, args ...any) {
	if c.recorder != nil {
		c.recorder.Eventf(claim, kind, reason, format, args...)
	}
}

func meta(claim *apiv1.NodeClaim, t string) *metav1.Condition {
	for i := range claim.Status.Conditions {
		if claim.Status.Conditions[i].Type == t {
			return &claim.Status.Conditions[i]
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func mapsContain(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// truncate keeps condition messages within the API's limit.
func truncate(s string) string {
	const max = 1000
	if len(s) > max {
		return s[:max-3] + "..."
	}
	return s
}
