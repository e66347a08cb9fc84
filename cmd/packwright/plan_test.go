package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/packwright/packwright/cluster"
)

// runCmd runs the binary's entry point and returns the exit code, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPlanSampleTable(t *testing.T) {
	code, out, errOut := runCmd(t, "plan")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Plan for the embedded sample snapshot: 13 pending pods in 4 groups, 3 existing nodes",
		"Nodes to launch:", "COUNT  NAMES", "$/HOUR EACH",
		"Pods placed on existing nodes:", "Unschedulable pods: 0",
		"Cost:      $", "/month (730 h)", "Bound:", "Solver:    ",
		"shop/web", "shop/cache", "ml/train-resnet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// planDoc is the JSON schema of docs/plan-format.md, decoded strictly (unknown fields are an error) so that
// the documentation and the output cannot drift apart unnoticed.
type planDoc struct {
	SchemaVersion int `json:"schemaVersion"`
	Input         struct {
		Snapshot      string `json:"snapshot"`
		Catalog       string `json:"catalog"`
		PendingPods   int    `json:"pendingPods"`
		Groups        int    `json:"groups"`
		ExistingNodes int    `json:"existingNodes"`
		Offerings     int    `json:"offerings"`
	} `json:"input"`
	Solver       string   `json:"solver"`
	Status       string   `json:"status"`
	StatusReason *string  `json:"statusReason"`
	Cost         costDoc  `json:"cost"`
	SolveSeconds *float64 `json:"solveSeconds"`
	Nodes        []nodeDoc
	// Unschedulable and Issues must be arrays, never null.
	Unschedulable *[]struct {
		Pod    string `json:"pod"`
		Reason string `json:"reason"`
	} `json:"unschedulable"`
	Issues *[]struct {
		Object string `json:"object"`
		Reason string `json:"reason"`
	} `json:"issues"`
	Compare *struct {
		Current struct {
			ExistingNodes  int      `json:"existingNodes"`
			ExistingHourly float64  `json:"existingHourly"`
			NewNodes       int      `json:"newNodes"`
			NewHourly      float64  `json:"newHourly"`
			Hourly         float64  `json:"hourly"`
			Monthly        float64  `json:"monthly"`
			UnpricedNodes  []string `json:"unpricedNodes"`
			Unschedulable  int      `json:"unschedulable"`
		} `json:"current"`
		Repacked struct {
			Pods          int       `json:"pods"`
			Solver        string    `json:"solver"`
			Status        string    `json:"status"`
			StatusReason  string    `json:"statusReason"`
			Cost          costDoc   `json:"cost"`
			SolveSeconds  float64   `json:"solveSeconds"`
			Nodes         []nodeDoc `json:"nodes"`
			Unschedulable []struct {
				Pod    string `json:"pod"`
				Reason string `json:"reason"`
			} `json:"unschedulable"`
		} `json:"repacked"`
		Saving struct {
			Hourly   float64 `json:"hourly"`
			Monthly  float64 `json:"monthly"`
			Fraction float64 `json:"fraction"`
		} `json:"saving"`
	} `json:"compare"`
}

type costDoc struct {
	Hourly     *float64 `json:"hourly"`
	Monthly    *float64 `json:"monthly"`
	LowerBound *float64 `json:"lowerBound"`
	Gap        *float64 `json:"gap"`
}

type nodeDoc struct {
	Name         string            `json:"name"`
	New          *bool             `json:"new"`
	NodePool     string            `json:"nodePool"`
	InstanceType string            `json:"instanceType"`
	Zone         string            `json:"zone"`
	CapacityType string            `json:"capacityType"`
	HourlyPrice  float64           `json:"hourlyPrice"`
	Capacity     map[string]string `json:"capacity"`
	Allocatable  map[string]string `json:"allocatable"`
	Labels       map[string]string `json:"labels"`
	Taints       *[]struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Effect string `json:"effect"`
	} `json:"taints"`
	Pods []string `json:"pods"`
}

