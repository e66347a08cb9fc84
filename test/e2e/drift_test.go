package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/solver"
)

// TestDriftAndExpiryReplaceNodes changes a NodePool's template under running pods and checks that every node
// is replaced, one at a time as the pool's Drifted budget says, by nodes of the new template, replacements
// first; then it lets one NodeClaim expire and checks that it is replaced too. consolidateAfter is Never, so
// nothing but drift and expiry moves a pod, and no pod waits for a node longer than a launch takes.
func TestDriftAndExpiryReplaceNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := harness.Client
	cat := catalog.KwokLike()
	const scenario = "drift"
	const genLabel = "example.com/generation"

	pool := nodePool("default", 0, "", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements[0].Values = []string{"on-demand"}
		np.Spec.Template.Labels = map[string]string{genLabel: "1"}
		np.Spec.Disruption.ConsolidateAfter = v1.NillableDuration{} // Never
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "1", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}, {Nodes: "100%"}}
	})
	decisions := startDisruption(ctx, t, cat, scenario, pool)
	startReplicaSet(ctx, t, "api", 12, func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Labels: map[string]string{"app": "api", scenarioLabel: scenario}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: new(int64),
				// Spread over hostnames, so that there are several nodes to replace one at a time.
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
					WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}}},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}}}}},
		}
	})
	waitAllBound(ctx, t, scenario, 12)
	_, claimOf := clusterNodes(ctx, t)
	var first []string
	for _, cl := range claimOf {
		first = append(first, cl.Name)
	}
	if len(first) < 2 {
		t.Fatalf("want several nodes to replace, have %v", first)
	}

	// Drift: a new template label. Every first-generation NodeClaim must go, and every node carry the label.
	tracker, stopTracking := trackPending(ctx, scenario)
	defer stopTracking()
	patch := client.MergeFrom(pool.DeepCopy())
	pool.Spec.Template.Labels[genLabel] = "2"
	if err := c.Patch(ctx, pool, patch); err != nil {
		t.Fatal(err)
	}
	converged := func(ctx context.Context, gone []string, gen string) (bool, error) {
		var pods corev1.PodList
		var claims v1.NodeClaimList
		var nodes corev1.NodeList
		if c.List(ctx, &pods, client.MatchingLabels{scenarioLabel: scenario}) != nil || c.List(ctx, &claims) != nil || c.List(ctx, &nodes) != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
				return false, nil
			}
		}
		for _, cl := range claims.Items {
			if slices.Contains(gone, cl.Name) {
				return false, nil
			}
		}
		for _, n := range nodes.Items {
			if n.Labels[v1.NodePoolLabelKey] != "" && n.Labels[genLabel] != gen {
				return false, nil
			}
		}
		return len(pods.Items) == 12, nil
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 150*time.Second, false, func(ctx context.Context) (bool, error) {
		return converged(ctx, first, "2")
	}); err != nil {
		t.Fatalf("the drifted nodes %v were not all replaced: %v", first, err)
	}
	drifted := 0
	for i, d := range decisions.all() {
		if len(d.Forced) > 1 {
			t.Errorf("decision %d forced %d drifted nodes out at once (%v), over the Drifted budget of 1", i, len(d.Forced), d.Forced)
		}
		for n, why := range d.Forced {
			drifted++
			if !strings.Contains(why, "template changed") {
				t.Errorf("decision %d: node %s forced out for %q, want drift", i, n, why)
			}
		}
	}
	if drifted < len(first) {
		t.Errorf("%d forced removals for %d drifted nodes", drifted, len(first))
	}

	// Expiry: one second-generation NodeClaim is given a short life.
	_, claimOf = clusterNodes(ctx, t)
	var victim *v1.NodeClaim
	for _, cl := range claimOf {
		if victim == nil || cl.Name < victim.Name {
			victim = cl
		}
	}
	short := 5 * time.Second
	patchClaim := client.MergeFrom(victim.DeepCopy())
	victim.Spec.ExpireAfter = v1.NillableDuration{Duration: &short}
	if err := c.Patch(ctx, victim, patchClaim); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 90*time.Second, false, func(ctx context.Context) (bool, error) {
		return converged(ctx, []string{victim.Name}, "2")
	}); err != nil {
		t.Fatalf("the expired NodeClaim %s was not replaced: %v", victim.Name, err)
	}
	all := decisions.all()
	expired := slices.ContainsFunc(all, func(d *solver.Consolidation) bool {
		return strings.HasPrefix(d.Forced[victim.Status.NodeName], "expired")
	})
	n := len(all)
	if !expired {
		t.Errorf("no decision forced %s (node %s) out as expired", victim.Name, victim.Status.NodeName)
	}
	stopTracking()
	pending, pod, launch, created := tracker.result()
	if created < len(first) {
		t.Errorf("only %d pods were re-created while %d nodes were replaced: the tracker saw no moves", created, len(first))
	}

	if pending > launch+2*time.Second {
		t.Errorf("pod %s was pending %s during the replacements, longer than a NodeClaim's launch (%s)", pod, pending, launch)
	}
	t.Logf("replaced %d drifted nodes and 1 expired one in %d decisions; longest pending %s (pod %s) of %d pods re-created; longest launch %s",
		len(first), n, pending, pod, created, launch)
}
