// Package provisioning turns pending pods into NodeClaims: it batches pod events, builds the optimisation
// problem from the informer cache (counting NodeClaims still launching as capacity), solves it and creates one
// NodeClaim per new node, carrying the chosen offering and its fallbacks.
package provisioning

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/controller/metrics"
	"github.com/packwright/packwright/controller/unavailable"
	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

// MaxFallbacks bounds the offerings a NodeClaim lists after the chosen one.
const MaxFallbacks = 10

// Options configure a Provisioner.
type Options struct {
	// Catalog prices and sizes the offerings.
	Catalog *catalog.Catalog
	// Solver configures every solve (deadline, kind).
	Solver solver.Options
	// BatchIdle and BatchMax are the batch windows (defaults 1 s and 10 s).
	BatchIdle, BatchMax time.Duration
	// Resync re-runs provisioning this often while pods are pending, so that pods left over (capacity errors,
	// expired unavailability) are retried without a new event (default 30 s).
	Resync time.Duration
	// Unavailable holds offerings that recently failed with insufficient capacity; they are left out of solves.
	Unavailable *unavailable.Offerings
	// Observe, when set, is called with every provisioning result, for tests and benchmarks.
	Observe func(Result)
}

// Result is what one provisioning pass decided.
type Result struct {
	Plan          *model.Plan
	Problem       *model.Problem
	Pending       int
	NodeClaims    []*apiv1.NodeClaim
	Unschedulable []cluster.Issue
}

// Provisioner is the provisioning loop. It runs as a manager Runnable on the leader only.
type Provisioner struct {
	client   client.Client
	recorder record.EventRecorder
	opts     Options
	batcher  *Batcher
}

// New returns a Provisioner reading from and writing through c (a cache-backed client).
func New(c client.Client, recorder record.EventRecorder, opts Options) (*Provisioner, error) {
	if opts.Catalog == nil {
		return nil, errors.New("provisioner: no catalog")
	}
	if opts.BatchIdle <= 0 {
		opts.BatchIdle = time.Second
	}
	if opts.BatchMax <= 0 {
		opts.BatchMax = 10 * time.Second
	}
	if opts.Resync <= 0 {
		opts.Resync = 30 * time.Second
	}
	if opts.Unavailable == nil {
		opts.Unavailable = unavailable.New(0)
	}
	return &Provisioner{client: c, recorder: recorder, opts: opts, batcher: NewBatcher(opts.BatchIdle, opts.BatchMax)}, nil
}

// Trigger asks for a provisioning pass; triggers are batched.
func (p *Provisioner) Trigger() { p.batcher.Trigger() }

// NeedLeaderElection says that only the leader provisions.
func (p *Provisioner) NeedLeaderElection() bool { return true }

// Start runs the loop until ctx is done. A failed pass is logged and retried at the next trigger or resync; it
// never stops the loop.
func (p *Provisioner) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("provisioner")
	ctx = log.IntoContext(ctx, logger)
	p.Trigger() // pods may have been pending before this replica became leader
	go func() {
		t := time.NewTicker(p.opts.Resync)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.Trigger()
			}
		}
	}()
	for p.batcher.Wait(ctx) {
		if _, err := p.Provision(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "provisioning failed; will retry")
		}
	}
	return nil
}

