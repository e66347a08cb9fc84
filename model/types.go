// Package model is Packwright's pure domain: resources, label requirements, taints, pod groups, offerings,
// existing nodes, node pools, the optimisation Problem and the Plan that answers it. It imports only the
// standard library so that the solver can be tested and benchmarked without Kubernetes.
package model

import "time"

// ResourceName names a schedulable resource, as Kubernetes spells it.
type ResourceName string

// Well-known resources. Any other name (an extended resource such as "example.com/fpga") is allowed.
const (
	CPU              ResourceName = "cpu"               // millicores
	Memory           ResourceName = "memory"            // bytes
	EphemeralStorage ResourceName = "ephemeral-storage" // bytes
	Pods             ResourceName = "pods"              // count
	GPU              ResourceName = "nvidia.com/gpu"    // count
)

// Resources is a vector of exact integer quantities: millicores for cpu, bytes for memory and storage, counts
// for everything else. A missing entry is zero.
type Resources map[ResourceName]int64

// Operator is a label requirement operator with Kubernetes node-selector semantics.
type Operator string

// Label requirement operators.
const (
	OpIn           Operator = "In"
	OpNotIn        Operator = "NotIn"
	OpExists       Operator = "Exists"
	OpDoesNotExist Operator = "DoesNotExist"
	OpGt           Operator = "Gt"
	OpLt           Operator = "Lt"
)

// Requirement is one label requirement (a node selector requirement).
type Requirement struct {
	Key      string
	Operator Operator
	Values   []string
}

// Requirements is a conjunction: all must hold.
type Requirements []Requirement

// NodeSelectorTerms is a disjunction of conjunctions, as in required node affinity. An empty list matches
// every node; a term with no requirements matches none (as in kube-scheduler).
type NodeSelectorTerms []Requirements

// PreferredTerm is a weighted soft node-affinity term.
type PreferredTerm struct {
	Weight int32
	Term   Requirements
}

// TaintEffect is the effect of a taint.
type TaintEffect string

// Taint effects.
const (
	NoSchedule       TaintEffect = "NoSchedule"
	PreferNoSchedule TaintEffect = "PreferNoSchedule"
	NoExecute        TaintEffect = "NoExecute"
)

// Taint is a node taint.
type Taint struct {
	Key    string
	Value  string
	Effect TaintEffect
}

// TolerationOperator is Equal or Exists.
type TolerationOperator string

// Toleration operators.
const (
	TolerationEqual  TolerationOperator = "Equal"
	TolerationExists TolerationOperator = "Exists"
)

// Toleration is a pod toleration. An empty Effect matches every effect; an empty Key with Exists matches
// every taint.
type Toleration struct {
	Key      string
	Operator TolerationOperator
	Value    string
	Effect   TaintEffect
}

// LabelSelector selects pods by labels: MatchLabels and MatchExpressions (In, NotIn, Exists, DoesNotExist)
// must all hold. A nil selector matches nothing; an empty one matches everything.
type LabelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions Requirements
}

// Well-known topology keys.
const (
	LabelHostname     = "kubernetes.io/hostname"
	LabelZone         = "topology.kubernetes.io/zone"
	LabelInstanceType = "node.kubernetes.io/instance-type"
	LabelArch         = "kubernetes.io/arch"
	LabelOS           = "kubernetes.io/os"
	LabelCapacityType = "packwright.dev/capacity-type"
	LabelNodePool     = "packwright.dev/nodepool"
)

// PodAffinityTerm is a required pod (anti-)affinity term: pods matching Selector in Namespaces (empty means
// the pod's own namespace) must (affinity) or must not (anti-affinity) share the TopologyKey domain.
type PodAffinityTerm struct {
	Selector    *LabelSelector
	Namespaces  []string
	TopologyKey string
}

// UnsatisfiableAction says what a topology spread constraint does when it cannot be met.
type UnsatisfiableAction string

// Topology spread actions.
const (
	DoNotSchedule  UnsatisfiableAction = "DoNotSchedule"
	ScheduleAnyway UnsatisfiableAction = "ScheduleAnyway"
)

// TopologySpread is a topology spread constraint of a pod.
type TopologySpread struct {
	MaxSkew           int32
	TopologyKey       string
	WhenUnsatisfiable UnsatisfiableAction
	Selector          *LabelSelector
	MinDomains        int32 // 0 when unset
}

// PodRef names one pod.
type PodRef struct {
	Namespace string
	Name      string
}

// String returns namespace/name.
func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// PodGroup is an equivalence class of pending pods with identical requests and scheduling constraints. Its
// demand is len(Pods).
type PodGroup struct {
	// Name identifies the group in plans and messages, e.g. "default/web-7d4f" (the owner or first pod).
	Name      string
	Namespace string
	Pods      []PodRef
	// Requests is the per-pod request, including the "pods" resource (1) and pod overhead.
	Requests Resources
	// Labels are the pods' labels, which pod affinity and topology spread selectors match.
	Labels            map[string]string
	NodeSelector      map[string]string
	NodeAffinity      NodeSelectorTerms
	PreferredAffinity []PreferredTerm
	Tolerations       []Toleration
	HostPorts         []int32
	PodAffinity       []PodAffinityTerm
	PodAntiAffinity   []PodAffinityTerm
	// PreferredAntiAffinity is soft: honoured when it costs nothing extra.
	PreferredAntiAffinity []PodAffinityTerm
	TopologySpread        []TopologySpread
}

