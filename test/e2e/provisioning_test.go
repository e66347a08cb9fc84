package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/cloudprovider/sim"
)

// bindTimeout is how long the real scheduler may take to act on a pod.
const bindTimeout = 30 * time.Second

// TestSimNodeReceivesPendingPod checks the seam the provisioner relies on: a pod that fits no node is marked
// Unschedulable by the real kube-scheduler; the sim provider launches a node for a NodeClaim sized for it (spot
// is made unavailable, so the launch falls back to on-demand); the scheduler binds the pod there.
func TestSimNodeReceivesPendingPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*bindTimeout)
	defer cancel()
	c := harness.Client

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "needs-one-cpu", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:  "app",
			Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("1"),
				corev1.ResourceMemory: resource.MustParse("256Mi"),
			}},
		}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pod, client.GracePeriodSeconds(0)) })

	waitForPod(ctx, t, pod, "PodScheduled=False with reason Unschedulable", func(p *corev1.Pod) bool {
		cond := podScheduled(p)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable
	})

	provider := sim.New(c, sim.Options{
		ReadyDelay:    500 * time.Millisecond,
		InstanceTypes: map[string]corev1.ResourceList{"sim-2x8": resources("2", "8Gi")},
		Unavailable:   []sim.Offering{{CapacityType: "spot"}},
	})
	t.Cleanup(provider.Close)
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-e2e", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: []v1.NodeSelectorRequirementWithMinValues{
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"sim-2x8"}},
				{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
				{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"sim-zone-a"}},
			},
			Resources:    v1.ResourceRequirements{Requests: resources("1", "256Mi")},
			NodeClassRef: &v1.NodeClassReference{Group: "sim.packwright.dev", Kind: "SimNodeClass", Name: "default"},
		},
	}
	launched := time.Now()
	created, err := provider.Create(ctx, claim)
	if err != nil {
		t.Fatalf("sim Create: %v", err)
	}
	if got, want := created.Status.ProviderID, "sim://default-e2e"; got != want {
		t.Errorf("providerID = %q, want %q", got, want)
	}
	if got := created.Labels[v1.CapacityTypeLabelKey]; got != "on-demand" {
		t.Errorf("capacity type = %q, want on-demand (spot was made unavailable)", got)
	}

	waitForPod(ctx, t, pod, "bound to node "+created.Status.NodeName, func(p *corev1.Pod) bool {
		return p.Spec.NodeName == created.Status.NodeName
	})
	t.Logf("pod bound %s after the launch", time.Since(launched).Round(time.Millisecond))

	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: created.Status.NodeName}, node); err != nil {
		t.Fatalf("reading node: %v", err)
	}
	for k, want := range map[string]string{
		corev1.LabelInstanceTypeStable: "sim-2x8",
		corev1.LabelTopologyZone:       "sim-zone-a",
		corev1.LabelHostname:           "default-e2e",
		v1.NodePoolLabelKey:            "default",
	} {
		if got := node.Labels[k]; got != want {
			t.Errorf("node label %s = %q, want %q", k, got, want)
		}
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeNotReady {
			t.Errorf("node still has taint %v", taint)
		}
	}

	got, err := provider.Get(ctx, created.Status.ProviderID)
	if err != nil || got.Status.NodeName != node.Name {
		t.Errorf("sim Get(%s) = %v, %v", created.Status.ProviderID, got, err)
	}
	if list, err := provider.List(ctx); err != nil || len(list) != 1 {
		t.Errorf("sim List = %d claims, %v; want 1", len(list), err)
	}
	if err := provider.Delete(ctx, created); err != nil {
		t.Fatalf("sim Delete: %v", err)
	}
	if err := provider.Delete(ctx, created); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("second sim Delete = %v, want a NodeClaimNotFoundError", err)
	}
	if _, err := provider.Get(ctx, created.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
		t.Errorf("sim Get after Delete = %v, want a NodeClaimNotFoundError", err)
	}
}

// waitForPod polls the pod until done holds, failing the test with the pod's state and the scheduler's log
// after bindTimeout.
func waitForPod(ctx context.Context, t *testing.T, pod *corev1.Pod, what string, done func(*corev1.Pod) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, bindTimeout)
	defer cancel()
	began := time.Now()
	current := &corev1.Pod{}
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		last = harness.Client.Get(ctx, client.ObjectKeyFromObject(pod), current)
		return last == nil && done(current), nil
	})
	if err != nil {
		t.Fatalf("pod %s not %s within %s (last read error: %v)\nnodeName=%q conditions=%s\n%s",
			pod.Name, what, bindTimeout, last, current.Spec.NodeName, conditions(current), harness.SchedulerLog())
	}
	t.Logf("pod %s %s after %s", pod.Name, what, time.Since(began).Round(time.Millisecond))
}

// podScheduled returns the pod's PodScheduled condition, or nil.
func podScheduled(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// conditions formats the pod's conditions for failure messages.
func conditions(p *corev1.Pod) string {
	s := ""
	for _, c := range p.Status.Conditions {
		s += fmt.Sprintf("[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, c.Message)
	}
	return s
}

func resources(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}