// Provision runs one pass: read the cluster, solve, create NodeClaims, record events.
func (p *Provisioner) Provision(ctx context.Context) (*Result, error) {
	logger := log.FromContext(ctx)
	state, pending, err := p.state(ctx)
	if err != nil {
		return nil, err
	}
	metrics.PendingPods.Set(float64(len(pending)))
	if len(pending) == 0 {
		metrics.UnschedulablePods.Set(0)
		return &Result{}, nil
	}
	problem, issues, err := state.Problem(p.opts.Catalog, cluster.ProblemOptions{})
	if err != nil {
		return nil, fmt.Errorf("build problem: %w", err)
	}
	for _, is := range issues {
		logger.V(1).Info("problem issue", "object", is.Object, "reason", is.Reason)
	}
	p.dropUnavailable(problem)
	plan, err := solver.Solve(ctx, problem, p.opts.Solver)
	if err != nil {
		return nil, fmt.Errorf("solve %d pending pods: %w", len(pending), err)
	}
	if err := plan.Validate(problem); err != nil {
		// Solve validates too; this guards the actuation against any bug between the two.
		return nil, fmt.Errorf("plan from %s does not validate: %w", plan.Solver, err)
	}
	metrics.SolveDuration.WithLabelValues(plan.Solver, string(plan.Status)).Observe(plan.Duration.Seconds())
	metrics.PlanCost.Set(plan.Cost)
	metrics.PlanLowerBound.Set(plan.LowerBound)
	metrics.PlanGap.Set(plan.Gap())
	res := &Result{Plan: plan, Problem: problem, Pending: len(pending)}
	unsched := 0
	for _, u := range plan.Unschedulable {
		unsched += u.Count
	}
	metrics.UnschedulablePods.Set(float64(unsched))

	pools := map[string]*apiv1.NodePool{}
	for _, np := range state.NodePools {
		pools[np.Name] = np
	}
	byName := map[string]*corev1.Pod{}
	for _, pod := range pending {
		byName[pod.Namespace+"/"+pod.Name] = pod
	}
	next := make([]int, len(problem.Groups)) // next pod of each group to nominate
	var errs []error
	for i := range plan.NewNodes {
		nn := &plan.NewNodes[i]
		claim, err := p.nodeClaim(problem, nn, pools)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := p.client.Create(ctx, claim); err != nil {
			errs = append(errs, fmt.Errorf("create nodeclaim for %s: %w", problem.Offerings[nn.Offering].ID, err))
			continue
		}
		metrics.NodeClaimsCreated.WithLabelValues(claim.Labels[apiv1.NodePoolLabelKey]).Inc()
		res.NodeClaims = append(res.NodeClaims, claim)
		for _, gc := range nn.Pods {
			g := &problem.Groups[gc.Group]
			for k := 0; k < gc.Count && next[gc.Group] < len(g.Pods); k++ {
				ref := g.Pods[next[gc.Group]]
				next[gc.Group]++
				if pod := byName[ref.Namespace+"/"+ref.Name]; pod != nil && p.recorder != nil {
					p.recorder.Eventf(pod, corev1.EventTypeNormal, "Nominated", "Pod should schedule on NodeClaim %s", claim.Name)
				}
			}
		}
	}
	for _, u := range plan.Unschedulable {
		g := &problem.Groups[u.Group]
		res.Unschedulable = append(res.Unschedulable, cluster.Issue{Object: "pod group " + g.Name, Reason: u.Reason})
		for k, ref := range g.Pods {
			if k >= u.Count {
				break
			}
			if pod := byName[ref.Namespace+"/"+ref.Name]; pod != nil && p.recorder != nil {
				p.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedProvisioning", "No NodePool can launch a node for this pod: %s", u.Reason)
			}
		}
	}
	if len(res.NodeClaims) > 0 {
		logger.Info("provisioned", "pending", len(pending), "nodeclaims", len(res.NodeClaims), "cost", plan.Cost,
			"lowerBound", plan.LowerBound, "gap", plan.Gap(), "solver", plan.Solver, "status", plan.Status,
			"duration", plan.Duration.String(), "unschedulable", unsched)
	}
	if p.opts.Observe != nil {
		p.opts.Observe(*res)
	}
	return res, errors.Join(errs...)
}

// State reads the cluster as provisioning sees it (NodeClaims still launching stand in as nodes) and returns
// the pending pods; disruption decides on the same view.
func (p *Provisioner) State(ctx context.Context) (*cluster.State, []*corev1.Pod, error) {
	return p.state(ctx)
}

