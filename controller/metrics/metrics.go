// Package metrics defines Packwright's Prometheus metrics, registered on controller-runtime's registry so that
// the manager's /metrics endpoint serves them. Every name starts with packwright_.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Namespace prefixes every metric.
const Namespace = "packwright"

var (
	// PendingPods is the number of pods waiting for a node at the last provisioning pass.
	PendingPods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "pending_pods",
		Help: "Pods waiting for a node (unbound, not gated) at the last provisioning pass.",
	})
	// SolveDuration is how long solves take, by the solver that produced the plan and its status.
	SolveDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "solve_duration_seconds",
		Help:    "Time taken by a solve, by the solver whose plan was chosen and the plan's status.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10},
	}, []string{"solver", "status"})
	// PlanCost is the hourly cost of the last plan's new nodes.
	PlanCost = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "plan_cost_per_hour",
		Help: "Hourly price of the new nodes of the last provisioning plan.",
	})
	// PlanLowerBound is the proven lower bound of the last plan.
	PlanLowerBound = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "plan_lower_bound_per_hour",
		Help: "Proven lower bound on the hourly cost of the last provisioning plan.",
	})
	// PlanGap is (cost - lower bound) / cost of the last plan.
	PlanGap = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "plan_gap_ratio",
		Help: "Relative gap between the last plan's cost and its lower bound.",
	})
	// UnschedulablePods counts pods that the last plan could not place.
	UnschedulablePods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "unschedulable_pods",
		Help: "Pending pods that no node the NodePools allow can hold, at the last provisioning pass.",
	})
	// NodesLaunched counts instances launched, by NodePool and capacity type.
	NodesLaunched = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "nodes_launched_total",
		Help: "Instances launched for NodeClaims, by NodePool and capacity type.",
	}, []string{"nodepool", "capacity_type"})
	// NodesTerminated counts instances terminated, by reason.
	NodesTerminated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "nodes_terminated_total",
		Help: "Instances terminated, by reason (deleted, launch-timeout, registration-timeout, garbage-collected, ...).",
	}, []string{"reason"})
	// ConsolidationDecisions counts consolidation passes by outcome: none, delete, replace, abandoned.
	ConsolidationDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "consolidation_decisions_total",
		Help: "Consolidation decisions, by action (none, delete, replace, abandoned).",
	}, []string{"action"})
	// NodesDisrupted counts the nodes the disruption controller deleted, by reason.
	NodesDisrupted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "nodes_disrupted_total",
		Help: "Nodes removed or replaced by the disruption controller, by reason (consolidated, drifted, expired).",
	}, []string{"reason"})
	// ConsolidationSaving is the hourly saving of the last consolidation carried out.
	ConsolidationSaving = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "consolidation_saving_per_hour",
		Help: "Hourly saving (USD) of the last consolidation carried out.",
	})
	// CloudProviderErrors counts failed cloud provider calls, by provider, method and error class.
	CloudProviderErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "cloudprovider_errors_total",
		Help: "Failed cloud provider calls, by provider, method and error class (insufficient-capacity, not-found, other).",
	}, []string{"provider", "method", "error"})
	// NodeClaims is the number of NodeClaims by lifecycle phase.
	NodeClaims = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "nodeclaims",
		Help: "NodeClaims by phase (pending, launched, registered, initialized, terminating).",
	}, []string{"phase"})
	// NodeClaimsCreated counts NodeClaims created by the provisioner, by NodePool.
	NodeClaimsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "nodeclaims_created_total",
		Help: "NodeClaims created by the provisioner, by NodePool.",
	}, []string{"nodepool"})
	// OfferingsUnavailable is the number of offerings currently marked unavailable after capacity errors.
	OfferingsUnavailable = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "offerings_unavailable",
		Help: "Offerings marked unavailable after insufficient-capacity errors, until their TTL runs out.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(PendingPods, SolveDuration, PlanCost, PlanLowerBound, PlanGap, UnschedulablePods,
		NodesLaunched, NodesTerminated, CloudProviderErrors, NodeClaims, NodeClaimsCreated, OfferingsUnavailable,
		ConsolidationDecisions, ConsolidationSaving, NodesDisrupted)
}
