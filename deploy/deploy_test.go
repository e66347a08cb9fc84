package deploy

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const chartDir = "helm/packwright"

func mustPlain(t *testing.T) *install {
	t.Helper()
	objs, err := plainManifests()
	if err != nil {
		t.Fatal(err)
	}
	in, err := decode(objs)
	if err != nil {
		t.Fatalf("plain manifests: %v", err)
	}
	return in
}

func mustDockerUser(t *testing.T) string {
	t.Helper()
	user, entrypoint, err := dockerfile()
	if err != nil {
		t.Fatal(err)
	}
	// The manifests pass only args, so the image's entrypoint must be the packwright binary itself.
	if entrypoint != `["/usr/local/bin/packwright"]` {
		t.Fatalf("Dockerfile ENTRYPOINT %s: the manifests run the image with args [controller], want [\"/usr/local/bin/packwright\"]", entrypoint)
	}
	return user
}

// TestPlainManifests parses every manifest of deploy/kustomization.yaml into its typed object and checks the
// deployment rules.
func TestPlainManifests(t *testing.T) {
	in := mustPlain(t)
	for _, p := range in.problems(mustDockerUser(t)) {
		t.Error(p)
	}
	want := []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment", "Namespace",
		"PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount"}
	if got := in.kinds(); !slices.Equal(got, want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
	for _, u := range in.objs {
		if ns := u.GetNamespace(); ns != "" && ns != "packwright" {
			t.Errorf("%s %s in namespace %q, want packwright", u.GetKind(), u.GetName(), ns)
		}
	}
	// Leader election: the Role holds the leases, in the Deployment's namespace.
	if len(in.roles) != 1 || in.roles[0].Namespace != in.deployments[0].Namespace {
		t.Errorf("want one Role in the Deployment's namespace for the leader-election lease")
	}
}

// TestProblemsCatchBreaks breaks the plain manifests one rule at a time and expects the check to say so, so
// that TestPlainManifests and TestHelmChart can fail.
func TestProblemsCatchBreaks(t *testing.T) {
	user := mustDockerUser(t)
	cases := []struct {
		name  string
		brk   func(in *install)
		match string
	}{
		{"root filesystem writable", func(in *install) {
			f := false
			in.deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.ReadOnlyRootFilesystem = &f
		}, "readOnlyRootFilesystem"},
		{"privilege escalation", func(in *install) {
			in.deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil
		}, "allowPrivilegeEscalation"},
		{"capability added", func(in *install) {
			c := in.deployments[0].Spec.Template.Spec.Containers[0].SecurityContext.Capabilities
			c.Add = []corev1.Capability{"NET_ADMIN"}
		}, "capabilities"},
		{"root user", func(in *install) {
			var root int64
			in.deployments[0].Spec.Template.Spec.SecurityContext.RunAsUser = &root
		}, "USER"},
		{"no seccomp", func(in *install) { in.deployments[0].Spec.Template.Spec.SecurityContext.SeccompProfile = nil }, "seccomp"},
		{"no memory limit", func(in *install) {
			delete(in.deployments[0].Spec.Template.Spec.Containers[0].Resources.Limits, corev1.ResourceMemory)
		}, "memory"},
		{"liveness on metrics port", func(in *install) {
			in.deployments[0].Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Port.StrVal = "metrics"
		}, "liveness"},
		{"one replica", func(in *install) {
			one := int32(1)
			in.deployments[0].Spec.Replicas = &one
		}, "replicas"},
		{"no spread", func(in *install) {
			in.deployments[0].Spec.Template.Spec.Affinity.PodAntiAffinity = nil
			in.deployments[0].Spec.Template.Spec.TopologySpreadConstraints = nil
		}, "kubernetes.io/hostname"},
		{"no PDB", func(in *install) { in.pdbs = nil }, "PodDisruptionBudget"},
		{"no metrics Service", func(in *install) { in.services = nil }, "metrics port 8080"},
		{"no cluster name", func(in *install) {
			c := &in.deployments[0].Spec.Template.Spec.Containers[0]
			c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "PACKWRIGHT_CLUSTER_NAME" })
		}, "PACKWRIGHT_CLUSTER_NAME"},
		{"latest image", func(in *install) {
			in.deployments[0].Spec.Template.Spec.Containers[0].Image = imageRepo + ":latest"
		}, "image"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := mustPlain(t)
			tc.brk(in)
			ps := in.problems(user)
			if !slices.ContainsFunc(ps, func(p string) bool { return strings.Contains(p, tc.match) }) {
				t.Errorf("problems %q: none mentions %q", ps, tc.match)
			}
		})
	}
}

