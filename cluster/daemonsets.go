package cluster

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/packwright/packwright/model"
)

// daemonSet is a DaemonSet's pod as scheduling sees it: its requests and what decides the nodes it runs on.
type daemonSet struct {
	name string // namespace/name
	// pod holds the template's nodeSelector, node affinity and tolerations, for model.PodGroup.Compatible.
	pod model.PodGroup
}

// daemonSetTolerations are the tolerations the DaemonSet controller adds to every daemon pod, so that daemons
// run on nodes that are not ready, under pressure or cordoned.
var daemonSetTolerations = []model.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: model.TolerationExists, Effect: model.NoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: model.TolerationExists, Effect: model.NoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: model.TolerationExists, Effect: model.NoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: model.TolerationExists, Effect: model.NoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: model.TolerationExists, Effect: model.NoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: model.TolerationExists, Effect: model.NoSchedule},
}

func newDaemonSet(ds *appsv1.DaemonSet) (*daemonSet, error) {
	pi, err := newPodInfo(templatePod(&ds.Spec.Template, ds.Namespace))
	if err != nil {
		return nil, fmt.Errorf("daemonset %s/%s: pod template: %w", ds.Namespace, ds.Name, err)
	}
	tols := append(append([]model.Toleration(nil), pi.tolerations...), daemonSetTolerations...)
	if ds.Spec.Template.Spec.HostNetwork {
		tols = append(tols, model.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: model.TolerationExists, Effect: model.NoSchedule})
	}
	return &daemonSet{
		name: ds.Namespace + "/" + ds.Name,
		pod: model.PodGroup{
			Requests:     pi.requests,
			NodeSelector: pi.nodeSelector,
			NodeAffinity: pi.nodeAffinity,
			Tolerations:  tols,
		},
	}, nil
}

// runsOn reports whether the DaemonSet would place a pod on a node with these labels and taints.
func (d *daemonSet) runsOn(labels map[string]string, taints []model.Taint) bool {
	return d.pod.Compatible(labels, taints)
}

// applyDaemonSets subtracts from each offering's allocatable the requests of the DaemonSets that would run on
// it, and drops the offerings that cannot even hold their daemons. It returns the offerings kept and the
// number dropped.
func applyDaemonSets(offs []model.Offering, dss []*daemonSet) ([]model.Offering, int) {
	if len(dss) == 0 {
		return offs, 0
	}
	kept := offs[:0]
	dropped := 0
	for _, o := range offs {
		for _, d := range dss {
			if d.runsOn(o.Labels, o.Taints) {
				o.Allocatable = o.Allocatable.Sub(d.pod.Requests)
			}
		}
		if negative(o.Allocatable) {
			dropped++
			continue
		}
		kept = append(kept, o)
	}
	return kept, dropped
}

func negative(r model.Resources) bool {
	for _, v := range r {
		if v < 0 {
			return true
		}
	}
	return false
}
