package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

// hoursPerMonth is the month that monthly costs assume, as cloud price lists do (365 × 24 / 12).
const hoursPerMonth = 730

// planView is a plan laid out for output: nodes in a stable order with names, and every pod named. Table and
// JSON output both render it, so that they always agree.
type planView struct {
	problem *model.Problem
	plan    *model.Plan
	// nodes holds the new nodes (named new-1, new-2, ...) and then the existing nodes that receive pods.
	nodes   []nodeView
	unsched []unschedView
	pending int
}

// nodeView is one node of the plan.
type nodeView struct {
	name                               string
	isNew                              bool
	pool, instanceType, zone, capacity string
	price                              float64
	capacityRes, allocatable           model.Resources
	labels                             map[string]string
	taints                             []model.Taint
	// counts are the plan's pods on this node by group, merged and in group order; pods names them.
	counts []model.GroupCount
	pods   []model.PodRef
	// offering is the offering index of a new node, -1 for an existing one.
	offering int
}

// unschedView is the pods of one group that the plan leaves pending, with why.
type unschedView struct {
	group  int
	reason string
	pods   []model.PodRef
}

// newPlanView lays out pl. Pods are handed out to nodes deterministically: each group's pods in the order of
// PodGroup.Pods go first to the new nodes in output order, then to existing nodes in problem order, and the rest
// are the unschedulable ones.
func newPlanView(p *model.Problem, pl *model.Plan) *planView {
	v := &planView{problem: p, plan: pl}
	for i := range p.Groups {
		v.pending += p.Groups[i].Demand()
	}
	next := make([]int, len(p.Groups)) // per group, the first pod not handed out yet
	take := func(g, n int) []model.PodRef {
		if g < 0 || g >= len(p.Groups) || n <= 0 {
			return nil
		}
		pods := p.Groups[g].Pods
		lo := min(next[g], len(pods))
		hi := min(lo+n, len(pods)) // a plan that over-counts (it would fail Validate) must not make us panic
		next[g] = lo + n
		return pods[lo:hi]
	}

	news := slices.Clone(pl.NewNodes)
	for i := range news {
		news[i].Pods = mergeCounts(news[i].Pods)
	}
	// Sort so that identical nodes are adjacent (the table collapses them) and the order does not depend on how
	// the solver happened to emit them.
	slices.SortStableFunc(news, func(a, b model.NewNode) int {
		oa, ob := offeringAt(p, a.Offering), offeringAt(p, b.Offering)
		return cmp.Or(cmp.Compare(oa.InstanceType, ob.InstanceType), cmp.Compare(oa.Zone, ob.Zone),
			cmp.Compare(oa.CapacityType, ob.CapacityType), cmp.Compare(oa.NodePool, ob.NodePool),
			compareCounts(a.Pods, b.Pods))
	})
	for i, nn := range news {
		o := offeringAt(p, nn.Offering)
		nv := nodeView{
			name: fmt.Sprintf("new-%d", i+1), isNew: true, offering: nn.Offering,
			pool: o.NodePool, instanceType: o.InstanceType, zone: o.Zone, capacity: o.CapacityType, price: o.Price,
			capacityRes: o.Capacity, allocatable: o.Allocatable, labels: o.Labels, taints: o.Taints, counts: nn.Pods,
		}
		for _, gc := range nn.Pods {
			nv.pods = append(nv.pods, take(gc.Group, gc.Count)...)
		}
		v.nodes = append(v.nodes, nv)
	}

	existing := slices.Clone(pl.Existing)
	slices.SortStableFunc(existing, func(a, b model.ExistingPlacement) int { return cmp.Compare(a.Node, b.Node) })
	for _, ep := range existing {
		if ep.Node < 0 || ep.Node >= len(p.Nodes) {
			continue
		}
		n := &p.Nodes[ep.Node]
		counts := mergeCounts(ep.Pods)
		if len(counts) == 0 {
			continue
		}
		nv := nodeView{
			name: n.Name, offering: -1, pool: n.NodePool, instanceType: n.InstanceType, zone: n.Zone,
			capacity: n.CapacityType, price: n.Price, capacityRes: n.Capacity, allocatable: n.Allocatable,
			labels: n.Labels, taints: n.Taints, counts: counts,
		}
		for _, gc := range counts {
			nv.pods = append(nv.pods, take(gc.Group, gc.Count)...)
		}
		v.nodes = append(v.nodes, nv)
	}

	for _, u := range pl.Unschedulable {
		v.unsched = append(v.unsched, unschedView{group: u.Group, reason: u.Reason, pods: take(u.Group, u.Count)})
	}
	return v
}

