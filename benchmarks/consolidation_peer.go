package benchmarks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/packwright/packwright/model"
	"github.com/packwright/packwright/solver"
)

// Consolidation snapshots cross over to a peer as files too: ExportConsolidation writes
// <slug>.consolidation.json for each consolidation workload, the peer writes its decision as <slug>.<peer>.json
// beside it, and RunConsolidation (Options.PeerDir) rebuilds the cluster after the peer's decision and
// validates the peer's placements with model.Plan.Validate.

// ConsolidationFile is the content of a <slug>.consolidation.json file: solver.ConsolidationInput in
// encoding/json's default form, with Origin as a list (a map with struct keys has no JSON form).
type ConsolidationFile struct {
	Workload string `json:"workload"`
	Nodes    int    `json:"nodes"`
	// Problem holds the nodes that stay whatever happens (with their pods), the offerings, pools and zones,
	// and the candidates' movable pods as Groups.
	Problem *model.Problem `json:"problem"`
	// Candidates are the nodes that may be removed, with the pods that go with them (DaemonSet pods).
	Candidates []model.ExistingNode `json:"candidates"`
	// Origin says on which candidate (index) each movable pod runs, in group order.
	Origin []PodOrigin `json:"origin"`
}

// PodOrigin is one movable pod and the index of the candidate it runs on.
type PodOrigin struct {
	Pod       model.PodRef `json:"pod"`
	Candidate int          `json:"candidate"`
}

// ConsolidationPeerFile is the content of a peer's <slug>.<peer>.json file for a consolidation workload: one or
// more decisions on the exported cluster (benchmarks/karpenter writes two: its first disruption cycle's command,
// and the cluster once its cycles find no more commands).
type ConsolidationPeerFile struct {
	Workload string `json:"workload"`
	// Peer names the peer and its version.
	Peer      string         `json:"peer"`
	Decisions []PeerDecision `json:"decisions"`
	// Error says why there is no decision.
	Error string `json:"error,omitempty"`
}

// PeerDecision is one decision of a peer: the candidates it removes and where the pods of those go.
type PeerDecision struct {
	// Label names the decision in the report's solver column, e.g. "first cycle"; Method describes it (a
	// note under the table); Cycles is how many of the peer's disruption cycles it took.
	Label  string `json:"label"`
	Method string `json:"method"`
	Cycles int    `json:"cycles"`
	// Removed names the removed candidates.
	Removed []string `json:"removed"`
	// NewNodes are launched: an offering (index into the exported problem's Offerings) and the pods it takes.
	NewNodes []PeerNode `json:"newNodes"`
	// Moves put pods of removed candidates on nodes that stay (by name: a pinned node or a kept candidate).
	Moves []PeerMove `json:"moves"`
	// DurationNs is the wall time of the peer's computation alone, in nanoseconds.
	DurationNs int64 `json:"durationNs"`
}

// PeerNode is a node the peer launches.
type PeerNode struct {
	Offering int            `json:"offering"`
	Pods     []model.PodRef `json:"pods"`
}

// PeerMove is a pod that the peer moves to a node that stays.
type PeerMove struct {
	Pod model.PodRef `json:"pod"`
	To  string       `json:"to"`
}

// ExportConsolidation writes each consolidation workload's cluster to dir as <slug>.consolidation.json and
// returns the file names.
func ExportConsolidation(dir string, ws []ConsolidationWorkload) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var files []string
	for _, w := range ws {
		in, err := w.Input()
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		f := ConsolidationFile{Workload: w.Name, Nodes: w.Nodes, Problem: &in.Problem, Candidates: in.Candidates}
		for _, g := range in.Problem.Groups {
			for _, ref := range g.Pods {
				f.Origin = append(f.Origin, PodOrigin{Pod: ref, Candidate: in.Origin[ref]})
			}
		}
		data, err := json.Marshal(f)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		name := Slug(w.Name) + ".consolidation.json"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		files = append(files, name)
	}
	return files, nil
}

// readConsolidationPeer reads the peer's decision for workload from dir; false when there is none.
func readConsolidationPeer(dir, peer, workload string) (*ConsolidationPeerFile, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, Slug(workload)+"."+peer+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("peer %s: %w", peer, err)
	}
	var f ConsolidationPeerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, false, fmt.Errorf("peer %s: %s: %w", peer, workload, err)
	}
	if f.Workload != workload {
		return nil, false, fmt.Errorf("peer %s: file for %s holds workload %q", peer, workload, f.Workload)
	}
	return &f, true, nil
}

// consolidationPeerOutcomes checks each of a peer's decisions on in and prices it as Packwright's decisions are
// priced: the cluster after it is the nodes that stay, the kept candidates and the new nodes at the input's
// prices. A peer that did not run gives one outcome with status "error".
func consolidationPeerOutcomes(in *solver.ConsolidationInput, f *ConsolidationPeerFile) []ConsolidationOutcome {
	before := 0.0
	for _, n := range in.Problem.Nodes {
		before += n.Price
	}
	for _, n := range in.Candidates {
		before += n.Price
	}
	if f.Error != "" || len(f.Decisions) == 0 {
		o := ConsolidationOutcome{Solver: f.Peer, Status: "error", CostBefore: before, Err: f.Error}
		if o.Err == "" {
			o.Err = "no decision"
		}
		return []ConsolidationOutcome{o}
	}
	var out []ConsolidationOutcome
	for i := range f.Decisions {
		out = append(out, consolidationPeerOutcome(in, f.Peer, &f.Decisions[i], before))
	}
	return out
}

