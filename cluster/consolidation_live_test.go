package cluster

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// TestConsolidationInputLive reads PodDisruptionBudgets (one with a status as the disruption controller
// writes it, two without) and a NodePool defaulted by the API server from a real kube-apiserver, and checks
// which nodes they pin and the default budget.
func TestConsolidationInputLive(t *testing.T) {
	cfg, cs := startAPIServer(t)
	ctx := context.Background()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if err := c.Create(ctx, np); err != nil {
		t.Fatalf("create nodepool: %v", err)
	}

	apps := map[string]string{"node-1": "db", "node-2": "web", "node-3": "api"}
	for _, name := range []string{"node-1", "node-2", "node-3"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			corev1.LabelInstanceTypeStable: "m5.xlarge", corev1.LabelTopologyZone: "us-east-1a",
			"karpenter.sh/capacity-type": "on-demand", apiv1.NodePoolLabelKey: "general"}}}
		if node, err = cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("58")}
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3920m"), corev1.ResourceMemory: resource.MustParse("14Gi"), corev1.ResourcePods: resource.MustParse("58")}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		app := apps[name]
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: app + "-0", Namespace: "default", Labels: map[string]string{"app": app},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: app, UID: "u-1", Controller: new(true)}}},
			Spec: corev1.PodSpec{NodeName: name, Containers: []corev1.Container{{Name: "c", Image: app,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
		if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pdb := func(app string, maxUnavailable int) *policyv1.PodDisruptionBudget {
		mu := intstr.FromInt32(int32(maxUnavailable))
		p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &mu, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
		p, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	// No disruption controller runs here: db's status is written as it would write it (no pod healthy yet).
	db := pdb("db", 1)
	db.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: db.Generation, DisruptionsAllowed: 0, ExpectedPods: 1}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").UpdateStatus(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb("web", 1) // unobserved, allows one
	pdb("api", 0) // unobserved, allows none

	s, err := ReadLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.PodDisruptionBudgets) != 3 {
		t.Fatalf("read %d PodDisruptionBudgets, want 3", len(s.PodDisruptionBudgets))
	}
	in, not, _, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Candidates) != 1 || in.Candidates[0].Name != "node-2" || len(in.Origin) != 1 {
		t.Errorf("candidates %+v, origin %v", in.Candidates, in.Origin)
	}
	if len(not) != 2 || not[0].Node != "node-1" || !strings.Contains(not[0].Reason, "PodDisruptionBudget default/db") ||
		not[1].Node != "node-3" || !strings.Contains(not[1].Reason, "PodDisruptionBudget default/api") {
		t.Errorf("not candidates %v", not)
	}
	// The API server defaults the budgets to 10% of the pool's 3 nodes, rounded up.
	if in.MaxRemoved["general"] != 1 {
		t.Errorf("MaxRemoved %v, want general: 1", in.MaxRemoved)
	}
}