// offeringAt returns offering i, or an empty one for an index out of range.
func offeringAt(p *model.Problem, i int) *model.Offering {
	if i < 0 || i >= len(p.Offerings) {
		return &model.Offering{}
	}
	return &p.Offerings[i]
}

// mergeCounts sums counts per group, drops non-positive ones and sorts by group.
func mergeCounts(gcs []model.GroupCount) []model.GroupCount {
	by := map[int]int{}
	for _, gc := range gcs {
		by[gc.Group] += gc.Count
	}
	out := make([]model.GroupCount, 0, len(by))
	for _, g := range slices.Sorted(maps.Keys(by)) {
		if by[g] > 0 {
			out = append(out, model.GroupCount{Group: g, Count: by[g]})
		}
	}
	return out
}

func compareCounts(a, b []model.GroupCount) int {
	return slices.CompareFunc(a, b, func(x, y model.GroupCount) int {
		return cmp.Or(cmp.Compare(x.Group, y.Group), cmp.Compare(x.Count, y.Count))
	})
}

// placed counts the pods the plan places, on new and existing nodes.
func (v *planView) placed() int {
	n := 0
	for _, nv := range v.nodes {
		for _, gc := range nv.counts {
			n += gc.Count
		}
	}
	return n
}

func (v *planView) unschedulable() int {
	n := 0
	for _, u := range v.plan.Unschedulable {
		n += u.Count
	}
	return n
}

// groupName names group g for the table.
func (v *planView) groupName(g int) string {
	if g < 0 || g >= len(v.problem.Groups) {
		return fmt.Sprintf("group-%d", g)
	}
	return v.problem.Groups[g].Name
}

// podSummary is "shop/web×4, shop/api×1".
func (v *planView) podSummary(counts []model.GroupCount) string {
	parts := make([]string, len(counts))
	for i, gc := range counts {
		parts[i] = fmt.Sprintf("%s×%d", v.groupName(gc.Group), gc.Count)
	}
	return strings.Join(parts, ", ")
}

// tableReport is everything the table shows: the plan and, optionally, the comparison with a repack.
type tableReport struct {
	input   string // what was planned, e.g. "the embedded sample snapshot"
	catalog string
	view    *planView
	issues  []cluster.Issue
	compare *comparison
}

