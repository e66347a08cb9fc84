package cluster

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
)

// TestReadLive runs a real kube-apiserver and etcd (envtest, binaries from hack/install-control-plane.sh),
// creates objects through the API and reads them back with ReadLive.
func TestReadLive(t *testing.T) {
	cfg, cs := startAPIServer(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{
		corev1.LabelInstanceTypeStable: "m5.xlarge", corev1.LabelTopologyZone: "us-east-1a", "karpenter.sh/capacity-type": "on-demand"}}}
	node, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("58")}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3920m"), corev1.ResourceMemory: resource.MustParse("14Gi"), corev1.ResourcePods: resource.MustParse("58")}
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name string, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "web",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	}
	for _, p := range []*corev1.Pod{pod("web-1", "2"), pod("web-2", "2"), pod("web-3", "2")} {
		if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
	np.Spec.Template.Spec.Requirements = []apiv1.NodeSelectorRequirementWithMinValues{{Key: "karpenter.sh/capacity-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}}
	np.Spec.Template.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	if err := apiv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, np); err != nil {
		t.Fatalf("create nodepool: %v", err)
	}

	s, err := ReadLive(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 || len(s.Pods) != 3 || len(s.NodePools) != 1 || s.NodePools[0].Name != "general" {
		t.Fatalf("read %d nodes, %d pods, %d nodepools", len(s.Nodes), len(s.Pods), len(s.NodePools))
	}
	cat, err := catalog.Resolve("aws/us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := s.Problem(cat, ProblemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Groups) != 1 || p.Groups[0].Demand() != 3 || len(p.Nodes) != 1 || p.Nodes[0].Price <= 0 {
		t.Fatalf("problem: %d groups, %d nodes (price %v)", len(p.Groups), len(p.Nodes), p.Nodes)
	}
	for _, o := range p.Offerings {
		if o.CapacityType != "on-demand" || o.NodePool != "general" {
			t.Fatalf("offering %s outside the NodePool's requirements", o.ID)
		}
	}
}

// startAPIServer runs a real kube-apiserver and etcd (envtest, binaries from hack/install-control-plane.sh)
// with the project's CRDs and the default ServiceAccount that admission wants (no kube-controller-manager runs
// here to make it), and returns its configuration and a clientset.
func startAPIServer(t *testing.T) (*rest.Config, *kubernetes.Clientset) {
	t.Helper()
	assets := os.Getenv("PACKWRIGHT_CONTROL_PLANE")
	if assets == "" {
		t.Fatal("PACKWRIGHT_CONTROL_PLANE is not set: run the tests with make test, or export PACKWRIGHT_CONTROL_PLANE=$(hack/install-control-plane.sh)")
	}
	_, file, _, _ := runtime.Caller(0)
	env := &envtest.Environment{BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{filepath.Join(filepath.Dir(file), "..", "deploy", "crds")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the control plane from %s: %v", assets, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return cfg, cs
}
