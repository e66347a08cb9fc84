package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/cloudprovider/sim"
	"github.com/packwright/packwright/controller"
	"github.com/packwright/packwright/controller/metrics"
	"github.com/packwright/packwright/controller/nodeclaim"
	"github.com/packwright/packwright/controller/provisioning"
	"github.com/packwright/packwright/model"
)

// scenarioLabel marks every pod a scenario creates, so that cleanup and checks find them.
const scenarioLabel = "packwright.dev/e2e-scenario"

// running is one controller manager started by a test, with the plans it made.
type running struct {
	provider *sim.Provider
	cancel   context.CancelFunc
	done     chan error

	mu    sync.Mutex
	plans []provisioning.Result
}

// startController starts a manager with the sim provider against the test control plane, for provisioning
// scenarios (consolidation off). unavailable offerings fail to launch with insufficient capacity.
func startController(t testing.TB, cat *catalog.Catalog, unavailable ...sim.Offering) *running {
	t.Helper()
	return startControllerWith(t, cat, nil, unavailable...)
}

// startControllerWith is startController with configure applied to the manager's configuration last.
func startControllerWith(t testing.TB, cat *catalog.Catalog, configure func(*controller.Config), unavailable ...sim.Offering) *running {
	t.Helper()
	r := &running{done: make(chan error, 1)}
	cfg := controller.Config{
		REST: harness.Config, ClusterName: "e2e", Catalog: cat,
		BatchIdle: 500 * time.Millisecond, BatchMax: 5 * time.Second,
		MetricsAddr: "0", ProbeAddr: "0", SkipNameValidation: true,
		// These scenarios measure provisioning; consolidation has its own test.
		DisableDisruption: true,
		NewCloudProvider: func(cl client.Client) (cloudprovider.CloudProvider, error) {
			r.provider = sim.New(cl, sim.Options{ReadyDelay: 300 * time.Millisecond, Describe: describe(cat), Unavailable: unavailable})
			return r.provider, nil
		},
		Observe: func(res provisioning.Result) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.plans = append(r.plans, res)
			if os.Getenv("PACKWRIGHT_E2E_PLANS") != "" {
				nn := 0
				if res.Plan != nil {
					nn = len(res.Plan.NewNodes)
				}
				fmt.Fprintf(os.Stderr, "%s plan: %d pending, %d new nodes, %d claims\n", time.Now().Format("15:04:05.000"), res.Pending, nn, len(res.NodeClaims))
			}
		},
	}
	if configure != nil {
		configure(&cfg)
	}
	mgr, err := controller.NewManager(context.Background(), cfg)
	if err != nil {
		t.Fatalf("controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- mgr.Start(ctx) }()
	return r
}

// stop stops the manager and waits for it.
func (r *running) stop(t testing.TB) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.done; err != nil {
		t.Errorf("manager: %v", err)
	}
	if r.provider != nil {
		r.provider.Close()
	}
}

// plannedCost sums the cost of every plan the manager made.
func (r *running) plannedCost() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum := 0.0
	for _, res := range r.plans {
		if res.Plan != nil {
			sum += res.Plan.Cost
		}
	}
	return sum
}

// plannedSpot reports whether some plan chose a spot offering.
func (r *running) plannedSpot() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, res := range r.plans {
		if res.Plan == nil {
			continue
		}
		for _, n := range res.Plan.NewNodes {
			if res.Problem.Offerings[n.Offering].CapacityType == model.Spot {
				return true
			}
		}
	}
	return false
}

// podShape is one kind of pod in a scenario.
type podShape struct {
	name     string
	count    int
	cpu, mem string
	mutate   func(*corev1.Pod)
}

// createPods creates the pods of every shape, labelled with the scenario.
func createPods(ctx context.Context, t testing.TB, scenario string, shapes []podShape) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	for _, s := range shapes {
		for i := range s.count {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: fmt.Sprintf("%s-%s-%04d", scenario, s.name, i), Namespace: metav1.NamespaceDefault,
					Labels: map[string]string{"app": s.name, scenarioLabel: scenario},
				},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: new(int64),
					Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(s.cpu), corev1.ResourceMemory: resource.MustParse(s.mem)}}}},
				},
			}
			if s.mutate != nil {
				s.mutate(pod)
			}
			if err := harness.Client.Create(ctx, pod); err != nil {
				t.Fatalf("create pod %s: %v", pod.Name, err)
			}
			pods = append(pods, pod)
		}
	}
	return pods
}

