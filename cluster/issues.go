package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/packwright/packwright/model"
)

// Issue is a non-fatal finding about the snapshot: something Problem approximated, ignored or found impossible.
// Object names what it is about ("pod default/train-0", "pod group default/web (500 pods)", "node ip-10-0-1-7",
// "nodepool spot"); Reason says what and, where it can, why.
type Issue struct {
	Object string
	Reason string
}

// String returns "object: reason".
func (i Issue) String() string { return i.Object + ": " + i.Reason }

// groupObject names a group in issues: the pod itself when the group has one.
func groupObject(g *model.PodGroup) string {
	if len(g.Pods) == 1 {
		return "pod " + g.Pods[0].String()
	}
	return "pod group " + g.Name + " (" + strconv.Itoa(len(g.Pods)) + " pods)"
}

// candidate is an offering or an existing node a group might run on.
type candidate struct {
	kind        string // "offering" or "node"
	name        string // offering ID or node name
	labels      map[string]string
	taints      []model.Taint
	allocatable model.Resources
}

// feasibility diagnoses groups that no offering and no existing node could ever hold, even empty.
type feasibility struct {
	cands []candidate
}

func newFeasibility(p *model.Problem) *feasibility {
	f := &feasibility{cands: make([]candidate, 0, len(p.Offerings)+len(p.Nodes))}
	for i := range p.Offerings {
		o := &p.Offerings[i]
		f.cands = append(f.cands, candidate{"offering", o.ID, o.Labels, o.Taints, o.Allocatable})
	}
	for i := range p.Nodes {
		n := &p.Nodes[i]
		f.cands = append(f.cands, candidate{"node", n.Name, n.Labels, n.Taints, n.Allocatable})
	}
	return f
}

// why returns "" when some candidate is compatible with g and large enough for one of its pods, and otherwise
// the most specific reason there is none: a selector nothing matches, a taint nothing tolerable lacks, or the
// resource that exceeds every allowed candidate.
func (f *feasibility) why(g *model.PodGroup) string {
	var labelled []candidate
	for _, c := range f.cands {
		if g.MatchesNodeLabels(c.labels) {
			labelled = append(labelled, c)
			if model.Tolerates(g.Tolerations, c.taints) && g.Requests.Fits(c.allocatable) {
				return ""
			}
		}
	}
	if len(f.cands) == 0 {
		return "there is no offering and no node"
	}
	if len(labelled) == 0 {
		return f.whySelectors(g)
	}

	var allowed []candidate
	for _, c := range labelled {
		if model.Tolerates(g.Tolerations, c.taints) {
			allowed = append(allowed, c)
		}
	}
	if len(allowed) == 0 {
		t, _ := model.UntoleratedTaint(g.Tolerations, labelled[0].taints)
		return fmt.Sprintf("does not tolerate taint %s; every %s its selectors allow has an untolerated taint", t, labelled[0].kind)
	}

	for _, name := range g.Requests.Names() {
		need := g.Requests[name]
		var best int64
		bestKind := allowed[0].kind
		for _, c := range allowed {
			if v := c.allocatable[name]; v > best {
				best, bestKind = v, c.kind
			}
		}
		if need > best {
			return fmt.Sprintf("requests %s %s; the largest allowed %s has %s", model.FormatQuantity(name, need), name, bestKind, model.FormatQuantity(name, best))
		}
	}
	return fmt.Sprintf("requests %s; no allowed offering or node has all of it at once", g.Requests)
}

// whySelectors explains a group whose nodeSelector and node affinity match no candidate at all.
func (f *feasibility) whySelectors(g *model.PodGroup) string {
	for _, k := range slices.Sorted(maps.Keys(g.NodeSelector)) {
		v := g.NodeSelector[k]
		if !slices.ContainsFunc(f.cands, func(c candidate) bool { return c.labels[k] == v }) {
			return fmt.Sprintf("nodeSelector %s=%s matches no offering or node", k, v)
		}
	}
	if len(g.NodeAffinity) > 0 && !slices.ContainsFunc(f.cands, func(c candidate) bool { return g.NodeAffinity.Matches(c.labels) }) {
		c := f.cands[0]
		why := strings.TrimPrefix(g.Incompatibility(c.labels, nil), "required node affinity not matched: ")
		return fmt.Sprintf("required node affinity matches no offering or node (on %s %s: %s)", c.kind, c.name, why)
	}
	return "nodeSelector and required node affinity together match no offering or node"
}
