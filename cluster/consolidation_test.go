package cluster

import (
	"cmp"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/packwright/packwright/model"
)

// consNode returns a Node document: an on-demand m5.large of NodePool general in us-east-1a, with extra
// metadata lines (indented by two) such as annotations.
func consNode(name, extraMeta string) string {
	return `apiVersion: v1
kind: Node
metadata:
  name: ` + name + `
  labels:
    node.kubernetes.io/instance-type: m5.large
    topology.kubernetes.io/zone: us-east-1a
    packwright.dev/capacity-type: on-demand
    packwright.dev/nodepool: general
    kubernetes.io/hostname: ` + name + "\n" + extraMeta + `
status:
  capacity: {cpu: '2', memory: 8Gi, pods: '29'}
  allocatable: {cpu: 1930m, memory: 7Gi, pods: '29'}`
}

// consPod returns a Pod document in namespace shop bound to node, owned by ReplicaSet web-abc unless
// owner is "none", with extra metadata and spec lines (indented by two).
func consPod(name, node, owner, extraMeta, extraSpec string) string {
	meta := "  labels: {app: web}\n"
	switch owner {
	case "none":
	case "":
		meta += "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u1, controller: true}]\n"
	default:
		meta += "  ownerReferences: [{apiVersion: apps/v1, kind: " + owner + ", name: o, uid: u2, controller: true}]\n"
	}
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\n" + meta + extraMeta +
		"spec:\n  nodeName: " + node + "\n  containers: [{name: c, image: x, resources: {requests: {cpu: 200m, memory: 256Mi}}}]\n" + extraSpec +
		"status: {phase: Running}"
}

func consPool(disruption string) string {
	return nodePoolGeneral + "\n  disruption: " + disruption
}

const underutilized = "{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m, budgets: [{nodes: '100%'}]}"