// writeTable writes the human-readable plan.
func writeTable(w io.Writer, r *tableReport) error {
	v, pl := r.view, r.view.plan
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("Plan for %s: %d pending pods in %d groups, %d existing nodes, %d offerings (catalog %s)\n",
		r.input, v.pending, len(v.problem.Groups), len(v.problem.Nodes), len(v.problem.Offerings), r.catalog)

	var newNodes, onExisting []nodeView
	for _, nv := range v.nodes {
		if nv.isNew {
			newNodes = append(newNodes, nv)
		} else {
			onExisting = append(onExisting, nv)
		}
	}

	p("\nNodes to launch: %d\n", len(newNodes))
	if len(newNodes) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  COUNT\tNAMES\tTYPE\tZONE\tCAPACITY\tNODEPOOL\t$/HOUR EACH\tPODS EACH")
		for i := 0; i < len(newNodes); {
			j := i + 1
			for j < len(newNodes) && newNodes[j].offering == newNodes[i].offering && compareCounts(newNodes[j].counts, newNodes[i].counts) == 0 {
				j++
			}
			n := newNodes[i]
			names := n.name
			if j-i > 1 {
				names += ".." + strings.TrimPrefix(newNodes[j-1].name, "new-")
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\n", j-i, names, n.instanceType, n.zone, n.capacity, n.pool, n.price, v.podSummary(n.counts))
			i = j
		}
		tw.Flush()
	}

	p("\nPods placed on existing nodes: %d\n", v.placed()-podsOn(newNodes))
	if len(onExisting) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tTYPE\tZONE\tNODEPOOL\tPODS")
		for _, n := range onExisting {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", n.name, orDash(n.instanceType), orDash(n.zone), orDash(n.pool), v.podSummary(n.counts))
		}
		tw.Flush()
	}

	p("\nUnschedulable pods: %d\n", v.unschedulable())
	if len(v.unsched) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  GROUP\tPODS\tREASON")
		for _, u := range v.unsched {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.groupName(u.group), podList(u.pods, 3), u.reason)
		}
		tw.Flush()
	}

	p("\nCost:      $%.4f/hour, $%.2f/month (%d h) for the new nodes\n", pl.Cost, pl.Cost*hoursPerMonth, hoursPerMonth)
	if pl.LowerBound > 0 || pl.Cost == 0 {
		p("Bound:     $%.4f/hour lower bound, gap %.2f%%\n", pl.LowerBound, 100*pl.Gap())
	} else {
		p("Bound:     none proven (gap unknown)\n")
	}
	p("Solver:    %s, status %s", pl.Solver, pl.Status)
	if pl.StatusReason != "" {
		p(" (%s)", pl.StatusReason)
	}
	p(", %s\n", roundDuration(pl.Duration))

	if c := r.compare; c != nil {
		writeComparison(&b, c)
	}
	if len(r.issues) > 0 {
		p("\nNotes on the input: %d\n", len(r.issues))
		for _, is := range r.issues {
			p("  - %s\n", is)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func podsOn(nodes []nodeView) int {
	n := 0
	for _, nv := range nodes {
		for _, gc := range nv.counts {
			n += gc.Count
		}
	}
	return n
}

// podList names up to max pods: "shop/a, shop/b, shop/c and 4 more".
func podList(pods []model.PodRef, max int) string {
	var parts []string
	for i, r := range pods {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(pods)-max))
			break
		}
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// PlanSchemaVersion is the version of the JSON plan format (docs/plan-format.md). It changes only when a field
// changes meaning or goes away; new fields may appear within a version.
const PlanSchemaVersion = 1

// planJSON is the top level of `packwright plan -o json`; docs/plan-format.md documents every field.
type planJSON struct {
	SchemaVersion int             `json:"schemaVersion"`
	Input         inputJSON       `json:"input"`
	Solver        string          `json:"solver"`
	Status        string          `json:"status"`
	StatusReason  string          `json:"statusReason"`
	Cost          costJSON        `json:"cost"`
	SolveSeconds  float64         `json:"solveSeconds"`
	Nodes         []nodeJSON      `json:"nodes"`
	Unschedulable []unschedJSON   `json:"unschedulable"`
	Issues        []issueJSON     `json:"issues"`
	Compare       *comparisonJSON `json:"compare,omitempty"`
}

type inputJSON struct {
	Snapshot      string `json:"snapshot"`
	Catalog       string `json:"catalog"`
	PendingPods   int    `json:"pendingPods"`
	Groups        int    `json:"groups"`
	ExistingNodes int    `json:"existingNodes"`
	Offerings     int    `json:"offerings"`
}

type costJSON struct {
	Hourly     float64 `json:"hourly"`
	Monthly    float64 `json:"monthly"`
	LowerBound float64 `json:"lowerBound"`
	Gap        float64 `json:"gap"`
}

type nodeJSON struct {
	Name         string            `json:"name"`
	New          bool              `json:"new"`
	NodePool     string            `json:"nodePool"`
	InstanceType string            `json:"instanceType"`
	Zone         string            `json:"zone"`
	CapacityType string            `json:"capacityType"`
	HourlyPrice  float64           `json:"hourlyPrice"`
	Capacity     map[string]string `json:"capacity"`
	Allocatable  map[string]string `json:"allocatable"`
	Labels       map[string]string `json:"labels"`
	Taints       []taintJSON       `json:"taints"`
	Pods         []string          `json:"pods"`
}

type taintJSON struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

type unschedJSON struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

type issueJSON struct {
	Object string `json:"object"`
	Reason string `json:"reason"`
}

// comparisonJSON is the "compare" object of --compare.
type comparisonJSON struct {
	// Current is the cluster as it would be after this plan: existing nodes plus the new ones.
	Current currentJSON `json:"current"`
	// Repacked is every pod planned from scratch on new nodes only.
	Repacked repackedPlanJSON `json:"repacked"`
	Saving   savingJSON       `json:"saving"`
}

type currentJSON struct {
	ExistingNodes  int      `json:"existingNodes"`
	ExistingHourly float64  `json:"existingHourly"`
	NewNodes       int      `json:"newNodes"`
	NewHourly      float64  `json:"newHourly"`
	Hourly         float64  `json:"hourly"`
	Monthly        float64  `json:"monthly"`
	UnpricedNodes  []string `json:"unpricedNodes"`
	Unschedulable  int      `json:"unschedulable"`
}

type repackedPlanJSON struct {
	Pods          int           `json:"pods"`
	Solver        string        `json:"solver"`
	Status        string        `json:"status"`
	StatusReason  string        `json:"statusReason"`
	Cost          costJSON      `json:"cost"`
	SolveSeconds  float64       `json:"solveSeconds"`
	Nodes         []nodeJSON    `json:"nodes"`
	Unschedulable []unschedJSON `json:"unschedulable"`
}

type savingJSON struct {
	Hourly  float64 `json:"hourly"`
	Monthly float64 `json:"monthly"`
	// Fraction is Hourly / current hourly, 0 when the current cost is 0.
	Fraction float64 `json:"fraction"`
}

// buildJSON converts a plan (and its comparison, when there is one) to the JSON schema.
func buildJSON(r *tableReport) *planJSON {
	v, pl := r.view, r.view.plan
	out := &planJSON{
		SchemaVersion: PlanSchemaVersion,
		Input: inputJSON{Snapshot: r.input, Catalog: r.catalog, PendingPods: v.pending, Groups: len(v.problem.Groups),
			ExistingNodes: len(v.problem.Nodes), Offerings: len(v.problem.Offerings)},
		Solver:        pl.Solver,
		Status:        string(pl.Status),
		StatusReason:  pl.StatusReason,
		Cost:          costOf(pl),
		SolveSeconds:  pl.Duration.Seconds(),
		Nodes:         nodesJSON(v),
		Unschedulable: unschedulableJSON(v),
		Issues:        []issueJSON{},
	}
	for _, is := range r.issues {
		out.Issues = append(out.Issues, issueJSON{Object: is.Object, Reason: is.Reason})
	}
	if c := r.compare; c != nil {
		rp := c.repacked.plan
		out.Compare = &comparisonJSON{
			Current: currentJSON{
				ExistingNodes: len(v.problem.Nodes), ExistingHourly: round6(c.existingHourly),
				NewNodes: len(pl.NewNodes), NewHourly: round6(pl.Cost),
				Hourly: round6(c.currentHourly()), Monthly: round6(c.currentHourly() * hoursPerMonth),
				UnpricedNodes: append([]string{}, c.unpriced...), Unschedulable: v.unschedulable(),
			},
			Repacked: repackedPlanJSON{
				Pods: c.repacked.pending, Solver: rp.Solver, Status: string(rp.Status), StatusReason: rp.StatusReason,
				Cost: costOf(rp), SolveSeconds: rp.Duration.Seconds(),
				Nodes: nodesJSON(c.repacked), Unschedulable: unschedulableJSON(c.repacked),
			},
			Saving: savingJSON{Hourly: round6(c.saving()), Monthly: round6(c.saving() * hoursPerMonth), Fraction: round6(c.savingFraction())},
		}
	}
	return out
}

func costOf(pl *model.Plan) costJSON {
	return costJSON{Hourly: round6(pl.Cost), Monthly: round6(pl.Cost * hoursPerMonth), LowerBound: round6(pl.LowerBound), Gap: round6(pl.Gap())}
}

// round6 rounds to a millionth, so that sums of prices print as 0.3 and not 0.30000000000000004.
func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

func nodesJSON(v *planView) []nodeJSON {
	out := make([]nodeJSON, 0, len(v.nodes))
	for _, n := range v.nodes {
		nj := nodeJSON{
			Name: n.name, New: n.isNew, NodePool: n.pool, InstanceType: n.instanceType, Zone: n.zone,
			CapacityType: n.capacity, HourlyPrice: round6(n.price), Capacity: quantities(n.capacityRes),
			Allocatable: quantities(n.allocatable), Labels: maps.Clone(n.labels), Taints: []taintJSON{},
			Pods: make([]string, len(n.pods)),
		}
		if nj.Labels == nil {
			nj.Labels = map[string]string{}
		}
		for _, t := range n.taints {
			nj.Taints = append(nj.Taints, taintJSON{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
		}
		for i, r := range n.pods {
			nj.Pods[i] = r.String()
		}
		out = append(out, nj)
	}
	return out
}

func unschedulableJSON(v *planView) []unschedJSON {
	out := []unschedJSON{}
	for _, u := range v.unsched {
		for _, r := range u.pods {
			out = append(out, unschedJSON{Pod: r.String(), Reason: u.reason})
		}
	}
	return out
}

// quantities formats a resource vector as Kubernetes quantity strings ("3920m", "14Gi"): exact, in the
// canonical form the API server would print, cpu in decimal units and byte resources in binary ones.
func quantities(r model.Resources) map[string]string {
	out := make(map[string]string, len(r))
	for name, v := range r {
		var q *resource.Quantity
		switch {
		case name == model.CPU:
			q = resource.NewMilliQuantity(v, resource.DecimalSI)
		case name == model.Memory || name == model.EphemeralStorage || strings.HasPrefix(string(name), "hugepages-"):
			q = resource.NewQuantity(v, resource.BinarySI)
		default:
			q = resource.NewQuantity(v, resource.DecimalSI)
		}
		out[string(name)] = q.String()
	}
	return out
}

// writeJSON writes the JSON plan, indented, with a trailing newline.
func writeJSON(w io.Writer, r *tableReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(buildJSON(r)); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// consolidationReport is a consolidation laid out for output; table and JSON both render it.
type consolidationReport struct {
	input, catalog string
	candidates     int
	movable        int
	offerings      int
	res            *solver.Consolidation
	removed        []removedView
	newNodes       []newNodeView
	moves          []solver.Move
	not            []cluster.NotCandidate
	issues         []cluster.Issue
}

// removedView is a candidate the plan removes. Its action is "replace" when some of its pods go to new nodes,
// "delete" when they all fit on nodes that stay. Its reason is why it goes: "empty" (no pod moved),
// "underutilized", or the forced reason (expired or drifted, with details).
type removedView struct {
	node      model.ExistingNode
	action    string
	reason    string
	podsMoved int
}

// newNodeView is a node the plan launches, named new-1, new-2, ... as in plan output.
type newNodeView struct {
	name     string
	offering model.Offering
	pods     []model.PodRef
}

// newNodeName turns the solver's zero-based "new-N" into the one-based name plan output uses.
func newNodeName(to string) string {
	if n, err := strconv.Atoi(strings.TrimPrefix(to, "new-")); err == nil && strings.HasPrefix(to, "new-") {
		return fmt.Sprintf("new-%d", n+1)
	}
	return to
}

func newConsolidationReport(input, catalog string, in *cluster.Consolidation, res *solver.Consolidation, not []cluster.NotCandidate, issues []cluster.Issue) *consolidationReport {
	r := &consolidationReport{input: input, catalog: catalog, candidates: len(in.Candidates), movable: len(in.Origin),
		offerings: len(in.Problem.Offerings), res: res, not: not, issues: issues}
	for _, m := range res.Moves {
		m.To = newNodeName(m.To)
		r.moves = append(r.moves, m)
	}
	for i, nn := range res.NewNodes {
		nv := newNodeView{name: fmt.Sprintf("new-%d", i+1)}
		if res.Model != nil {
			nv.offering = *offeringAt(res.Model, nn.Offering)
		}
		for _, m := range r.moves {
			if m.To == nv.name {
				nv.pods = append(nv.pods, m.Pod)
			}
		}
		r.newNodes = append(r.newNodes, nv)
	}
	byName := map[string]model.ExistingNode{}
	for _, c := range in.Candidates {
		byName[c.Name] = c
	}
	for _, name := range res.Removed {
		rv := removedView{node: byName[name], action: "delete"}
		for _, m := range r.moves {
			if m.From == name {
				rv.podsMoved++
				if strings.HasPrefix(m.To, "new-") {
					rv.action = "replace"
				}
			}
		}
		rv.reason = res.Forced[name]
		switch {
		case rv.reason != "":
		case rv.podsMoved == 0:
			rv.reason = "empty"
		default:
			rv.reason = "underutilized"
		}
		r.removed = append(r.removed, rv)
	}
	return r
}

// writeConsolidationTable writes the human-readable consolidation; verbose lists every move.
func writeConsolidationTable(w io.Writer, r *consolidationReport, verbose bool) error {
	res := r.res
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("Consolidation of %s: %d candidate nodes with %d movable pods, %d nodes not candidates, %d offerings (catalog %s)\n",
		r.input, r.candidates, r.movable, len(r.not), r.offerings, r.catalog)
	if res.Act {
		p("Decision:  act\n")
	} else {
		p("Decision:  no action (%s)\n", res.Reason)
	}

	p("\nNodes to remove: %d\n", len(r.removed))
	if len(r.removed) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tACTION\tTYPE\tZONE\tCAPACITY\tNODEPOOL\t$/HOUR\tPODS MOVED\tREASON")
		for _, rv := range r.removed {
			n := rv.node
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%d\t%s\n", n.Name, rv.action, orDash(n.InstanceType), orDash(n.Zone), orDash(n.CapacityType), orDash(n.NodePool), n.Price, rv.podsMoved, rv.reason)
		}
		tw.Flush()
	}

	p("\nNodes to launch (replacements): %d\n", len(r.newNodes))
	if len(r.newNodes) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tOFFERING\tTYPE\tZONE\tCAPACITY\tNODEPOOL\t$/HOUR\tPODS")
		for _, nv := range r.newNodes {
			o := nv.offering
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%d\n", nv.name, o.ID, o.InstanceType, o.Zone, o.CapacityType, o.NodePool, o.Price, len(nv.pods))
		}
		tw.Flush()
	}

	p("\nKept:      %d candidate nodes kept, %d nodes not candidates\n", len(res.Kept), len(r.not))
	p("Moved:     %d pods\n", len(r.moves))
	if verbose {
		for _, m := range r.moves {
			p("  - %s: %s -> %s\n", m.Pod, m.From, m.To)
		}
	}
	p("\nCost before: $%.4f/hour, $%.2f/month\n", res.CostBefore, res.CostBefore*hoursPerMonth)
	p("Cost after:  $%.4f/hour, $%.2f/month\n", res.CostAfter, res.CostAfter*hoursPerMonth)
	p("Saving:      $%.4f/hour, $%.2f/month (%.1f%%)\n", res.Saving, res.Saving*hoursPerMonth, 100*savingFraction(res))
	p("Bound:       $%.4f/hour lower bound on the cost after, gap %.2f%%\n", res.LowerBound, 100*res.Gap())
	solverName := ""
	if res.Plan != nil {
		solverName = res.Plan.Solver + ", "
	}
	p("Solver:      %sstatus %s, %s\n", solverName, res.Status, roundDuration(res.Duration))

	p("\nNot candidates: %d\n", len(r.not))
	if len(r.not) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  NODE\tREASON")
		for _, nc := range r.not {
			fmt.Fprintf(tw, "  %s\t%s\n", nc.Node, nc.Reason)
		}
		tw.Flush()
	}
	if len(r.issues) > 0 {
		p("\nNotes on the input: %d\n", len(r.issues))
		for _, is := range r.issues {
			p("  - %s\n", is)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func savingFraction(res *solver.Consolidation) float64 {
	if res.CostBefore <= 0 {
		return 0
	}
	return res.Saving / res.CostBefore
}

// consolidationJSON is the top level of `packwright plan --consolidate -o json` (docs/plan-format.md).
type consolidationJSON struct {
	SchemaVersion int                    `json:"schemaVersion"`
	Kind          string                 `json:"kind"`
	Input         consolidationInputJSON `json:"input"`
	Act           bool                   `json:"act"`
	Reason        string                 `json:"reason"`
	Removed       []removedJSON          `json:"removed"`
	NewNodes      []newNodeJSON          `json:"newNodes"`
	Kept          []string               `json:"kept"`
	PodsMoved     int                    `json:"podsMoved"`
	Moves         []moveJSON             `json:"moves"`
	Cost          consolidationCostJSON  `json:"cost"`
	Solver        string                 `json:"solver"`
	Status        string                 `json:"status"`
	SolveSeconds  float64                `json:"solveSeconds"`
	NotCandidates []notCandidateJSON     `json:"notCandidates"`
	Issues        []issueJSON            `json:"issues"`
}

type consolidationInputJSON struct {
	Snapshot    string `json:"snapshot"`
	Catalog     string `json:"catalog"`
	Candidates  int    `json:"candidates"`
	MovablePods int    `json:"movablePods"`
	Offerings   int    `json:"offerings"`
}

type removedJSON struct {
	Name         string  `json:"name"`
	Action       string  `json:"action"`
	NodePool     string  `json:"nodePool"`
	InstanceType string  `json:"instanceType"`
	Zone         string  `json:"zone"`
	CapacityType string  `json:"capacityType"`
	HourlyPrice  float64 `json:"hourlyPrice"`
	PodsMoved    int     `json:"podsMoved"`
	Reason       string  `json:"reason"`
}

type newNodeJSON struct {
	Name         string            `json:"name"`
	Offering     string            `json:"offering"`
	NodePool     string            `json:"nodePool"`
	InstanceType string            `json:"instanceType"`
	Zone         string            `json:"zone"`
	CapacityType string            `json:"capacityType"`
	HourlyPrice  float64           `json:"hourlyPrice"`
	Allocatable  map[string]string `json:"allocatable"`
	Pods         []string          `json:"pods"`
}

type moveJSON struct {
	Pod  string `json:"pod"`
	From string `json:"from"`
	To   string `json:"to"`
}

type consolidationCostJSON struct {
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	Saving        float64 `json:"saving"`
	SavingMonthly float64 `json:"savingMonthly"`
	LowerBound    float64 `json:"lowerBound"`
	Gap           float64 `json:"gap"`
}

type notCandidateJSON struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

func buildConsolidationJSON(r *consolidationReport) *consolidationJSON {
	res := r.res
	out := &consolidationJSON{
		SchemaVersion: PlanSchemaVersion, Kind: "consolidation",
		Input: consolidationInputJSON{Snapshot: r.input, Catalog: r.catalog, Candidates: r.candidates, MovablePods: r.movable, Offerings: r.offerings},
		Act:   res.Act, Reason: res.Reason,
		Removed: []removedJSON{}, NewNodes: []newNodeJSON{}, Kept: append([]string{}, res.Kept...),
		PodsMoved: len(r.moves), Moves: []moveJSON{},
		Cost: consolidationCostJSON{Before: round6(res.CostBefore), After: round6(res.CostAfter), Saving: round6(res.Saving),
			SavingMonthly: round6(res.Saving * hoursPerMonth), LowerBound: round6(res.LowerBound), Gap: round6(res.Gap())},
		Status: string(res.Status), SolveSeconds: res.Duration.Seconds(),
		NotCandidates: []notCandidateJSON{}, Issues: []issueJSON{},
	}
	if res.Plan != nil {
		out.Solver = res.Plan.Solver
	}
	for _, rv := range r.removed {
		n := rv.node
		out.Removed = append(out.Removed, removedJSON{Name: n.Name, Action: rv.action, NodePool: n.NodePool, InstanceType: n.InstanceType,
			Zone: n.Zone, CapacityType: n.CapacityType, HourlyPrice: round6(n.Price), PodsMoved: rv.podsMoved, Reason: rv.reason})
	}
	for _, nv := range r.newNodes {
		o := nv.offering
		nj := newNodeJSON{Name: nv.name, Offering: o.ID, NodePool: o.NodePool, InstanceType: o.InstanceType, Zone: o.Zone,
			CapacityType: o.CapacityType, HourlyPrice: round6(o.Price), Allocatable: quantities(o.Allocatable), Pods: []string{}}
		for _, ref := range nv.pods {
			nj.Pods = append(nj.Pods, ref.String())
		}
		out.NewNodes = append(out.NewNodes, nj)
	}
	for _, m := range r.moves {
		out.Moves = append(out.Moves, moveJSON{Pod: m.Pod.String(), From: m.From, To: m.To})
	}
	for _, nc := range r.not {
		out.NotCandidates = append(out.NotCandidates, notCandidateJSON{Node: nc.Node, Reason: nc.Reason})
	}
	for _, is := range r.issues {
		out.Issues = append(out.Issues, issueJSON{Object: is.Object, Reason: is.Reason})
	}
	return out
}

// writeConsolidationJSON writes the JSON consolidation, indented, with a trailing newline.
func writeConsolidationJSON(w io.Writer, r *consolidationReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(buildConsolidationJSON(r)); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
