package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/packwright/packwright/controller"
)

// TestAPIServer creates the plain manifests and the rendered chart on a real kube-apiserver and etcd (envtest,
// binaries from hack/install-control-plane.sh) with strict field validation, so a schema error fails, then
// checks as each install's ServiceAccount that every permission the controller uses is granted and others are not.
func TestAPIServer(t *testing.T) {
	assets := os.Getenv("PACKWRIGHT_CONTROL_PLANE")
	if assets == "" {
		t.Fatal("PACKWRIGHT_CONTROL_PLANE is not set: run the tests with make test, or export PACKWRIGHT_CONTROL_PLANE=$(hack/install-control-plane.sh)")
	}
	// No CRDs are given to envtest: the plain manifests install them, which tests them too.
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the control plane from %s: %v", assets, err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := controller.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}

	plain, err := plainManifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := create(ctx, c, plain); err != nil {
		t.Fatalf("plain manifests: %v", err)
	}
	// The chart as a second release beside the first: its cluster-scoped objects have other names.
	const chartNS = "packwright-helm"
	chart, err := renderChart(t, "pw", chartNS, "clusterName=test")
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNS}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := create(ctx, c, chart); err != nil {
		t.Fatalf("rendered chart: %v", err)
	}

	t.Run("schema errors fail", func(t *testing.T) {
		// The check above can fail: a misspelt field is refused, not dropped.
		bad := plain[0].DeepCopy()
		for _, u := range plain {
			if u.GetKind() == "Service" {
				bad = u.DeepCopy()
			}
		}
		bad.SetName("misspelt")
		bad.SetResourceVersion("")
		if err := unstructured.SetNestedField(bad.Object, int64(1), "spec", "replica"); err != nil {
			t.Fatal(err)
		}
		if err := create(ctx, c, []*unstructured.Unstructured{bad}); err == nil || !strings.Contains(err.Error(), "replica") {
			t.Errorf("creating a Service with spec.replica: %v, want an unknown-field error", err)
		}
	})

	t.Run("docs samples", func(t *testing.T) {
		// docs/running-with-sim.md's NodePool and Deployment must be accepted as written.
		samples, err := docSamples(filepath.Join("..", "docs", "running-with-sim.md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 2 {
			t.Fatalf("docs/running-with-sim.md has %d YAML objects, want the NodePool and the Deployment", len(samples))
		}
		if err := create(ctx, c, samples); err != nil {
			t.Errorf("docs/running-with-sim.md: %v", err)
		}
	})

	for _, tc := range []struct{ ns, sa string }{{"packwright", "packwright"}, {chartNS, "pw-packwright"}} {
		t.Run("rbac "+tc.ns, func(t *testing.T) { checkRBAC(ctx, t, cfg, tc.ns, tc.sa) })
	}
	t.Run("controller as its ServiceAccount", func(t *testing.T) { runControllerAs(ctx, t, cfg, c) })
}

// create creates objs in order with strict field validation; a CRD is waited for until it serves.
func create(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		u = u.DeepCopy()
		if err := c.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", u.GetName(), err)
		}
	}
	return nil
}

// access is one request the controller makes (or must not be able to make).
type access struct {
	verb, group, resource, subresource string
	// ns is the request's namespace: "" for cluster-scoped or all namespaces, "own" for the install's.
	ns string
}

func (a access) String() string {
	r := a.resource
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.group != "" {
		r += "." + a.group
	}
	return a.verb + " " + r + " in " + fmt.Sprintf("%q", a.ns)
}

