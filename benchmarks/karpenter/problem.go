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

type existingNode struct {
	Name string
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
