// Package sim is a CloudProvider whose instances are Node objects: Create registers a Node directly through
// the API server, sized from a small catalog or from the NodeClaim's resources, and marks it Ready after a
// configurable delay, doing what the kubelet and kube-controller-manager would (set the Ready condition
// through the status subresource, remove the node.kubernetes.io/not-ready taint). It is for demos, end-to-end
// tests against a real kube-apiserver and kube-scheduler, and benchmarks at scale. No pod ever runs.
package sim

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
)

// ProviderIDPrefix starts the providerID of every simulated instance: sim://<node name>.
const ProviderIDPrefix = "sim://"

// Name is the provider's name, as returned by Provider.Name.
const Name = "sim"

// Options configure a Provider.
type Options struct {
	// ReadyDelay is how long a new Node stays NotReady (and tainted node.kubernetes.io/not-ready) before the
	// provider marks it Ready. Zero marks it Ready before Create returns.
	ReadyDelay time.Duration
	// InstanceTypes is the catalog: the capacity of each instance type by name. A claim whose instance type is
	// not listed gets a node with the capacity of the claim's resource requests. Allocatable equals capacity.
	InstanceTypes map[string]corev1.ResourceList
	// Unavailable are offerings that fail with an InsufficientCapacityError from the start; see
	// Provider.SetUnavailable.
	Unavailable []Offering
	// Describe, when set, gives the labels, capacity and allocatable of an offering (instance type, zone,
	// capacity type), as a real instance of it would register them; the controller fills it from the catalog.
	// It takes precedence over InstanceTypes for claims that list their offerings (the packwright.dev/offerings
	// annotation), which are then tried in order.
	Describe func(instanceType, zone, capacityType string) (labels map[string]string, capacity, allocatable corev1.ResourceList, ok bool)
}

// Provider is the simulated CloudProvider. Create it with New and Close it to stop pending readiness updates.
type Provider struct {
	client client.Client
	opts   Options

	mu          sync.Mutex
	unavailable map[Offering]bool
	readying    map[string]bool // nodes with a readiness update scheduled

	ctx     context.Context // canceled by Close; bounds the delayed readiness updates
	cancel  context.CancelFunc
	pending sync.WaitGroup
}

var _ cloudprovider.CloudProvider = (*Provider)(nil)

// New returns a Provider that creates Nodes through c, whose scheme must know corev1.
func New(c client.Client, opts Options) *Provider {
	p := &Provider{client: c, opts: opts, unavailable: map[Offering]bool{}, readying: map[string]bool{}}
	for _, o := range opts.Unavailable {
		p.unavailable[o] = true
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Name returns "sim".
func (p *Provider) Name() string { return Name }

// Close stops the readiness updates still waiting for their delay and waits for those under way.
func (p *Provider) Close() {
	p.cancel()
	p.pending.Wait()
}

// Create registers a Node for the claim, named like the claim, and returns the claim with its status filled
// (providerID, node name, capacity, allocatable) and the labels the launch resolved. A Node that already
// exists for the claim is returned as is, so Create is idempotent.
func (p *Provider) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	node, err := p.nodeForOfferings(claim)
	if err != nil {
		return nil, fmt.Errorf("sim: launching nodeclaim %s: %w", claim.Name, err)
	}
	if node == nil {
		instanceType, capacityType, err := p.pick(claim)
		if err != nil {
			return nil, fmt.Errorf("sim: launching nodeclaim %s: %w", claim.Name, err)
		}
		node = nodeFor(claim, instanceType, capacityType, p.capacity(claim, instanceType))
	}
	if err := p.client.Create(ctx, node); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("sim: creating node for nodeclaim %s: %w", claim.Name, err)
		}
		existing := &corev1.Node{}
		if err := p.client.Get(ctx, client.ObjectKey{Name: node.Name}, existing); err != nil {
			return nil, fmt.Errorf("sim: reading existing node for nodeclaim %s: %w", claim.Name, err)
		}
		if existing.Spec.ProviderID != node.Spec.ProviderID {
			return nil, fmt.Errorf("sim: node %s exists with providerID %q, not %q", node.Name, existing.Spec.ProviderID, node.Spec.ProviderID)
		}
		return claimFor(claim, existing), nil
	}
	if p.opts.ReadyDelay <= 0 {
		if err := p.markReady(ctx, node.Name); err != nil {
			return nil, err
		}
	} else {
		p.markReadyLater(ctx, node.Name)
	}
	return claimFor(claim, node), nil
}

// Delete deletes the claim's Node (named by its providerID, or like the claim when it has none yet).
func (p *Provider) Delete(ctx context.Context, claim *v1.NodeClaim) error {
	name := claim.Name
	if claim.Status.ProviderID != "" {
		n, err := nodeName(claim.Status.ProviderID)
		if err != nil {
			return err
		}
		name = n
	}
	node := &corev1.Node{}
	node.Name = name
	if err := p.client.Delete(ctx, node); err != nil {
		if apierrors.IsNotFound(err) {
			return cloudprovider.NewNodeClaimNotFoundError(ProviderIDPrefix+name, err)
		}
		return fmt.Errorf("sim: deleting node %s: %w", name, err)
	}
	return p.deletePods(ctx, name)
}

// deletePods force-deletes the pods still bound to a deleted node, as the pod garbage collector of
// kube-controller-manager does for a node that is gone (no kubelet will ever confirm their termination).
func (p *Provider) deletePods(ctx context.Context, nodeName string) error {
	var pods corev1.PodList
	if err := p.client.List(ctx, &pods); err != nil {
		return fmt.Errorf("sim: listing pods of deleted node %s: %w", nodeName, err)
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != nodeName {
			continue
		}
		if err := p.client.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("sim: deleting pod %s/%s of deleted node %s: %w", pod.Namespace, pod.Name, nodeName, err)
		}
	}
	return nil
}

// Get returns the claim the Node with the given providerID stands for.
func (p *Provider) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	name, err := nodeName(providerID)
	if err != nil {
		return nil, err
	}
	node := &corev1.Node{}
	if err := p.client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
		}
		return nil, fmt.Errorf("sim: reading node %s: %w", name, err)
	}
	return claimFor(&v1.NodeClaim{}, node), nil
}

// List returns a claim for every Node whose providerID is a sim:// one.
func (p *Provider) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	nodes := &corev1.NodeList{}
	if err := p.client.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("sim: listing nodes: %w", err)
	}
	var claims []*v1.NodeClaim
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !strings.HasPrefix(n.Spec.ProviderID, ProviderIDPrefix) {
			continue
		}
		claims = append(claims, claimFor(&v1.NodeClaim{}, n))
		// A provider that replaces another (a restarted controller) takes over its nodes still starting, as
		// their kubelets would carry on: without this they would stay NotReady for ever.
		if n.DeletionTimestamp == nil && !isReady(n) {
			p.markReadyLater(ctx, n.Name)
		}
	}
	return claims, nil
}

// nodeName returns the Node name in a sim:// providerID.
func nodeName(providerID string) (string, error) {
	name, ok := strings.CutPrefix(providerID, ProviderIDPrefix)
	if !ok || name == "" {
		return "", fmt.Errorf("sim: providerID %q is not of the form %s<node name>", providerID, ProviderIDPrefix)
	}
	return name, nil
}
