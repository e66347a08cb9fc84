package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/pod"
)

// The consolidation peer runs one cycle of Karpenter's disruption controller on an exported cluster: the
// consolidation methods in the controller's order (emptiness, multi-node, single-node consolidation), each on
// the candidates GetCandidates finds, with the budgets BuildDisruptionBudgetMapping computes, through the
// methods' own ComputeCommands (SimulateScheduling with the provisioning scheduler, price filtering, and the
// validation that re-checks a command after 15 s, here on a fake clock that the peer steps). The first method
// that returns a command is the decision, as in the controller; its NodeClaim replacement is priced at the
// cheapest compatible offering of its options, like a provisioning NodeClaim.

// consolidationMethods are the controller's consolidation methods, in its order (drift is no consolidation and
// has nothing to do on a snapshot without drift).
var consolidationMethods = []string{"emptiness", "multi-node consolidation", "single-node consolidation"}

// world is an exported cluster loaded into Karpenter's fake client and cluster state.
type world struct {
	in      *input
	problem *problem
	client  client.Client
	index   *podIndexClient
	cluster *state.Cluster
	cp      *fake.CloudProvider
	clock   *clocktesting.FakeClock
	// podOf maps a pod's UID to its reference, nodeOf to the node it runs on now; pods are the pod objects.
	podOf  map[types.UID]podRef
	nodeOf map[types.UID]string
	pods   map[types.UID]*corev1.Pod
	// candidates are the exported candidates' names; removed those gone; launched maps each replacement node
	// still there to its offering.
	candidates []string
	origin     []podOrigin
	removed    map[string]bool
	launched   map[string]int
	nlaunched  int
}

// Limits of the repeated cycles: the controller runs one cycle every few seconds until no method has a command.
// cycleBudget is the -cycle-budget flag.
const maxCycles = 200

var cycleBudget = 10 * time.Minute

// consolidate runs Karpenter's disruption cycle on cf and reports two decisions: the first cycle's command
// (what the controller executes first) and the cluster once the cycles stop finding commands, each command
// applied as Karpenter simulated it (the removed nodes go, their pods run where its scheduling simulation put
// them, each replacement is launched at its cheapest compatible offering). A failure is recorded in the result.
func consolidate(cf *consolidationFile) consolidationPeerFile {
	out := consolidationPeerFile{Workload: cf.Workload}
	w, err := load(cf)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "disruption"), test.Options())
	stop := stepValidation(w.clock)
	defer stop()
	var total time.Duration
	var methods []string
	for cycle := 1; ; cycle++ {
		began := time.Now()
		method, cmd, err := w.cycle(ctx)
		took := time.Since(began)
		total += took
		if err != nil {
			out.Error = fmt.Sprintf("cycle %d: %s", cycle, err)
			return out
		}
		if cycle == 1 {
			d := peerDecision{Label: "first cycle", Method: "first cycle: no command", Cycles: 1, DurationNs: int64(took)}
			if cmd != nil {
				d.Method = "first cycle: " + method
				if err := w.command(cmd, &d); err != nil {
					out.Error = err.Error()
					return out
				}
			}
			out.Decisions = append(out.Decisions, d)
		}
		if cmd == nil || cycle >= maxCycles || total > cycleBudget {
			d := w.final()
			d.Cycles, d.DurationNs = cycle, int64(total)
			why := "until no command"
			if cmd != nil {
				why = fmt.Sprintf("stopped at the %d-cycle or %s limit", maxCycles, cycleBudget)
			}
			d.Label = fmt.Sprintf("%d cycles", cycle)
			d.Method = fmt.Sprintf("%d cycles %s (%s)", cycle, why, summary(methods))
			out.Decisions = append(out.Decisions, d)
			return out
		}
		methods = append(methods, method)
		if err := w.apply(ctx, cmd); err != nil {
			out.Error = fmt.Sprintf("cycle %d: applying the %s command: %s", cycle, method, err)
			return out
		}
		w.clock.Step(time.Minute) // the next cycle comes later; nothing is nominated or recent any more
	}
}

