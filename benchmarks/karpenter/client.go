package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podIndexClient answers the one query that Karpenter's disruption code sends per node, pods by spec.nodeName,
// from an index built once, and passes everything else to the fake client. In a running controller that query
// is served by the informer cache's field index; controller-runtime's fake client instead encodes every pod of
// the cluster for each query, which makes a 1,000-node cluster take minutes per GetCandidates. The cluster does
// not change during a disruption cycle (its methods compute commands, they do not write pods), so the index
// stays true.
type podIndexClient struct {
	client.Client
	byNode map[string][]corev1.Pod
}

func newPodIndexClient(c client.Client, pods []*corev1.Pod) *podIndexClient {
	ic := &podIndexClient{Client: c, byNode: map[string][]corev1.Pod{}}
	for _, p := range pods {
		ic.byNode[p.Spec.NodeName] = append(ic.byNode[p.Spec.NodeName], *p.DeepCopy())
	}
	return ic
}

// List serves a PodList selected by spec.nodeName alone from the index.
func (c *podIndexClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if pl, ok := list.(*corev1.PodList); ok {
		var lo client.ListOptions
		lo.ApplyOptions(opts)
		if node, ok := nodeNameOnly(&lo); ok {
			pl.Items = make([]corev1.Pod, 0, len(c.byNode[node]))
			for i := range c.byNode[node] {
				pl.Items = append(pl.Items, *c.byNode[node][i].DeepCopy())
			}
			return nil
		}
	}
	return c.Client.List(ctx, list, opts...)
}

// nodeNameOnly returns the node of a list query that selects by spec.nodeName and nothing else.
func nodeNameOnly(lo *client.ListOptions) (string, bool) {
	if lo.FieldSelector == nil || lo.LabelSelector != nil || lo.Namespace != "" || lo.Limit != 0 || lo.Continue != "" {
		return "", false
	}
	reqs := lo.FieldSelector.Requirements()
	if len(reqs) != 1 || reqs[0].Field != "spec.nodeName" || reqs[0].Operator != "=" && reqs[0].Operator != "==" {
		return "", false
	}
	return reqs[0].Value, true
}

// move rebinds the indexed pod key to node, or drops it when node is "".
func (c *podIndexClient) move(key client.ObjectKey, from, node string) {
	pods := c.byNode[from]
	for i := range pods {
		if pods[i].Namespace == key.Namespace && pods[i].Name == key.Name {
			p := pods[i]
			c.byNode[from] = append(pods[:i:i], pods[i+1:]...)
			if node != "" {
				p.Spec.NodeName = node
				c.byNode[node] = append(c.byNode[node], p)
			}
			return
		}
	}
}

// podsOn returns the indexed pods of node.
func (c *podIndexClient) podsOn(node string) []corev1.Pod { return c.byNode[node] }
