package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// imageRepo is where the controller image is published.
const imageRepo = "ghcr.io/packwright/packwright"

// kustomization is the part of deploy/kustomization.yaml the tests read.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// plainManifests reads every object that deploy/kustomization.yaml lists, in its order.
func plainManifests() ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		return nil, fmt.Errorf("read kustomization: %w", err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		return nil, fmt.Errorf("parse kustomization.yaml: %w", err)
	}
	if k.Kind != "Kustomization" || k.APIVersion != "kustomize.config.k8s.io/v1beta1" {
		return nil, fmt.Errorf("kustomization.yaml: kind %q apiVersion %q, want a kustomize.config.k8s.io/v1beta1 Kustomization", k.Kind, k.APIVersion)
	}
	if len(k.Resources) == 0 {
		return nil, errors.New("kustomization.yaml lists no resources")
	}
	var objs []*unstructured.Unstructured
	for _, f := range k.Resources {
		data, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			return nil, fmt.Errorf("kustomization resource %s: %w", f, err)
		}
		o, err := splitYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		objs = append(objs, o...)
	}
	return objs, nil
}

// splitYAML decodes a multi-document YAML stream; empty documents (comments only) are skipped.
func splitYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("document %d: apiVersion, kind and metadata.name are required", i)
		}
		objs = append(objs, u)
	}
}

// typed converts u into its client-go type, failing on fields the type does not have (a typo in a manifest).
// Kinds client-go does not know (CRDs, ServiceMonitor) stay unstructured.
func typed(u *unstructured.Unstructured) (runtime.Object, error) {
	obj, err := scheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return u, nil //nolint:nilerr // not a client-go kind: the API server checks it
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, obj, true); err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return obj, nil
}

// install is one way of installing Packwright, decoded: the plain manifests or the rendered chart.
type install struct {
	objs        []*unstructured.Unstructured
	deployments []*appsv1.Deployment
	pdbs        []*policyv1.PodDisruptionBudget
	services    []*corev1.Service
	accounts    []*corev1.ServiceAccount
	clusterRole []*rbacv1.ClusterRole
	roles       []*rbacv1.Role
}

// decode sorts objs into an install, converting each to its type.
func decode(objs []*unstructured.Unstructured) (*install, error) {
	in := &install{objs: objs}
	for _, u := range objs {
		o, err := typed(u)
		if err != nil {
			return nil, err
		}
		switch o := o.(type) {
		case *appsv1.Deployment:
			in.deployments = append(in.deployments, o)
		case *policyv1.PodDisruptionBudget:
			in.pdbs = append(in.pdbs, o)
		case *corev1.Service:
			in.services = append(in.services, o)
		case *corev1.ServiceAccount:
			in.accounts = append(in.accounts, o)
		case *rbacv1.ClusterRole:
			in.clusterRole = append(in.clusterRole, o)
		case *rbacv1.Role:
			in.roles = append(in.roles, o)
		}
	}
	return in, nil
}

