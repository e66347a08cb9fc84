//go:build tools

// Package controlplane pins the Kubernetes control-plane binaries that the end-to-end tests run
// (kube-apiserver, kube-scheduler) to one release; hack/install-control-plane.sh builds them from here.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
