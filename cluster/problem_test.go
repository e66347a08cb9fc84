package cluster

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

const karpenterNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: spot}
spec:
  template:
    metadata:
      labels: {team: web}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m], minValues: 2}
      - {key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ['9']}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      taints: [{key: spot, value: 'true', effect: NoSchedule}]
      startupTaints: [{key: node.cilium.io/agent-not-ready, effect: NoExecute}]
      expireAfter: 720h
  limits: {cpu: '100', memory: 400Gi}
  weight: 20
  disruption: {consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 30s}`

func TestKarpenterNodePool(t *testing.T) {
	s := readDocs(t, karpenterNodePool)
	if len(s.NodePools) != 1 || s.NodePools[0].APIVersion != "karpenter.sh/v1" {
		t.Fatalf("NodePools %v", s.NodePools)
	}
	p, _ := problemOf(t, s)
	pool := p.Pools[0]
	if pool.Name != "spot" || pool.Weight != 20 || pool.Labels["team"] != "web" || len(pool.Requirements) != 4 ||
		!slices.Equal(pool.Taints, []model.Taint{{Key: "spot", Value: "true", Effect: model.NoSchedule}}) ||
		len(pool.StartupTaints) != 1 || pool.Limits["cpu"] != 100000 || pool.Limits["memory"] != 400*model.Gi {
		t.Errorf("pool %+v", pool)
	}
	if len(p.Offerings) == 0 {
		t.Fatal("no offerings")
	}
	for _, o := range p.Offerings {
		if o.CapacityType != model.Spot || o.Labels[catalog.KarpenterInstanceCategory] != "c" && o.Labels[catalog.KarpenterInstanceCategory] != "m" ||
			o.Labels["team"] != "web" || !slices.Equal(o.Taints, pool.Taints) {
			t.Errorf("offering %s: capacity %s labels %v taints %v", o.ID, o.CapacityType, o.Labels, o.Taints)
		}
	}
}

// TestKarpenterLabels checks that pods written for Karpenter, selecting its well-known labels, find offerings.
func TestKarpenterLabels(t *testing.T) {
	open := strings.Replace(nodePoolGeneral, "[m5]", "[m5, g4dn]", 1)
	for _, sel := range []string{
		"nodeSelector: {karpenter.sh/capacity-type: on-demand, karpenter.k8s.aws/instance-family: m5, karpenter.k8s.aws/instance-size: 2xlarge}",
		"nodeSelector: {karpenter.k8s.aws/instance-category: m, karpenter.k8s.aws/instance-generation: '5', karpenter.k8s.aws/instance-cpu: '8', karpenter.k8s.aws/instance-memory: '32768'}",
		"nodeSelector: {karpenter.k8s.aws/instance-gpu-name: t4, karpenter.k8s.aws/instance-gpu-manufacturer: nvidia, karpenter.k8s.aws/instance-gpu-count: '1'}",
		"nodeSelector: {karpenter.sh/nodepool: general}",
		"affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ['15']}, {key: karpenter.k8s.aws/instance-gpu-count, operator: DoesNotExist}]}]}}}",
	} {
		t.Run(sel, func(t *testing.T) {
			p, issues := problemOf(t, readDocs(t, open, podDoc("p", "  "+sel+"\n  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n")))
			g := &p.Groups[0]
			n := 0
			for _, o := range p.Offerings {
				if g.Compatible(o.Labels, o.Taints) {
					n++
				}
			}
			if n == 0 || len(issues) > 0 {
				t.Errorf("%d compatible offerings, issues %v", n, issues)
			}
		})
	}
}

func TestDefaultNodePool(t *testing.T) {
	p, _ := problemOf(t, readDocs(t, podDoc("p", "  containers: [{name: c}]\n")))
	if len(p.Pools) != 1 || p.Pools[0].Name != DefaultNodePoolName {
		t.Fatalf("pools %v", p.Pools)
	}
	if len(p.Offerings) == 0 {
		t.Fatal("default pool has no offerings")
	}
	for _, o := range p.Offerings {
		if o.CapacityType != model.OnDemand || o.Labels[model.LabelArch] != "amd64" || o.Labels[model.LabelOS] != "linux" || o.NodePool != DefaultNodePoolName {
			t.Fatalf("offering %s (%s, %s) not an on-demand amd64 linux offering of the default pool", o.ID, o.CapacityType, o.Labels[model.LabelArch])
		}
	}
	// A caller's default replaces the built-in one.
	def := model.NodePool{Name: "mine", Requirements: model.Requirements{{Key: model.LabelCapacityType, Operator: model.OpIn, Values: []string{model.Spot}}}}
	p2, _, err := readDocs(t, podDoc("p", "  containers: [{name: c}]\n")).Problem(testCatalog(t), ProblemOptions{DefaultNodePool: &def})
	if err != nil || p2.Pools[0].Name != "mine" || p2.Offerings[0].CapacityType != model.Spot {
		t.Errorf("custom default pool: %v", err)
	}
}

func TestProblemErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		docs []string
		want []string
	}{
		{
			name: "contradictory requirements",
			docs: []string{strings.Replace(nodePoolGeneral, "values: [m5]}", "values: [m5]}\n      - {key: packwright.dev/capacity-type, operator: NotIn, values: [on-demand]}", 1)},
			want: []string{"nodepool general", "requirements contradict", "packwright.dev/capacity-type"},
		},
		{
			name: "label contradicts a requirement",
			docs: []string{strings.Replace(nodePoolGeneral, "  template:\n", "  template:\n    metadata: {labels: {karpenter.k8s.aws/instance-family: c5}}\n", 1)},
			want: []string{"nodepool general", "requirements contradict", "karpenter.k8s.aws/instance-family"},
		},
		{
			name: "label the catalog sets",
			docs: []string{strings.Replace(nodePoolGeneral, "  template:\n", "  template:\n    metadata: {labels: {topology.kubernetes.io/zone: us-east-1a}}\n", 1)},
			want: []string{"nodepool general", "label topology.kubernetes.io/zone is set by the catalog"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readDocs(t, tc.docs...).Problem(testCatalog(t), ProblemOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, _, err := (&State{}).Problem(nil, ProblemOptions{}); err == nil {
		t.Error("no error without a catalog")
	}
}

// TestUnschedulableIssues checks the reasons given for pods that nothing could ever hold.
func TestUnschedulableIssues(t *testing.T) {
	onlySmallGPU := strings.Replace(nodePoolGPU, "values: [g4dn]}", "values: [g4dn]}\n      - {key: node.kubernetes.io/instance-type, operator: In, values: [g4dn.xlarge, g4dn.2xlarge]}", 1)
	gpuTol := "  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n"
	for _, tc := range []struct {
		name string
		docs []string
		want string
	}{
		{
			name: "too many GPUs",
			docs: []string{onlySmallGPU, podDoc("train", gpuTol+"  containers: [{name: c, resources: {limits: {nvidia.com/gpu: '3'}}}]\n")},
			want: "requests 3 nvidia.com/gpu; the largest allowed offering has 1",
		},
		{
			name: "no such architecture",
			docs: []string{nodePoolGeneral, podDoc("s390", "  nodeSelector: {kubernetes.io/arch: s390x}\n  containers: [{name: c}]\n")},
			want: "nodeSelector kubernetes.io/arch=s390x matches no offering or node",
		},
		{
			name: "affinity matches nothing",
			docs: []string{nodePoolGeneral, podDoc("aff", "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c7g]}]}]}}}\n  containers: [{name: c}]\n")},
			want: "required node affinity matches no offering or node",
		},
		{
			name: "untolerated taint",
			docs: []string{nodePoolGPU, podDoc("cpu", "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n")},
			want: "does not tolerate taint nvidia.com/gpu:NoSchedule",
		},
		{
			name: "too much memory",
			docs: []string{nodePoolGeneral, podDoc("big", "  containers: [{name: c, resources: {requests: {memory: 1000Gi}}}]\n")},
			want: "requests 1000Gi memory; the largest allowed offering has",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, issues := problemOf(t, readDocs(t, tc.docs...))
			if !slices.ContainsFunc(issues, func(i Issue) bool {
				return strings.HasPrefix(i.Object, "pod shop/") && strings.Contains(i.Reason, tc.want)
			}) {
				t.Errorf("issues %v, want a pod issue containing %q", issues, tc.want)
			}
		})
	}
	// A pod that fits raises no issue.
	if _, issues := problemOf(t, readDocs(t, nodePoolGeneral, podDoc("ok", "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"))); len(issues) > 0 {
		t.Errorf("issues for a pod that fits: %v", issues)
	}
}

func TestNamespaceSelectorNote(t *testing.T) {
	_, issues := problemOf(t, readDocs(t, nodePoolGeneral, podDoc("p", `  containers: [{name: c}]
  affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: db}}, namespaceSelector: {}, topologyKey: topology.kubernetes.io/zone}]}}`)))
	if !slices.ContainsFunc(issues, func(i Issue) bool {
		return i.Object == "pod shop/p" && strings.Contains(i.Reason, "namespaceSelector is ignored")
	}) {
		t.Errorf("issues %v", issues)
	}
}

func TestSampleSnapshot(t *testing.T) {
	s, err := SampleState()
	if err != nil {
		t.Fatal(err)
	}
	p, issues := problemOf(t, s)
	if len(issues) > 0 {
		t.Errorf("issues: %v", issues)
	}
	want := map[string]int{"ml/train-resnet": 2, "shop/api": 3, "shop/cache": 2, "shop/web": 6}
	if len(p.Groups) != len(want) {
		t.Errorf("groups %v, want %v", groupNames(p), want)
	}
	for name, n := range want {
		if g := groupNamed(p, name); g == nil || g.Demand() != n {
			t.Errorf("group %s: %v, want %d pods", name, g, n)
		}
	}
	if api := groupNamed(p, "shop/api"); api != nil {
		// migrate (1 cpu, 512Mi) runs alone; api (500m, 1Gi) runs with the envoy sidecar (100m, 128Mi).
		if want := (model.Resources{"cpu": 1000, "memory": 1152 * model.Mi, "pods": 1}); !api.Requests.Equal(want) {
			t.Errorf("api requests %v, want %v", api.Requests, want)
		}
		if api.MaxPerNode() != 1 || len(api.TopologySpread) != 1 {
			t.Errorf("api: max per node %d, spread %v", api.MaxPerNode(), api.TopologySpread)
		}
	}
	if len(p.Nodes) != 3 {
		t.Fatalf("nodes %d", len(p.Nodes))
	}
	for _, n := range p.Nodes {
		if n.Price <= 0 || len(n.Pods) < 3 {
			t.Errorf("node %s: price %v, %d pods", n.Name, n.Price, len(n.Pods))
		}
	}
	if !slices.Equal(p.Zones, []string{"us-east-1a", "us-east-1b", "us-east-1c"}) {
		t.Errorf("zones %v", p.Zones)
	}
	// The GPU device plugin runs only on NVIDIA offerings.
	cat := testCatalog(t)
	for _, o := range p.Offerings {
		it, _ := cat.ByName(o.InstanceType)
		cpu := it.Allocatable(nil)[model.CPU] - o.Allocatable[model.CPU]
		want := int64(150) // kube-proxy 100m + node-exporter 50m
		if it.GPUs > 0 {
			want += 50 // nvidia-device-plugin
		}
		if cpu != want {
			t.Errorf("offering %s: DaemonSet cpu %dm, want %dm", o.ID, cpu, want)
			break
		}
	}
}

// TestProblemConcurrent runs Problem on one State from several goroutines; go test -race checks that it only
// reads the State.
func TestProblemConcurrent(t *testing.T) {
	s, err := SampleState()
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, err := s.Problem(cat, ProblemOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
