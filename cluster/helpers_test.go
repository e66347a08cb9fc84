package cluster

import (
	"strings"
	"sync"
	"testing"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/model"
)

// awsCatalog is the embedded us-east-1 catalog, parsed once for all tests.
var awsCatalog = sync.OnceValues(func() (*catalog.Catalog, error) { return catalog.Resolve("aws/us-east-1") })

func testCatalog(t testing.TB) *catalog.Catalog {
	t.Helper()
	c, err := awsCatalog()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// readDocs reads YAML documents joined with "---".
func readDocs(t testing.TB, docs ...string) *State {
	t.Helper()
	s, err := ReadSnapshot(strings.NewReader(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatalf("ReadSnapshot: %v", err)
	}
	return s
}

// problemOf converts s with the us-east-1 catalog and fails the test on error.
func problemOf(t testing.TB, s *State) (*model.Problem, []Issue) {
	t.Helper()
	p, issues, err := s.Problem(testCatalog(t), ProblemOptions{})
	if err != nil {
		t.Fatalf("Problem: %v", err)
	}
	return p, issues
}

func groupNamed(p *model.Problem, name string) *model.PodGroup {
	for i := range p.Groups {
		if p.Groups[i].Name == name {
			return &p.Groups[i]
		}
	}
	return nil
}

func groupNames(p *model.Problem) []string {
	var out []string
	for _, g := range p.Groups {
		out = append(out, g.Name)
	}
	return out
}

// podDoc returns a Pod document with the given name in namespace shop and spec (YAML, indented by two).
func podDoc(name, spec string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\nspec:\n" + spec
}

const (
	// nodePoolGeneral allows on-demand m5 instances.
	nodePoolGeneral = `apiVersion: packwright.dev/v1
kind: NodePool
metadata: {name: general}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - {key: packwright.dev/capacity-type, operator: In, values: [on-demand]}
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}`
)
