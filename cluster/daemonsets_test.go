package cluster

import (
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

const (
	// nodePoolGPU allows on-demand g4dn instances, tainted for GPU pods only.
	nodePoolGPU = `apiVersion: packwright.dev/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
      requirements:
      - {key: packwright.dev/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g4dn]}`
)

func daemonSetDoc(name, spec string) string {
	return `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ` + name + `, namespace: kube-system}
spec:
  selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec:
` + spec
}

// TestDaemonSetOverhead checks that each DaemonSet's requests come off exactly the offerings it would run on:
// those whose labels its nodeSelector and node affinity match and whose taints it tolerates.
func TestDaemonSetOverhead(t *testing.T) {
	s := readDocs(t, nodePoolGeneral, nodePoolGPU,
		// Runs everywhere: tolerates every taint.
		daemonSetDoc("everywhere", `      tolerations: [{operator: Exists}]
      containers: [{name: c, resources: {requests: {cpu: 100m, memory: 100Mi}}}]`),
		// Selects GPU nodes and tolerates their taint.
		daemonSetDoc("gpu-plugin", `      nodeSelector: {karpenter.k8s.aws/instance-gpu-manufacturer: nvidia}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, resources: {requests: {cpu: 200m}}}]`),
		// Tolerates nothing: kept off the tainted GPU pool, runs on general.
		daemonSetDoc("untainted-only", `      containers: [{name: c, resources: {requests: {memory: 50Mi}}}]`),
		// Selects arm64 through node affinity: matches no offering of either pool.
		daemonSetDoc("arm-only", `      tolerations: [{operator: Exists}]
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]}]}}}
      containers: [{name: c, resources: {requests: {cpu: '1'}}}]`),
	)
	cat := testCatalog(t)
	p, _ := problemOf(t, s)

	want := map[string]model.Resources{
		"general": {"cpu": 100, "memory": 150 * model.Mi, "pods": 2},
		"gpu":     {"cpu": 300, "memory": 100 * model.Mi, "pods": 2},
	}
	pools, err := s.pools(ProblemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]int{}
	for _, pool := range pools {
		base, err := cat.Offerings(pool, nil)
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]model.Offering{}
		for _, o := range base {
			byID[o.ID] = o
		}
		for _, o := range p.Offerings {
			if o.NodePool != pool.Name {
				continue
			}
			b, ok := byID[o.ID]
			if !ok {
				t.Fatalf("offering %s not from the catalog", o.ID)
			}
			if got := b.Allocatable.Sub(o.Allocatable); !got.Equal(want[pool.Name]) {
				t.Errorf("offering %s: overhead %v, want %v", o.ID, got, want[pool.Name])
			}
			checked[pool.Name]++
		}
		if checked[pool.Name] != len(base) {
			t.Errorf("pool %s: %d offerings, want all %d of the catalog", pool.Name, checked[pool.Name], len(base))
		}
	}
	if checked["general"] == 0 || checked["gpu"] == 0 {
		t.Errorf("offerings checked per pool: %v", checked)
	}
}

// TestDaemonSetDropsOfferings checks that offerings too small for their daemons are dropped, with an Issue.
func TestDaemonSetDropsOfferings(t *testing.T) {
	s := readDocs(t, nodePoolGeneral, daemonSetDoc("big", `      containers: [{name: c, resources: {requests: {memory: 20Gi}}}]`))
	p, issues := problemOf(t, s)
	for _, o := range p.Offerings {
		// m5.large and m5.xlarge (8 and 16 GiB) cannot hold a 20 GiB daemon; m5.2xlarge (32 GiB) can.
		if o.InstanceType == "m5.large" || o.InstanceType == "m5.xlarge" {
			t.Errorf("offering %s kept: allocatable %v", o.ID, o.Allocatable)
		}
		if o.Allocatable[model.Memory] < 0 {
			t.Errorf("offering %s: negative memory", o.ID)
		}
	}
	if !hasOffering(p, "m5.2xlarge") {
		t.Error("m5.2xlarge dropped")
	}
	found := false
	for _, is := range issues {
		if is.Object == "nodepool general" && strings.Contains(is.Reason, "offerings dropped: the DaemonSets that would run there do not fit") {
			found = true
		}
	}
	if !found {
		t.Errorf("no issue about dropped offerings: %v", issues)
	}
}

func hasOffering(p *model.Problem, instanceType string) bool {
	for _, o := range p.Offerings {
		if o.InstanceType == instanceType {
			return true
		}
	}
	return false
}
