package main

import "time"

// The types below mirror github.com/packwright/packwright/model as encoding/json writes it (Go field names).
// This module cannot import model: it would pull Packwright's k8s.io v0.37 into a build that Karpenter v1.14
// needs at v0.35. Only the fields the adapter reads are declared; a field the adapter does not understand is
// reported by unsupported().

type resources map[string]int64

type requirement struct {
	Key      string
	Operator string
	Values   []string
}

type labelSelector struct {
	MatchLabels      map[string]string
	MatchExpressions []requirement
}

type taint struct {
	Key, Value, Effect string
}

type toleration struct {
	Key, Operator, Value, Effect string
}

type podAffinityTerm struct {
	Selector    *labelSelector
	Namespaces  []string
	TopologyKey string
}

type topologySpread struct {
	MaxSkew           int32
	TopologyKey       string
	WhenUnsatisfiable string
	Selector          *labelSelector
	MinDomains        int32
}

type podRef struct {
	Namespace, Name string
}

type preferredTerm struct {
	Weight int32
	Term   []requirement
}

type podGroup struct {
	Name                  string
	Namespace             string
	Pods                  []podRef
	Requests              resources
	Labels                map[string]string
	NodeSelector          map[string]string
	NodeAffinity          [][]requirement
	PreferredAffinity     []preferredTerm
	Tolerations           []toleration
	HostPorts             []int32
	PodAffinity           []podAffinityTerm
	PodAntiAffinity       []podAffinityTerm
	PreferredAntiAffinity []podAffinityTerm
	TopologySpread        []topologySpread
}

type nodePool struct {
	Name         string
	Weight       int32
	Requirements []requirement
	Taints       []taint
	Labels       map[string]string
	Limits       resources
}

type offering struct {
	ID           string
	NodePool     string
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
	Capacity     resources
	Allocatable  resources
	Labels       map[string]string
	Taints       []taint
}

type boundPod struct {
	Ref             podRef
	Labels          map[string]string
	Requests        resources
	HostPorts       []int32
	PodAntiAffinity []podAffinityTerm
}

type existingNode struct {
	Name         string
	NodePool     string
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
	Capacity     resources
	Allocatable  resources
	Labels       map[string]string
	Taints       []taint
	Pods         []boundPod
}

type problem struct {
	Groups    []podGroup
	Offerings []offering
	Nodes     []existingNode
	Pools     []nodePool
	Zones     []string
}

type problemFile struct {
	Workload string   `json:"workload"`
	Pods     int      `json:"pods"`
	Problem  *problem `json:"problem"`
}

// The plan, in model.Plan's form.

type groupCount struct {
	Group int
	Count int
}

type newNode struct {
	Offering int
	Pods     []groupCount
}

type unschedulable struct {
	Group  int
	Count  int
	Reason string
}

type plan struct {
	NewNodes      []newNode
	Unschedulable []unschedulable
	Cost          float64
	Status        string
	Solver        string
	StatusReason  string
	Duration      time.Duration
}

// peerFile is benchmarks.PeerFile.
type peerFile struct {
	Workload   string `json:"workload"`
	Peer       string `json:"peer"`
	Plan       *plan  `json:"plan,omitempty"`
	DurationNs int64  `json:"durationNs"`
	Error      string `json:"error,omitempty"`
}

// The consolidation snapshot and decision, in benchmarks.ConsolidationFile's and ConsolidationPeerFile's form.

type podOrigin struct {
	Pod       podRef `json:"pod"`
	Candidate int    `json:"candidate"`
}

type consolidationFile struct {
	Workload   string         `json:"workload"`
	Nodes      int            `json:"nodes"`
	Problem    *problem       `json:"problem"`
	Candidates []existingNode `json:"candidates"`
	Origin     []podOrigin    `json:"origin"`
}

type peerNode struct {
	Offering int      `json:"offering"`
	Pods     []podRef `json:"pods"`
}

type peerMove struct {
	Pod podRef `json:"pod"`
	To  string `json:"to"`
}

type peerDecision struct {
	Label      string     `json:"label"`
	Method     string     `json:"method"`
	Cycles     int        `json:"cycles"`
	Removed    []string   `json:"removed"`
	NewNodes   []peerNode `json:"newNodes"`
	Moves      []peerMove `json:"moves"`
	DurationNs int64      `json:"durationNs"`
}

type consolidationPeerFile struct {
	Workload  string         `json:"workload"`
	Peer      string         `json:"peer"`
	Decisions []peerDecision `json:"decisions"`
	Error     string         `json:"error,omitempty"`
}
