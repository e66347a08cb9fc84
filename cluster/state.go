package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// State is one consistent view of the cluster objects that planning needs. Objects are unique by kind and
// name (and namespace, for namespaced kinds) and were validated as they were added. Everything derived from a
// State follows the objects' names, not the order in which they arrived.
//
// NodePools holds Packwright and Karpenter NodePools alike; the TypeMeta of each says which it was.
//
// A State is filled by one goroutine (ReadSnapshot, NewState, Add); once filled, Problem may be called from
// several goroutines at once, since it does not modify the State.
type State struct {
	Pods                 []*corev1.Pod
	Nodes                []*corev1.Node
	DaemonSets           []*appsv1.DaemonSet
	PodDisruptionBudgets []*policyv1.PodDisruptionBudget
	NodePools            []*apiv1.NodePool
	// NodeClaims are kept for callers; ConsolidationInput reads them (matched to nodes by status.nodeName) for
	// expiry and drift.
	NodeClaims []*apiv1.NodeClaim

	seen map[string]bool // kind/namespace/name of every object added
	// infos caches each added pod's conversion, made anyway to validate it, so that repeated Problem calls (a
	// controller re-plans the same pods many times) do not redo it.
	infos map[*corev1.Pod]*podInfo
}

// podInfo returns the conversion of pod, cached when the pod came through Add.
func (s *State) podInfo(pod *corev1.Pod) (*podInfo, error) {
	if pi, ok := s.infos[pod]; ok {
		return pi, nil
	}
	return newPodInfo(pod)
}

// NewState returns a State holding objs; it fails like Add.
func NewState(objs ...runtime.Object) (*State, error) {
	s := &State{}
	for _, o := range objs {
		if err := s.Add(o); err != nil {
			return nil, err
		}
	}
	s.Sort()
	return s, nil
}

// Add adds one object: a *corev1.Pod, *corev1.Node, *appsv1.DaemonSet, *policyv1.PodDisruptionBudget,
// *apiv1.NodePool or *apiv1.NodeClaim. The object is validated (names present, quantities non-negative and in
// range) and must not already be in the State. A Pod without a namespace is put in "default", as kubectl does.
// Add keeps the pointer and caches what it derived from it; the caller must not modify the object afterwards.
func (s *State) Add(obj runtime.Object) error {
	switch o := obj.(type) {
	case *corev1.Pod:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		if err := s.claim("Pod", o.Namespace, o.Name); err != nil {
			return err
		}
		pi, err := newPodInfo(o)
		if err != nil {
			return fmt.Errorf("pod %s/%s: %w", o.Namespace, o.Name, err)
		}
		if s.infos == nil {
			s.infos = map[*corev1.Pod]*podInfo{}
		}
		s.infos[o] = pi
		s.Pods = append(s.Pods, o)
	case *corev1.Node:
		if err := s.claim("Node", "", o.Name); err != nil {
			return err
		}
		if err := validateNode(o); err != nil {
			return fmt.Errorf("node %s: %w", o.Name, err)
		}
		s.Nodes = append(s.Nodes, o)
	case *appsv1.DaemonSet:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		if err := s.claim("DaemonSet", o.Namespace, o.Name); err != nil {
			return err
		}
		if err := validatePodTemplate(&o.Spec.Template, o.Namespace); err != nil {
			return fmt.Errorf("daemonset %s/%s: pod template: %w", o.Namespace, o.Name, err)
		}
		s.DaemonSets = append(s.DaemonSets, o)
	case *policyv1.PodDisruptionBudget:
		if o.Namespace == "" {
			o.Namespace = metav1.NamespaceDefault
		}
		if err := s.claim("PodDisruptionBudget", o.Namespace, o.Name); err != nil {
			return err
		}
		s.PodDisruptionBudgets = append(s.PodDisruptionBudgets, o)
	case *apiv1.NodePool:
		// Packwright and Karpenter NodePools share one name space: both would label nodes with the same pool.
		if err := s.claim("NodePool", "", o.Name); err != nil {
			return err
		}
		if err := validateNodePool(o); err != nil {
			return fmt.Errorf("nodepool %s: %w", o.Name, err)
		}
		s.NodePools = append(s.NodePools, o)
	case *apiv1.NodeClaim:
		if err := s.claim("NodeClaim", "", o.Name); err != nil {
			return err
		}
		s.NodeClaims = append(s.NodeClaims, o)
	case nil:
		return fmt.Errorf("add: nil object")
	default:
		return fmt.Errorf("add: unsupported object type %T", obj)
	}
	return nil
}

// claim records kind/namespace/name, failing when the name is empty or already taken.
func (s *State) claim(kind, namespace, name string) error {
	if name == "" {
		return fmt.Errorf("%s without metadata.name", strings.ToLower(kind))
	}
	key := kind + "/" + namespace + "/" + name
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[key] {
		if namespace != "" {
			return fmt.Errorf("%s %s/%s: duplicate object", strings.ToLower(kind), namespace, name)
		}
		return fmt.Errorf("%s %s: duplicate object", strings.ToLower(kind), name)
	}
	s.seen[key] = true
	return nil
}

func byMeta[T metav1.Object](a, b T) int {
	return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
}

// Sort orders every list by namespace and name. ReadSnapshot and NewState return sorted States; after Add,
// Problem works on a sorted copy if needed, so calling Sort is never required for correctness.
func (s *State) Sort() {
	slices.SortFunc(s.Pods, byMeta)
	slices.SortFunc(s.Nodes, byMeta)
	slices.SortFunc(s.DaemonSets, byMeta)
	slices.SortFunc(s.PodDisruptionBudgets, byMeta)
	slices.SortFunc(s.NodePools, byMeta)
	slices.SortFunc(s.NodeClaims, byMeta)
}

// sorted returns s if the lists that Problem reads are sorted, else a sorted shallow copy, leaving s untouched
// so that concurrent Problem calls on one State stay safe.
func (s *State) sorted() *State {
	if slices.IsSortedFunc(s.Pods, byMeta) && slices.IsSortedFunc(s.Nodes, byMeta) &&
		slices.IsSortedFunc(s.DaemonSets, byMeta) && slices.IsSortedFunc(s.NodePools, byMeta) {
		return s
	}
	c := *s
	c.Pods = slices.SortedFunc(slices.Values(s.Pods), byMeta)
	c.Nodes = slices.SortedFunc(slices.Values(s.Nodes), byMeta)
	c.DaemonSets = slices.SortedFunc(slices.Values(s.DaemonSets), byMeta)
	c.NodePools = slices.SortedFunc(slices.Values(s.NodePools), byMeta)
	return &c
}
