package prep

import (
	"fmt"
	"slices"
	"testing"

	"github.com/packwright/packwright/model"
)

// Candidates must never leave out a group its selector matches, and must list them in increasing order.
func TestCandidates(t *testing.T) {
	p := &model.Problem{}
	for i, l := range []map[string]string{{"app": "web", "tier": "front"}, {"app": "db"}, {"app": "web"}, nil} {
		p.Groups = append(p.Groups, model.PodGroup{Name: fmt.Sprint(i), Namespace: "ns", Labels: l,
			Requests: model.Resources{model.CPU: 100}, Pods: []model.PodRef{{Namespace: "ns", Name: fmt.Sprint(i)}}})
	}
	c, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sel  *model.LabelSelector
		want []int
	}{
		{"nil selects nothing", nil, nil},
		{"empty selects all", &model.LabelSelector{}, []int{0, 1, 2, 3}},
		{"one pair", &model.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, []int{0, 2}},
		{"two pairs: the rarer list", &model.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "front"}}, []int{0}},
		{"expressions only: all", &model.LabelSelector{MatchExpressions: model.Requirements{{Key: "app", Operator: model.OpExists}}}, []int{0, 1, 2, 3}},
		{"no group has it", &model.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Candidates(tc.sel)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Candidates = %v, want %v", got, tc.want)
			}
			for g := range p.Groups {
				if tc.sel != nil && tc.sel.Matches(p.Groups[g].Labels) && !slices.Contains(got, g) {
					t.Fatalf("group %d matches but is not a candidate", g)
				}
			}
		})
	}
}
