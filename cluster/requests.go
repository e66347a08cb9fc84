package cluster

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/packwright/packwright/model"
)

// PodRequests returns the resources the scheduler reserves for pod, computed as kubelet and kube-scheduler
// compute them:
//
//   - a container's request for a resource defaults to its limit when only the limit is set (API defaulting);
//   - the app containers and the restartable init containers (sidecars, restartPolicy Always) run together,
//     so their requests add up;
//   - each regular init container runs alone with the sidecars started before it, so it needs its own request
//     plus theirs;
//   - the pod needs the larger of the two, per resource, plus spec.overhead (the RuntimeClass overhead);
//   - pod-level requests (spec.resources) replace the container total for the resources they set;
//   - "pods" is 1.
func PodRequests(pod *corev1.Pod) (model.Resources, error) {
	return podSpecRequests(&pod.Spec)
}

func podSpecRequests(spec *corev1.PodSpec) (model.Resources, error) {
	sum := model.Resources{} // app containers plus every sidecar
	for i := range spec.Containers {
		c := &spec.Containers[i]
		r, err := containerRequests(c)
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", c.Name, err)
		}
		addTo(sum, r)
	}

	initPeak := model.Resources{} // the most any single init phase needs
	sidecars := model.Resources{} // sidecars started so far
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		r, err := containerRequests(c)
		if err != nil {
			return nil, fmt.Errorf("init container %s: %w", c.Name, err)
		}
		phase := model.Resources{}
		if isSidecar(c) {
			// A sidecar keeps running: it adds to the pod's steady state and to every later init phase.
			addTo(sum, r)
			addTo(sidecars, r)
			addTo(phase, sidecars)
		} else {
			addTo(phase, r)
			addTo(phase, sidecars)
		}
		maxInto(initPeak, phase)
	}
	maxInto(sum, initPeak)

	if spec.Resources != nil {
		podLevel, err := podLevelRequests(spec)
		if err != nil {
			return nil, err
		}
		for k, v := range podLevel {
			sum[k] = v
		}
	}

	overhead, err := resources(spec.Overhead, "overhead")
	if err != nil {
		return nil, err
	}
	addTo(sum, overhead)

	for k, v := range sum {
		if v == 0 {
			delete(sum, k) // a missing entry is zero; keeping vectors sparse makes group keys shorter
		}
	}
	sum[model.Pods] = 1
	return sum, nil
}

// isSidecar reports whether an init container is restartable, i.e. a sidecar that runs for the pod's lifetime.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// containerRequests returns a container's requests, defaulted from its limits per resource.
func containerRequests(c *corev1.Container) (model.Resources, error) {
	req, err := resources(c.Resources.Requests, "resources.requests")
	if err != nil {
		return nil, err
	}
	lim, err := resources(c.Resources.Limits, "resources.limits")
	if err != nil {
		return nil, err
	}
	if len(lim) == 0 {
		return req, nil
	}
	out := make(model.Resources, len(req)+len(lim))
	for k, v := range lim {
		out[k] = v
	}
	for k, v := range req {
		out[k] = v
	}
	return out, nil
}

// podLevelRequests returns the pod-level requests of spec.resources (cpu, memory and hugepages only, the
// resources the PodLevelResources feature supports). A pod-level limit without a request defaults the request,
// unless a container requests that resource itself (then the container total stands).
func podLevelRequests(spec *corev1.PodSpec) (model.Resources, error) {
	req, err := resources(spec.Resources.Requests, "resources.requests")
	if err != nil {
		return nil, err
	}
	lim, err := resources(spec.Resources.Limits, "resources.limits")
	if err != nil {
		return nil, err
	}
	out := model.Resources{}
	for k, v := range lim {
		if podLevelResource(k) && !containersRequest(spec, corev1.ResourceName(k)) {
			out[k] = v
		}
	}
	for k, v := range req {
		if podLevelResource(k) {
			out[k] = v
		}
	}
	return out, nil
}

func podLevelResource(name model.ResourceName) bool {
	return name == model.CPU || name == model.Memory || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

func containersRequest(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range cs {
			if _, ok := cs[i].Resources.Requests[name]; ok {
				return true
			}
		}
	}
	return false
}
