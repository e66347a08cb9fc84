package cluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/packwright/packwright/model"
)

func specPod(t *testing.T, spec string) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte("metadata: {name: p, namespace: shop}\nspec:\n"+spec), &pod); err != nil {
		t.Fatalf("bad test pod: %v", err)
	}
	return &pod
}

func TestPodRequests(t *testing.T) {
	const (
		mi = model.Mi
		gi = model.Gi
	)
	for _, tc := range []struct {
		name string
		spec string
		want model.Resources
	}{
		{
			name: "no requests counts only the pod",
			spec: "  containers: [{name: a}]",
			want: model.Resources{"pods": 1},
		},
		{
			name: "app containers add up",
			spec: `  containers:
  - {name: a, resources: {requests: {cpu: 250m, memory: 100Mi}}}
  - {name: b, resources: {requests: {cpu: 750m, memory: 28Mi}}}`,
			// 250m + 750m = 1000m; 100Mi + 28Mi = 128Mi.
			want: model.Resources{"cpu": 1000, "memory": 128 * mi, "pods": 1},
		},
		{
			name: "requests default from limits per resource",
			spec: "  containers: [{name: a, resources: {requests: {cpu: 100m}, limits: {cpu: '2', memory: 512Mi}}}]",
			// cpu keeps its request (100m); memory has only a limit, so the request is the limit.
			want: model.Resources{"cpu": 100, "memory": 512 * mi, "pods": 1},
		},
		{
			name: "extended resource from limits",
			spec: "  containers: [{name: a, resources: {limits: {nvidia.com/gpu: '2'}}}]",
			want: model.Resources{"nvidia.com/gpu": 2, "pods": 1},
		},
		{
			name: "a larger init container sets the request",
			spec: `  initContainers: [{name: i, resources: {requests: {cpu: '2', memory: 64Mi}}}]
  containers: [{name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}]`,
			// cpu max(2000, 500) = 2000; memory max(64Mi, 1Gi) = 1Gi.
			want: model.Resources{"cpu": 2000, "memory": gi, "pods": 1},
		},
		{
			name: "regular init containers run one at a time",
			spec: `  initContainers:
  - {name: i1, resources: {requests: {cpu: '1'}}}
  - {name: i2, resources: {requests: {cpu: '3'}}}
  - {name: i3, resources: {requests: {cpu: '2'}}}
  containers: [{name: a, resources: {requests: {cpu: '1'}}}]`,
			// max(1, 3, 2) = 3 cores, not 1+3+2.
			want: model.Resources{"cpu": 3000, "pods": 1},
		},
		{
			name: "a sidecar adds to the app containers",
			spec: `  initContainers: [{name: s, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 64Mi}}}]
  containers: [{name: a, resources: {requests: {cpu: 500m, memory: 256Mi}}}]`,
			// 500m + 100m = 600m; 256Mi + 64Mi = 320Mi.
			want: model.Resources{"cpu": 600, "memory": 320 * mi, "pods": 1},
		},
		{
			name: "a sidecar started before an init container adds to it",
			spec: `  initContainers:
  - {name: s, restartPolicy: Always, resources: {requests: {cpu: 200m}}}
  - {name: i, resources: {requests: {cpu: '1'}}}
  containers: [{name: a, resources: {requests: {cpu: 500m}}}]`,
			// init phase: 1000 + 200 = 1200; steady: 500 + 200 = 700; max = 1200.
			want: model.Resources{"cpu": 1200, "pods": 1},
		},
		{
			name: "a sidecar started after an init container does not add to it",
			spec: `  initContainers:
  - {name: i, resources: {requests: {cpu: '1'}}}
  - {name: s, restartPolicy: Always, resources: {requests: {cpu: 200m}}}
  containers: [{name: a, resources: {requests: {cpu: 500m}}}]`,
			// init phase: 1000; sidecar phase: 200; steady: 700; max = 1000.
			want: model.Resources{"cpu": 1000, "pods": 1},
		},
		{
			name: "sidecars accumulate for later init containers",
			spec: `  initContainers:
  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: 100m, memory: 1Gi}}}
  - {name: s2, restartPolicy: Always, resources: {requests: {cpu: 200m}}}
  - {name: i, resources: {requests: {cpu: '1', memory: 512Mi}}}
  containers: [{name: a, resources: {requests: {cpu: 500m, memory: 2Gi}}}]`,
			// cpu: init phase 1000+100+200 = 1300; steady 500+100+200 = 800 -> 1300.
			// memory: init phase 512Mi+1Gi = 1536Mi; steady 2Gi+1Gi = 3Gi -> 3Gi.
			want: model.Resources{"cpu": 1300, "memory": 3 * gi, "pods": 1},
		},
		{
			name: "overhead is added on top",
			spec: `  overhead: {cpu: 250m, memory: 120Mi}
  initContainers: [{name: i, resources: {requests: {cpu: '2'}}}]
  containers: [{name: a, resources: {requests: {cpu: '1', memory: 8Mi}}}]`,
			// cpu max(2000, 1000) + 250 = 2250; memory 8Mi + 120Mi = 128Mi.
			want: model.Resources{"cpu": 2250, "memory": 128 * mi, "pods": 1},
		},
		{
			name: "pod-level requests replace the container total",
			spec: `  resources: {requests: {cpu: '2'}}
  containers:
  - {name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}}
  - {name: b, resources: {requests: {cpu: 500m, memory: 1Gi}}}`,
			// cpu from the pod level (2000, not 1000); memory from the containers (2Gi).
			want: model.Resources{"cpu": 2000, "memory": 2 * gi, "pods": 1},
		},
		{
			name: "cpu rounds up to a millicore, bytes to a byte",
			spec: "  containers: [{name: a, resources: {requests: {cpu: '0.0001', memory: '1.5'}}}]",
			want: model.Resources{"cpu": 1, "memory": 2, "pods": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PodRequests(specPod(t, tc.spec))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("PodRequests = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodRequestsErrors(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string
	}{
		{"  containers: [{name: app, resources: {requests: {memory: '-1Gi'}}}]", "container app: resources.requests[memory]: quantity -1Gi is negative"},
		{"  initContainers: [{name: init, resources: {limits: {cpu: '-1'}}}]\n  containers: [{name: a}]", "init container init: resources.limits[cpu]: quantity -1 is negative"},
		{"  containers: [{name: a}]\n  overhead: {memory: 1Ei}", "overhead[memory]: quantity 1Ei is too large"},
		{"  containers: [{name: a, resources: {requests: {cpu: '1e15'}}}]", "container a: resources.requests[cpu]: quantity 1e15 is too large"},
	} {
		_, err := PodRequests(specPod(t, tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PodRequests(%q) error = %v, want it to contain %q", tc.spec, err, tc.want)
		}
	}
}