// summary counts the methods' commands, e.g. "emptiness ×1, multi-node consolidation ×9".
func summary(methods []string) string {
	if len(methods) == 0 {
		return "no commands"
	}
	var parts []string
	for _, m := range consolidationMethods {
		if n := count(methods, m); n > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", m, n))
		}
	}
	return strings.Join(parts, ", ")
}

func count(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// stepValidation advances clk whenever something waits on it: the consolidation validators wait 15 s (of the
// clock) before they re-check a command, and nothing changes in a snapshot in between.
func stepValidation(clk *clocktesting.FakeClock) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if clk.HasWaiters() {
					clk.Step(time.Minute)
				}
			}
		}
	}()
	return func() { close(done) }
}

// cycle runs the consolidation methods in order and returns the first command, as the disruption controller
// acts on the first method that has one.
func (w *world) cycle(ctx context.Context) (string, *disruption.Command, error) {
	recorder := events.NewRecorder(&record.FakeRecorder{})
	prov := provisioning.NewProvisioner(w.client, recorder, w.cp, w.cluster, w.clock, nil, nil)
	queue := disruption.NewQueue(w.client, recorder, w.cluster, w.clock, prov)
	all := disruption.NewMethods(w.clock, w.cluster, w.client, prov, w.cp, recorder, queue)
	var methods []disruption.Method
	for _, m := range all {
		switch m.(type) {
		case *disruption.Emptiness, *disruption.MultiNodeConsolidation, *disruption.SingleNodeConsolidation:
			methods = append(methods, m)
		}
	}
	if len(methods) != len(consolidationMethods) {
		return "", nil, fmt.Errorf("karpenter has %d of the %d consolidation methods", len(methods), len(consolidationMethods))
	}
	for i, m := range methods {
		cands, err := disruption.GetCandidates(ctx, w.cluster, w.client, recorder, w.clock, w.cp, m.ShouldDisrupt, m.Class(), queue)
		if err != nil {
			return "", nil, fmt.Errorf("%s: candidates: %w", consolidationMethods[i], err)
		}
		if len(cands) == 0 {
			continue
		}
		budgets, err := disruption.BuildDisruptionBudgetMapping(ctx, w.cluster, w.clock, w.client, w.cp, recorder, m.Reason())
		if err != nil {
			return "", nil, fmt.Errorf("%s: budgets: %w", consolidationMethods[i], err)
		}
		cmds, err := m.ComputeCommands(ctx, budgets, cands...)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", consolidationMethods[i], err)
		}
		if len(cmds) > 0 && len(cmds[0].Candidates) > 0 {
			return consolidationMethods[i], &cmds[0], nil
		}
	}
	return "", nil, nil
}

// command writes cmd into d: the removed candidates, each replacement NodeClaim priced at its cheapest
// compatible offering with the pods the simulation put there, and the pods moved to nodes that stay.
func (w *world) command(cmd *disruption.Command, d *peerDecision) error {
	for _, c := range cmd.Candidates {
		d.Removed = append(d.Removed, c.Name())
	}
	sort.Strings(d.Removed)
	// A delete command has no Replacements; a replace command's are the NodeClaims it launches, their options
	// already narrowed by Karpenter's price filter.
	for _, r := range cmd.Replacements {
		oi, err := w.in.cheapest(r.NodeClaim)
		if err != nil {
			return err
		}
		nn := peerNode{Offering: oi}
		for _, p := range r.Pods {
			nn.Pods = append(nn.Pods, w.podOf[p.UID])
		}
		d.NewNodes = append(d.NewNodes, nn)
	}
	for _, en := range cmd.Results.ExistingNodes {
		for _, p := range en.Pods {
			d.Moves = append(d.Moves, peerMove{Pod: w.podOf[p.UID], To: en.Name()})
		}
	}
	if n := len(cmd.Results.PodErrors); n > 0 {
		return fmt.Errorf("karpenter's command leaves %d pods unscheduled", n)
	}
	return nil
}

