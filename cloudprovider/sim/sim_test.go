package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
)

func req(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

func resources(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func testClaim(reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "default-abc", Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: reqs,
			Resources:    v1.ResourceRequirements{Requests: resources("1", "1Gi")},
		},
	}
}

var catalog = map[string]corev1.ResourceList{
	"small": resources("500m", "1Gi"),
	"large": resources("4", "16Gi"),
}

func TestPick(t *testing.T) {
	p := New(nil, Options{InstanceTypes: catalog})
	claim := testClaim(
		req(corev1.LabelInstanceTypeStable, "small", "large"),
		req(v1.CapacityTypeLabelKey, "spot", "on-demand"),
	)
	it, ct, err := p.pick(claim)
	if err != nil || it != "large" || ct != "spot" {
		t.Fatalf("pick = %q, %q, %v; want large, spot (small is too small)", it, ct, err)
	}

	p.SetUnavailable(Offering{CapacityType: "spot"}, true)
	if it, ct, err = p.pick(claim); err != nil || it != "large" || ct != "on-demand" {
		t.Fatalf("with spot unavailable: pick = %q, %q, %v; want large, on-demand", it, ct, err)
	}

	p.SetUnavailable(Offering{InstanceType: "large", CapacityType: "on-demand"}, true)
	_, _, err = p.pick(claim)
	if !cloudprovider.IsInsufficientCapacity(err) {
		t.Fatalf("with every fitting offering unavailable: err = %v, want an InsufficientCapacityError", err)
	}

	p.SetUnavailable(Offering{CapacityType: "spot"}, false)
	if it, ct, err = p.pick(claim); err != nil || it != "large" || ct != "spot" {
		t.Fatalf("spot available again: pick = %q, %q, %v; want large, spot", it, ct, err)
	}

	_, _, err = p.pick(testClaim(req(corev1.LabelInstanceTypeStable, "small")))
	if err == nil || cloudprovider.IsInsufficientCapacity(err) || !strings.Contains(err.Error(), `instance type "small"`) {
		t.Fatalf("claim too big for its only type: err = %v, want a plain error naming the type", err)
	}
}

func TestUnavailableFromOptions(t *testing.T) {
	p := New(nil, Options{Unavailable: []Offering{{InstanceType: "large"}}, InstanceTypes: catalog})
	_, _, err := p.pick(testClaim(req(corev1.LabelInstanceTypeStable, "large")))
	if !cloudprovider.IsInsufficientCapacity(err) {
		t.Fatalf("err = %v, want an InsufficientCapacityError", err)
	}
}

func TestNodeFor(t *testing.T) {
	p := New(nil, Options{InstanceTypes: catalog})
	claim := testClaim(
		req(corev1.LabelInstanceTypeStable, "small", "large"),
		req(corev1.LabelTopologyZone, "zone-b", "zone-a"),
		req("example.com/team", "search"),
		v1.NodeSelectorRequirementWithMinValues{Key: "example.com/gpu", Operator: corev1.NodeSelectorOpDoesNotExist},
	)
	claim.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "search", Effect: corev1.TaintEffectNoSchedule}}
	node := nodeFor(claim, "large", "spot", p.capacity(claim, "large"))

	want := map[string]string{
		corev1.LabelInstanceTypeStable: "large",
		v1.CapacityTypeLabelKey:        "spot",
		corev1.LabelTopologyZone:       "zone-b",
		"example.com/team":             "search",
		corev1.LabelHostname:           "default-abc",
		v1.NodePoolLabelKey:            "default",
		corev1.LabelOSStable:           "linux",
	}
	for k, v := range want {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if _, ok := node.Labels["example.com/gpu"]; ok {
		t.Errorf("a DoesNotExist requirement became a label")
	}
	if node.Spec.ProviderID != "sim://default-abc" {
		t.Errorf("providerID = %q", node.Spec.ProviderID)
	}
	if cpu := node.Status.Allocatable[corev1.ResourceCPU]; cpu.String() != "4" {
		t.Errorf("allocatable cpu = %s, want the catalog's 4", cpu.String())
	}
	if pods := node.Status.Capacity[corev1.ResourcePods]; pods.Value() != 110 {
		t.Errorf("pods = %s, want the default 110", pods.String())
	}
	if len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints = %v, want the claim's", node.Spec.Taints)
	}

	out := claimFor(claim, node)
	if out.Status.ProviderID != node.Spec.ProviderID || out.Status.NodeName != node.Name ||
		out.Labels[corev1.LabelInstanceTypeStable] != "large" || claim.Status.ProviderID != "" {
		t.Errorf("claimFor = %+v; want the node's status on a copy", out.Status)
	}
}

func TestCapacityFromClaim(t *testing.T) {
	p := New(nil, Options{})
	c := p.capacity(testClaim(), "")
	if cpu := c[corev1.ResourceCPU]; cpu.String() != "1" {
		t.Errorf("cpu = %s, want the claim's request 1", cpu.String())
	}
}

func TestReadyAndTaint(t *testing.T) {
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule},
	}}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}
	setReady(node, metav1.Now())
	if len(node.Status.Conditions) != 1 || node.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("conditions = %v, want one Ready=True", node.Status.Conditions)
	}
	taints, removed := withoutTaint(node.Spec.Taints, corev1.TaintNodeNotReady)
	if !removed || len(taints) != 1 || taints[0].Key != "dedicated" {
		t.Errorf("withoutTaint = %v, %v", taints, removed)
	}
	if _, removed := withoutTaint(taints, corev1.TaintNodeNotReady); removed {
		t.Errorf("removed a taint that was not there")
	}
}

func TestNodeName(t *testing.T) {
	if n, err := nodeName("sim://a"); err != nil || n != "a" {
		t.Errorf("nodeName(sim://a) = %q, %v", n, err)
	}
	for _, bad := range []string{"", "sim://", "aws:///us-east-1a/i-1"} {
		if _, err := nodeName(bad); err == nil {
			t.Errorf("nodeName(%q) succeeded", bad)
		}
	}
}