func decodePlan(t *testing.T, out string) *planDoc {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var d planDoc
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("JSON does not match the schema: %v\n%s", err, out)
	}
	if d.SchemaVersion != PlanSchemaVersion || d.Solver == "" || d.Status == "" || d.StatusReason == nil || d.SolveSeconds == nil ||
		d.Unschedulable == nil || d.Issues == nil {
		t.Fatalf("missing top-level fields: %+v", d)
	}
	checkCost(t, "cost", d.Cost)
	return &d
}

func checkCost(t *testing.T, what string, c costDoc) {
	t.Helper()
	if c.Hourly == nil || c.Monthly == nil || c.LowerBound == nil || c.Gap == nil {
		t.Fatalf("%s: missing fields: %+v", what, c)
	}
	if math.Abs(*c.Monthly-*c.Hourly*730) > 1e-3 {
		t.Errorf("%s: monthly %v is not 730 × hourly %v", what, *c.Monthly, *c.Hourly)
	}
	if *c.LowerBound > *c.Hourly+1e-6 || *c.Gap < 0 || *c.Gap > 1 {
		t.Errorf("%s: lower bound %v, hourly %v, gap %v", what, *c.LowerBound, *c.Hourly, *c.Gap)
	}
}

// checkNodes checks the node list against the schema's rules and returns every pod it places.
func checkNodes(t *testing.T, hourly float64, nodes []nodeDoc, existing map[string]bool) []string {
	t.Helper()
	var pods []string
	sum, seenExisting := 0.0, false
	for i, n := range nodes {
		if n.New == nil || n.Taints == nil || n.Labels == nil || n.Pods == nil {
			t.Fatalf("node %d: missing fields: %+v", i, n)
		}
		if *n.New {
			if seenExisting {
				t.Errorf("new node %s after an existing one", n.Name)
			}
			if want := "new-" + strconv.Itoa(i+1); n.Name != want {
				t.Errorf("node %d is named %q, want %q", i, n.Name, want)
			}
			sum += n.HourlyPrice
			if n.InstanceType == "" || n.Zone == "" || n.CapacityType == "" || n.NodePool == "" || n.HourlyPrice <= 0 {
				t.Errorf("new node %s lacks its offering: %+v", n.Name, n)
			}
			if n.Labels["topology.kubernetes.io/zone"] != n.Zone {
				t.Errorf("new node %s: zone label %q, zone %q", n.Name, n.Labels["topology.kubernetes.io/zone"], n.Zone)
			}
		} else {
			seenExisting = true
			if !existing[n.Name] {
				t.Errorf("existing node %q is not in the snapshot", n.Name)
			}
		}
		if len(n.Pods) == 0 {
			t.Errorf("node %s receives no pods", n.Name)
		}
		for _, res := range []string{"cpu", "memory", "pods"} {
			c, err1 := resource.ParseQuantity(n.Capacity[res])
			a, err2 := resource.ParseQuantity(n.Allocatable[res])
			if err1 != nil || err2 != nil {
				t.Fatalf("node %s: %s capacity %q, allocatable %q: not quantities", n.Name, res, n.Capacity[res], n.Allocatable[res])
			}
			if a.Cmp(c) > 0 || a.Sign() <= 0 {
				t.Errorf("node %s: %s allocatable %s, capacity %s", n.Name, res, a.String(), c.String())
			}
		}
		pods = append(pods, n.Pods...)
	}
	if math.Abs(sum-hourly) > 1e-4 {
		t.Errorf("new nodes cost $%v/h, cost.hourly is $%v", sum, hourly)
	}
	return pods
}