// apply carries cmd out on the world as Karpenter simulated it: replacements are launched (a Node and a
// NodeClaim of the cheapest compatible offering), pods are bound where the simulation put them, and the
// candidates are deleted with the pods that go with them.
func (w *world) apply(ctx context.Context, cmd *disruption.Command) error {
	for _, r := range cmd.Replacements {
		oi, err := w.in.cheapest(r.NodeClaim)
		if err != nil {
			return err
		}
		o := w.problem.Offerings[oi]
		w.nlaunched++
		n := existingNode{Name: fmt.Sprintf("karpenter-%04d", w.nlaunched), NodePool: o.NodePool, InstanceType: o.InstanceType,
			Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price, Capacity: o.Allocatable, Allocatable: o.Allocatable, Labels: o.Labels}
		node, nc, err := nodeOf(n, w.clock.Now())
		if err != nil {
			return err
		}
		if err := w.client.Create(ctx, node); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		if err := w.client.Create(ctx, nc); err != nil {
			return fmt.Errorf("nodeclaim %s: %w", n.Name, err)
		}
		w.cluster.UpdateNodeClaim(nc)
		if err := w.cluster.UpdateNode(ctx, node); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		w.launched[n.Name] = oi
		for _, p := range r.Pods {
			if err := w.rebind(ctx, p.UID, n.Name); err != nil {
				return err
			}
		}
	}
	for _, en := range cmd.Results.ExistingNodes {
		for _, p := range en.Pods {
			if err := w.rebind(ctx, p.UID, en.Name()); err != nil {
				return err
			}
		}
	}
	for _, c := range cmd.Candidates {
		name := c.Name()
		for _, p := range w.index.podsOn(name) {
			if pod.IsReschedulable(&p) {
				return fmt.Errorf("pod %s/%s is left on removed node %s", p.Namespace, p.Name, name)
			}
			key := client.ObjectKeyFromObject(&p)
			if err := w.client.Delete(ctx, &p); err != nil {
				return fmt.Errorf("pod %s: %w", key, err)
			}
			w.cluster.DeletePod(key)
			w.index.move(key, name, "")
		}
		if err := w.client.Delete(ctx, c.Node); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
		if err := w.client.Delete(ctx, c.NodeClaim); err != nil {
			return fmt.Errorf("nodeclaim %s: %w", name, err)
		}
		w.cluster.DeleteNode(c.Node.Name)
		w.cluster.DeleteNodeClaim(c.NodeClaim.Name)
		if _, ok := w.launched[name]; ok {
			delete(w.launched, name)
		} else {
			w.removed[name] = true
		}
	}
	return nil
}

// rebind moves the pod uid to node, in the client, the index and the cluster state.
func (w *world) rebind(ctx context.Context, uid types.UID, node string) error {
	p, ok := w.pods[uid]
	if !ok {
		return fmt.Errorf("pod %s is no pod of the cluster", uid)
	}
	from, key := p.Spec.NodeName, client.ObjectKeyFromObject(p)
	if err := w.client.Delete(ctx, p.DeepCopy()); err != nil {
		return fmt.Errorf("pod %s: %w", key, err)
	}
	p.Spec.NodeName = node
	p.ResourceVersion = ""
	if err := w.client.Create(ctx, p.DeepCopy()); err != nil {
		return fmt.Errorf("pod %s: %w", key, err)
	}
	w.index.move(key, from, node)
	w.cluster.DeletePod(key)
	if err := w.cluster.UpdatePod(ctx, p); err != nil {
		return fmt.Errorf("pod %s: %w", key, err)
	}
	w.nodeOf[uid] = node
	return nil
}

// final is the cluster after the cycles as one decision on the exported cluster: the candidates that are
// gone, the replacements that are still there with the pods on them, and where the other moved pods run.
func (w *world) final() peerDecision {
	var d peerDecision
	for _, name := range w.candidates {
		if w.removed[name] {
			d.Removed = append(d.Removed, name)
		}
	}
	onNew := map[string][]podRef{}
	for _, o := range w.origin {
		if !w.removed[w.candidates[o.Candidate]] {
			continue
		}
		uid := podUID(o.Pod)
		node := w.nodeOf[uid]
		if _, ok := w.launched[node]; ok {
			onNew[node] = append(onNew[node], o.Pod)
			continue
		}
		d.Moves = append(d.Moves, peerMove{Pod: o.Pod, To: node})
	}
	names := make([]string, 0, len(w.launched))
	for name := range w.launched {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d.NewNodes = append(d.NewNodes, peerNode{Offering: w.launched[name], Pods: onNew[name]})
	}
	return d
}