// Demand is the number of pending pods in the group.
func (g *PodGroup) Demand() int { return len(g.Pods) }

// NodePool constrains and labels the nodes launched for it.
type NodePool struct {
	Name          string
	Weight        int32
	Requirements  Requirements
	Taints        []Taint
	StartupTaints []Taint
	Labels        map[string]string
	// Limits caps the total capacity of the pool's nodes (existing and new). Missing means unlimited.
	Limits Resources
}

// Capacity types.
const (
	OnDemand = "on-demand"
	Spot     = "spot"
)

// Offering is one way to launch a node: a NodePool, instance type, zone and capacity type, with its price.
type Offering struct {
	// ID is unique within a Problem, e.g. "default/m5.large/us-east-1a/spot".
	ID           string
	NodePool     string
	InstanceType string
	Zone         string
	CapacityType string
	// Price is the hourly price in USD.
	Price float64
	// Capacity is the machine's capacity; Allocatable is what pods may use after kube/system reserved,
	// eviction threshold and the DaemonSets that would run there.
	Capacity    Resources
	Allocatable Resources
	// Labels include the well-known labels and the NodePool's labels (hostname excluded).
	Labels map[string]string
	Taints []Taint
	// MaxCount caps how many nodes of this offering a plan may launch; 0 means unlimited. Consolidation turns
	// every node it may remove into an offering with MaxCount 1 (keeping the node is "launching" it once).
	MaxCount int
	// Resident lists the pods (counts of Problem.Groups) that a node of this offering already runs: consolidation
	// sets it on a candidate's offering, with the candidate's movable pods. The MIP opens such an offering only
	// with these pods on it, so a kept node keeps its pods and the plan moves pods off removed nodes alone. It
	// is a solver's rule, not a validity one: a plan that places them elsewhere is valid, it just moves them.
	// Only offerings with MaxCount 1 may have residents.
	Resident []GroupCount
}

// BoundPod is a pod already running (or bound) on an existing node.
type BoundPod struct {
	Ref       PodRef
	Labels    map[string]string
	Requests  Resources
	HostPorts []int32
	// AntiAffinity terms of bound pods also forbid new pods (symmetric anti-affinity).
	PodAntiAffinity []PodAffinityTerm
}

// ExistingNode is a node already in the cluster, a bin with residual capacity.
type ExistingNode struct {
	Name         string
	NodePool     string // empty when not managed by a NodePool
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
	Capacity     Resources
	Allocatable  Resources
	Labels       map[string]string
	Taints       []Taint
	Pods         []BoundPod
}

// Problem is everything a decision needs: the pending pod groups, the offerings that may be launched, the
// existing nodes and the node pools.
type Problem struct {
	Groups    []PodGroup
	Offerings []Offering
	Nodes     []ExistingNode
	Pools     []NodePool
	// Zones lists every zone that topology spread counts as a domain, including zones without nodes yet.
	Zones []string
}

// GroupCount is a number of pods of one group (an index into Problem.Groups).
type GroupCount struct {
	Group int
	Count int
}

// NewNode is a node to launch: an offering (index into Problem.Offerings) and the pods it will hold.
type NewNode struct {
	Offering int
	Pods     []GroupCount
}

// ExistingPlacement puts pods on an existing node (index into Problem.Nodes).
type ExistingPlacement struct {
	Node int
	Pods []GroupCount
}

// Unschedulable reports pods of a group that the plan does not place, and why.
type Unschedulable struct {
	Group  int
	Count  int
	Reason string
}

// Status says how a plan was obtained.
type Status string

// Plan statuses.
const (
	StatusOptimal        Status = "optimal"
	StatusWithinGap      Status = "within-gap"
	StatusGreedyFallback Status = "greedy-fallback"
	StatusGreedy         Status = "greedy"
)

// Plan answers a Problem: new nodes, placements on existing nodes and unschedulable pods, with cost and a
// proven lower bound on the cost of any plan that places the same pods.
type Plan struct {
	NewNodes      []NewNode
	Existing      []ExistingPlacement
	Unschedulable []Unschedulable
	// Cost is the hourly price of NewNodes.
	Cost float64
	// LowerBound is a proven lower bound on the hourly cost of new nodes for placing every pod that the
	// plan places; 0 when unknown.
	LowerBound float64
	Status     Status
	// Solver names what produced the plan ("greedy", "mip", "local-search"), StatusReason says why (e.g. why a fallback).
	Solver       string
	StatusReason string
	Duration     time.Duration
}

// Gap is (Cost-LowerBound)/Cost, 0 when Cost is 0.
func (p *Plan) Gap() float64 {
	if p.Cost <= 0 {
		return 0
	}
	g := (p.Cost - p.LowerBound) / p.Cost
	if g < 0 {
		return 0
	}
	return g
}

// Placed is the number of pods the plan places, on new and existing nodes.
func (p *Plan) Placed() int {
	n := 0
	for _, nn := range p.NewNodes {
		for _, gc := range nn.Pods {
			n += gc.Count
		}
	}
	for _, ep := range p.Existing {
		for _, gc := range ep.Pods {
			n += gc.Count
		}
	}
	return n
}