// CreateNodeClaim creates the NodeClaim of one new node of a plan over problem, as provisioning does (offering,
// fallbacks, pool template); reason annotates why, e.g. a consolidation's replacement.
func (p *Provisioner) CreateNodeClaim(ctx context.Context, problem *model.Problem, nn *model.NewNode, pools []*apiv1.NodePool, reason string) (*apiv1.NodeClaim, error) {
	byName := map[string]*apiv1.NodePool{}
	for _, np := range pools {
		byName[np.Name] = np
	}
	claim, err := p.nodeClaim(problem, nn, byName)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		if claim.Annotations == nil {
			claim.Annotations = map[string]string{}
		}
		claim.Annotations[LaunchReasonAnnotationKey] = reason
	}
	if err := p.client.Create(ctx, claim); err != nil {
		return nil, fmt.Errorf("create nodeclaim for %s: %w", problem.Offerings[nn.Offering].ID, err)
	}
	metrics.NodeClaimsCreated.WithLabelValues(claim.Labels[apiv1.NodePoolLabelKey]).Inc()
	return claim, nil
}

// LaunchReasonAnnotationKey says why a NodeClaim was created when it was not for pending pods (for example
// "consolidation": a replacement).
const LaunchReasonAnnotationKey = apiv1.GroupName + "/launch-reason"

// state reads the cluster from the cache into a cluster.State, with NodeClaims still launching standing in as
// nodes, and returns the pending pods.
func (p *Provisioner) state(ctx context.Context) (*cluster.State, []*corev1.Pod, error) {
	var (
		pods   corev1.PodList
		nodes  corev1.NodeList
		dss    appsv1.DaemonSetList
		pdbs   policyv1.PodDisruptionBudgetList
		npools apiv1.NodePoolList
		claims apiv1.NodeClaimList
	)
	for _, l := range []client.ObjectList{&pods, &nodes, &dss, &pdbs, &npools, &claims} {
		if err := p.client.List(ctx, l); err != nil {
			return nil, nil, fmt.Errorf("list %T: %w", l, err)
		}
	}
	var objs []runtime.Object
	var pending []*corev1.Pod
	for i := range pods.Items {
		pod := &pods.Items[i]
		if cluster.IsPending(pod) && len(pod.Spec.SchedulingGates) == 0 {
			pending = append(pending, pod)
		}
		objs = append(objs, pod)
	}
	nodeByProvider := map[string]*corev1.Node{}
	for i := range nodes.Items {
		if id := nodes.Items[i].Spec.ProviderID; id != "" {
			nodeByProvider[id] = &nodes.Items[i]
		}
	}
	claimOfNode := map[string]*apiv1.NodeClaim{}
	for i := range claims.Items {
		c := &claims.Items[i]
		if n := nodeByProvider[c.Status.ProviderID]; c.Status.ProviderID != "" && n != nil {
			claimOfNode[n.Name] = c
			continue
		}
		if c.DeletionTimestamp != nil {
			continue // going away: its pods must find room elsewhere
		}
		n, err := p.inflightNode(c)
		if err != nil {
			log.FromContext(ctx).Info("nodeclaim not counted as capacity", "nodeclaim", c.Name, "reason", err.Error())
			continue
		}
		objs = append(objs, n)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if n.DeletionTimestamp != nil {
			continue
		}
		if c := claimOfNode[n.Name]; c != nil {
			if c.DeletionTimestamp != nil {
				continue
			}
			if !apiv1.IsConditionTrue(c.Status.Conditions, apiv1.ConditionTypeInitialized) {
				n = withoutStartupTaints(n, c)
			}
		}
		objs = append(objs, n)
	}
	for i := range dss.Items {
		objs = append(objs, &dss.Items[i])
	}
	for i := range pdbs.Items {
		objs = append(objs, &pdbs.Items[i])
	}
	for i := range npools.Items {
		if npools.Items[i].DeletionTimestamp == nil {
			objs = append(objs, &npools.Items[i])
		}
	}
	for _, c := range claimOfNode {
		objs = append(objs, c) // consolidation reads them for expiry and drift
	}
	state, err := cluster.NewState(objs...)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster state: %w", err)
	}
	return state, pending, nil
}

// transientTaints are set on every new node until it is ready; a node that is still starting is counted as if
// they were gone, as the scheduler will see it.
var transientTaints = map[string]bool{
	corev1.TaintNodeNotReady:    true,
	corev1.TaintNodeUnreachable: true,
}