// waitAllBound waits until every pod of the scenario is bound to a node and returns how long that took.
func waitAllBound(ctx context.Context, t testing.TB, scenario string, want int) time.Duration {
	t.Helper()
	began := time.Now()
	bound := 0
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := harness.Client.List(ctx, &pods, client.MatchingLabels{scenarioLabel: scenario}); err != nil {
			return false, nil
		}
		bound = 0
		for _, p := range pods.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == want, nil
	})
	if err != nil {
		t.Fatalf("%d of %d pods bound: %v\nscheduler log (tail):\n%s", bound, want, err, tail(harness.SchedulerLog(), 4000))
	}
	return time.Since(began)
}

// cleanupScenario deletes the NodeClaims through the running controller (which drains and deletes the nodes),
// then whatever is left, so that the next test starts from an empty cluster.
func cleanupScenario(t testing.TB, scenario string, r *running) {
	t.Helper()
	bg := context.Background()
	c := harness.Client
	_ = c.DeleteAllOf(bg, &v1.NodeClaim{})
	err := wait.PollUntilContextTimeout(bg, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var claims v1.NodeClaimList
		var nodes corev1.NodeList
		if c.List(ctx, &claims) != nil || c.List(ctx, &nodes) != nil {
			return false, nil
		}
		launched := slices.ContainsFunc(nodes.Items, func(n corev1.Node) bool { return strings.HasPrefix(n.Spec.ProviderID, sim.ProviderIDPrefix) })
		return len(claims.Items) == 0 && !launched, nil
	})
	if err != nil {
		t.Errorf("NodeClaims and their Nodes not terminated by the controller: %v", err)
	}
	r.stop(t)
	_ = c.DeleteAllOf(bg, &corev1.Pod{}, client.InNamespace(metav1.NamespaceDefault), client.MatchingLabels{scenarioLabel: scenario}, client.GracePeriodSeconds(0))
	_ = c.DeleteAllOf(bg, &v1.NodePool{})
}

// clusterNodes returns the Nodes and NodeClaims, checking that they pair up one to one by providerID: no
// instance was launched twice and none is orphaned.
func clusterNodes(ctx context.Context, t testing.TB) ([]corev1.Node, map[string]*v1.NodeClaim) {
	t.Helper()
	var nodes corev1.NodeList
	var claims v1.NodeClaimList
	if err := harness.Client.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if err := harness.Client.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	byProvider := map[string]*v1.NodeClaim{}
	for i := range claims.Items {
		cl := &claims.Items[i]
		if cl.Status.ProviderID == "" {
			t.Errorf("nodeclaim %s was never launched", cl.Name)
			continue
		}
		if other, dup := byProvider[cl.Status.ProviderID]; dup {
			t.Errorf("nodeclaims %s and %s share instance %s", other.Name, cl.Name, cl.Status.ProviderID)
		}
		byProvider[cl.Status.ProviderID] = cl
	}
	for _, n := range nodes.Items {
		if byProvider[n.Spec.ProviderID] == nil {
			t.Errorf("node %s (%s) has no NodeClaim: launched twice or orphaned", n.Name, n.Spec.ProviderID)
		}
	}
	if len(nodes.Items) != len(claims.Items) {
		t.Errorf("%d nodes for %d nodeclaims", len(nodes.Items), len(claims.Items))
	}
	return nodes.Items, byProvider
}

// nodesCost is the catalog price of the nodes, by their labels.
func nodesCost(t testing.TB, cat *catalog.Catalog, nodes []corev1.Node) float64 {
	t.Helper()
	sum := 0.0
	for _, n := range nodes {
		price, ok := cat.Price(n.Labels[corev1.LabelInstanceTypeStable], n.Labels[corev1.LabelTopologyZone], n.Labels[v1.CapacityTypeLabelKey])
		if !ok {
			t.Fatalf("node %s has no price for labels %v", n.Name, n.Labels)
		}
		sum += price
	}
	return sum
}

