package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// LiveOptions say which cluster ReadLive reads.
type LiveOptions struct {
	// Kubeconfig is the kubeconfig file; empty means the default loading rules ($KUBECONFIG, ~/.kube/config).
	Kubeconfig string
	// Context overrides the kubeconfig's current context.
	Context string
	// Timeout bounds each API request (default 15 s), so an unreachable cluster fails fast.
	Timeout time.Duration
}

// RESTConfig resolves the options into a client configuration.
func (o LiveOptions) RESTConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.Timeout = o.Timeout
	if cfg.Timeout <= 0 {
		cfg.Timeout = 15 * time.Second
	}
	return cfg, nil
}

// nodePoolResources are the NodePool kinds ReadLive lists; a cluster that does not serve one is fine.
var nodePoolResources = []schema.GroupVersionResource{
	{Group: apiv1.GroupName, Version: "v1", Resource: "nodepools"},
	{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"},
}

// ReadLive lists the objects planning uses (Pods, Nodes, DaemonSets, PodDisruptionBudgets, and the NodePools of
// packwright.dev/v1 and karpenter.sh/v1) from a live cluster into a State. It only reads.
func ReadLive(ctx context.Context, cfg *rest.Config) (*State, error) {
	where := cfg.Host
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", where, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", where, err)
	}
	s, err := NewState()
	if err != nil {
		return nil, err
	}
	list := metav1.ListOptions{}
	nodes, err := cs.CoreV1().Nodes().List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list nodes: %w", where, err)
	}
	for i := range nodes.Items {
		if err := s.Add(&nodes.Items[i]); err != nil {
			return nil, err
		}
	}
	pods, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list pods: %w", where, err)
	}
	for i := range pods.Items {
		if err := s.Add(&pods.Items[i]); err != nil {
			return nil, err
		}
	}
	dss, err := cs.AppsV1().DaemonSets(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list daemonsets: %w", where, err)
	}
	for i := range dss.Items {
		if err := s.Add(&dss.Items[i]); err != nil {
			return nil, err
		}
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, list)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: list poddisruptionbudgets: %w", where, err)
	}
	for i := range pdbs.Items {
		if err := s.Add(&pdbs.Items[i]); err != nil {
			return nil, err
		}
	}
	for _, gvr := range nodePoolResources {
		ul, err := dyn.Resource(gvr).List(ctx, list)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue // that CRD is not installed
		}
		if err != nil {
			return nil, fmt.Errorf("cluster %s: list %s: %w", where, gvr.GroupResource(), err)
		}
		for _, u := range ul.Items {
			np := &apiv1.NodePool{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np); err != nil {
				return nil, fmt.Errorf("cluster %s: %s %s: %w", where, gvr.GroupResource(), u.GetName(), err)
			}
			if err := s.Add(np); err != nil {
				return nil, err
			}
		}
	}
	s.Sort()
	return s, nil
}
