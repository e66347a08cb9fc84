package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlList is what `kubectl get pods,nodes,nodepools,daemonsets,pdb -A -o yaml` prints: one List of
// objects of every kind.
const kubectlList = `apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-1
    namespace: shop
  spec:
    containers:
    - name: web
      resources: {requests: {cpu: 250m}}
  status: {phase: Pending}
- apiVersion: v1
  kind: Node
  metadata:
    name: ip-10-0-1-1.ec2.internal
    labels: {node.kubernetes.io/instance-type: m5.large}
  status:
    allocatable: {cpu: 1930m, memory: 7Gi, pods: "29"}
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: default}
  spec:
    template:
      spec:
        nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
        requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: kube-proxy, namespace: kube-system}
  spec:
    selector: {matchLabels: {app: kube-proxy}}
    template:
      metadata: {labels: {app: kube-proxy}}
      spec: {containers: [{name: kube-proxy, resources: {requests: {cpu: 100m}}}]}
- apiVersion: policy/v1
  kind: PodDisruptionBudget
  metadata: {name: web, namespace: shop}
  spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
kind: List
metadata:
  resourceVersion: ""
`

func TestReadFormats(t *testing.T) {
	type counts struct{ pods, nodes, daemonSets, pdbs, nodePools, nodeClaims int }
	for _, tc := range []struct {
		name string
		in   string
		opts ReadOptions
		want counts
	}{
		{name: "kubectl List", in: kubectlList, want: counts{1, 1, 1, 1, 1, 0}},
		{
			name: "multi-document YAML with comments and empty documents",
			in: "# snapshot\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n...\n--- # second\n" +
				"apiVersion: v1\nkind: Pod\nmetadata: {name: b}\n---\n# only a comment\n--- {apiVersion: v1, kind: Node, metadata: {name: node-1}}\n",
			want: counts{pods: 2, nodes: 1},
		},
		{
			name: "JSON object",
			in:   `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c"}]}}`,
			want: counts{pods: 1},
		},
		{
			name: "JSON List as kubectl -o json writes it",
			in:   `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}, {"apiVersion": "packwright.dev/v1", "kind": "NodeClaim", "metadata": {"name": "c"}, "spec": {"requirements": [], "nodeClassRef": {"group": "g", "kind": "k", "name": "n"}}}]}`,
			want: counts{pods: 1, nodeClaims: 1},
		},
		{
			name: "JSON stream and array",
			in:   `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}` + "\n" + `[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}]`,
			want: counts{pods: 1, nodes: 1},
		},
		{
			name: "typed list whose items carry no kind",
			in:   "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n",
			want: counts{pods: 2},
		},
		{
			name: "unknown kinds skipped when asked",
			in:   "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: default}\n",
			opts: ReadOptions{IgnoreUnknownKinds: true},
			want: counts{pods: 1},
		},
		{name: "empty input", in: "", want: counts{}},
		{name: "byte order mark", in: "\xef\xbb\xbfapiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n", want: counts{nodes: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if tc.name == "JSON stream and array" {
				// A top-level array is a list of objects.
				in = strings.Replace(in, "[{", `{"apiVersion": "v1", "kind": "List", "items": [{`, 1) + "}"
			}
			s, err := tc.opts.Read(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			got := counts{len(s.Pods), len(s.Nodes), len(s.DaemonSets), len(s.PodDisruptionBudgets), len(s.NodePools), len(s.NodeClaims)}
			if got != tc.want {
				t.Errorf("read %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadKubectlListProblem(t *testing.T) {
	s, err := ReadSnapshot(strings.NewReader(kubectlList))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pods[0].Namespace != "shop" || s.NodePools[0].APIVersion != "karpenter.sh/v1" || s.NodePools[0].Spec.Template.Spec.Requirements[0].Key != "karpenter.sh/capacity-type" {
		t.Errorf("decoded %v %v", s.Pods[0].ObjectMeta, s.NodePools[0])
	}
	p, _ := problemOf(t, s)
	if len(p.Groups) != 1 || len(p.Nodes) != 1 || len(p.Pools) != 1 || p.Pools[0].Name != "default" {
		t.Errorf("problem: %d groups, %d nodes, pools %v", len(p.Groups), len(p.Nodes), p.Pools)
	}
}

func TestReadErrors(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: shop}\n"
	const first = "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n---\n"
	for _, tc := range []struct {
		name string
		in   string
		opts ReadOptions
		want []string
	}{
		{
			name: "unknown kind",
			in:   first + "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n",
			want: []string{"document 2 (line 5)", "deployment shop/web", "unsupported kind apps/v1 Deployment", "IgnoreUnknownKinds"},
		},
		{
			name: "a header comment is not a document",
			in:   "# exported by hand\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
			want: []string{"document 1 (line 3)", "deployment web"},
		},
		{
			name: "unknown kind inside a List",
			in:   "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n- {apiVersion: v1, kind: Service, metadata: {name: svc, namespace: shop}}\n",
			want: []string{"document 1 (line 1) item 2", "service shop/svc", "unsupported kind v1 Service"},
		},
		{
			name: "unsupported version of a known kind, even when ignoring unknown kinds",
			in:   "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: old}\n",
			opts: ReadOptions{IgnoreUnknownKinds: true},
			want: []string{"nodepool old", "unsupported apiVersion karpenter.sh/v1beta1 (want packwright.dev/v1 or karpenter.sh/v1)"},
		},
		{
			name: "malformed YAML",
			in:   first + "\napiVersion: v1\nkind: Pod\nmetadata: {name: a\nspec: {}\n",
			want: []string{"document 2 (line 6)", "invalid YAML", "line 8"},
		},
		{
			name: "bad indentation",
			in:   first + "apiVersion: v1\nkind: Pod\n metadata: x\n",
			want: []string{"document 2 (line 5)", "invalid YAML", "line 7"},
		},
		{
			name: "malformed JSON",
			in:   "{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"a\",}}\n",
			want: []string{"document 1 (line 3)", "invalid JSON"},
		},
		{
			name: "not an object",
			in:   first + "- a\n- b\n",
			want: []string{"document 2 (line 5)", "not a Kubernetes object"},
		},
		{
			name: "scalar document",
			in:   "hello\n",
			want: []string{"document 1 (line 1)", "not a Kubernetes object"},
		},
		{
			name: "no kind",
			in:   "apiVersion: v1\nmetadata: {name: a}\n",
			want: []string{"document 1 (line 1)", "object without kind"},
		},
		{
			name: "no apiVersion",
			in:   "kind: Pod\nmetadata: {name: a, namespace: shop}\n",
			want: []string{"pod shop/a without apiVersion"},
		},
		{
			name: "no name",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {namespace: shop}\n",
			want: []string{"document 1 (line 1)", "pod without metadata.name"},
		},
		{
			name: "duplicate",
			in:   pod + "---\n" + pod,
			want: []string{"document 2 (line 5)", "pod shop/web-1: duplicate object"},
		},
		{
			name: "kind of the wrong type",
			in:   "apiVersion: v1\nkind: [Pod]\n",
			want: []string{"document 1 (line 1)", "kind: want a JSON string, got array"},
		},
		{
			name: "invalid quantity",
			in:   pod + "spec:\n  containers:\n  - {name: app}\n  - name: sidecar\n    resources: {requests: {cpu: 2 cores}}\n",
			want: []string{"pod shop/web-1", "spec.containers[1].resources.requests[cpu]", "quantities must match"},
		},
		{
			name: "negative quantity",
			in:   pod + "spec:\n  containers:\n  - name: app\n    resources: {requests: {memory: -1Gi}}\n",
			want: []string{"pod shop/web-1", "container app", "resources.requests[memory]", "quantity -1Gi is negative"},
		},
		{
			name: "invalid overhead",
			in:   pod + "spec:\n  overhead: {cpu: lots}\n  containers: [{name: app}]\n",
			want: []string{"pod shop/web-1", "spec.overhead[cpu]", "quantities must match"},
		},
		{
			name: "field of the wrong type",
			in:   pod + "spec:\n  containers:\n  - name: app\n    ports: [{containerPort: http}]\n",
			want: []string{"pod shop/web-1", "spec.containers[0].ports[0].containerPort", "want an integer (int32), got a JSON string"},
		},
		{
			name: "invalid node quantity",
			in:   "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: 2, memory: 8GB}\n",
			want: []string{"node n1", "status.allocatable[memory]", "quantities must match"},
		},
		{
			name: "negative node capacity",
			in:   "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  capacity: {cpu: '-2'}\n",
			want: []string{"node n1", "status.capacity[cpu]", "negative"},
		},
		{
			name: "node taint without effect",
			in:   "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec:\n  taints: [{key: a}]\n",
			want: []string{"node n1", "spec.taints[0]", "taint has no effect"},
		},
		{
			name: "invalid NodePool limit",
			in:   "apiVersion: packwright.dev/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  limits: {cpu: many}\n  template: {spec: {requirements: []}}\n",
			want: []string{"nodepool general", "spec.limits[cpu]", "quantities must match"},
		},
		{
			name: "invalid NodePool requirement",
			in:   "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  template: {spec: {requirements: [{key: karpenter.sh/capacity-type, operator: In}]}}\n",
			want: []string{"nodepool general", "spec.template.spec.requirements[0]", "karpenter.sh/capacity-type"},
		},
		{
			name: "invalid NodePool duration",
			in:   "apiVersion: packwright.dev/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  template: {spec: {expireAfter: soon, requirements: []}}\n",
			want: []string{"nodepool general", "spec.template.spec.expireAfter", "soon"},
		},
		{
			name: "invalid node affinity",
			in:   pod + "spec:\n  containers: [{name: a}]\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near, values: [b]}]}]}}}\n",
			want: []string{"pod shop/web-1", "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]", "Near"},
		},
		{
			name: "invalid toleration",
			in:   pod + "spec:\n  containers: [{name: a}]\n  tolerations: [{operator: Equal, value: x}]\n",
			want: []string{"pod shop/web-1", "spec.tolerations[0]", "empty key needs operator Exists"},
		},
		{
			name: "invalid spread",
			in:   pod + "spec:\n  containers: [{name: a}]\n  topologySpreadConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]\n",
			want: []string{"pod shop/web-1", "spec.topologySpreadConstraints[0]", "maxSkew must be positive"},
		},
		{
			name: "minDomains without DoNotSchedule",
			in:   pod + "spec:\n  containers: [{name: a}]\n  topologySpreadConstraints: [{maxSkew: 1, minDomains: 3, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]\n",
			want: []string{"pod shop/web-1", "spec.topologySpreadConstraints[0]", "minDomains needs whenUnsatisfiable DoNotSchedule"},
		},
		{
			name: "matchLabelKeys with an invalid label value",
			in:   "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: 'not a value'}}\nspec:\n  containers: [{name: c}]\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {}, matchLabelKeys: [app]}]\n",
			want: []string{"pod default/p", "spec.topologySpreadConstraints[0].labelSelector with matchLabelKeys"},
		},
		{
			name: "host port out of range",
			in:   pod + "spec:\n  containers: [{name: a, ports: [{containerPort: 80, hostPort: 70000}]}]\n",
			want: []string{"pod shop/web-1", "spec.containers[0].ports[0].hostPort: 70000 is out of range"},
		},
		{
			name: "invalid DaemonSet template",
			in:   "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers: [{name: agent, resources: {limits: {memory: -5Mi}}}]\n",
			want: []string{"daemonset kube-system/agent", "pod template", "container agent", "resources.limits[memory]", "negative"},
		},
		{
			name: "lists nested too deeply",
			in:   strings.Repeat(`{"apiVersion": "v1", "kind": "List", "items": [`, 6) + strings.Repeat("]}", 6),
			want: []string{"nested too deeply"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.opts.Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestStateAdd(t *testing.T) {
	s := &State{}
	if err := s.Add(nil); err == nil {
		t.Error("Add(nil): no error")
	}
	if err := s.Add(&corev1.Service{}); err == nil || !strings.Contains(err.Error(), "unsupported object type *v1.Service") {
		t.Errorf("Add(Service) = %v", err)
	}
	st, err := NewState(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	// Namespaces default, and the State is sorted.
	if st.Pods[0].Name != "a" || st.Pods[0].Namespace != "default" {
		t.Errorf("pods %s/%s first", st.Pods[0].Namespace, st.Pods[0].Name)
	}
	if _, err := NewState(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}); err == nil {
		t.Error("duplicate nodes accepted")
	}
}
