package cluster

import (
	"testing"
)

func TestIsPending(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta string // extra metadata lines
		spec string // extra spec lines
		st   string // status
		want bool
	}{
		{name: "unbound pending", st: "phase: Pending", want: true},
		{name: "no phase yet", want: true},
		{name: "bound", spec: "  nodeName: n1\n", st: "phase: Pending"},
		{name: "terminating", meta: "  deletionTimestamp: '2025-01-01T00:00:00Z'\n", st: "phase: Pending"},
		{name: "succeeded", st: "phase: Succeeded"},
		{name: "failed", st: "phase: Failed"},
		{name: "unknown phase is not terminal", st: "phase: Unknown", want: true},
		{name: "daemonset pod", meta: "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u, controller: true}]\n"},
		{name: "replicaset pod", meta: "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}]\n", want: true},
		{name: "daemonset owner that is not the controller", meta: "  ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: ds, uid: u}]\n", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n" + tc.meta + "spec:\n  containers: [{name: c}]\n" + tc.spec
			if tc.st != "" {
				doc += "status: {" + tc.st + "}\n"
			}
			s := readDocs(t, doc)
			if got := IsPending(s.Pods[0]); got != tc.want {
				t.Errorf("IsPending = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProblemPendingOnly checks that only pending pods become groups, that bound pods land on their node and
// that scheduling-gated pods are reported rather than planned.
func TestProblemPendingOnly(t *testing.T) {
	node := `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {node.kubernetes.io/instance-type: m5.large, topology.kubernetes.io/zone: us-east-1a, karpenter.sh/capacity-type: on-demand}}
status: {allocatable: {cpu: 1930m, memory: 7Gi, pods: '29'}}`
	c := "  containers: [{name: c, resources: {requests: {cpu: 100m}}}]\n"
	s := readDocs(t, node,
		podDoc("pending", c),
		podDoc("bound", "  nodeName: n1\n"+c),
		podDoc("bound-done", "  nodeName: n1\n"+c)+"status: {phase: Succeeded}",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: bound-terminating, namespace: shop, deletionTimestamp: '2025-01-01T00:00:00Z'}\nspec:\n  nodeName: n1\n"+c,
		podDoc("done", c)+"status: {phase: Failed}",
		podDoc("gated", "  schedulingGates: [{name: example.com/quota}]\n"+c),
		podDoc("lost", "  nodeName: gone\n"+c),
	)
	p, issues := problemOf(t, s)
	if got := groupNames(p); len(got) != 1 || got[0] != "shop/pending" {
		t.Errorf("groups = %v, want [shop/pending]", got)
	}
	var bound []string
	for _, bp := range p.Nodes[0].Pods {
		bound = append(bound, bp.Ref.Name)
	}
	// A terminating pod still holds its resources; a finished one does not.
	if len(bound) != 2 || bound[0] != "bound" || bound[1] != "bound-terminating" {
		t.Errorf("bound pods = %v, want [bound bound-terminating]", bound)
	}
	want := map[string]string{
		"pod shop/gated": "has scheduling gates (example.com/quota); not planned until they are removed",
		"pod shop/lost":  "bound to node gone, which the snapshot does not have; ignored",
	}
	for _, is := range issues {
		if w, ok := want[is.Object]; ok {
			if is.Reason != w {
				t.Errorf("issue %s: %q, want %q", is.Object, is.Reason, w)
			}
			delete(want, is.Object)
		}
	}
	for obj := range want {
		t.Errorf("no issue for %s; issues: %v", obj, issues)
	}
}
