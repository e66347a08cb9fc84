package e2e

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/controller"
	"github.com/packwright/packwright/controller/disruption"
	"github.com/packwright/packwright/solver"
)

// replicaSet stands in for kube-controller-manager's ReplicaSet controller, which this control plane does not
// run: it keeps want pods of one template alive, owned by a real ReplicaSet object, creating a new pod whenever
// one is evicted or deleted. Only that: the scheduler, the Eviction API and Packwright are the real ones.
type replicaSet struct {
	rs       *appsv1.ReplicaSet
	template func(name string) *corev1.Pod
	mu       sync.Mutex
	want     int
	next     int
}

func (r *replicaSet) scale(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.want = n
}

// run reconciles until ctx ends: too few live pods → create; too many → delete the newest.
func (r *replicaSet) run(ctx context.Context, t testing.TB) {
	c := harness.Client
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.MatchingLabels{"app": r.rs.Name}); err == nil {
			var live []corev1.Pod
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil {
					live = append(live, p)
				}
			}
			r.mu.Lock()
			want := r.want
			for len(live) < want {
				r.next++
				pod := r.template(fmt.Sprintf("%s-%04d", r.rs.Name, r.next))
				pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: r.rs.Name,
					UID: r.rs.UID, Controller: new(true)}}
				if err := c.Create(ctx, pod); err != nil && ctx.Err() == nil {
					t.Logf("replicaset stand-in: create %s: %v", pod.Name, err)
					break
				}
				live = append(live, *pod)
			}
			for i := len(live) - 1; i >= want; i-- {
				_ = c.Delete(ctx, &live[i], client.GracePeriodSeconds(0))
			}
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// startReplicaSet creates ReplicaSet name (selector app=name) in the default namespace and runs its stand-in,
// keeping want pods of template alive, until the test ends.
func startReplicaSet(ctx context.Context, t *testing.T, name string, want int, template func(name string) *corev1.Pod) *replicaSet {
	t.Helper()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}}}},
	}
	if err := harness.Client.Create(ctx, rs); err != nil {
		t.Fatalf("create replicaset: %v", err)
	}
	r := &replicaSet{rs: rs, template: template, want: want}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.run(rctx, t) }()
	// Cleanups run last first: called after startDisruption, the stand-in stops before the scenario is cleaned up.
	t.Cleanup(func() { _ = harness.Client.Delete(context.Background(), rs) })
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// decisionLog holds the disruption controller's decisions, in order.
type decisionLog struct {
	mu        sync.Mutex
	decisions []*solver.Consolidation
}

func (l *decisionLog) add(d *solver.Consolidation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.decisions = append(l.decisions, d)
}

// all returns the decisions so far.
func (l *decisionLog) all() []*solver.Consolidation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.decisions)
}

// startDisruption creates pool and starts a controller whose disruption loop decides every 2 s, logging its
// decisions; the scenario is cleaned up when the test ends.
func startDisruption(ctx context.Context, t *testing.T, cat *catalog.Catalog, scenario string, pool *v1.NodePool) *decisionLog {
	t.Helper()
	if err := harness.Client.Create(ctx, pool); err != nil {
		t.Fatalf("create nodepool: %v", err)
	}
	t.Cleanup(func() { _ = harness.Client.DeleteAllOf(context.Background(), &v1.NodePool{}) })
	log := &decisionLog{}
	r := startControllerWith(t, cat, func(cfg *controller.Config) {
		cfg.BatchMax = 3 * time.Second
		cfg.DisableDisruption = false
		cfg.Disruption = disruption.Options{Interval: 2 * time.Second, Observe: log.add}
	})
	t.Cleanup(func() { cleanupScenario(t, scenario, r) })
	return log
}

