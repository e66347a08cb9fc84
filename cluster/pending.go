package cluster

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsPending reports whether pod waits for a node: not bound (spec.nodeName empty), not being deleted, not
// finished (phase Succeeded or Failed), and not a DaemonSet's pod (the DaemonSet controller places those itself,
// and their cost is already in every offering's allocatable).
func IsPending(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == "" &&
		pod.DeletionTimestamp == nil &&
		!isTerminal(pod) &&
		!IsDaemonSetPod(pod)
}

// IsDaemonSetPod reports whether pod is controlled by a DaemonSet.
func IsDaemonSetPod(pod *corev1.Pod) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "DaemonSet"
}

// isTerminal reports whether the pod has finished and holds no resources any more.
func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
