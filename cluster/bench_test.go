package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// benchObjects generates a cluster of nodes nodes and pods pods: a fifth of the pods pending, in Deployments of
// 40 replicas (every fifth with hostname anti-affinity and zone spread, every third tolerating spot), the rest
// bound evenly to the nodes; two NodePools and three DaemonSets.
func benchObjects(nodes, pods int) []runtime.Object {
	var objs []runtime.Object
	for _, np := range []struct {
		name, capacityType string
		taints             []corev1.Taint
	}{
		{"general", "on-demand", nil},
		{"spot", "spot", []corev1.Taint{{Key: "spot", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
	} {
		objs = append(objs, &apiv1.NodePool{
			ObjectMeta: metav1.ObjectMeta{Name: np.name},
			Spec: apiv1.NodePoolSpec{Template: apiv1.NodeClaimTemplate{Spec: apiv1.NodeClaimTemplateSpec{
				Taints: np.taints,
				Requirements: []apiv1.NodeSelectorRequirementWithMinValues{
					{Key: apiv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{np.capacityType}},
					{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
				},
			}}},
		})
	}
	for i, ds := range []string{"kube-proxy", "node-exporter", "log-agent"} {
		objs = append(objs, &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: ds, Namespace: "kube-system"},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers:  []corev1.Container{{Name: ds, Resources: requests(fmt.Sprintf("%dm", 50*(i+1)), "64Mi")}},
			}}},
		})
	}
	types := []string{"m5.xlarge", "m5.2xlarge", "c6i.2xlarge", "r6i.xlarge"}
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	for i := range nodes {
		ct, pool := "on-demand", "general"
		if i%3 == 2 {
			ct, pool = "spot", "spot"
		}
		name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i/250, i%250)
		objs = append(objs, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"kubernetes.io/hostname": name, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
				"node.kubernetes.io/instance-type": types[i%len(types)], "topology.kubernetes.io/zone": zones[i%len(zones)],
				apiv1.CapacityTypeLabelKey: ct, apiv1.NodePoolLabelKey: pool,
			}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{"cpu": resource.MustParse("8"), "memory": resource.MustParse("32Gi"), "pods": resource.MustParse("58")},
				Allocatable: corev1.ResourceList{"cpu": resource.MustParse("7910m"), "memory": resource.MustParse("31Gi"), "pods": resource.MustParse("58")},
			},
		})
	}
	pending := pods / 5
	for i := range pods {
		var pod *corev1.Pod
		if i < pending {
			pod = deploymentPod(i/40, i%40)
		} else {
			j := i - pending
			pod = deploymentPod(1000+j%200, j)
			pod.Spec.NodeName = fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", (j%nodes)/250, (j%nodes)%250)
			pod.Status.Phase = corev1.PodRunning
		}
		objs = append(objs, pod)
	}
	return objs
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse(cpu), "memory": resource.MustParse(memory)}}
}

// deploymentPod returns replica r of Deployment d.
func deploymentPod(d, r int) *corev1.Pod {
	app := fmt.Sprintf("app-%d", d)
	hash := fmt.Sprintf("%08x", d*2654435761%(1<<32))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-%s-%05d", app, hash, r), Namespace: fmt.Sprintf("team-%d", d%7),
			Labels:          map[string]string{"app": app, "pod-template-hash": hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-" + hash, UID: "u", Controller: new(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{Name: "app", Resources: requests(fmt.Sprintf("%dm", 100+50*(d%10)), fmt.Sprintf("%dMi", 128*(1+d%8)))},
				{Name: "proxy", Resources: requests("50m", "64Mi")},
			},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
			},
		},
	}
	if d%3 == 0 {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule})
	}
	if d%5 == 0 {
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: "kubernetes.io/hostname"}},
		}}
		pod.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: sel,
			MatchLabelKeys: []string{"pod-template-hash"},
		}}
	}
	return pod
}

// BenchmarkProblem converts a generated snapshot of 10,000 pods (2,000 pending) and 500 nodes with the embedded
// us-east-1 catalog.
func BenchmarkProblem(b *testing.B) {
	s, err := NewState(benchObjects(500, 10000)...)
	if err != nil {
		b.Fatal(err)
	}
	cat := testCatalog(b)
	b.ReportAllocs()
	for b.Loop() {
		p, _, err := s.Problem(cat, ProblemOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Groups) != 50 || len(p.Nodes) != 500 {
			b.Fatalf("%d groups, %d nodes", len(p.Groups), len(p.Nodes))
		}
	}
}

// BenchmarkReadSnapshot reads the same snapshot as a JSON List, as `kubectl get -o json` writes it.
func BenchmarkReadSnapshot(b *testing.B) {
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": benchObjects(500, 10000)}
	for _, o := range list["items"].([]runtime.Object) {
		setTypeMeta(o)
	}
	data, err := json.Marshal(list)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadSnapshot(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func setTypeMeta(o runtime.Object) {
	switch x := o.(type) {
	case *corev1.Pod:
		x.APIVersion, x.Kind = "v1", "Pod"
	case *corev1.Node:
		x.APIVersion, x.Kind = "v1", "Node"
	case *appsv1.DaemonSet:
		x.APIVersion, x.Kind = "apps/v1", "DaemonSet"
	case *apiv1.NodePool:
		x.APIVersion, x.Kind = "packwright.dev/v1", "NodePool"
	}
}