// kinds lists the distinct kinds of the install, sorted.
func (in *install) kinds() []string {
	seen := map[string]bool{}
	for _, u := range in.objs {
		seen[u.GetKind()] = true
	}
	var ks []string
	for k := range seen {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// dockerUser is the USER of the Dockerfile's final stage, and entrypoint its ENTRYPOINT.
func dockerfile() (user, entrypoint string, err error) {
	data, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		return "", "", fmt.Errorf("read Dockerfile: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch f := strings.Fields(line); {
		case len(f) >= 2 && f[0] == "USER":
			user = f[1]
		case len(f) >= 2 && f[0] == "ENTRYPOINT":
			entrypoint = strings.Join(f[1:], " ")
		}
	}
	if user == "" || entrypoint == "" {
		return "", "", errors.New("Dockerfile: no USER or no ENTRYPOINT")
	}
	return user, entrypoint, nil
}

var imageTag = regexp.MustCompile(`^` + regexp.QuoteMeta(imageRepo) + `:v\d+\.\d+\.\d+$`)

// problems lists every way the install breaks the deployment rules: one Deployment of at least two replicas,
// non-root as the Dockerfile's user, read-only root filesystem, no privilege escalation, no capabilities,
// RuntimeDefault seccomp, requests and limits, probes on 8081, metrics on 8080, spread across nodes,
// system-cluster-critical, the cluster name set, a PodDisruptionBudget of maxUnavailable 1 and a metrics Service
// selecting the pods. user is the Dockerfile's USER (uid:gid).
func (in *install) problems(user string) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(in.deployments) != 1 {
		bad("want 1 Deployment, have %d", len(in.deployments))
		return out
	}
	d := in.deployments[0]
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		bad("Deployment %s: want at least 2 replicas (leader election)", d.Name)
	}
	pod := d.Spec.Template.Spec
	podLabels := d.Spec.Template.Labels
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		bad("pod: runAsNonRoot is not true")
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		bad("pod: seccompProfile is not RuntimeDefault")
	}
	if psc == nil || psc.RunAsUser == nil || psc.RunAsGroup == nil || fmt.Sprintf("%d:%d", *psc.RunAsUser, *psc.RunAsGroup) != user {
		bad("pod: runAsUser:runAsGroup is not the Dockerfile's USER %s", user)
	}
	if pod.PriorityClassName != "system-cluster-critical" {
		bad("pod: priorityClassName %q, want system-cluster-critical", pod.PriorityClassName)
	}
	if !spreadsAcrossNodes(pod, podLabels) {
		bad("pod: no anti-affinity or topology spread on kubernetes.io/hostname selecting its own pods")
	}
	found := false
	for _, sa := range in.accounts {
		found = found || sa.Name == pod.ServiceAccountName
	}
	if !found {
		bad("pod: serviceAccountName %q is not among the install's ServiceAccounts", pod.ServiceAccountName)
	}
	if len(pod.Containers) != 1 {
		bad("pod: want 1 container, have %d", len(pod.Containers))
		return out
	}
	c := pod.Containers[0]
	if !imageTag.MatchString(c.Image) {
		bad("container %s: image %q, want %s:vX.Y.Z", c.Name, c.Image, imageRepo)
	}
	if len(c.Command) != 0 || len(c.Args) == 0 || c.Args[0] != "controller" {
		bad("container %s: want the image's entrypoint (no command) with args [controller ...]", c.Name)
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		bad("container %s: no securityContext", c.Name)
	default:
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			bad("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			bad("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0 {
			bad("container %s: capabilities must drop ALL and add none", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			bad("container %s: privileged", c.Name)
		}
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
		if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
			bad("container %s: %s needs a request no larger than its limit", c.Name, r)
		}
	}
	port := func(p intstr.IntOrString) int32 {
		if p.Type == intstr.Int {
			return p.IntVal
		}
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return cp.ContainerPort
			}
		}
		return 0
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || port(p.HTTPGet.Port) != 8081 {
			bad("container %s: %s probe must be GET %s on 8081", c.Name, name, path)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	if port(intstr.FromString("metrics")) != 8080 {
		bad("container %s: no port named metrics on 8080", c.Name)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	for _, k := range []string{"PACKWRIGHT_CLUSTER_NAME", "PACKWRIGHT_CLOUD_PROVIDER", "PACKWRIGHT_LEADER_ELECT"} {
		if env[k] == "" {
			bad("container %s: env %s is not set", c.Name, k)
		}
	}
	if v, ok := env["PACKWRIGHT_LEADER_ELECT"]; ok && v != "true" {
		bad("container %s: PACKWRIGHT_LEADER_ELECT=%q with %d replicas", c.Name, v, *d.Spec.Replicas)
	}
	pdbOK := false
	for _, p := range in.pdbs {
		pdbOK = pdbOK || (p.Spec.MaxUnavailable != nil && p.Spec.MaxUnavailable.IntValue() == 1 && p.Spec.MinAvailable == nil &&
			p.Spec.Selector != nil && selects(p.Spec.Selector.MatchLabels, podLabels))
	}
	if !pdbOK {
		bad("no PodDisruptionBudget with maxUnavailable 1 selecting the controller pods")
	}
	svcOK := false
	for _, s := range in.services {
		for _, p := range s.Spec.Ports {
			svcOK = svcOK || (p.Port == 8080 && port(p.TargetPort) == 8080 && selects(s.Spec.Selector, podLabels))
		}
	}
	if !svcOK {
		bad("no Service exposing metrics port 8080 of the controller pods")
	}
	return out
}

// spreadsAcrossNodes tells whether the pod's own replicas are kept apart per node.
func spreadsAcrossNodes(pod corev1.PodSpec, labels map[string]string) bool {
	for _, c := range pod.TopologySpreadConstraints {
		if c.TopologyKey == corev1.LabelHostname && c.LabelSelector != nil && selects(c.LabelSelector.MatchLabels, labels) {
			return true
		}
	}
	if a := pod.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if t.TopologyKey == corev1.LabelHostname && t.LabelSelector != nil && selects(t.LabelSelector.MatchLabels, labels) {
				return true
			}
		}
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			t := w.PodAffinityTerm
			if t.TopologyKey == corev1.LabelHostname && t.LabelSelector != nil && selects(t.LabelSelector.MatchLabels, labels) {
				return true
			}
		}
	}
	return false
}

// selects tells whether a non-empty selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
