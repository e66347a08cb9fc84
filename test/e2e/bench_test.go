package e2e

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// BenchmarkBindThousandPods measures the headline figure: the time from creating 1,000 pending pods of
// two shapes until the real kube-scheduler has bound every one to a node that Packwright launched through the
// sim provider (ready 300 ms after launch, batch windows 500 ms idle / 5 s max). It reports s-to-bound (from the
// first pod created) and nodes.
func BenchmarkBindThousandPods(b *testing.B) {
	cat := catalog.KwokLike()
	for i := 0; b.Loop(); i++ {
		scenario := fmt.Sprintf("bind%d", i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		r := startController(b, cat)
		began := time.Now()
		if os.Getenv("PACKWRIGHT_E2E_PLANS") != "" {
			fmt.Fprintf(os.Stderr, "%s creating pods\n", began.Format("15:04:05.000"))
		}
		createPods(ctx, b, scenario, []podShape{
			{name: "small", count: 600, cpu: "250m", mem: "512Mi"},
			{name: "large", count: 400, cpu: "1", mem: "2Gi"},
		})
		waitAllBound(ctx, b, scenario, 1000)
		elapsed := time.Since(began)
		var nodes corev1.NodeList
		if err := harness.Client.List(ctx, &nodes); err != nil {
			b.Fatal(err)
		}
		var claims v1.NodeClaimList
		if err := harness.Client.List(ctx, &claims); err != nil {
			b.Fatal(err)
		}
		last := time.Time{}
		for _, cl := range claims.Items {
			if ct := cl.CreationTimestamp.Time; ct.After(last) {
				last = ct
			}
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-bound")
		// Creation timestamps have a resolution of one second.
		b.ReportMetric(last.Sub(began.Truncate(time.Second)).Seconds(), "s-to-last-nodeclaim")
		b.ReportMetric(float64(len(nodes.Items)), "nodes")
		b.StopTimer()
		cleanupScenario(b, scenario, r)
		cancel()
		b.StartTimer()
	}
}

// BenchmarkControllerMemory measures the controller's memory with 10,000 pods on 1,000 nodes in the cluster:
// the Go heap in use (after a GC) that the manager's informer caches and one provisioning solve over that state
// add to the process, as heap-MiB. The nodes are registered directly (not through a NodeClaim) and the pods bound
// to them, so that only the controller's view of the cluster is measured.
func BenchmarkControllerMemory(b *testing.B) {
	const nodes, podsPerNode = 1000, 10
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	began := time.Now()
	for i := range nodes {
		if err := createBoundNode(ctx, fmt.Sprintf("mem-node-%04d", i), podsPerNode); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("created %d nodes and %d pods in %s", nodes, nodes*podsPerNode, time.Since(began).Round(time.Second))
	b.Cleanup(func() {
		bg := context.Background()
		_ = c.DeleteAllOf(bg, &corev1.Pod{}, client.InNamespace(metav1.NamespaceDefault), client.MatchingLabels{scenarioLabel: "memory"}, client.GracePeriodSeconds(0))
		_ = c.DeleteAllOf(bg, &corev1.Node{}, client.MatchingLabels{scenarioLabel: "memory"})
	})

	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := startController(b, cat)
		// A pending batch that fits no existing node makes the controller build a Problem over the whole cluster
		// and solve it.
		createPods(ctx, b, "memory-pending", []podShape{{name: "pending", count: 100, cpu: "8", mem: "16Gi"}})
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			return len(r.plans) > 0, nil
		})
		if err != nil {
			b.Fatalf("no solve: %v", err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "heap-MiB")
		r.mu.Lock()
		solve := r.plans[0].Plan.Duration
		existing := len(r.plans[0].Problem.Nodes)
		r.mu.Unlock()
		b.ReportMetric(solve.Seconds(), "s-solve")
		b.ReportMetric(float64(existing), "existing-nodes")
		b.StopTimer()
		cleanupScenario(b, "memory-pending", r)
		b.StartTimer()
	}
}

// createBoundNode registers a Ready node of the catalog's m-16x type and binds pods pods to it.
func createBoundNode(ctx context.Context, name string, pods int) error {
	c := harness.Client
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			scenarioLabel: "memory", corev1.LabelHostname: name, corev1.LabelTopologyZone: catalog.KwokZones[len(name)%3],
			corev1.LabelInstanceTypeStable: "m-16x", v1.CapacityTypeLabelKey: model.OnDemand, corev1.LabelArchStable: "amd64",
			corev1.LabelOSStable: "linux",
		}},
		Spec: corev1.NodeSpec{ProviderID: "bench://" + name},
	}
	if err := c.Create(ctx, node); err != nil {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	node.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	if err := c.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("node %s status: %w", name, err)
	}
	for j := range pods {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pod-%02d", name, j), Namespace: metav1.NamespaceDefault,
				Labels: map[string]string{scenarioLabel: "memory", "app": fmt.Sprintf("svc-%d", j)}},
			Spec: corev1.PodSpec{
				NodeName: name, TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("4Gi")}}}},
			},
		}
		if err := c.Create(ctx, pod); err != nil {
			return fmt.Errorf("create pod %s: %w", pod.Name, err)
		}
	}
	return nil
}