func TestConsolidationInput(t *testing.T) {
	cases := []struct {
		name string
		docs []string
		// candidates and pinned name nodes; reason is a substring of node b's NotCandidate reason.
		candidates []string
		reason     string
		movable    int
		// dsPods is the number of pods that go with candidate a.
		dsPods int
	}{
		{"movable pods", []string{consPool(underutilized), consNode("a", ""), consNode("b", ""),
			consPod("p1", "a", "", "", ""), consPod("p2", "b", "", "", "")}, []string{"a", "b"}, "", 2, 0},
		{"node annotated do-not-disrupt", []string{consPool(underutilized), consNode("a", ""),
			consNode("b", "  annotations: {karpenter.sh/do-not-disrupt: 'true'}"), consPod("p2", "b", "", "", "")},
			[]string{"a"}, "annotated karpenter.sh/do-not-disrupt", 0, 0},
		{"pod annotated do-not-disrupt", []string{consPool(underutilized), consNode("a", ""), consNode("b", ""),
			consPod("p2", "b", "", "  annotations: {packwright.dev/do-not-disrupt: 'true'}\n", "")},
			[]string{"a"}, "pod shop/p2 is annotated packwright.dev/do-not-disrupt", 0, 0},
		{"do-not-disrupt false is ignored", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "  annotations: {packwright.dev/do-not-disrupt: 'false'}\n", "")},
			[]string{"b"}, "", 1, 0},
		{"bare pod", []string{consPool(underutilized), consNode("a", ""), consNode("b", ""),
			consPod("p2", "b", "none", "", "")}, []string{"a"}, "pod shop/p2 has no controller", 0, 0},
		{"hostPath", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", "  volumes: [{name: logs, hostPath: {path: /var/log}}]\n")},
			nil, "uses hostPath volume logs", 0, 0},
		{"PVC", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", "  volumes: [{name: data, persistentVolumeClaim: {claimName: data-0}}]\n")},
			nil, "uses PersistentVolumeClaim data-0", 0, 0},
		{"emptyDir is fine", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", "  volumes: [{name: tmp, emptyDir: {}}]\n")}, []string{"b"}, "", 1, 0},
		{"PDB status allows none", []string{consPool(underutilized), consNode("a", ""), consNode("b", ""),
			consPod("p2", "b", "", "", ""), pdbDoc("{maxUnavailable: 1, selector: {matchLabels: {app: web}}}", "{observedGeneration: 1, disruptionsAllowed: 0}")},
			[]string{"a"}, "PodDisruptionBudget shop/web, which allows no disruption", 0, 0},
		{"PDB status allows one", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", ""), pdbDoc("{maxUnavailable: 0, selector: {matchLabels: {app: web}}}", "{observedGeneration: 1, disruptionsAllowed: 1}")},
			[]string{"b"}, "", 1, 0},
		{"PDB spec without status: minAvailable equals running", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", ""), pdbDoc("{minAvailable: 1, selector: {matchLabels: {app: web}}}", "{}")},
			nil, "allows no disruption", 0, 0},
		{"PDB selecting other pods", []string{consPool(underutilized), consNode("b", ""),
			consPod("p2", "b", "", "", ""), pdbDoc("{maxUnavailable: 0, selector: {matchLabels: {app: db}}}", "{}")},
			[]string{"b"}, "", 1, 0},
		{"DaemonSet and mirror pods go with the node", []string{consPool(underutilized), consNode("a", ""),
			consPod("ds", "a", "DaemonSet", "", ""), consPod("mirror", "a", "Node", "", ""), consPod("p1", "a", "", "", "")},
			[]string{"a"}, "", 1, 2},
		{"WhenEmpty keeps busy nodes", []string{consPool("{consolidationPolicy: WhenEmpty, consolidateAfter: 1m}"),
			consNode("a", ""), consNode("b", ""), consPod("ds", "a", "DaemonSet", "", ""), consPod("p2", "b", "", "", "")},
			[]string{"a"}, "consolidates only empty nodes (WhenEmpty)", 0, 1},
		{"unmanaged node", []string{consPool(underutilized), strings.Replace(consNode("b", ""), "    packwright.dev/nodepool: general\n", "", 1)},
			nil, "not managed by a NodePool", 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := readDocs(t, tc.docs...)
			in, not, _, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var cands []string
			for _, c := range in.Candidates {
				cands = append(cands, c.Name)
			}
			if fmt.Sprint(cands) != fmt.Sprint(tc.candidates) {
				t.Errorf("candidates %v, want %v (not candidates: %v)", cands, tc.candidates, not)
			}
			if tc.reason != "" {
				if len(not) == 0 || not[len(not)-1].Node != "b" || !strings.Contains(not[len(not)-1].Reason, tc.reason) {
					t.Errorf("not candidates %v, want b with %q", not, tc.reason)
				}
				if len(in.Problem.Nodes) == 0 || in.Problem.Nodes[len(in.Problem.Nodes)-1].Name != "b" || len(in.Problem.Nodes[len(in.Problem.Nodes)-1].Pods) != strings.Count(strings.Join(tc.docs, "\n"), "nodeName: b") {
					t.Errorf("pinned node b does not stay with its pods: %+v", in.Problem.Nodes)
				}
			} else if len(not) > 0 {
				t.Errorf("unexpected not candidates %v", not)
			}
			movable := 0
			for _, g := range in.Problem.Groups {
				movable += g.Demand()
				for _, ref := range g.Pods {
					ci, ok := in.Origin[ref]
					if !ok || ci < 0 || ci >= len(in.Candidates) {
						t.Errorf("pod %s: origin %d, %v", ref, ci, ok)
					}
				}
			}
			if movable != tc.movable || len(in.Origin) != tc.movable {
				t.Errorf("movable pods %d (origin %d), want %d", movable, len(in.Origin), tc.movable)
			}
			if tc.dsPods > 0 && (len(in.Candidates) == 0 || len(in.Candidates[0].Pods) != tc.dsPods) {
				t.Errorf("candidate pods %+v, want %d that go with the node", in.Candidates, tc.dsPods)
			}
		})
	}
}

func pdbDoc(spec, status string) string {
	return "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop, generation: 1}\nspec: " + spec + "\nstatus: " + status
}

