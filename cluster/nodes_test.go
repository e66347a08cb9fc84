package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/packwright/packwright/model"
)

func nodeDoc(name, labels, extraSpec string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %s
  labels: {kubernetes.io/hostname: %s%s}
spec: {%s}
status:
  capacity: {cpu: '2', memory: 8Gi, pods: '29'}
  allocatable: {cpu: 1930m, memory: 7Gi, pods: '29'}`, name, name, labels, extraSpec)
}

func TestExistingNodePricing(t *testing.T) {
	cat := testCatalog(t)
	price := func(typ, zone, ct string) float64 {
		p, ok := cat.Price(typ, zone, ct)
		if !ok || p <= 0 {
			t.Fatalf("catalog has no price for %s %s %s", typ, zone, ct)
		}
		return p
	}
	for _, tc := range []struct {
		name      string
		labels    string
		wantType  string
		wantCT    string
		wantPrice float64
		wantIssue string
	}{
		{
			name:      "packwright capacity type",
			labels:    ", node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1a, packwright.dev/capacity-type: spot",
			wantType:  "m5.large",
			wantCT:    model.Spot,
			wantPrice: price("m5.large", "us-east-1a", model.Spot),
		},
		{
			name:      "karpenter capacity type",
			labels:    ", node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1b, karpenter.sh/capacity-type: on-demand",
			wantType:  "m5.large",
			wantCT:    model.OnDemand,
			wantPrice: price("m5.large", "us-east-1b", model.OnDemand),
		},
		{
			name:      "eks managed node group, spot",
			labels:    ", node.kubernetes.io/instance-type: c6i.large, topology.kubernetes.io/zone: us-east-1c, eks.amazonaws.com/capacityType: SPOT",
			wantType:  "c6i.large",
			wantCT:    model.Spot,
			wantPrice: price("c6i.large", "us-east-1c", model.Spot),
		},
		{
			name:      "eks managed node group, on-demand, beta labels",
			labels:    ", beta.kubernetes.io/instance-type: r6i.xlarge, failure-domain.beta.kubernetes.io/zone: us-east-1a, eks.amazonaws.com/capacityType: ON_DEMAND",
			wantType:  "r6i.xlarge",
			wantCT:    model.OnDemand,
			wantPrice: price("r6i.xlarge", "us-east-1a", model.OnDemand),
		},
		{
			name:      "no capacity type: on-demand, reported",
			labels:    ", node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1a",
			wantType:  "m5.large",
			wantCT:    model.OnDemand,
			wantPrice: price("m5.large", "us-east-1a", model.OnDemand),
			wantIssue: "no capacity-type label",
		},
		{
			name:      "unknown instance type: price 0, reported",
			labels:    ", node.kubernetes.io/instance-type: x9.huge, topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: spot",
			wantType:  "x9.huge",
			wantCT:    model.Spot,
			wantIssue: `the catalog has no spot price for x9.huge in zone "us-east-1a"; priced at 0`,
		},
		{
			name:      "no instance type label: price 0, reported",
			labels:    ", karpenter.sh/capacity-type: spot",
			wantCT:    model.Spot,
			wantIssue: "no node.kubernetes.io/instance-type label; priced at 0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, issues := problemOf(t, readDocs(t, nodeDoc("n1", tc.labels, "")))
			n := p.Nodes[0]
			if n.InstanceType != tc.wantType || n.CapacityType != tc.wantCT || n.Price != tc.wantPrice {
				t.Errorf("node %s %s at %v, want %s %s at %v", n.InstanceType, n.CapacityType, n.Price, tc.wantType, tc.wantCT, tc.wantPrice)
			}
			var got []string
			for _, is := range issues {
				if is.Object == "node n1" {
					got = append(got, is.Reason)
				}
			}
			if tc.wantIssue == "" && len(got) > 0 {
				t.Errorf("unexpected issues %v", got)
			}
			if tc.wantIssue != "" && !slices.ContainsFunc(got, func(r string) bool { return strings.Contains(r, tc.wantIssue) }) {
				t.Errorf("issues %v, want one containing %q", got, tc.wantIssue)
			}
		})
	}
}

func TestExistingNodeConversion(t *testing.T) {
	const labels = ", node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1f, karpenter.sh/capacity-type: on-demand, karpenter.sh/nodepool: general"
	s := readDocs(t,
		nodePoolGeneral,
		nodeDoc("cordoned", labels, "unschedulable: true, taints: [{key: dedicated, value: db, effect: NoSchedule}]"),
		nodeDoc("orphan", ", karpenter.sh/capacity-type: on-demand, karpenter.sh/nodepool: deleted", ""),
		podDoc("api-1", `  nodeName: cordoned
  containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}], resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: api}}, topologyKey: kubernetes.io/hostname}]}}`),
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: agent-x\n  namespace: kube-system\n  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u, controller: true}]\nspec:\n  nodeName: cordoned\n  containers: [{name: c, resources: {requests: {cpu: 50m}}}]",
	)
	p, issues := problemOf(t, s)
	n := p.Nodes[0]
	if n.Name != "cordoned" || n.NodePool != "general" || n.Zone != "us-east-1f" {
		t.Fatalf("node %s pool %q zone %q", n.Name, n.NodePool, n.Zone)
	}
	wantTaints := []model.Taint{{Key: "dedicated", Value: "db", Effect: model.NoSchedule}, {Key: TaintUnschedulable, Effect: model.NoSchedule}}
	if !slices.Equal(n.Taints, wantTaints) {
		t.Errorf("taints %v, want %v", n.Taints, wantTaints)
	}
	if !n.Allocatable.Equal(model.Resources{"cpu": 1930, "memory": 7 * model.Gi, "pods": 29}) {
		t.Errorf("allocatable %v", n.Allocatable)
	}
	if len(n.Pods) != 2 {
		t.Fatalf("bound pods %v, want api-1 and the DaemonSet pod agent-x", n.Pods)
	}
	var api model.BoundPod
	for _, bp := range n.Pods {
		if bp.Ref.Name == "api-1" {
			api = bp
		}
	}
	if !api.Requests.Equal(model.Resources{"cpu": 500, "memory": model.Gi, "pods": 1}) || !slices.Equal(api.HostPorts, []int32{8080}) ||
		len(api.PodAntiAffinity) != 1 || api.PodAntiAffinity[0].TopologyKey != model.LabelHostname {
		t.Errorf("bound pod %+v", api)
	}
	// The zone of the node is a zone of the problem even though no offering is in it.
	if !slices.Contains(p.Zones, "us-east-1f") || !slices.Contains(p.Zones, "us-east-1a") {
		t.Errorf("zones %v", p.Zones)
	}
	orphan := p.Nodes[1]
	if orphan.NodePool != "" {
		t.Errorf("orphan node in pool %q", orphan.NodePool)
	}
	if !slices.ContainsFunc(issues, func(i Issue) bool {
		return i.Object == "node orphan" && strings.Contains(i.Reason, "NodePool deleted, which the snapshot does not have")
	}) {
		t.Errorf("no issue for the orphan node: %v", issues)
	}
}
