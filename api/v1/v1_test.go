package v1

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// crd is the part of a CustomResourceDefinition the tests look at; decoding into it keeps the apiextensions
// module out of the main module.
type crd struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name         string         `json:"name"`
			Served       bool           `json:"served"`
			Storage      bool           `json:"storage"`
			Subresources map[string]any `json:"subresources"`
			Schema       struct {
				OpenAPIV3Schema crdSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

type crdSchema struct {
	Type                 string               `json:"type"`
	Properties           map[string]crdSchema `json:"properties"`
	Items                *crdSchema           `json:"items"`
	AdditionalProperties *crdSchema           `json:"additionalProperties"`
}

func readCRD(t *testing.T, plural string) crd {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "crds", GroupName+"_"+plural+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c crd
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		// Strict decoding would reject fields this test does not model, so fall back to lenient decoding;
		// a YAML syntax error still fails below.
		if err := yaml.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", plural, err)
		}
	}
	return c
}

func TestCRDManifests(t *testing.T) {
	for _, tc := range []struct {
		plural, kind string
		typ          reflect.Type
	}{
		{"nodepools", "NodePool", reflect.TypeFor[NodePool]()},
		{"nodeclaims", "NodeClaim", reflect.TypeFor[NodeClaim]()},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			c := readCRD(t, tc.plural)
			if c.Kind != "CustomResourceDefinition" || c.APIVersion != "apiextensions.k8s.io/v1" {
				t.Errorf("kind %q apiVersion %q, want an apiextensions.k8s.io/v1 CustomResourceDefinition", c.Kind, c.APIVersion)
			}
			if want := tc.plural + "." + GroupName; c.Metadata.Name != want {
				t.Errorf("name %q, want %q", c.Metadata.Name, want)
			}
			if c.Spec.Group != "packwright.dev" || c.Spec.Names.Kind != tc.kind || c.Spec.Names.Plural != tc.plural {
				t.Errorf("group %q kind %q plural %q", c.Spec.Group, c.Spec.Names.Kind, c.Spec.Names.Plural)
			}
			if c.Spec.Scope != "Cluster" {
				t.Errorf("scope %q, want Cluster", c.Spec.Scope)
			}
			if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1" || !c.Spec.Versions[0].Served || !c.Spec.Versions[0].Storage {
				t.Fatalf("versions %+v, want one served storage version v1", c.Spec.Versions)
			}
			v := c.Spec.Versions[0]
			if _, ok := v.Subresources["status"]; !ok {
				t.Error("no status subresource")
			}
			// Every JSON field of the Go type must be in the schema: a field added without running
			// hack/generate.sh would be pruned by the API server.
			checkSchema(t, tc.kind, tc.typ, v.Schema.OpenAPIV3Schema)
		})
	}
}

// checkSchema reports JSON fields of struct type typ that have no property in s, recursively.
func checkSchema(t *testing.T, path string, typ reflect.Type, s crdSchema) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch typ.Kind() {
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 || s.Items == nil {
			return
		}
		checkSchema(t, path+"[]", typ.Elem(), *s.Items)
		return
	case reflect.Struct:
	default:
		return
	}
	if s.Type != "object" || s.Properties == nil {
		// Types with their own JSON form (Time, Duration, Quantity, NillableDuration) are strings here.
		return
	}
	if typ.PkgPath() != reflect.TypeFor[NodePool]().PkgPath() && typ.Name() != "" && !strings.HasPrefix(typ.PkgPath(), "k8s.io/api/") {
		// metav1 types are validated by their own generators; metadata is an empty object schema.
		return
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" && f.Anonymous {
			checkSchema(t, path, f.Type, s)
			continue
		}
		if name == "" {
			name = f.Name
		}
		p, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s: field of the Go type missing from the CRD schema (run hack/generate.sh)", path, name)
			continue
		}
		checkSchema(t, path+"."+name, f.Type, p)
	}
}

