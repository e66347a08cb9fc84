package model

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRequirement(t *testing.T) {
	tests := []struct {
		in   string
		want Requirement
	}{
		{"zone in (a,b)", req("zone", OpIn, "a", "b")},
		{"  zone   in(  a , b )  ", req("zone", OpIn, "a", "b")},
		{"zone notin (a)", req("zone", OpNotIn, "a")},
		{"topology.kubernetes.io/zone", req(LabelZone, OpExists)},
		{"!gpu", req("gpu", OpDoesNotExist)},
		{"! gpu", req("gpu", OpDoesNotExist)},
		{"arch=amd64", req("arch", OpIn, "amd64")},
		{"arch == amd64", req("arch", OpIn, "amd64")},
		{"arch!=amd64", req("arch", OpNotIn, "amd64")},
		{"arch=", req("arch", OpIn, "")},
		{"cpu>3", req("cpu", OpGt, "3")},
		{"cpu < -3", req("cpu", OpLt, "-3")},
		{"k in ()", req("k", OpIn, "")},
		{"k in (a,)", req("k", OpIn, "a", "")},
		{"in", req("in", OpExists)},
		{"in in (in)", req("in", OpIn, "in")},
	}
	for _, tt := range tests {
		got, err := ParseRequirement(tt.in)
		if err != nil {
			t.Errorf("ParseRequirement(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseRequirement(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestParseRequirementErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "expected a key"},
		{"!", "expected a key"},
		{"!k=v", "unexpected"},
		{"k in", `expected "("`},
		{"k in (a", `missing ")"`},
		{"k in (a b)", `expected "," or ")"`},
		{"k in (a))", "unexpected"},
		{"k like (a)", "unknown operator"},
		{"k>", "expected an integer"},
		{"k>x", "needs an integer"},
		{"k=a=b", "unexpected"},
		{"k v", "unknown operator"},
		{"k = a b", "unexpected"},
		{"bad/key/x", "more than one"},
		{"k=a b", "unexpected"},
		{"k=-a", "label value"},
		{"(k)", "expected a key"},
		{"k,", "unexpected"},
	}
	for _, tt := range tests {
		_, err := ParseRequirement(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseRequirement(%q) error = %v, want one containing %q", tt.in, err, tt.want)
		}
	}
}

func TestParseRequirementRoundTrip(t *testing.T) {
	for _, r := range []Requirement{
		req("k", OpIn, "a"), req("k", OpIn, "a", "b", "a"), req("k", OpIn, ""), req("k", OpIn, "", ""),
		req("k", OpNotIn, ""), req("k", OpNotIn, "x", ""), req("x.io/k", OpExists), req("k", OpDoesNotExist),
		req("k", OpGt, "+5"), req("k", OpLt, "-9223372036854775808"),
	} {
		if err := r.Validate(); err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		back, err := ParseRequirement(r.String())
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %#v via %q = %#v, %v", r, r.String(), back, err)
		}
	}
}

// FuzzParseRequirement checks that parsing never panics and that whatever parses validates and reads back
// the same from its String.
func FuzzParseRequirement(f *testing.F) {
	for _, s := range []string{"zone in (a,b)", "k notin (a)", "k", "!k", "k=v", "k!=v", "k>3", "k<3", "k in ()", "a.b/c==d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequirement(s)
		if err != nil {
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("ParseRequirement(%q) = %#v, which does not validate: %v", s, r, err)
		}
		str := r.String()
		back, err := ParseRequirement(str)
		if err != nil {
			t.Fatalf("ParseRequirement(%q) = %#v, whose String %q does not parse: %v", s, r, str, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("ParseRequirement(%q) = %#v, but its String %q parses to %#v", s, r, str, back)
		}
	})
}
