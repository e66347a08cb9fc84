package deploy

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/cloudprovider/sim"
	"github.com/packwright/packwright/controller"
	"github.com/packwright/packwright/controller/provisioning"
)

// runControllerAs runs the whole controller (leader election, provisioning, NodeClaim lifecycle, termination,
// sim provider) as the plain manifests' ServiceAccount: a pending pod gets a NodeClaim and a Ready Node, and
// deleting the claim drains the node by eviction, deletes it and releases the finalizer. A verb missing from
// the ClusterRole or Role shows up as a step that never happens.
func runControllerAs(ctx context.Context, t *testing.T, admin *rest.Config, c client.Client) {
	sa := rest.CopyConfig(admin)
	sa.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:packwright:packwright",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:packwright", "system:authenticated"}}
	cat := catalog.KwokLike()
	mctx, stop := context.WithCancel(ctx)
	var provider *sim.Provider
	mgr, err := controller.NewManager(mctx, controller.Config{
		REST: sa, ClusterName: "deploy", Catalog: cat, BatchIdle: 200 * time.Millisecond, BatchMax: 2 * time.Second,
		MetricsAddr: "0", ProbeAddr: "0", LeaderElection: true, LeaderElectionNamespace: "packwright",
		NewCloudProvider: func(cl client.Client) (cloudprovider.CloudProvider, error) {
			provider = sim.New(cl, sim.Options{ReadyDelay: 200 * time.Millisecond, Describe: func(it, zone, ct string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
				t, ok := cat.ByName(it)
				if !ok {
					return nil, nil, nil, false
				}
				return t.Labels(cat.Region, zone, ct, ""), provisioning.ResourceList(t.Capacity(nil)), provisioning.ResourceList(t.Allocatable(nil)), true
			}})
			return provider, nil
		},
	})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		stop()
		provider.Close()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager: %v", err)
		}
	})

	pool := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "rbac"}}
	pool.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "sim.packwright.dev", Kind: "SimNodeClass", Name: "default"}
	pool.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{
		{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	// No kube-controller-manager runs here, so the default ServiceAccount that admission wants is made by hand.
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "default"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rbac", Namespace: "default"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{apiv1.NodePoolLabelKey: "rbac"}, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// What the scheduler would say about it: no node fits.
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}

	var claim apiv1.NodeClaim
	var node corev1.Node
	poll(ctx, t, "a NodeClaim of pool rbac with a Ready Node", func() (bool, error) {
		var claims apiv1.NodeClaimList
		if err := c.List(ctx, &claims, client.MatchingLabels{apiv1.NodePoolLabelKey: "rbac"}); err != nil || len(claims.Items) == 0 {
			return false, err
		}
		claim = claims.Items[0]
		if claim.Status.NodeName == "" {
			return false, nil
		}
		if err := c.Get(ctx, client.ObjectKey{Name: claim.Status.NodeName}, &node); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, taint := range node.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady {
				return false, nil
			}
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	cs := kubernetes.NewForConfigOrDie(admin)
	poll(ctx, t, "a Nominated event on the pod and the leader-election lease", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=rbac,reason=Nominated"})
		if err != nil || len(evs.Items) == 0 {
			return false, err
		}
		var lease coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: "packwright", Name: "packwright-deploy"}, &lease); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})

	// Bind the pod as the scheduler would, so that termination has a pod to evict.
	if err := cs.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "rbac", Namespace: "default"},
		Target: corev1.ObjectReference{Kind: "Node", Name: node.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &claim); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "the NodeClaim, its Node and the evicted pod gone", func() (bool, error) {
		gone := map[client.ObjectKey]client.Object{
			{Name: claim.Name}:                     &apiv1.NodeClaim{},
			{Name: node.Name}:                      &corev1.Node{},
			{Namespace: "default", Name: pod.Name}: &corev1.Pod{},
		}
		for key, o := range gone {
			if err := c.Get(ctx, key, o); !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
}

// poll waits up to 60 s for cond, failing the test with what it waited for.
func poll(ctx context.Context, t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) { return cond() })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