func TestNodePoolRoundTrip(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "nodepool.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var np NodePool
	if err := yaml.UnmarshalStrict(b, &np); err != nil {
		t.Fatalf("decode sample NodePool: %v", err)
	}

	// Spot checks that the Karpenter field names landed in the right Go fields.
	spec := np.Spec.Template.Spec
	if got := spec.Requirements[1]; got.Key != "karpenter.k8s.aws/instance-category" || got.MinValues == nil || *got.MinValues != 2 {
		t.Errorf("requirement 1 = %+v", got)
	}
	if spec.NodeClassRef == nil || spec.NodeClassRef.Kind != "EC2NodeClass" {
		t.Errorf("nodeClassRef = %+v", spec.NodeClassRef)
	}
	if spec.ExpireAfter.Duration == nil || *spec.ExpireAfter.Duration != 720*time.Hour {
		t.Errorf("expireAfter = %v", spec.ExpireAfter)
	}
	if spec.TerminationGracePeriod == nil || spec.TerminationGracePeriod.Duration != 48*time.Hour {
		t.Errorf("terminationGracePeriod = %v", spec.TerminationGracePeriod)
	}
	if q := np.Spec.Limits["memory"]; q.Cmp(resource.MustParse("1000Gi")) != 0 {
		t.Errorf("limits.memory = %v", q.String())
	}
	if np.Spec.Weight == nil || *np.Spec.Weight != 50 {
		t.Errorf("weight = %v", np.Spec.Weight)
	}
	d := np.Spec.Disruption
	if d.ConsolidationPolicy != ConsolidationPolicyWhenEmptyOrUnderutilized || d.ConsolidateAfter.String() != "1m0s" {
		t.Errorf("disruption = %+v", d)
	}
	if len(d.Budgets) != 2 || d.Budgets[1].Schedule == nil || d.Budgets[1].Duration == nil || d.Budgets[1].Reasons[0] != DisruptionReasonDrifted {
		t.Errorf("budgets = %+v", d.Budgets)
	}
	if np.Spec.Template.Labels["team"] != "platform" || len(np.Status.Conditions) != 1 {
		t.Errorf("labels %v conditions %v", np.Spec.Template.Labels, np.Status.Conditions)
	}

	j, err := json.Marshal(&np)
	if err != nil {
		t.Fatal(err)
	}
	var back NodePool
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatalf("decode %s: %v", j, err)
	}
	if !equality.Semantic.DeepEqual(np, back) {
		t.Errorf("JSON round trip changed the NodePool:\n got %+v\nwant %+v", back, np)
	}
	if c := np.DeepCopy(); !equality.Semantic.DeepEqual(np, *c) {
		t.Errorf("DeepCopy differs")
	}
}

func TestNillableDuration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: `"720h"`, want: `"720h0m0s"`},
		{in: `"Never"`, want: `"Never"`},
		{in: `"90s"`, want: `"1m30s"`},
		{in: `"soon"`, wantErr: true},
		{in: `12`, wantErr: true},
	} {
		var d NillableDuration
		err := json.Unmarshal([]byte(tc.in), &d)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		got, err := json.Marshal(d)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: marshal = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestNodeClaimRoundTrip(t *testing.T) {
	const in = `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: general-x7k2p
  labels: {packwright.dev/nodepool: general}
spec:
  requirements:
  - {key: node.kubernetes.io/instance-type, operator: In, values: [m5.large, m5.xlarge]}
  resources: {requests: {cpu: 1500m, memory: 3Gi, pods: "4"}}
  taints: [{key: example.com/dedicated, value: a, effect: NoSchedule}]
  startupTaints: [{key: node.cilium.io/agent-not-ready, effect: NoExecute}]
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  expireAfter: Never
  terminationGracePeriod: 1h
status:
  providerID: aws:///us-east-1a/i-0123456789abcdef0
  nodeName: ip-10-0-1-17.ec2.internal
  imageID: ami-0123456789abcdef0
  capacity: {cpu: "2", memory: 8Gi}
  allocatable: {cpu: 1930m, memory: 7Gi}
  lastPodEventTime: "2025-01-01T00:00:00Z"
  conditions:
  - {type: Launched, status: "True", reason: Launched, message: "", lastTransitionTime: "2025-01-01T00:00:00Z"}
`
	var nc NodeClaim
	if err := yaml.UnmarshalStrict([]byte(in), &nc); err != nil {
		t.Fatal(err)
	}
	if nc.Spec.ExpireAfter.Duration != nil || nc.Status.NodeName != "ip-10-0-1-17.ec2.internal" || nc.Status.LastPodEventTime.IsZero() {
		t.Errorf("decoded %+v", nc)
	}
	if q := nc.Spec.Resources.Requests["memory"]; q.Cmp(resource.MustParse("3Gi")) != 0 {
		t.Errorf("requests.memory = %s", q.String())
	}
	j, err := json.Marshal(&nc)
	if err != nil {
		t.Fatal(err)
	}
	var back NodeClaim
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(nc, back) {
		t.Errorf("JSON round trip changed the NodeClaim:\n got %+v\nwant %+v", back, nc)
	}
}

func TestOfferingsRoundTrip(t *testing.T) {
	in := []OfferingRef{
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot", Price: 0.035},
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "on-demand", Price: 0.096},
	}
	s := FormatOfferings(in)
	if s != "m5.large/us-east-1a/spot/0.035,m5.large/us-east-1a/on-demand/0.096" {
		t.Fatalf("FormatOfferings = %q", s)
	}
	out, err := ParseOfferings(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0] != in[0] || out[1] != in[1] {
		t.Fatalf("ParseOfferings(%q) = %+v, want %+v", s, out, in)
	}
	for _, bad := range []string{"m5.large", "m5.large/a/spot/x", "m5.large/a/spot/-1", "/a/spot/1"} {
		if _, err := ParseOfferings(bad); err == nil {
			t.Errorf("ParseOfferings(%q) = nil error, want one", bad)
		}
	}
}
