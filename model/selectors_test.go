package model

import "testing"

func TestLabelSelectorMatches(t *testing.T) {
	labels := map[string]string{"app": "web", "tier": "front"}
	tests := []struct {
		name string
		s    *LabelSelector
		want bool
	}{
		{"nil matches nothing", nil, false},
		{"empty matches everything", &LabelSelector{}, true},
		{"matchLabels", sel("app", "web"), true},
		{"matchLabels wrong value", sel("app", "db"), false},
		{"matchLabels absent", sel("team", "x"), false},
		{"matchLabels empty value needs presence", sel("team", ""), false},
		{"in", &LabelSelector{MatchExpressions: Requirements{req("tier", OpIn, "front", "back")}}, true},
		{"notin absent key", &LabelSelector{MatchExpressions: Requirements{req("team", OpNotIn, "x")}}, true},
		{"notin present", &LabelSelector{MatchExpressions: Requirements{req("tier", OpNotIn, "front")}}, false},
		{"exists", &LabelSelector{MatchExpressions: Requirements{req("app", OpExists)}}, true},
		{"doesnotexist", &LabelSelector{MatchExpressions: Requirements{req("app", OpDoesNotExist)}}, false},
		{"labels and expressions", &LabelSelector{MatchLabels: lbl("app", "web"), MatchExpressions: Requirements{req("tier", OpIn, "back")}}, false},
		{"gt is not a selector operator", &LabelSelector{MatchExpressions: Requirements{req("app", OpGt, "1")}}, false},
		{"in without values is invalid", &LabelSelector{MatchExpressions: Requirements{req("team", OpNotIn)}}, false},
	}
	for _, tt := range tests {
		if got := tt.s.Matches(labels); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLabelSelectorValidate(t *testing.T) {
	var nilSel *LabelSelector
	if err := nilSel.Validate(); err != nil {
		t.Errorf("nil selector: %v", err)
	}
	if err := (&LabelSelector{MatchExpressions: Requirements{req("a", OpGt, "1")}}).Validate(); err == nil {
		t.Error("Gt accepted in a label selector")
	}
	if err := (&LabelSelector{MatchLabels: lbl("a", "bad value")}).Validate(); err == nil {
		t.Error("bad label value accepted")
	}
	if err := (&LabelSelector{MatchLabels: lbl("app", "web"), MatchExpressions: Requirements{req("t", OpExists)}}).Validate(); err != nil {
		t.Error(err)
	}
	if s := (&LabelSelector{MatchLabels: lbl("b", "2", "a", "1"), MatchExpressions: Requirements{req("t", OpExists)}}).String(); s != "a=1,b=2,t" {
		t.Errorf("String = %q", s)
	}
}