// withoutStartupTaints returns a copy of a node that is still initialising without the taints that will go.
func withoutStartupTaints(n *corev1.Node, c *apiv1.NodeClaim) *corev1.Node {
	out := n.DeepCopy()
	out.Spec.Taints = slices.DeleteFunc(out.Spec.Taints, func(t corev1.Taint) bool {
		if transientTaints[t.Key] {
			return true
		}
		return slices.ContainsFunc(c.Spec.StartupTaints, func(s corev1.Taint) bool { return s.MatchTaint(&t) })
	})
	return out
}

// inflightNode returns the Node a launching NodeClaim will become, as the solver should count it: labels and
// capacity of the launched instance when known, else of the first offering the claim lists.
func (p *Provisioner) inflightNode(c *apiv1.NodeClaim) (*corev1.Node, error) {
	labels := maps.Clone(c.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	alloc, capacity := c.Status.Allocatable, c.Status.Capacity
	if len(alloc) == 0 || labels[corev1.LabelInstanceTypeStable] == "" {
		offs, err := apiv1.ClaimOfferings(c)
		if err != nil {
			return nil, err
		}
		if len(offs) == 0 {
			return nil, fmt.Errorf("nodeclaim %s lists no offerings", c.Name)
		}
		o := offs[0]
		it, ok := p.opts.Catalog.ByName(o.InstanceType)
		if !ok {
			return nil, fmt.Errorf("instance type %s is not in the catalog", o.InstanceType)
		}
		for k, v := range it.Labels(p.opts.Catalog.Region, o.Zone, o.CapacityType, labels[apiv1.NodePoolLabelKey]) {
			if _, set := labels[k]; !set {
				labels[k] = v
			}
		}
		capacity = ResourceList(it.Capacity(nil))
		alloc = ResourceList(it.Allocatable(nil))
	}
	labels[corev1.LabelHostname] = c.Name
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: slices.Clone(c.Spec.Taints), ProviderID: c.Status.ProviderID},
		Status:     corev1.NodeStatus{Capacity: capacity.DeepCopy(), Allocatable: alloc.DeepCopy()},
	}, nil
}

// dropUnavailable removes offerings that recently failed with insufficient capacity.
func (p *Provisioner) dropUnavailable(problem *model.Problem) {
	problem.Offerings = slices.DeleteFunc(problem.Offerings, func(o model.Offering) bool {
		return p.opts.Unavailable.IsUnavailable(o.InstanceType, o.Zone, o.CapacityType)
	})
}