func nodePool(name string, weight int32, limitCPU string, mutate func(*v1.NodePool)) *v1.NodePool {
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				Requirements: []v1.NodeSelectorRequirementWithMinValues{
					{Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"spot", "on-demand"}},
					{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
				},
				NodeClassRef: &v1.NodeClassReference{Group: "packwright.dev", Kind: "SimNodeClass", Name: "default"},
			}},
		},
	}
	if weight > 0 {
		np.Spec.Weight = &weight
	}
	if limitCPU != "" {
		np.Spec.Limits = v1.Limits{corev1.ResourceCPU: resource.MustParse(limitCPU)}
	}
	if mutate != nil {
		mutate(np)
	}
	return np
}

// TestControllerThousandMixedPods is the main scenario: 1,000 pending pods of four shapes (zone spread,
// a capacity-type selector, a tainted pool reached through a toleration and a node selector, memory-heavy pods)
// across three NodePools, one of them capped by a CPU limit. Packwright launches sim nodes, the real scheduler
// binds every pod, the nodes cost what the plans said, nodes and claims pair up one to one, and no pool exceeds
// its limit.
func TestControllerThousandMixedPods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	const scenario = "mixed"
	const limitedCPU = 48

	// Spot is cheaper, so the spot pool's limit binds: the solver fills it up to the limit and puts the rest on
	// the on-demand pool.
	capacityType := func(ct string) func(*v1.NodePool) {
		return func(np *v1.NodePool) { np.Spec.Template.Spec.Requirements[0].Values = []string{ct} }
	}
	pools := []*v1.NodePool{
		nodePool("spot", 10, fmt.Sprint(limitedCPU), capacityType(model.Spot)),
		nodePool("general", 0, "", capacityType(model.OnDemand)),
		nodePool("batch", 0, "", func(np *v1.NodePool) {
			np.Spec.Template.Labels = map[string]string{"workload": "batch"}
			np.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		}),
	}
	t.Cleanup(func() { _ = c.DeleteAllOf(context.Background(), &v1.NodePool{}) })
	for _, np := range pools {
		if err := c.Create(ctx, np); err != nil {
			t.Fatalf("create nodepool %s: %v", np.Name, err)
		}
	}
	r := startController(t, cat)
	t.Cleanup(func() { cleanupScenario(t, scenario, r) })

	shapes := []podShape{
		{name: "web", count: 400, cpu: "250m", mem: "512Mi", mutate: func(p *corev1.Pod) {
			p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			}}
		}},
		{name: "api", count: 250, cpu: "1", mem: "2Gi", mutate: func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{v1.CapacityTypeLabelKey: "on-demand"}
		}},
		{name: "batch", count: 200, cpu: "500m", mem: "1Gi", mutate: func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"workload": "batch"}
			p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
		}},
		{name: "cache", count: 150, cpu: "500m", mem: "3Gi"},
	}
	total := 0
	for _, s := range shapes {
		total += s.count
	}
	began := time.Now()
	createPods(ctx, t, scenario, shapes)
	created := time.Since(began)
	waitAllBound(ctx, t, scenario, total)
	elapsed := time.Since(began)

	nodes, claims := clusterNodes(ctx, t)
	launched := nodesCost(t, cat, nodes)
	planned := r.plannedCost()
	if diff := launched - planned; diff > 1e-6 || diff < -1e-6 {
		t.Errorf("launched nodes cost %.4f/h, plans said %.4f/h", launched, planned)
	}
	usedCPU := map[string]int64{}
	for _, n := range nodes {
		cl := claims[n.Spec.ProviderID]
		if cl == nil {
			continue
		}
		usedCPU[cl.Labels[v1.NodePoolLabelKey]] += n.Status.Capacity.Cpu().MilliValue()
	}
	if got := usedCPU["spot"]; got > limitedCPU*1000 {
		t.Errorf("nodepool spot holds %dm CPU, over its limit of %d", got, limitedCPU)
	}
	if got := usedCPU["spot"]; got < limitedCPU*1000/2 {
		t.Errorf("nodepool spot holds %dm CPU: its limit of %d did not bind, so the test shows nothing", got, limitedCPU)
	}
	var batchPods corev1.PodList
	if err := c.List(ctx, &batchPods, client.MatchingLabels{"app": "batch"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range batchPods.Items {
		node := slices.IndexFunc(nodes, func(n corev1.Node) bool { return n.Name == p.Spec.NodeName })
		if node < 0 || nodes[node].Labels["workload"] != "batch" {
			t.Errorf("batch pod %s is on node %s, not a batch node", p.Name, p.Spec.NodeName)
		}
	}
	t.Logf("%d pods (created in %s) bound %s after the first was created, on %d nodes costing %.4f/h (planned %.4f/h in %d solves); CPU by pool %v",
		total, created.Round(time.Millisecond), elapsed.Round(time.Millisecond), len(nodes), launched, planned, len(r.plans), usedCPU)
}

// TestControllerRestartAndSpotFallback restarts the controller while it provisions, with every spot offering
// failing to launch: the pods still all bind, on on-demand nodes only, although the solver's first choice was
// spot; and the restarted controller launches nothing twice (nodes and claims pair up, and the cluster costs
// no more than the pods need).
func TestControllerRestartAndSpotFallback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	const scenario = "restart"
	if err := c.Create(ctx, nodePool("default", 0, "", nil)); err != nil {
		t.Fatalf("create nodepool: %v", err)
	}
	noSpot := sim.Offering{CapacityType: "spot"}
	before := testutil.ToFloat64(metrics.CloudProviderErrors.WithLabelValues(sim.Name, "Create", "insufficient-capacity"))
	first := startController(t, cat, noSpot)

	shapes := []podShape{
		{name: "small", count: 150, cpu: "250m", mem: "512Mi"},
		{name: "large", count: 50, cpu: "2", mem: "4Gi"},
	}
	createPods(ctx, t, scenario, shapes)
	// Stop the first controller as soon as it has created NodeClaims, before they are all launched and bound.
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var claims v1.NodeClaimList
		return c.List(ctx, &claims) == nil && len(claims.Items) > 0, nil
	})
	if err != nil {
		t.Fatalf("no nodeclaim created: %v", err)
	}
	first.stop(t)
	second := startController(t, cat, noSpot)
	t.Cleanup(func() { cleanupScenario(t, scenario, second) })
	waitAllBound(ctx, t, scenario, 200)

	if !first.plannedSpot() && !second.plannedSpot() {
		t.Errorf("no plan chose spot, so the fallback was not exercised")
	}
	failures := testutil.ToFloat64(metrics.CloudProviderErrors.WithLabelValues(sim.Name, "Create", "insufficient-capacity")) - before
	nodes, _ := clusterNodes(ctx, t)
	for _, n := range nodes {
		if ct := n.Labels[v1.CapacityTypeLabelKey]; ct != model.OnDemand {
			t.Errorf("node %s is %s, but spot had no capacity", n.Name, ct)
		}
	}
	launched := nodesCost(t, cat, nodes)
	// What the pods need: one solve of the whole workload on on-demand offerings alone, from scratch.
	need := onDemandLowerBound(t, cat, shapes)
	if launched > 1.35*need {
		t.Errorf("cluster costs %.4f/h, more than 1.35× the %.4f/h lower bound for its pods: something launched twice?", launched, need)
	}
	t.Logf("%d nodes, all on-demand, costing %.4f/h (lower bound of one on-demand solve %.4f/h); %v insufficient-capacity launch errors",
		len(nodes), launched, need, failures)
}