// providerID is the fake provider ID of a node.
func providerID(name string) string { return "fake:///" + name }

// load puts cf's cluster into a fake client and a cluster state: per node a Node and its NodeClaim (launched,
// registered, initialized and consolidatable), per pod a running Pod bound to its node. The candidates' own pods
// (DaemonSet pods) are owned by a DaemonSet, so that Karpenter does not reschedule them; every pod on a node
// that stays whatever happens is annotated karpenter.sh/do-not-disrupt, which keeps Karpenter off that node.
// NodePools consolidate WhenEmptyOrUnderutilized after 0s with a 100% budget: Packwright's decision has no
// budget either.
func load(cf *consolidationFile) (*world, error) {
	p := cf.Problem
	if p == nil {
		return nil, errors.New("no problem")
	}
	full := *p
	full.Groups = nil // translate makes pending pods of groups; these pods are bound, made below
	in, err := translate(&full)
	if err != nil {
		return nil, err
	}
	for _, np := range in.nodePools {
		np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "100%"}}
	}
	w := &world{in: in, problem: p, podOf: map[types.UID]podRef{}, nodeOf: map[types.UID]string{}, pods: map[types.UID]*corev1.Pod{},
		origin: cf.Origin, removed: map[string]bool{}, launched: map[string]int{}, clock: clocktesting.NewFakeClock(time.Now())}
	for _, n := range cf.Candidates {
		w.candidates = append(w.candidates, n.Name)
	}
	w.cp = fake.NewCloudProvider()
	for _, its := range in.instanceTypes {
		w.cp.InstanceTypes = append(w.cp.InstanceTypes, its...)
	}
	w.cp.InstanceTypesForNodePool = in.instanceTypes

	var objs []client.Object
	for _, np := range in.nodePools {
		objs = append(objs, np)
	}
	var nodes []*corev1.Node
	var claims []*v1.NodeClaim
	var pods []*corev1.Pod
	addNode := func(n existingNode, pinned bool) error {
		node, nc, err := nodeOf(n, w.clock.Now())
		if err != nil {
			return err
		}
		nodes, claims = append(nodes, node), append(claims, nc)
		for _, bp := range n.Pods {
			pod, err := boundPodOf(bp, n.Name)
			if err != nil {
				return err
			}
			if pinned {
				pod.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
			} else {
				pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "daemon", UID: "daemon",
					Controller: ptrTo(true)}}
			}
			pods = append(pods, pod)
		}
		return nil
	}
	for _, n := range p.Nodes {
		if err := addNode(n, true); err != nil {
			return nil, err
		}
	}
	for _, n := range cf.Candidates {
		if err := addNode(n, false); err != nil {
			return nil, err
		}
	}
	groupOf := map[podRef]int{}
	for gi := range p.Groups {
		for _, ref := range p.Groups[gi].Pods {
			groupOf[ref] = gi
		}
	}
	for _, o := range cf.Origin {
		gi, ok := groupOf[o.Pod]
		if !ok || o.Candidate < 0 || o.Candidate >= len(cf.Candidates) {
			return nil, fmt.Errorf("pod %s/%s: no group, or candidate %d out of range", o.Pod.Namespace, o.Pod.Name, o.Candidate)
		}
		g := &p.Groups[gi]
		pod, err := podOf(g, o.Pod)
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", g.Name, err)
		}
		bind(pod, cf.Candidates[o.Candidate].Name)
		// A Deployment's pod: owned by a ReplicaSet, so rescheduled when its node goes.
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: g.Name, UID: types.UID(g.Name),
			Controller: ptrTo(true)}}
		pods = append(pods, pod)
	}
	for _, pod := range pods {
		w.podOf[pod.UID] = podRef{Namespace: pod.Namespace, Name: pod.Name}
		w.nodeOf[pod.UID], w.pods[pod.UID] = pod.Spec.NodeName, pod.DeepCopy()
		objs = append(objs, pod)
	}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, nc := range claims {
		objs = append(objs, nc)
	}
	w.client = fakecr.NewClientBuilder().WithObjects(objs...).
		WithStatusSubresource(&v1.NodeClaim{}, &v1.NodePool{}, &corev1.Node{}, &corev1.Pod{}).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string { return []string{o.(*corev1.Pod).Spec.NodeName} }).
		WithIndex(&corev1.Node{}, "spec.providerID", func(o client.Object) []string { return []string{o.(*corev1.Node).Spec.ProviderID} }).
		WithIndex(&v1.NodeClaim{}, "status.providerID", func(o client.Object) []string { return []string{o.(*v1.NodeClaim).Status.ProviderID} }).
		Build()
	w.index = newPodIndexClient(w.client, pods)
	w.client = w.index
	w.cluster = state.NewCluster(w.clock, w.client, w.cp)
	ctx := options.ToContext(context.Background(), test.Options())
	for _, nc := range claims {
		w.cluster.UpdateNodeClaim(nc)
	}
	for _, n := range nodes {
		if err := w.cluster.UpdateNode(ctx, n); err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	for _, pod := range pods {
		if err := w.cluster.UpdatePod(ctx, pod); err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return w, nil
}

// nodeOf builds a ready Node and its NodeClaim for n. Capacity and allocatable are both n's allocatable, as the
// adapter's instance types have Packwright's allocatable as capacity and no overhead.
func nodeOf(n existingNode, now time.Time) (*corev1.Node, *v1.NodeClaim, error) {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	labels[v1.NodePoolLabelKey] = n.NodePool
	labels[corev1.LabelInstanceTypeStable] = n.InstanceType
	labels[labelZone] = n.Zone
	labels[v1.CapacityTypeLabelKey] = n.CapacityType
	labels[labelPackwrightCT] = n.CapacityType
	labels[corev1.LabelHostname] = n.Name
	labels[v1.NodeRegisteredLabelKey] = "true"
	labels[v1.NodeInitializedLabelKey] = "true"
	alloc := resourceList(n.Allocatable, true)
	var taints []corev1.Taint
	for _, t := range n.Taints {
		taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)})
	}
	created := metav1.NewTime(now.Add(-time.Hour))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, UID: types.UID("node/" + n.Name), CreationTimestamp: created},
		Spec:       corev1.NodeSpec{ProviderID: providerID(n.Name), Taints: taints},
		Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
	nc := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, UID: types.UID("nodeclaim/" + n.Name), CreationTimestamp: created},
		Spec:       v1.NodeClaimSpec{Taints: taints},
		Status:     v1.NodeClaimStatus{ProviderID: providerID(n.Name), NodeName: n.Name, Capacity: alloc, Allocatable: alloc},
	}
	for _, c := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized, v1.ConditionTypeConsolidatable} {
		nc.StatusConditions().SetTrue(c)
	}
	if !nc.StatusConditions().Get(v1.ConditionTypeConsolidatable).IsTrue() {
		return nil, nil, fmt.Errorf("node %s: the NodeClaim's conditions did not take", n.Name)
	}
	return node, nc, nil
}

// boundPodOf builds a running pod of bp on node.
func boundPodOf(bp boundPod, node string) (*corev1.Pod, error) {
	g := &podGroup{Name: bp.Ref.Namespace, Requests: bp.Requests, Labels: bp.Labels, HostPorts: bp.HostPorts, PodAntiAffinity: bp.PodAntiAffinity}
	pod, err := podOf(g, bp.Ref)
	if err != nil {
		return nil, err
	}
	bind(pod, node)
	return pod, nil
}

// bind makes pod a running pod on node.
func bind(pod *corev1.Pod, node string) {
	pod.Spec.NodeName = node
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
}

func ptrTo[T any](v T) *T { return &v }