// needed are the requests the code makes (see deploy/rbac.yaml for where each comes from).
var needed = []access{
	{"list", "", "pods", "", ""}, {"watch", "", "pods", "", ""},
	{"delete", "", "pods", "", "default"},
	{"create", "", "pods", "eviction", "default"},
	{"get", "", "nodes", "", ""}, {"list", "", "nodes", "", ""}, {"watch", "", "nodes", "", ""},
	{"create", "", "nodes", "", ""}, {"patch", "", "nodes", "", ""}, {"update", "", "nodes", "", ""},
	{"delete", "", "nodes", "", ""}, {"update", "", "nodes", "status", ""},
	{"create", "", "events", "", "default"}, {"patch", "", "events", "", "team-a"}, {"update", "", "events", "", "own"},
	{"list", "apps", "daemonsets", "", ""}, {"watch", "apps", "daemonsets", "", ""},
	{"list", "policy", "poddisruptionbudgets", "", ""}, {"watch", "policy", "poddisruptionbudgets", "", ""},
	{"list", "packwright.dev", "nodepools", "", ""},
	{"watch", "packwright.dev", "nodepools", "", ""},
	{"get", "packwright.dev", "nodeclaims", "", ""}, {"list", "packwright.dev", "nodeclaims", "", ""},
	{"watch", "packwright.dev", "nodeclaims", "", ""}, {"create", "packwright.dev", "nodeclaims", "", ""},
	{"patch", "packwright.dev", "nodeclaims", "", ""}, {"delete", "packwright.dev", "nodeclaims", "", ""},
	{"update", "packwright.dev", "nodeclaims", "status", ""},
	{"get", "coordination.k8s.io", "leases", "", "own"}, {"create", "coordination.k8s.io", "leases", "", "own"},
	{"update", "coordination.k8s.io", "leases", "", "own"},
}

// denied are requests the controller never makes: least privilege means it cannot.
var denied = []access{
	{"get", "", "secrets", "", "own"}, {"get", "", "pods", "", "default"}, {"list", "", "secrets", "", ""}, {"list", "", "configmaps", "", ""},
	{"create", "", "pods", "", "default"}, {"update", "", "pods", "", "default"}, {"get", "", "nodes", "proxy", ""},
	{"create", "", "serviceaccounts", "token", "own"},
	{"create", "coordination.k8s.io", "leases", "", "default"}, {"list", "coordination.k8s.io", "leases", "", ""},
	{"create", "apps", "deployments", "", "own"}, {"delete", "apps", "daemonsets", "", "default"},
	{"create", "packwright.dev", "nodepools", "", ""}, {"delete", "packwright.dev", "nodepools", "", ""},
	{"update", "packwright.dev", "nodeclaims", "", ""},
	{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", ""},
}

// checkRBAC impersonates ServiceAccount ns/sa: SelfSubjectAccessReviews for needed and denied, then real calls.
func checkRBAC(ctx context.Context, t *testing.T, admin *rest.Config, ns, sa string) {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(a access) bool {
		t.Helper()
		if a.ns == "own" {
			a.ns = ns
		}
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.ns}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("access review %s: %v", a, err)
		}
		return r.Status.Allowed
	}
	for _, a := range needed {
		if !allowed(a) {
			t.Errorf("%s/%s may not %s; the controller does", ns, sa, a)
		}
	}
	for _, a := range denied {
		if allowed(a) {
			t.Errorf("%s/%s may %s; the controller never does", ns, sa, a)
		}
	}

	// Real calls: what leader election does, a read the provisioner does, and a Secret read that must fail.
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "packwright-test", Namespace: ns}}
	if lease, err = cs.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create lease as %s: %v", sa, err)
	}
	holder := "replica-1"
	lease.Spec.HolderIdentity = &holder
	if _, err := cs.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Errorf("update lease as %s: %v", sa, err)
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list nodes as %s: %v", sa, err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("get secret as %s: %v, want Forbidden", sa, err)
	}
	if _, err := cs.CoordinationV1().Leases("default").Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create lease in default as %s: %v, want Forbidden", sa, err)
	}
}

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// docSamples decodes the objects of every yaml code block of a Markdown file.
func docSamples(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var objs []*unstructured.Unstructured
	for _, m := range yamlBlock.FindAllSubmatch(data, -1) {
		o, err := splitYAML(m[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}