// TestConsolidationConverges over-provisions a cluster (24 pods, then scaled to 8) and lets the disruption
// controller consolidate it under a budget of one node at a time: the cluster converges close to the last
// decision's lower bound, every pod ends bound, a node holding a do-not-disrupt pod is never removed, pods
// under a PodDisruptionBudget with maxUnavailable 0 are never evicted, and no pod waits longer for a node than
// a NodeClaim takes to launch.
func TestConsolidationConverges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	const scenario = "consolidate"

	pool := nodePool("default", 0, "", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements[0].Values = []string{"on-demand"}
		zero := time.Duration(0)
		np.Spec.Disruption.ConsolidateAfter = v1.NillableDuration{Duration: &zero}
		np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		// One node at a time, whatever the solver would like: checked on every decision below.
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1"}}
	})
	decisions := startDisruption(ctx, t, cat, scenario, pool)
	template := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{"app": "web", scenarioLabel: scenario}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}}}}},
		}
	}
	web := startReplicaSet(ctx, t, "web", 24, template)
	rs := web.rs

	// A pod whose node must stay: do-not-disrupt (and owned, so nothing else pins it).
	guard := template("guarded")
	guard.Labels = map[string]string{"app": "guarded", scenarioLabel: scenario}
	guard.Annotations = map[string]string{disruption.DoNotDisruptAnnotationKey: "true"}
	guard.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: new(true)}}
	if err := c.Create(ctx, guard); err != nil {
		t.Fatal(err)
	}
	// Two pods no disruption may touch: a PodDisruptionBudget with maxUnavailable 0 selects them.
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: metav1.NamespaceDefault},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(0)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pdb) })
	var protected []*corev1.Pod
	for i := range 2 {
		db := template(fmt.Sprintf("db-%d", i))
		db.Labels = map[string]string{"app": "db", scenarioLabel: scenario}
		db.OwnerReferences = guard.OwnerReferences
		if err := c.Create(ctx, db); err != nil {
			t.Fatal(err)
		}
		protected = append(protected, db)
	}
	waitAllBound(ctx, t, scenario, 27)
	if err := c.Get(ctx, client.ObjectKeyFromObject(guard), guard); err != nil {
		t.Fatal(err)
	}
	for _, db := range protected {
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
			t.Fatal(err)
		}
	}
	guardNode := guard.Spec.NodeName
	nodes, _ := clusterNodes(ctx, t)
	before := nodesCost(t, cat, nodes)

	tracker, stopTracking := trackPending(ctx, scenario)
	web.scale(8)
	// Converged: every pod bound, and the newest decision is "no action" on the cluster as it is. That
	// decision's lower bound is over every consolidation of the cluster (the pinned node included).
	var after float64
	var last *solver.Consolidation
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 150*time.Second, false, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.MatchingLabels{scenarioLabel: scenario}); err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				return false, nil
			}
		}
		var ns corev1.NodeList
		if err := c.List(ctx, &ns); err != nil {
			return false, nil
		}
		after = nodesCost(t, cat, ns.Items)
		all := decisions.all()
		if len(all) == 0 {
			return false, nil
		}
		last = all[len(all)-1]
		return !last.Act && math.Abs(last.CostBefore-after) < 1e-6 && after < before, nil
	})
	stopTracking()
	n := len(decisions.all())
	if err != nil {
		var claims v1.NodeClaimList
		_ = c.List(context.Background(), &claims)
		for _, cl := range claims.Items {
			t.Logf("nodeclaim %s deleting=%v node=%s conditions=%v", cl.Name, cl.DeletionTimestamp != nil, cl.Status.NodeName, cl.Status.Conditions)
		}
		var nodes corev1.NodeList
		_ = c.List(context.Background(), &nodes)
		for _, n := range nodes.Items {
			t.Logf("node %s deleting=%v taints=%v", n.Name, n.DeletionTimestamp != nil, n.Spec.Taints)
		}
		var pods corev1.PodList
		_ = c.List(context.Background(), &pods, client.MatchingLabels{scenarioLabel: scenario})
		for _, p := range pods.Items {
			t.Logf("pod %s node=%q deleting=%v phase=%s", p.Name, p.Spec.NodeName, p.DeletionTimestamp != nil, p.Status.Phase)
		}
		t.Fatalf("cluster did not converge: %.4f/h before, %.4f/h now (%d decisions, last %+v): %v", before, after, n, last, err)
	}
	for i, d := range decisions.all() {
		if len(d.Removed) > 1 {
			t.Errorf("decision %d removed %d nodes %v, over the NodePool's budget of 1", i, len(d.Removed), d.Removed)
		}
	}
	// The bound of a 3-node consolidation can be loose (measured 0–16% under the cost this test converges to):
	// allow 25% plus the saving threshold, which still catches a cluster left over-provisioned (it starts at
	// more than twice its cost after).
	if limit := last.LowerBound*1.25 + solver.DefaultMinSaving; after > limit+1e-9 {
		t.Errorf("converged at %.4f/h, more than 25%% + the saving threshold over the lower bound %.4f/h", after, last.LowerBound)
	}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(guard), got); err != nil || got.DeletionTimestamp != nil || got.Spec.NodeName != guardNode {
		t.Errorf("the do-not-disrupt pod moved or went: %v (node %q, was %q)", err, got.Spec.NodeName, guardNode)
	}
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: guardNode}, node); err != nil {
		t.Errorf("the do-not-disrupt pod's node %s was removed: %v", guardNode, err)
	}
	for _, db := range protected {
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(db), got); err != nil || got.UID != db.UID || got.DeletionTimestamp != nil || got.Spec.NodeName != db.Spec.NodeName {
			t.Errorf("PDB-protected pod %s was evicted or moved: %v (node %q, was %q)", db.Name, err, got.Spec.NodeName, db.Spec.NodeName)
		}
	}
	pending, pod, launch, created := tracker.result()

	// One second for each of the two second-resolution timestamps the comparison rests on.
	if pending > launch+2*time.Second {
		t.Errorf("pod %s was pending %s during consolidation, longer than a NodeClaim's launch (%s)", pod, pending, launch)
	}
	t.Logf("longest pending during consolidation %s (pod %s) of %d pods created; longest launch %s", pending, pod, created, launch)
	t.Logf("consolidated from %.4f/h (%d nodes) to %.4f/h; lower bound %.4f/h; %d decisions", before, len(nodes), after, last.LowerBound, n)
}
