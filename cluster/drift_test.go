package cluster

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// claimDoc returns a NodeClaim document for node, created at created, with spec.expireAfter expire.
func claimDoc(node, created, expire string) string {
	return `apiVersion: packwright.dev/v1
kind: NodeClaim
metadata:
  name: claim-` + node + `
  creationTimestamp: '` + created + `'
  labels: {packwright.dev/nodepool: general}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  requirements: []
  expireAfter: ` + expire + `
status:
  nodeName: ` + node
}

func TestConsolidationInputForced(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	const (
		fresh = "2026-06-01T11:00:00Z"
		old   = "2026-01-01T00:00:00Z"
	)
	spotOnly := strings.Replace(nodePoolGeneral, "values: [on-demand]", "values: [spot]", 1)
	cases := []struct {
		name string
		pool string // disruption of nodepool general, or a whole NodePool document when it starts with apiVersion
		docs []string
		// hash: "current" records the pool's TemplateHash on every claim, another value records that.
		hash string
		// forced maps node names to a substring of their Forced reason; pinned to one of their NotCandidate reason.
		forced, pinned map[string]string
	}{
		{name: "fresh and current", pool: underutilized, hash: "current",
			docs: []string{claimDoc("a", fresh, "720h")}},
		{name: "expired", pool: underutilized, hash: "current",
			docs:   []string{claimDoc("a", old, "720h")},
			forced: map[string]string{"a": "expired: launched"}},
		{name: "never expires", pool: underutilized, hash: "current",
			docs: []string{claimDoc("a", old, "Never")}},
		{name: "template changed", pool: underutilized, hash: "stale",
			docs:   []string{claimDoc("a", fresh, "720h")},
			forced: map[string]string{"a": "nodepool general's template changed"}},
		{name: "no recorded hash is not judged on it", pool: underutilized,
			docs: []string{claimDoc("a", fresh, "720h")}},
		{name: "requirement no longer satisfied", pool: spotOnly + "\n  disruption: " + underutilized,
			docs:   []string{claimDoc("a", fresh, "720h")},
			forced: map[string]string{"a": `packwright.dev/capacity-type="on-demand" no longer satisfies`}},
		{name: "drift budget of one: the oldest goes first", pool: "{consolidateAfter: 1m, budgets: [{nodes: '1', reasons: [Drifted]}]}", hash: "stale",
			docs:   []string{claimDoc("a", fresh, "720h"), claimDoc("b", "2026-05-20T00:00:00Z", "720h")},
			forced: map[string]string{"b": "template changed"}},
		{name: "expiry ignores budgets", pool: "{consolidateAfter: 1m, budgets: [{nodes: '0'}]}", hash: "current",
			docs:   []string{claimDoc("a", old, "720h"), claimDoc("b", old, "720h")},
			forced: map[string]string{"a": "expired", "b": "expired"}},
		{name: "do-not-disrupt holds an expired node", pool: underutilized, hash: "current",
			docs:   []string{claimDoc("a", old, "720h"), consNode("x", "  annotations: {packwright.dev/do-not-disrupt: 'true'}"), claimDoc("x", old, "720h")},
			forced: map[string]string{"a": "expired"},
			pinned: map[string]string{"x": "(expired: launched"}},
		{name: "WhenEmpty does not hold a drifted node", pool: "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m}", hash: "stale",
			docs:   []string{claimDoc("a", fresh, "720h")},
			forced: map[string]string{"a": "template changed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := consPool(tc.pool)
			if strings.HasPrefix(tc.pool, "apiVersion") {
				pool = tc.pool
			}
			docs := append([]string{pool, consNode("a", ""), consPod("pa", "a", "", "", ""), consNode("b", ""), consPod("pb", "b", "", "", "")}, tc.docs...)
			s := readDocs(t, docs...)
			for _, c := range s.NodeClaims {
				switch tc.hash {
				case "":
				case "current":
					c.Annotations = map[string]string{apiv1.NodePoolHashAnnotationKey: s.NodePools[0].TemplateHash()}
				default:
					c.Annotations = map[string]string{apiv1.NodePoolHashAnnotationKey: tc.hash}
				}
			}
			in, not, _, err := s.ConsolidationInput(testCatalog(t), ProblemOptions{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Forced) != len(tc.forced) {
				t.Errorf("forced %v, want %v", in.Forced, tc.forced)
			}
			for n, want := range tc.forced {
				if !strings.Contains(in.Forced[n], want) {
					t.Errorf("forced[%s] = %q, want it to contain %q", n, in.Forced[n], want)
				}
			}
			for n, want := range tc.pinned {
				found := false
				for _, nc := range not {
					found = found || nc.Node == n && strings.Contains(nc.Reason, want)
				}
				if !found {
					t.Errorf("%s not pinned with %q: %v", n, want, not)
				}
			}
		})
	}
}

func TestTemplateHashFollowsTheTemplate(t *testing.T) {
	s := readDocs(t, consPool(underutilized))
	np := s.NodePools[0]
	base := np.TemplateHash()
	if base == "" || base != np.DeepCopy().TemplateHash() {
		t.Fatalf("hash %q is not stable", base)
	}
	changes := map[string]func(*apiv1.NodePool){
		"label": func(p *apiv1.NodePool) { p.Spec.Template.Labels = map[string]string{"team": "web"} },
		"taint": func(p *apiv1.NodePool) {
			p.Spec.Template.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		},
		"node class":  func(p *apiv1.NodePool) { p.Spec.Template.Spec.NodeClassRef.Name = "other" },
		"expireAfter": func(p *apiv1.NodePool) { p.Spec.Template.Spec.ExpireAfter = apiv1.MustParseNillableDuration("24h") },
		"grace": func(p *apiv1.NodePool) {
			p.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
		},
	}
	for name, change := range changes {
		p := np.DeepCopy()
		change(p)
		if p.TemplateHash() == base {
			t.Errorf("changing the %s leaves the hash", name)
		}
	}
	p := np.DeepCopy()
	p.Spec.Template.Spec.Requirements = nil
	p.Spec.Limits = apiv1.Limits{corev1.ResourceCPU: resource.MustParse("10")}
	if p.TemplateHash() != base {
		t.Error("requirements or limits changed the hash")
	}
}
