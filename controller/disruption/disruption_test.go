package disruption

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cluster"
)

func TestPinByPolicy(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	minute := time.Minute
	cases := []struct {
		name string
		// after is the pool's consolidateAfter (nil: Never); initialized is how long ago the claim became
		// Initialized; podAge how long ago the node's newest pod was created (0: no pod).
		after               *time.Duration
		initialized, podAge time.Duration
		expireAfter         *time.Duration
		hash                string // "" records the pool's current hash
		pinned              bool
	}{
		{name: "settled long enough", after: &minute, initialized: time.Hour, pinned: false},
		{name: "initialised too recently", after: &minute, initialized: 30 * time.Second, pinned: true},
		{name: "a pod landed too recently", after: &minute, initialized: time.Hour, podAge: 10 * time.Second, pinned: true},
		{name: "a pod landed long ago", after: &minute, initialized: time.Hour, podAge: time.Hour, pinned: false},
		{name: "consolidateAfter Never", initialized: time.Hour, pinned: true},
		{name: "Never does not hold an expired node", initialized: time.Hour, expireAfter: &minute, pinned: false},
		{name: "consolidateAfter does not hold a drifted node", after: &minute, initialized: time.Second, hash: "stale", pinned: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := &apiv1.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "general"}}
			np.Spec.Disruption.ConsolidateAfter = apiv1.NillableDuration{Duration: tc.after}
			hash := tc.hash
			if hash == "" {
				hash = np.TemplateHash()
			}
			claim := &apiv1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "general-x", Labels: map[string]string{apiv1.NodePoolLabelKey: "general"},
				Annotations: map[string]string{apiv1.NodePoolHashAnnotationKey: hash}, CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))}}
			claim.Spec.ExpireAfter = apiv1.NillableDuration{Duration: tc.expireAfter}
			claim.Status.NodeName = "n1"
			claim.Status.Conditions = []metav1.Condition{{Type: apiv1.ConditionTypeInitialized, Status: metav1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(now.Add(-tc.initialized))}}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{apiv1.NodePoolLabelKey: "general"}}}
			state := &cluster.State{Nodes: []*corev1.Node{node}, NodePools: []*apiv1.NodePool{np}}
			if tc.podAge > 0 {
				state.Pods = []*corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "d", CreationTimestamp: metav1.NewTime(now.Add(-tc.podAge))},
					Spec: corev1.PodSpec{NodeName: "n1"}}}
			}
			c := &Controller{now: func() time.Time { return now }}
			got := c.pinByPolicy(state, map[string]*apiv1.NodeClaim{"n1": claim}) == 1
			if got != tc.pinned || (node.Annotations[DoNotDisruptAnnotationKey] == "true") != tc.pinned {
				t.Errorf("pinned %v (annotations %v), want %v", got, node.Annotations, tc.pinned)
			}
		})
	}
}

func TestChanged(t *testing.T) {
	before := map[string][]string{"a": {"ns/p1/u1"}, "b": {}}
	cases := []struct {
		name    string
		after   map[string][]string
		pending int
		want    string
	}{
		{"unchanged", map[string][]string{"a": {"ns/p1/u1"}, "b": {}}, 0, ""},
		{"pods pending", map[string][]string{"a": {"ns/p1/u1"}, "b": {}}, 2, "2 pods pending"},
		{"node gone", map[string][]string{"a": {"ns/p1/u1"}, "b": nil}, 0, "node b is gone"},
		{"pod replaced", map[string][]string{"a": {"ns/p1/u2"}, "b": {}}, 0, "the pods on node a changed"},
		{"pod landed on an empty node", map[string][]string{"a": {"ns/p1/u1"}, "b": {"ns/p2/u3"}}, 0, "the pods on node b changed"},
	}
	for _, tc := range cases {
		if got := changed(before, tc.after, tc.pending); got != tc.want {
			t.Errorf("%s: changed = %q, want %q", tc.name, got, tc.want)
		}
	}
}