// TestChartCRDsInSync fails when the chart's crds/ is not a copy of deploy/crds (hack/generate.sh copies it).
func TestChartCRDsInSync(t *testing.T) {
	list := func(dir string) []string {
		m, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(m) == 0 {
			t.Fatalf("no CRDs in %s (%v)", dir, err)
		}
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return m
	}
	src, dst := list("crds"), list(filepath.Join(chartDir, "crds"))
	if !slices.Equal(src, dst) {
		t.Fatalf("deploy/crds has %v, the chart's crds/ %v: run hack/generate.sh", src, dst)
	}
	for _, f := range src {
		a, errA := os.ReadFile(filepath.Join("crds", f))
		b, errB := os.ReadFile(filepath.Join(chartDir, "crds", f))
		if errA != nil || errB != nil {
			t.Fatalf("read %s: %v %v", f, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between deploy/crds and %s/crds: run hack/generate.sh", f, chartDir)
		}
	}
}

// helm runs the Helm CLI from PACKWRIGHT_HELM with its state in a temporary folder, and returns stdout.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("PACKWRIGHT_HELM")
	if bin == "" {
		t.Fatal("PACKWRIGHT_HELM is not set: run the tests with make test, or export PACKWRIGHT_HELM=$(hack/install-helm.sh)")
	}
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	// Helm keeps caches and repository lists under these; none of them may touch the user's.
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &helmError{args: args, err: err, stderr: stderr.String() + stdout.String()}
	}
	return stdout.String(), nil
}

type helmError struct {
	args   []string
	err    error
	stderr string
}

func (e *helmError) Error() string {
	return "helm " + strings.Join(e.args, " ") + ": " + e.err.Error() + ": " + e.stderr
}

// renderChart renders the chart as release name in namespace ns, with set as --set values.
func renderChart(t *testing.T, name, ns string, set ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	args := []string{"template", name, chartDir, "--namespace", ns}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := helm(t, args...)
	if err != nil {
		return nil, err
	}
	return splitYAML([]byte(out))
}