// pendingPods lists the pods of a state that planning must account for, as namespace/name.
func pendingPods(t *testing.T, s *cluster.State) []string {
	t.Helper()
	var out []string
	for _, p := range s.Pods {
		if cluster.IsPending(p) && len(p.Spec.SchedulingGates) == 0 {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(out)
	return out
}

func sampleState(t *testing.T) *cluster.State {
	t.Helper()
	s, err := cluster.SampleState()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanSampleJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodePlan(t, out)
	s := sampleState(t)
	existing := map[string]bool{}
	for _, n := range s.Nodes {
		existing[n.Name] = true
	}
	placed := checkNodes(t, *d.Cost.Hourly, d.Nodes, existing)
	for _, u := range *d.Unschedulable {
		if u.Reason == "" {
			t.Errorf("unschedulable pod %s has no reason", u.Pod)
		}
		placed = append(placed, u.Pod)
	}
	slices.Sort(placed)
	if want := pendingPods(t, s); !slices.Equal(placed, want) {
		t.Fatalf("pods on nodes or unschedulable:\n %v\nwant every pending pod exactly once:\n %v", placed, want)
	}
	if d.Input.PendingPods != len(placed) || d.Input.Catalog != "aws/us-east-1" || d.Input.ExistingNodes != 3 {
		t.Errorf("input %+v", d.Input)
	}
	if d.Compare != nil {
		t.Error("compare present without --compare")
	}
}

// TestPlanJSONDeterministic checks that two runs name nodes and hand out pods alike. The greedy solver is
// deterministic; the MIP's answer may depend on timing.
func TestPlanJSONDeterministic(t *testing.T) {
	var outs []string
	for range 2 {
		code, out, errOut := runCmd(t, "plan", "-o", "json", "--solver", "greedy")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		d := decodePlan(t, out)
		d.SolveSeconds = nil
		b, _ := json.Marshal(d)
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] {
		t.Fatalf("two greedy plans differ:\n%s\n%s", outs[0], outs[1])
	}
}

// impossibleSnapshot is the sample plus a pod that no instance type can hold.
func impossibleSnapshot(t *testing.T) string {
	t.Helper()
	extra := `
---
apiVersion: v1
kind: Pod
metadata:
  name: huge-0
  namespace: batch
spec:
  containers:
  - name: main
    image: example
    resources:
      requests:
        cpu: "2000"
        memory: 1Gi
`
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	if err := os.WriteFile(path, append(bytes.Clone(cluster.SampleSnapshot), extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlanUnschedulable(t *testing.T) {
	path := impossibleSnapshot(t)
	code, out, errOut := runCmd(t, "plan", "--snapshot", path, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodePlan(t, out)
	if len(*d.Unschedulable) != 1 || (*d.Unschedulable)[0].Pod != "batch/huge-0" || (*d.Unschedulable)[0].Reason == "" {
		t.Fatalf("unschedulable %+v, want batch/huge-0 with a reason", *d.Unschedulable)
	}
	if d.Input.Snapshot != path || d.Input.PendingPods != 14 {
		t.Errorf("input %+v", d.Input)
	}

	code, out, errOut = runCmd(t, "plan", "--snapshot", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Unschedulable pods: 1") || !strings.Contains(out, "batch/huge-0") {
		t.Errorf("table does not show the unschedulable pod:\n%s", out)
	}
}

func TestPlanStdin(t *testing.T) {
	old := stdin
	defer func() { stdin = old }()
	stdin = bytes.NewReader(cluster.SampleSnapshot)
	code, out, errOut := runCmd(t, "plan", "--snapshot", "-", "--solver", "greedy")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "Plan for stdin: 13 pending pods") || !strings.Contains(out, "status greedy") {
		t.Errorf("stdin plan:\n%s", out)
	}
}

func TestPlanCompare(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "--compare", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	d := decodePlan(t, out)
	c := d.Compare
	if c == nil {
		t.Fatal("no compare object")
	}
	checkCost(t, "compare.repacked.cost", c.Repacked.Cost)
	s := sampleState(t)
	// Every pod but the DaemonSets' and the finished ones is planned from scratch: the pending ones and the
	// bound ones.
	var all []string
	for _, p := range s.Pods {
		if !cluster.IsDaemonSetPod(p) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			all = append(all, p.Namespace+"/"+p.Name)
		}
	}
	slices.Sort(all)
	got := checkNodes(t, *c.Repacked.Cost.Hourly, c.Repacked.Nodes, nil)
	for _, u := range c.Repacked.Unschedulable {
		got = append(got, u.Pod)
	}
	slices.Sort(got)
	if !slices.Equal(got, all) || c.Repacked.Pods != len(all) {
		t.Fatalf("repacked pods %v (count %d), want %v", got, c.Repacked.Pods, all)
	}
	for _, n := range c.Repacked.Nodes {
		if !*n.New {
			t.Errorf("repacked plan uses existing node %s", n.Name)
		}
	}
	cur := c.Current
	if cur.ExistingNodes != 3 || cur.ExistingHourly <= 0 || math.Abs(cur.Hourly-cur.ExistingHourly-cur.NewHourly) > 1e-6 ||
		math.Abs(cur.NewHourly-*d.Cost.Hourly) > 1e-6 {
		t.Errorf("current %+v does not add up (plan $%v/h)", cur, *d.Cost.Hourly)
	}
	if math.Abs(c.Saving.Hourly-(cur.Hourly-*c.Repacked.Cost.Hourly)) > 1e-6 ||
		math.Abs(c.Saving.Fraction-c.Saving.Hourly/cur.Hourly) > 1e-6 {
		t.Errorf("saving %+v, current $%v, repacked $%v", c.Saving, cur.Hourly, *c.Repacked.Cost.Hourly)
	}

	code, out, errOut = runCmd(t, "plan", "--compare")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Compare with repacking from scratch", "current   $", "repacked  $", "saving    $"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: [a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badPod := filepath.Join(dir, "pod.yaml")
	if err := os.WriteFile(badPod, []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    resources:\n      requests:\n        cpu: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.yaml")
	// A kubeconfig pointing at a port nothing listens on: an unreachable cluster.
	deadCluster := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(deadCluster, []byte(`apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
users: [{name: u, user: {token: x}}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing file", []string{"--snapshot", missing}, []string{"snapshot " + missing, "no such file"}},
		{"YAML error", []string{"--snapshot", badYAML}, []string{"snapshot " + badYAML, "line", "invalid YAML"}},
		{"bad quantity", []string{"--snapshot", badPod}, []string{"pod default/x", "requests[cpu]"}},
		{"unknown catalog", []string{"--catalog", "aws/mars-1"}, []string{"catalog aws/mars-1", "unknown region"}},
		{"missing catalog file", []string{"--catalog", filepath.Join(dir, "cat.json")}, []string{"cat.json", "not a readable file"}},
		{"bad output", []string{"-o", "yaml"}, []string{`unknown output format "yaml"`}},
		{"bad solver", []string{"--solver", "fast"}, []string{`unknown solver "fast"`}},
		{"bad deadline", []string{"--deadline", "0s"}, []string{"--deadline must be positive"}},
		{"stray argument", []string{"snap.yaml"}, []string{`unexpected argument "snap.yaml"`}},
		{"unreachable cluster", []string{"--kubeconfig", deadCluster}, []string{"cluster https://127.0.0.1:1", "connection refused"}},
		{"missing kubeconfig", []string{"--kubeconfig", missing}, []string{"kubeconfig", "no such file"}},
		{"unknown context", []string{"--kubeconfig", deadCluster, "--context", "prod"}, []string{"kubeconfig", `"prod"`}},
		{"snapshot and cluster", []string{"--kubeconfig", deadCluster, "--snapshot", missing}, []string{"exclusive"}},
		{"consolidate and compare", []string{"--consolidate", "--compare"}, []string{"--consolidate and --compare are exclusive"}},
		{"verbose without consolidate", []string{"-v"}, []string{"apply only with --consolidate"}},
		{"consolidate bad quantity", []string{"--consolidate", "--snapshot", badPod}, []string{"pod default/x", "requests[cpu]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, append([]string{"plan"}, tc.args...)...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (stdout %q, stderr %q)", code, out, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if n := strings.Count(errOut, "\n"); n != 1 || !strings.HasPrefix(errOut, "packwright plan: ") {
				t.Errorf("stderr is not one error line: %q", errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

// consolidateSample is the over-provisioned sample cluster of cluster/samples.
const consolidateSample = "../../cluster/samples/consolidate.yaml"

func TestPlanConsolidateTable(t *testing.T) {
	code, out, errOut := runCmd(t, "plan", "--consolidate", "-v", "--snapshot", consolidateSample)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Consolidation of " + consolidateSample + ": 5 candidate nodes with 6 movable pods, 3 nodes not candidates",
		"Decision:  act",
		"Nodes to remove: 5", "ip-10-0-1-17  delete", "ip-10-0-1-18  replace",
		"Nodes to launch (replacements): 1", "general/m5.2xlarge/us-east-1a/on-demand",
		"Moved:     6 pods", "shop/worker-6c9d8e-0: ip-10-0-1-18 -> new-1",
		"Cost before: $2.1120/hour", "Saving:      $1.1520/hour", "Bound:", "gap", "Solver:",
		"Not candidates: 3",
		"ip-10-0-1-14  pod shop/debug has no controller",
		"ip-10-0-1-15  pod shop/report-0 is annotated packwright.dev/do-not-disrupt",
		"ip-10-0-1-16  pod shop/db-0 is covered by PodDisruptionBudget shop/db, which allows no disruption",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Without -v the moves are counted, not listed.
	_, short, _ := runCmd(t, "plan", "--consolidate", "--snapshot", consolidateSample)
	if strings.Contains(short, "-> new-1") || !strings.Contains(short, "Moved:     6 pods") {
		t.Errorf("table without -v:\n%s", short)
	}
}

// consolidationDoc is the consolidation JSON schema of docs/plan-format.md, decoded strictly.
type consolidationDoc struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	Input         struct {
		Snapshot    string `json:"snapshot"`
		Catalog     string `json:"catalog"`
		Candidates  int    `json:"candidates"`
		MovablePods int    `json:"movablePods"`
		Offerings   int    `json:"offerings"`
	} `json:"input"`
	Act     bool   `json:"act"`
	Reason  string `json:"reason"`
	Removed []struct {
		Name         string  `json:"name"`
		Action       string  `json:"action"`
		NodePool     string  `json:"nodePool"`
		InstanceType string  `json:"instanceType"`
		Zone         string  `json:"zone"`
		CapacityType string  `json:"capacityType"`
		HourlyPrice  float64 `json:"hourlyPrice"`
		PodsMoved    int     `json:"podsMoved"`
		Reason       string  `json:"reason"`
	} `json:"removed"`
	NewNodes []struct {
		Name         string            `json:"name"`
		Offering     string            `json:"offering"`
		NodePool     string            `json:"nodePool"`
		InstanceType string            `json:"instanceType"`
		Zone         string            `json:"zone"`
		CapacityType string            `json:"capacityType"`
		HourlyPrice  float64           `json:"hourlyPrice"`
		Allocatable  map[string]string `json:"allocatable"`
		Pods         []string          `json:"pods"`
	} `json:"newNodes"`
	Kept      []string `json:"kept"`
	PodsMoved int      `json:"podsMoved"`
	Moves     []struct {
		Pod  string `json:"pod"`
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"moves"`
	Cost struct {
		Before        float64 `json:"before"`
		After         float64 `json:"after"`
		Saving        float64 `json:"saving"`
		SavingMonthly float64 `json:"savingMonthly"`
		LowerBound    float64 `json:"lowerBound"`
		Gap           float64 `json:"gap"`
	} `json:"cost"`
	Solver        string  `json:"solver"`
	Status        string  `json:"status"`
	SolveSeconds  float64 `json:"solveSeconds"`
	NotCandidates []struct {
		Node   string `json:"node"`
		Reason string `json:"reason"`
	} `json:"notCandidates"`
	Issues []struct {
		Object string `json:"object"`
		Reason string `json:"reason"`
	} `json:"issues"`
}

func TestPlanConsolidateJSON(t *testing.T) {
	for _, solverKind := range []string{"auto", "greedy"} {
		t.Run(solverKind, func(t *testing.T) {
			code, out, errOut := runCmd(t, "plan", "--consolidate", "--solver", solverKind, "-o", "json", "--snapshot", consolidateSample)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			var d consolidationDoc
			if err := dec.Decode(&d); err != nil {
				t.Fatalf("JSON does not match the schema: %v\n%s", err, out)
			}
			if d.SchemaVersion != PlanSchemaVersion || d.Kind != "consolidation" || !d.Act || d.Input.Candidates != 5 || d.Input.MovablePods != 6 {
				t.Errorf("header %+v act %v", d.Input, d.Act)
			}
			if d.Cost.Saving <= 0 || d.Cost.Before-d.Cost.After-d.Cost.Saving > 1e-6 || d.Cost.LowerBound > d.Cost.After+1e-9 {
				t.Errorf("cost %+v", d.Cost)
			}
			// The pool's budget is 60% of its 8 nodes, rounded up: 5.
			if len(d.Removed) == 0 || len(d.Removed) > 5 || d.PodsMoved != len(d.Moves) {
				t.Errorf("removed %d, moves %d/%d", len(d.Removed), d.PodsMoved, len(d.Moves))
			}
			pinned := map[string]bool{"ip-10-0-1-14": true, "ip-10-0-1-15": true, "ip-10-0-1-16": true}
			for _, r := range d.Removed {
				if pinned[r.Name] || r.HourlyPrice <= 0 {
					t.Errorf("removed %+v", r)
				}
			}
			for _, m := range d.Moves {
				if pinned[m.From] {
					t.Errorf("pod %s moved off pinned node %s", m.Pod, m.From)
				}
			}
			if len(d.NotCandidates) != 3 {
				t.Errorf("not candidates %+v", d.NotCandidates)
			}
			for _, nc := range d.NotCandidates {
				if !pinned[nc.Node] || nc.Reason == "" {
					t.Errorf("not candidate %+v", nc)
				}
			}
		})
	}
}

// TestPlanConsolidateExpiry adds a NodeClaim for node ip-10-0-1-11 to the consolidation sample and plans at
// two times: after its expireAfter the node goes with reason "expired", before it goes (or not) for cost alone.
func TestPlanConsolidateExpiry(t *testing.T) {
	sample, err := os.ReadFile(consolidateSample)
	if err != nil {
		t.Fatal(err)
	}
	claim := `
---
apiVersion: packwright.dev/v1
kind: NodeClaim
metadata: {name: general-x1, creationTimestamp: '2026-01-01T00:00:00Z', labels: {packwright.dev/nodepool: general}}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: []
  expireAfter: 720h
status: {nodeName: ip-10-0-1-11}
`
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	if err := os.WriteFile(path, append(sample, claim...), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at      string
		expired bool
	}{{"2026-06-01T00:00:00Z", true}, {"2026-01-02T00:00:00Z", false}}
	for _, tc := range cases {
		t.Run(tc.at, func(t *testing.T) {
			code, out, errOut := runCmd(t, "plan", "--consolidate", "-o", "json", "--at", tc.at, "--snapshot", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var d consolidationDoc
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			reason := ""
			for _, r := range d.Removed {
				if r.Name == "ip-10-0-1-11" {
					reason = r.Reason
				}
				if r.Reason == "" {
					t.Errorf("removed %s without a reason", r.Name)
				}
			}
			if got := strings.HasPrefix(reason, "expired"); got != tc.expired {
				t.Errorf("ip-10-0-1-11 removed with reason %q, want expired %v", reason, tc.expired)
			}
		})
	}
	if code, _, errOut := runCmd(t, "plan", "--consolidate", "--at", "tomorrow", "--snapshot", path); code == 0 || !strings.Contains(errOut, "--at") {
		t.Errorf("a bad --at: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, "plan", "--spot-to-spot"); code == 0 || !strings.Contains(errOut, "only with --consolidate") {
		t.Errorf("--spot-to-spot without --consolidate: exit %d, %s", code, errOut)
	}
}