// onDemandLowerBound is a lower bound on the on-demand cost of the shapes' pods: their total CPU and memory at
// the catalog's cheapest on-demand price per unit of each, whichever is dearer.
func onDemandLowerBound(t *testing.T, cat *catalog.Catalog, shapes []podShape) float64 {
	t.Helper()
	var cpu, mem float64
	for _, s := range shapes {
		c, m := resource.MustParse(s.cpu), resource.MustParse(s.mem)
		cpu += float64(s.count) * c.AsApproximateFloat64()
		mem += float64(s.count) * m.AsApproximateFloat64()
	}
	perCPU, perByte := 0.0, 0.0
	for i := range cat.InstanceTypes {
		it := &cat.InstanceTypes[i]
		alloc := it.Allocatable(nil)
		for _, o := range it.Offerings {
			if o.CapacityType != model.OnDemand {
				continue
			}
			if c := o.Price / (float64(alloc[model.CPU]) / 1000); perCPU == 0 || c < perCPU {
				perCPU = c
			}
			if m := o.Price / float64(alloc[model.Memory]); perByte == 0 || m < perByte {
				perByte = m
			}
		}
	}
	return max(cpu*perCPU, mem*perByte)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// TestTerminationRespectsPDB deletes the NodeClaims under pods that a PodDisruptionBudget protects: the Eviction
// API refuses (no disruption is allowed), so the pods stay bound and the claims stay, held by their finalizer,
// with a DrainBlocked event. Once the budget is gone, termination completes.
func TestTerminationRespectsPDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	const scenario = "pdb"
	r := startController(t, cat)
	t.Cleanup(func() { cleanupScenario(t, scenario, r) })
	createPods(ctx, t, scenario, []podShape{{name: "guarded", count: 6, cpu: "500m", mem: "1Gi"}})
	waitAllBound(ctx, t, scenario, 6)
	// No kubelet runs: mark the pods Running, as it would. The Eviction API ignores budgets for Pending pods.
	var bound corev1.PodList
	if err := c.List(ctx, &bound, client.MatchingLabels{scenarioLabel: scenario}); err != nil {
		t.Fatal(err)
	}
	for i := range bound.Items {
		p := &bound.Items[i]
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		if err := c.Status().Update(ctx, p); err != nil {
			t.Fatalf("mark pod %s running: %v", p.Name, err)
		}
	}

	zero := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: metav1.NamespaceDefault},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}
	if err := c.Create(ctx, pdb); err != nil {
		t.Fatalf("create pdb: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), pdb) })
	if err := c.DeleteAllOf(ctx, &v1.NodeClaim{}); err != nil {
		t.Fatal(err)
	}
	// The drain retries every 5 s; give it two rounds, then everything must still be there.
	blocked := false
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := c.List(ctx, &events); err != nil {
			return false, nil
		}
		blocked = slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Reason == "DrainBlocked" })
		return blocked, nil
	})
	if err != nil || !blocked {
		t.Errorf("no DrainBlocked event on the NodeClaims: %v", err)
	}
	time.Sleep(6 * time.Second)
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingLabels{scenarioLabel: scenario}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
			t.Errorf("pod %s protected by a PDB was evicted (deleting %v, node %q)", p.Name, p.DeletionTimestamp, p.Spec.NodeName)
		}
	}
	if len(pods.Items) != 6 {
		t.Errorf("%d of 6 protected pods left", len(pods.Items))
	}
	var claims v1.NodeClaimList
	if err := c.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	if len(claims.Items) == 0 {
		t.Fatal("the nodeclaims were terminated although their pods could not be evicted")
	}
	for _, cl := range claims.Items {
		if cl.DeletionTimestamp == nil {
			t.Errorf("nodeclaim %s is not being deleted", cl.Name)
		}
	}
	// Lift the budget: the drain goes through and the cleanup's wait sees the claims go.
	if err := c.Delete(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods protected on %d draining nodes; DrainBlocked recorded", len(pods.Items), len(claims.Items))
}

// TestGarbageCollectsOrphans registers a sim instance (a Node with a sim:// providerID) that no NodeClaim owns,
// as a crash between launch and status write could leave: garbage collection terminates it after seeing it
// orphaned twice, and leaves a node that is not the provider's alone.
func TestGarbageCollectsOrphans(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	orphan := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "orphan"}, Spec: corev1.NodeSpec{ProviderID: sim.ProviderIDPrefix + "orphan"}}
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "foreign"}, Spec: corev1.NodeSpec{ProviderID: "other://foreign"}}
	for _, n := range []*corev1.Node{orphan, foreign} {
		if err := c.Create(ctx, n); err != nil {
			t.Fatalf("create node %s: %v", n.Name, err)
		}
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), foreign) })
	r := startControllerWith(t, cat, func(cfg *controller.Config) {
		cfg.NodeClaim = nodeclaim.Options{GCInterval: 500 * time.Millisecond}
	})
	t.Cleanup(func() { r.stop(t) })
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(orphan), &corev1.Node{})), nil
	})
	if err != nil {
		t.Fatalf("the orphaned sim instance was not garbage-collected: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(foreign), &corev1.Node{}); err != nil {
		t.Errorf("garbage collection touched a node that is not the provider's: %v", err)
	}
}
