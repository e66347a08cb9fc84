package v1

import (
	"encoding/json"
	"hash/fnv"
	"strconv"
)

// NodePoolHashAnnotationKey on a NodeClaim records the TemplateHash of its NodePool when it was launched; a
// NodeClaim whose hash differs from its NodePool's current one has drifted.
const NodePoolHashAnnotationKey = GroupName + "/nodepool-hash"

// TemplateHash is a digest of the parts of the NodePool's template that a running node cannot follow: the
// nodes' labels and annotations, taints, startup taints, node class, termination grace period and expireAfter.
// Requirements are left out: a node drifts on them only when its labels no longer satisfy them (see
// cluster.DriftReason), so widening a requirement does not replace every node.
func (np *NodePool) TemplateHash() string {
	t := &np.Spec.Template
	// encoding/json sorts map keys, so equal templates give equal bytes.
	b, err := json.Marshal(struct {
		Labels, Annotations    map[string]string
		Taints, StartupTaints  any
		NodeClassRef           *NodeClassReference
		TerminationGracePeriod any
		ExpireAfter            string
	}{t.Labels, t.Annotations, t.Spec.Taints, t.Spec.StartupTaints, t.Spec.NodeClassRef, t.Spec.TerminationGracePeriod, t.Spec.ExpireAfter.String()})
	if err != nil { // only plain data above: cannot happen
		return ""
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return strconv.FormatUint(h.Sum64(), 36)
}
