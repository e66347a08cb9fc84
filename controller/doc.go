// Package controller runs Packwright in a cluster: a controller-runtime manager with leader election, Prometheus
// metrics and health probes, and the controllers that turn pending pods into nodes (provisioning), NodeClaims
// into instances (nodeclaim lifecycle and termination) and remove instances nobody claims (garbage collection).
//
// The controllers own timing, batching and actuation; packing is the solver's (see DESIGN.md).
package controller