// TestHelmChart lints the chart and renders it: the same kinds as the plain manifests (less the Namespace,
// which is the release's), the same security settings and the same RBAC rules.
func TestHelmChart(t *testing.T) {
	plain := mustPlain(t)
	user := mustDockerUser(t)
	for _, set := range [][]string{{"clusterName=test"}, {"clusterName=test", "serviceMonitor.enabled=true"}} {
		args := []string{"lint", "--strict", chartDir}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if out, err := helm(t, args...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
	out, err := helm(t, "template", "packwright", chartDir, "--namespace", "packwright", "--include-crds", "--set", "clusterName=test")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := splitYAML([]byte(out))
	if err != nil {
		t.Fatalf("rendered chart: %v", err)
	}
	chart, err := decode(objs)
	if err != nil {
		t.Fatalf("rendered chart: %v", err)
	}
	for _, p := range chart.problems(user) {
		t.Errorf("chart: %s", p)
	}
	want := slices.DeleteFunc(plain.kinds(), func(k string) bool { return k == "Namespace" })
	if got := chart.kinds(); !slices.Equal(got, want) {
		t.Errorf("chart kinds %v, want the plain manifests' %v", got, want)
	}
	if len(chart.clusterRole) != 1 || len(plain.clusterRole) != 1 || !reflect.DeepEqual(chart.clusterRole[0].Rules, plain.clusterRole[0].Rules) {
		t.Errorf("the chart's ClusterRole rules differ from deploy/rbac.yaml's")
	}
	if len(chart.roles) != 1 || !reflect.DeepEqual(chart.roles[0].Rules, plain.roles[0].Rules) {
		t.Errorf("the chart's Role rules differ from deploy/rbac.yaml's")
	}
	pc, cc := plain.deployments[0].Spec.Template.Spec.Containers[0], chart.deployments[0].Spec.Template.Spec.Containers[0]
	if !reflect.DeepEqual(pc.Resources, cc.Resources) || pc.Image != cc.Image {
		t.Errorf("chart defaults: image %s resources %v, plain %s %v", cc.Image, cc.Resources, pc.Image, pc.Resources)
	}

	t.Run("values", func(t *testing.T) {
		objs, err := renderChart(t, "pw", "kube-system", "clusterName=prod", "cloudProvider=aws", "region=eu-west-1", "aws.launchTemplate=packwright-nodes",
			"aws.subnets=eu-west-1a=subnet-1",
			"serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::111122223333:role/packwright",
			"replicas=3", "podDisruptionBudget.enabled=false", "serviceMonitor.enabled=true", "solveDeadline=2s",
			"disruption.spotToSpot=true", "disruption.interval=1m",
			"nodeSelector.role=system")
		if err != nil {
			t.Fatal(err)
		}
		in, err := decode(objs)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.pdbs) != 0 {
			t.Errorf("podDisruptionBudget.enabled=false rendered %d PodDisruptionBudgets", len(in.pdbs))
		}
		if !slices.Contains(in.kinds(), "ServiceMonitor") {
			t.Errorf("serviceMonitor.enabled=true rendered no ServiceMonitor")
		}
		if len(in.accounts) != 1 || in.accounts[0].Annotations["eks.amazonaws.com/role-arn"] != "arn:aws:iam::111122223333:role/packwright" {
			t.Errorf("serviceAccount.annotations not on the ServiceAccount: %v", in.accounts)
		}
		d := in.deployments[0]
		if *d.Spec.Replicas != 3 || d.Namespace != "kube-system" || d.Spec.Template.Spec.NodeSelector["role"] != "system" {
			t.Errorf("Deployment %s/%s replicas %d nodeSelector %v", d.Namespace, d.Name, *d.Spec.Replicas, d.Spec.Template.Spec.NodeSelector)
		}
		env := map[string]string{}
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		for k, v := range map[string]string{"PACKWRIGHT_CLUSTER_NAME": "prod", "PACKWRIGHT_CLOUD_PROVIDER": "aws",
			"PACKWRIGHT_REGION": "eu-west-1", "PACKWRIGHT_SOLVE_DEADLINE": "2s", "PACKWRIGHT_AWS_LAUNCH_TEMPLATE": "packwright-nodes",
			"PACKWRIGHT_AWS_LAUNCH_METHOD": "fleet", "PACKWRIGHT_AWS_SUBNETS": "eu-west-1a=subnet-1",
			"PACKWRIGHT_SPOT_TO_SPOT_CONSOLIDATION": "true", "PACKWRIGHT_CONSOLIDATION_INTERVAL": "1m", "PACKWRIGHT_CONSOLIDATION": "true"} {
			if env[k] != v {
				t.Errorf("env %s=%q, want %q", k, env[k], v)
			}
		}
	})
	t.Run("aws.launchTemplate required", func(t *testing.T) {
		if _, err := renderChart(t, "pw", "packwright", "clusterName=prod", "cloudProvider=aws"); err == nil || !strings.Contains(err.Error(), "aws.launchTemplate is required") {
			t.Errorf("rendering aws without a launch template: %v, want aws.launchTemplate is required", err)
		}
	})
	t.Run("clusterName required", func(t *testing.T) {
		if _, err := renderChart(t, "pw", "packwright"); err == nil || !strings.Contains(err.Error(), "clusterName is required") {
			t.Errorf("rendering without clusterName: %v, want clusterName is required", err)
		}
	})
}
