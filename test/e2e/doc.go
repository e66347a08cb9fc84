// Package e2e runs Packwright's end-to-end tests against a real control plane: controller-runtime's envtest
// starts etcd and kube-apiserver, and the Harness adds a real kube-scheduler process, so that scheduling
// decisions are the scheduler's own. The binaries come from hack/install-control-plane.sh, whose output folder
// the tests read from the PACKWRIGHT_CONTROL_PLANE environment variable; without it the tests fail.
package e2e
