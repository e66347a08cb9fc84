package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/cloudprovider/sim"
	"github.com/packwright/packwright/controller"
	"github.com/packwright/packwright/controller/provisioning"
)

// TestControllerProvisionsPendingPods runs the whole controller (manager, provisioning, nodeclaim lifecycle)
// with the sim provider against the real API server and kube-scheduler: pending pods of two shapes become
// NodeClaims, sim nodes register and turn Ready, and the scheduler binds every pod. The launched nodes cost what
// the plans said.
func TestControllerProvisionsPendingPods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()

	var mu sync.Mutex
	planned := 0.0
	var provider *sim.Provider
	mgr, err := controller.NewManager(ctx, controller.Config{
		REST: harness.Config, ClusterName: "e2e", Catalog: cat,
		BatchIdle: 500 * time.Millisecond, BatchMax: 5 * time.Second,
		MetricsAddr: "0", ProbeAddr: "0", DisableDisruption: true,
		NewCloudProvider: func(cl client.Client) (cloudprovider.CloudProvider, error) {
			provider = sim.New(cl, sim.Options{ReadyDelay: 300 * time.Millisecond, Describe: describe(cat)})
			return provider, nil
		},
		Observe: func(r provisioning.Result) {
			mu.Lock()
			defer mu.Unlock()
			if r.Plan != nil {
				planned += r.Plan.Cost
			}
		},
	})
	if err != nil {
		t.Fatalf("controller: %v", err)
	}
	// The manager outlives the test function: its cleanup (below) needs the controller to terminate the claims,
	// and the deferred cancel of ctx runs before any cleanup.
	mctx, mcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		mcancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
		if provider != nil {
			provider.Close()
		}
	})

	var pods []*corev1.Pod
	for i := range 40 {
		cpu, mem := "500m", "512Mi"
		if i%2 == 1 {
			cpu, mem = "250m", "2Gi"
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ctrl-%02d", i), Namespace: metav1.NamespaceDefault, Labels: map[string]string{"app": "ctrl"}},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}}},
			},
		}
		if err := c.Create(ctx, pod); err != nil {
			t.Fatalf("create pod: %v", err)
		}
		pods = append(pods, pod)
	}
	t.Cleanup(func() {
		// Leave the cluster as found, through the controller's termination path: deleting the claims drains
		// their nodes through the Eviction API (the pods, owned by nothing, are gone after that), terminates the
		// sim instances and deletes the Nodes.
		bg := context.Background()
		_ = c.DeleteAllOf(bg, &v1.NodeClaim{})
		err := wait.PollUntilContextTimeout(bg, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			var claims v1.NodeClaimList
			var nodes corev1.NodeList
			var left corev1.PodList
			if c.List(ctx, &claims) != nil || c.List(ctx, &nodes) != nil || c.List(ctx, &left, client.MatchingLabels{"app": "ctrl"}) != nil {
				return false, nil
			}
			return len(claims.Items) == 0 && len(nodes.Items) == 0 && len(left.Items) == 0, nil
		})
		if err != nil {
			t.Errorf("NodeClaims, Nodes and their pods not terminated by the controller within 30s: %v", err)
			for _, p := range pods {
				_ = c.Delete(bg, p, client.GracePeriodSeconds(0))
			}
		}
	})

	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		for _, p := range pods {
			got := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil || got.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("pods not all bound: %v\nscheduler log:\n%s", err, harness.SchedulerLog())
	}

	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) == 0 {
		t.Fatal("no NodeClaims were created")
	}
	launched := 0.0
	for _, cl := range claims.Items {
		offs, err := v1.ClaimOfferings(&cl)
		if err != nil || len(offs) == 0 {
			t.Fatalf("nodeclaim %s: offerings %v, %v", cl.Name, offs, err)
		}
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: cl.Name}, node); err != nil {
			t.Fatalf("node of nodeclaim %s: %v", cl.Name, err)
		}
		price, ok := cat.Price(node.Labels[corev1.LabelInstanceTypeStable], node.Labels[corev1.LabelTopologyZone], node.Labels[v1.CapacityTypeLabelKey])
		if !ok {
			t.Fatalf("node %s has no price for labels %v", node.Name, node.Labels)
		}
		launched += price
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := launched - planned; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("launched nodes cost %.4f/h, plans said %.4f/h", launched, planned)
	}
	t.Logf("%d pods bound on %d nodes costing %.4f/h (planned %.4f/h)", len(pods), len(claims.Items), launched, planned)
}

func describe(cat *catalog.Catalog) func(string, string, string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
	return func(instanceType, zone, capacityType string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
		it, ok := cat.ByName(instanceType)
		if !ok {
			return nil, nil, nil, false
		}
		return it.Labels(cat.Region, zone, capacityType, ""), provisioning.ResourceList(it.Capacity(nil)), provisioning.ResourceList(it.Allocatable(nil)), true
	}
}