func TestConsolidationBudgets(t *testing.T) {
	cases := []struct {
		name       string
		disruption string
		nodes      int
		deleting   int
		want       int
		capped     bool
		now        string // RFC 3339; default a Monday, 12:30 UTC
	}{
		{"count", "{consolidateAfter: 1m, budgets: [{nodes: '3'}]}", 10, 0, 3, true, ""},
		{"percent rounds up", "{consolidateAfter: 1m, budgets: [{nodes: '20%'}]}", 6, 0, 2, true, ""},
		{"most restrictive wins", "{consolidateAfter: 1m, budgets: [{nodes: '50%'}, {nodes: '1'}]}", 10, 0, 1, true, ""},
		{"nodes being deleted count against it", "{consolidateAfter: 1m, budgets: [{nodes: '3'}]}", 10, 2, 1, true, ""},
		{"default 10%", "{consolidateAfter: 1m}", 10, 0, 1, true, ""},
		{"a daily budget outside its hour", "{consolidateAfter: 1m, budgets: [{nodes: '0', schedule: '@daily', duration: 1h}]}", 10, 0, 0, false, ""},
		{"a daily budget inside its hour", "{consolidateAfter: 1m, budgets: [{nodes: '0', schedule: '@daily', duration: 1h}]}", 10, 0, 0, true, "2026-06-01T00:30:00Z"},
		{"business hours on a Monday", "{consolidateAfter: 1m, budgets: [{nodes: '0', schedule: '0 9 * * 1-5', duration: 8h}, {nodes: '5'}]}", 10, 0, 0, true, ""},
		{"business hours on a Sunday", "{consolidateAfter: 1m, budgets: [{nodes: '0', schedule: '0 9 * * 1-5', duration: 8h}, {nodes: '5'}]}", 10, 0, 5, true, "2026-05-31T12:30:00Z"},
		{"business hours ended", "{consolidateAfter: 1m, budgets: [{nodes: '0', schedule: '0 9 * * 1-5', duration: 8h}, {nodes: '5'}]}", 10, 0, 5, true, "2026-06-01T17:00:00Z"},
		{"drift-only budget does not apply", "{consolidateAfter: 1m, budgets: [{nodes: '0', reasons: [Drifted]}, {nodes: '4', reasons: [Underutilized]}]}", 10, 0, 4, true, ""},
		{"zero", "{consolidateAfter: 1m, budgets: [{nodes: '0'}]}", 10, 0, 0, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs := []string{consPool(tc.disruption)}
			for i := range tc.nodes {
				meta := ""
				if i < tc.deleting {
					meta = "  deletionTimestamp: '2026-01-01T00:00:00Z'\n  finalizers: [packwright.dev/termination]"
				}
				docs = append(docs, consNode(fmt.Sprintf("n%02d", i), meta))
			}
			s := readDocs(t, docs...)
			now, err := time.Parse(time.RFC3339, cmp.Or(tc.now, "2026-06-01T12:30:00Z"))
			if err != nil {
				t.Fatal(err)
			}
			in, not, _, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := in.MaxRemoved["general"]
			if got != tc.want || ok != tc.capped {
				t.Errorf("MaxRemoved %v, want %d (capped %v)", in.MaxRemoved, tc.want, tc.capped)
			}
			if len(in.Candidates)+len(not) != tc.nodes || len(not) != tc.deleting {
				t.Errorf("%d candidates, not %v", len(in.Candidates), not)
			}
		})
	}
}

func TestConsolidationBudgetsRejectBadSchedules(t *testing.T) {
	for _, b := range []string{"{nodes: '1', schedule: 'every day', duration: 1h}", "{nodes: '1', schedule: '@daily'}"} {
		s := readDocs(t, consPool("{consolidateAfter: 1m, budgets: ["+b+"]}"), consNode("a", ""))
		_, _, _, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{})
		if err == nil || !strings.Contains(err.Error(), "nodepool general: spec.disruption.budgets[0]") {
			t.Errorf("budget %s: err %v", b, err)
		}
	}
}

func TestBudgetNodesRejectsBadValues(t *testing.T) {
	for _, s := range []string{"x", "-1", "101%", "%"} {
		if _, err := budgetNodes(s, 10); err == nil {
			t.Errorf("budgetNodes(%q) accepted", s)
		}
	}
}

// TestConsolidationInputPendingLeftOut checks that pending pods are not groups of the consolidation problem.
func TestConsolidationInputPendingLeftOut(t *testing.T) {
	s := readDocs(t, consPool(underutilized), consNode("a", ""), consPod("p1", "a", "", "", ""),
		podDoc("pending", "  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]"))
	in, _, issues, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Problem.Groups) != 1 || in.Problem.Groups[0].Pods[0] != (model.PodRef{Namespace: "shop", Name: "p1"}) {
		t.Errorf("groups %+v", in.Problem.Groups)
	}
	found := false
	for _, is := range issues {
		found = found || strings.Contains(is.String(), "1 pending pods: left out")
	}
	if !found {
		t.Errorf("issues %v", issues)
	}
}
