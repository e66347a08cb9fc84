package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// replicaPod returns a pod of ReplicaSet rs (Deployment deploy, template hash hash) with extra spec lines.
func replicaPod(name, deploy, hash, labels, spec string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: shop
  labels: {app: %s, pod-template-hash: %s%s}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: %s-%s, uid: u-%s, controller: true}]
spec:
  containers: [{name: c, resources: {requests: {cpu: 250m, memory: 256Mi}}}]
%s`, name, deploy, hash, labels, deploy, hash, hash, spec)
}

func TestGroupingReplicas(t *testing.T) {
	docs := []string{nodePoolGeneral}
	for i := range 500 {
		docs = append(docs, replicaPod(fmt.Sprintf("web-7d4f-%03d", i), "web", "7d4f", "", ""))
	}
	p, _ := problemOf(t, readDocs(t, docs...))
	if len(p.Groups) != 1 {
		t.Fatalf("500 identical replicas gave %d groups: %v", len(p.Groups), groupNames(p))
	}
	g := p.Groups[0]
	if g.Name != "shop/web" || g.Demand() != 500 || g.Namespace != "shop" {
		t.Errorf("group %s in %s with %d pods, want shop/web with 500", g.Name, g.Namespace, g.Demand())
	}
	if g.Pods[0].Name != "web-7d4f-000" || g.Pods[499].Name != "web-7d4f-499" {
		t.Errorf("pods not in name order: first %v, last %v", g.Pods[0], g.Pods[499])
	}
}

func TestGrouping(t *testing.T) {
	const (
		tolA     = "  tolerations: [{key: a, operator: Exists, effect: NoSchedule}]\n"
		tolB     = "  tolerations: [{key: b, operator: Exists, effect: NoSchedule}]\n"
		tolAB    = "  tolerations: [{key: a, operator: Exists, effect: NoSchedule}, {key: b, operator: Exists, effect: NoSchedule}]\n"
		tolBA    = "  tolerations: [{key: b, operator: Exists, effect: NoSchedule}, {key: a, operator: Exists, effect: NoSchedule}]\n"
		antiWeb  = "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}]}}\n"
		antiTier = "  affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {tier: front}}, topologyKey: kubernetes.io/hostname}]}}\n"
	)
	for _, tc := range []struct {
		name string
		pods []string
		want map[string]int // group name -> demand
	}{
		{
			name: "different tolerations split",
			pods: []string{replicaPod("a1", "web", "h1", "", tolA), replicaPod("a2", "web", "h1", "", tolA), replicaPod("b1", "web", "h1", "", tolB)},
			want: map[string]int{"shop/web": 2, "shop/web-2": 1},
		},
		{
			name: "toleration order does not split",
			pods: []string{replicaPod("a1", "web", "h1", "", tolAB), replicaPod("a2", "web", "h1", "", tolBA)},
			want: map[string]int{"shop/web": 2},
		},
		{
			name: "different requests split",
			pods: []string{replicaPod("a1", "web", "h1", "", ""), strings.Replace(replicaPod("a2", "web", "h1", "", ""), "cpu: 250m", "cpu: 300m", 1)},
			want: map[string]int{"shop/web": 1, "shop/web-2": 1},
		},
		{
			name: "identical workloads without pod terms merge",
			pods: []string{replicaPod("web-1", "web", "h1", "", ""), replicaPod("api-1", "api", "h2", "", "")},
			// Sorted by pod name, api-1 comes first and names the group; labels no selector reads do not split.
			want: map[string]int{"shop/api+1": 2},
		},
		{
			name: "labels an anti-affinity term reads split",
			pods: []string{
				replicaPod("x1", "x", "h1", ", tier: front", ""), replicaPod("x2", "x", "h1", ", tier: back", ""),
				replicaPod("z1", "z", "h3", "", "  nodeSelector: {kubernetes.io/arch: amd64}\n"+antiTier),
			},
			want: map[string]int{"shop/x": 1, "shop/x-2": 1, "shop/z": 1},
		},
		{
			name: "labels a bound pod's anti-affinity reads split",
			pods: []string{
				nodeDoc("node-a", "", ""),
				replicaPod("z1", "z", "h3", "", "  nodeName: node-a\n"+antiTier),
				replicaPod("x1", "x", "h1", ", tier: front", ""), replicaPod("x2", "x", "h1", ", tier: back", ""),
			},
			want: map[string]int{"shop/x": 1, "shop/x-2": 1},
		},
		{
			name: "pods with pod terms split by owner",
			pods: []string{replicaPod("w1", "web", "h1", "", antiWeb), replicaPod("w2", "web", "h2", "", antiWeb), replicaPod("w3", "web", "h2", "", antiWeb)},
			want: map[string]int{"shop/web": 1, "shop/web-2": 2},
		},
		{
			name: "unowned pods are named after the first pod",
			pods: []string{podDoc("solo-b", "  containers: [{name: c}]\n"), podDoc("solo-a", "  containers: [{name: c}]\n")},
			want: map[string]int{"shop/solo-a+1": 2},
		},
		{
			name: "host ports split",
			pods: []string{replicaPod("a1", "web", "h1", "", ""), strings.Replace(replicaPod("a2", "web", "h1", "", ""), "{name: c,", "{name: c, ports: [{containerPort: 80, hostPort: 80}],", 1)},
			want: map[string]int{"shop/web": 1, "shop/web-2": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := problemOf(t, readDocs(t, append([]string{nodePoolGeneral}, tc.pods...)...))
			got := map[string]int{}
			for _, g := range p.Groups {
				got[g.Name] = g.Demand()
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("groups = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGroupingDeterministic checks that the order of the input changes neither groups nor names.
func TestGroupingDeterministic(t *testing.T) {
	var docs []string
	for i := range 30 {
		spec := ""
		if i%3 == 0 {
			spec = "  tolerations: [{key: a, operator: Exists}]\n"
		}
		docs = append(docs, replicaPod(fmt.Sprintf("p%02d", i), []string{"web", "api"}[i%2], "h", "", spec))
	}
	read := readDocs(t, docs...)
	want, _ := problemOf(t, read)

	// Added one by one in reverse, without Sort: Problem must not depend on it.
	added := &State{}
	for _, pod := range slices.Backward(read.Pods) {
		if err := added.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := problemOf(t, added); !reflect.DeepEqual(got.Groups, want.Groups) {
		t.Fatalf("groups depend on Add order:\n got %v\nwant %v", groupNames(got), groupNames(want))
	}
	if added.Pods[0].Name != "p29" {
		t.Errorf("Problem sorted the caller's State")
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		got, _ := problemOf(t, readDocs(t, docs...))
		if !reflect.DeepEqual(got.Groups, want.Groups) {
			t.Fatalf("groups depend on input order:\n got %v\nwant %v", groupNames(got), groupNames(want))
		}
	}
}
