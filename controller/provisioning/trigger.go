package provisioning

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cluster"
)

// SetupWithManager adds the provisioning loop to mgr and a controller that triggers it when a pod waits for a
// node, when a NodeClaim goes away (its pods need room again) and when a NodePool changes.
func (p *Provisioner) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.Add(p); err != nil {
		return fmt.Errorf("add provisioner: %w", err)
	}
	trigger := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		p.Trigger()
		return reconcile.Result{}, nil
	})
	onDelete := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(e event.UpdateEvent) bool { return e.ObjectNew.GetDeletionTimestamp() != nil },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	err := ctrl.NewControllerManagedBy(mgr).
		Named("provisioning").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(waitsForNode))).
		Watches(&apiv1.NodeClaim{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(onDelete)).
		Watches(&apiv1.NodePool{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Complete(trigger)
	if err != nil {
		return fmt.Errorf("provisioning trigger controller: %w", err)
	}
	return nil
}

// waitsForNode reports whether the object is a pod that the scheduler found no node for.
func waitsForNode(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	if !ok || !cluster.IsPending(pod) {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}