// consolidationPeerOutcome checks and prices one decision; before is the cluster's cost before.
func consolidationPeerOutcome(in *solver.ConsolidationInput, peer string, d *PeerDecision, before float64) ConsolidationOutcome {
	name := peer
	if d.Label != "" {
		name += " (" + d.Label + ")"
	}
	o := ConsolidationOutcome{Solver: name, Status: "peer", Duration: time.Duration(d.DurationNs), Reason: d.Method,
		CostBefore: before, CostAfter: before}
	o.Removed, o.Launched, o.Moved = len(d.Removed), len(d.NewNodes), len(d.Moves)
	o.Act = o.Removed > 0
	for _, nn := range d.NewNodes {
		o.Moved += len(nn.Pods)
	}
	after, plan, err := peerAfter(in, peer, d)
	if err != nil {
		o.Err = "invalid decision: " + oneLine(err)
		return o
	}
	for _, n := range in.Candidates {
		if slices.Contains(d.Removed, n.Name) {
			o.CostAfter -= n.Price
		}
	}
	o.CostAfter += plan.Cost
	if err := plan.Validate(after); err != nil {
		o.Err = "invalid plan: " + oneLine(err)
		return o
	}
	o.Valid = true
	return o
}

// peerAfter builds the cluster after f's decision, as a problem whose existing nodes are the nodes that stay
// and the kept candidates (their pods bound) and whose groups are the pods of the removed candidates, and f's
// placements of those pods as a plan of it. It fails when f names unknown nodes, pods or offerings, or leaves a
// pod of a removed candidate without a place or places it twice.
func peerAfter(in *solver.ConsolidationInput, peer string, f *PeerDecision) (*model.Problem, *model.Plan, error) {
	removed := map[string]bool{}
	for _, name := range f.Removed {
		if !slices.ContainsFunc(in.Candidates, func(n model.ExistingNode) bool { return n.Name == name }) {
			return nil, nil, fmt.Errorf("removed node %q is no candidate", name)
		}
		if removed[name] {
			return nil, nil, fmt.Errorf("node %q removed twice", name)
		}
		removed[name] = true
	}
	p := in.Problem
	p.Nodes = slices.Clone(in.Problem.Nodes)
	nodeOf := map[string]int{} // name -> index in p.Nodes
	for i, n := range p.Nodes {
		nodeOf[n.Name] = i
	}
	candNode := make([]int, len(in.Candidates))
	for ci, n := range in.Candidates {
		candNode[ci] = -1
		if removed[n.Name] {
			continue
		}
		n.Pods = slices.Clone(n.Pods)
		candNode[ci], nodeOf[n.Name] = len(p.Nodes), len(p.Nodes)
		p.Nodes = append(p.Nodes, n)
	}
	// Pods of kept candidates stay bound where they are; pods of removed ones become the pending groups.
	p.Groups = nil
	groupOf := map[model.PodRef]int{}
	for _, g := range in.Problem.Groups {
		pending := g
		pending.Pods = nil
		for _, ref := range g.Pods {
			if e := candNode[in.Origin[ref]]; e >= 0 {
				n := &p.Nodes[e]
				n.Pods = append(n.Pods, model.BoundPod{Ref: ref, Labels: g.Labels, Requests: g.Requests,
					HostPorts: g.HostPorts, PodAntiAffinity: g.PodAntiAffinity})
				continue
			}
			pending.Pods = append(pending.Pods, ref)
		}
		if len(pending.Pods) > 0 {
			for _, ref := range pending.Pods {
				groupOf[ref] = len(p.Groups)
			}
			p.Groups = append(p.Groups, pending)
		}
	}
	placed := map[model.PodRef]bool{}
	count := func(refs []model.PodRef) ([]model.GroupCount, error) {
		by := map[int]int{}
		for _, ref := range refs {
			g, ok := groupOf[ref]
			if !ok {
				return nil, fmt.Errorf("pod %s is no pod of a removed node", ref)
			}
			if placed[ref] {
				return nil, fmt.Errorf("pod %s placed twice", ref)
			}
			placed[ref] = true
			by[g]++
		}
		var out []model.GroupCount
		for _, g := range slices.Sorted(maps.Keys(by)) {
			out = append(out, model.GroupCount{Group: g, Count: by[g]})
		}
		return out, nil
	}
	plan := &model.Plan{Solver: peer, Status: "peer"}
	for i, nn := range f.NewNodes {
		if nn.Offering < 0 || nn.Offering >= len(p.Offerings) {
			return nil, nil, fmt.Errorf("new node %d: offering %d out of range", i, nn.Offering)
		}
		pods, err := count(nn.Pods)
		if err != nil {
			return nil, nil, fmt.Errorf("new node %d: %w", i, err)
		}
		plan.NewNodes = append(plan.NewNodes, model.NewNode{Offering: nn.Offering, Pods: pods})
		plan.Cost += p.Offerings[nn.Offering].Price
	}
	byNode := map[int][]model.PodRef{}
	for _, m := range f.Moves {
		e, ok := nodeOf[m.To]
		if !ok {
			return nil, nil, fmt.Errorf("pod %s moves to %q, which is no node that stays", m.Pod, m.To)
		}
		byNode[e] = append(byNode[e], m.Pod)
	}
	for _, e := range slices.Sorted(maps.Keys(byNode)) {
		pods, err := count(byNode[e])
		if err != nil {
			return nil, nil, fmt.Errorf("node %s: %w", p.Nodes[e].Name, err)
		}
		plan.Existing = append(plan.Existing, model.ExistingPlacement{Node: e, Pods: pods})
	}
	for ref := range groupOf {
		if !placed[ref] {
			return nil, nil, fmt.Errorf("pod %s of a removed node has no place", ref)
		}
	}
	return &p, plan, nil
}