// nodeClaim builds the NodeClaim for a new node of the plan: the pool's template, requirements that allow the
// chosen offering and its fallbacks, and the pods' total requests.
func (p *Provisioner) nodeClaim(problem *model.Problem, nn *model.NewNode, pools map[string]*apiv1.NodePool) (*apiv1.NodeClaim, error) {
	chosen := &problem.Offerings[nn.Offering]
	offs := append([]*model.Offering{chosen}, fallbacks(problem, nn)...)
	refs := make([]apiv1.OfferingRef, len(offs))
	types, zones, capTypes := []string{}, []string{}, []string{}
	for i, o := range offs {
		refs[i] = apiv1.OfferingRef{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: o.CapacityType, Price: o.Price}
		if !slices.Contains(types, o.InstanceType) {
			types = append(types, o.InstanceType)
		}
		if !slices.Contains(zones, o.Zone) {
			zones = append(zones, o.Zone)
		}
		if !slices.Contains(capTypes, o.CapacityType) {
			capTypes = append(capTypes, o.CapacityType)
		}
	}
	requests := model.Resources{}
	npods := 0
	for _, gc := range nn.Pods {
		requests = requests.Add(problem.Groups[gc.Group].Requests.Scale(int64(gc.Count)))
		npods += gc.Count
	}
	delete(requests, model.Pods)
	claim := &apiv1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: chosen.NodePool + "-",
			Labels:       map[string]string{apiv1.NodePoolLabelKey: chosen.NodePool},
			Annotations: map[string]string{
				apiv1.OfferingsAnnotationKey: apiv1.FormatOfferings(refs),
				apiv1.PodsAnnotationKey:      strconv.Itoa(npods),
			},
		},
	}
	var reqs []apiv1.NodeSelectorRequirementWithMinValues
	if np := pools[chosen.NodePool]; np != nil {
		t := &np.Spec.Template
		maps.Copy(claim.Labels, t.Labels)
		claim.Labels[apiv1.NodePoolLabelKey] = np.Name
		claim.Annotations[apiv1.NodePoolHashAnnotationKey] = np.TemplateHash() // drift is judged against it
		claim.Spec.Taints = slices.Clone(t.Spec.Taints)
		claim.Spec.StartupTaints = slices.Clone(t.Spec.StartupTaints)
		claim.Spec.NodeClassRef = t.Spec.NodeClassRef.DeepCopy()
		claim.Spec.TerminationGracePeriod = t.Spec.TerminationGracePeriod.DeepCopy()
		claim.Spec.ExpireAfter = t.Spec.ExpireAfter
		for _, r := range t.Spec.Requirements {
			switch r.Key {
			case corev1.LabelInstanceTypeStable, corev1.LabelTopologyZone, apiv1.CapacityTypeLabelKey, apiv1.KarpenterCapacityTypeLabelKey:
				continue // narrowed below to what the plan allows
			}
			reqs = append(reqs, *r.DeepCopy())
		}
		claim.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: apiv1.SchemeGroupVersion.String(), Kind: "NodePool", Name: np.Name, UID: np.UID,
			BlockOwnerDeletion: ptr(true),
		}}
	}
	if claim.Spec.NodeClassRef == nil {
		claim.Spec.NodeClassRef = &apiv1.NodeClassReference{Group: apiv1.GroupName, Kind: "NodeClass", Name: "default"}
	}
	reqs = append(reqs,
		apiv1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: types},
		apiv1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: zones},
		apiv1.NodeSelectorRequirementWithMinValues{Key: apiv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: capTypes},
	)
	claim.Spec.Requirements = reqs
	claim.Spec.Resources.Requests = ResourceList(requests)
	return claim, nil
}

func ptr[T any](v T) *T { return &v }

// fallbacks returns up to MaxFallbacks other offerings of the same pool and zone that can hold the node's pods
// exactly as the plan put them, cheapest first: every group compatible with their labels and taints, the
// pods' requests within their allocatable, and, where the pool has limits, no more of a limited resource than
// the chosen offering (so a fallback never breaks a limit the plan kept). The zone stays fixed because zone
// spread and zone affinity were decided for this zone.
func fallbacks(problem *model.Problem, nn *model.NewNode) []*model.Offering {
	chosen := &problem.Offerings[nn.Offering]
	need := model.Resources{}
	for _, gc := range nn.Pods {
		need = need.Add(problem.Groups[gc.Group].Requests.Scale(int64(gc.Count)))
		need[model.Pods] += int64(gc.Count)
	}
	var limits model.Resources
	for i := range problem.Pools {
		if problem.Pools[i].Name == chosen.NodePool {
			limits = problem.Pools[i].Limits
		}
	}
	var out []*model.Offering
	for i := range problem.Offerings {
		o := &problem.Offerings[i]
		// An offering limited to a count (a consolidation candidate kept as it is) cannot be launched instead.
		if i == nn.Offering || o.NodePool != chosen.NodePool || o.Zone != chosen.Zone || o.MaxCount > 0 {
			continue
		}
		if !fits(need, o.Allocatable) {
			continue
		}
		ok := true
		for name := range limits {
			if o.Capacity[name] > chosen.Capacity[name] {
				ok = false
				break
			}
		}
		for _, gc := range nn.Pods {
			g := &problem.Groups[gc.Group]
			if !ok || !g.Compatible(o.Labels, o.Taints) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Price < out[b].Price })
	if len(out) > MaxFallbacks {
		out = out[:MaxFallbacks]
	}
	return out
}

func fits(need, alloc model.Resources) bool {
	for name, v := range need {
		if v > alloc[name] {
			return false
		}
	}
	return true
}
