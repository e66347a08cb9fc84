package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"

	apiv1 "github.com/packwright/packwright/api/v1"
)

// ReadOptions configures ReadSnapshot.
type ReadOptions struct {
	// IgnoreUnknownKinds skips objects of kinds that planning does not use (Deployments, Services, Events...)
	// instead of failing, so that the output of `kubectl get all -A -o yaml` can be read as it is.
	IgnoreUnknownKinds bool
}

// ReadSnapshot reads a cluster snapshot with the default options; see ReadOptions.Read.
func ReadSnapshot(r io.Reader) (*State, error) {
	return ReadOptions{}.Read(r)
}

// Read reads a cluster snapshot: YAML documents separated by "---", JSON objects one after another, or either
// holding a List (kind: List, PodList, ...) as `kubectl get pods,nodes,nodepools,daemonsets,pdb -A -o yaml`
// writes it. Accepted kinds are v1 Pod and Node, apps/v1 DaemonSet, policy/v1 PodDisruptionBudget, and NodePool
// and NodeClaim of packwright.dev/v1 or karpenter.sh/v1. Errors name the document (and line, for YAML) and the
// object.
func (o ReadOptions) Read(r io.Reader) (*State, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark, as some editors write
	var docs []document
	if looksLikeJSON(data) {
		docs, err = splitJSON(data)
	} else {
		docs, err = splitYAML(data)
	}
	if err != nil {
		return nil, err
	}
	s := &State{}
	for _, d := range docs {
		if err := o.readDocument(s, d); err != nil {
			return nil, err
		}
	}
	s.Sort()
	return s, nil
}

// header is what every object and list has in common.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// object names the object as errors do: "pod default/web-1", "node ip-10-0-0-1", "nodepool general".
func (h *header) object() string {
	kind := strings.ToLower(h.Kind)
	ns := h.Metadata.Namespace
	if ns == "" && namespaced[h.Kind] {
		ns = "default"
	}
	switch {
	case h.Metadata.Name == "":
		return kind + " without metadata.name"
	case ns != "":
		return kind + " " + ns + "/" + h.Metadata.Name
	default:
		return kind + " " + h.Metadata.Name
	}
}

// namespaced lists the accepted kinds that live in a namespace.
var namespaced = map[string]bool{"Pod": true, "DaemonSet": true, "PodDisruptionBudget": true}

func (o ReadOptions) readDocument(s *State, d document) error {
	return o.readObject(s, d.String(), d.json, "", "", 0)
}

// maxListDepth bounds Lists within Lists, which kubectl never writes, so that a crafted input cannot recurse
// deeply.
const maxListDepth = 4

// readObject decodes one object or list. where locates it in the input; defaultVersion and defaultKind fill in
// the items of a typed list (PodList items carry no kind).
func (o ReadOptions) readObject(s *State, where string, raw []byte, defaultVersion, defaultKind string, depth int) error {
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return fmt.Errorf("%s: %s: want a JSON %s, got %s", where, ute.Field, ute.Type, ute.Value)
		}
		if errors.As(err, &ute) {
			return fmt.Errorf("%s: not a Kubernetes object (want a mapping with apiVersion and kind, got %s)", where, ute.Value)
		}
		return fmt.Errorf("%s: %w", where, err)
	}
	if h.Kind == "" {
		h.Kind = defaultKind
	}
	if h.APIVersion == "" {
		h.APIVersion = defaultVersion
	}
	if h.Kind == "" {
		return fmt.Errorf("%s: object without kind", where)
	}
	if h.APIVersion == "" {
		return fmt.Errorf("%s: %s without apiVersion", where, h.object())
	}
	if strings.HasSuffix(h.Kind, "List") && h.Metadata.Name == "" {
		if depth >= maxListDepth {
			return fmt.Errorf("%s: %s nested too deeply", where, h.Kind)
		}
		itemKind := strings.TrimSuffix(h.Kind, "List")
		for i, item := range h.Items {
			if err := o.readObject(s, fmt.Sprintf("%s item %d", where, i+1), item, h.APIVersion, itemKind, depth+1); err != nil {
				return err
			}
		}
		return nil
	}

	obj, known, err := newObject(h.APIVersion, h.Kind)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", where, h.object(), err)
	}
	if !known {
		if o.IgnoreUnknownKinds {
			return nil
		}
		return fmt.Errorf("%s: %s: unsupported kind %s %s (accepted: %s; ReadOptions.IgnoreUnknownKinds skips others)", where, h.object(), h.APIVersion, h.Kind, acceptedKinds)
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return fmt.Errorf("%s: %s: %w", where, h.object(), locateDecodeError(raw, obj, err))
	}
	if err := s.Add(obj); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

const acceptedKinds = "v1 Pod, v1 Node, apps/v1 DaemonSet, policy/v1 PodDisruptionBudget, packwright.dev/v1 and karpenter.sh/v1 NodePool and NodeClaim"

// newObject returns an empty object of the given apiVersion and kind, or known=false for a kind this package
// does not read. A known kind in an unsupported version is an error rather than unknown: skipping a NodePool
// of an old API would silently change the plan.
func newObject(apiVersion, kind string) (obj runtime.Object, known bool, err error) {
	group, version, _ := strings.Cut(apiVersion, "/")
	if version == "" {
		group, version = "", group
	}
	var want string
	switch kind {
	case "Pod", "Node":
		if group != "" {
			return nil, false, nil // a custom resource that happens to share the name
		}
		if version == "v1" {
			if kind == "Pod" {
				return &corev1.Pod{}, true, nil
			}
			return &corev1.Node{}, true, nil
		}
		want = "v1"
	case "DaemonSet":
		if group != "apps" && group != "extensions" {
			return nil, false, nil
		}
		if group == "apps" && version == "v1" {
			return &appsv1.DaemonSet{}, true, nil
		}
		want = "apps/v1"
	case "PodDisruptionBudget":
		if group != "policy" {
			return nil, false, nil
		}
		if version == "v1" {
			return &policyv1.PodDisruptionBudget{}, true, nil
		}
		want = "policy/v1"
	case "NodePool", "NodeClaim":
		if group != apiv1.GroupName && group != apiv1.KarpenterGroupName {
			return nil, false, nil
		}
		if version == "v1" {
			if kind == "NodePool" {
				return &apiv1.NodePool{}, true, nil
			}
			return &apiv1.NodeClaim{}, true, nil
		}
		want = apiv1.GroupName + "/v1 or " + apiv1.KarpenterGroupName + "/v1"
	default:
		return nil, false, nil
	}
	return nil, true, fmt.Errorf("unsupported apiVersion %s (want %s)", apiVersion, want)
}
