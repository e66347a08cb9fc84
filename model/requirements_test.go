package model

import (
	"fmt"
	"strings"
	"testing"
)

func req(key string, op Operator, values ...string) Requirement {
	return Requirement{Key: key, Operator: op, Values: values}
}

func TestRequirementMatches(t *testing.T) {
	labels := map[string]string{"zone": "a", "cpu": "8", "name": "web", "empty": ""}
	tests := []struct {
		r    Requirement
		want bool
	}{
		{req("zone", OpIn, "a", "b"), true},
		{req("zone", OpIn, "b"), false},
		{req("missing", OpIn, "a"), false},
		{req("empty", OpIn, ""), true},
		{req("zone", OpNotIn, "b"), true},
		{req("zone", OpNotIn, "a"), false},
		{req("missing", OpNotIn, "a"), true}, // NotIn on an absent key matches
		{req("zone", OpExists), true},
		{req("missing", OpExists), false},
		{req("missing", OpDoesNotExist), true},
		{req("zone", OpDoesNotExist), false},
		{req("cpu", OpGt, "4"), true},
		{req("cpu", OpGt, "8"), false},
		{req("cpu", OpLt, "16"), true},
		{req("cpu", OpLt, "8"), false},
		{req("cpu", OpGt, "-1"), true},
		{req("name", OpGt, "1"), false},    // non-integer label
		{req("missing", OpGt, "1"), false}, // absent key
		{req("missing", OpLt, "1"), false},
		{req("cpu", OpGt, "x"), false},      // non-integer value
		{req("cpu", OpGt, "1", "2"), false}, // Gt needs exactly one value
		{req("cpu", OpLt), false},
		{req("zone", "Like", "a"), false}, // unknown operator
	}
	for _, tt := range tests {
		if got := tt.r.Matches(labels); got != tt.want {
			t.Errorf("%v.Matches = %v, want %v", tt.r, got, tt.want)
		}
	}
}

func TestRequirementsAndTerms(t *testing.T) {
	labels := map[string]string{"zone": "a", "arch": "amd64"}
	and := Requirements{req("zone", OpIn, "a"), req("arch", OpIn, "arm64")}
	if and.Matches(labels) {
		t.Error("conjunction with a failing requirement matched")
	}
	if !(Requirements{}).Matches(labels) || !Requirements(nil).Matches(nil) {
		t.Error("empty conjunction should match everything")
	}
	terms := NodeSelectorTerms{and, {req("zone", OpIn, "a")}}
	if !terms.Matches(labels) {
		t.Error("disjunction with a matching term did not match")
	}
	if (NodeSelectorTerms{and}).Matches(labels) {
		t.Error("disjunction of failing terms matched")
	}
	if !(NodeSelectorTerms{}).Matches(labels) {
		t.Error("empty term list should match every node")
	}
	if (NodeSelectorTerms{{}}).Matches(labels) {
		t.Error("a term with no requirements should match nothing")
	}
	if !(NodeSelectorTerms{{}, {req("zone", OpExists)}}).Matches(labels) {
		t.Error("an empty term must not block another term")
	}
}

func TestRequirementValidate(t *testing.T) {
	tests := []struct {
		r    Requirement
		want string // substring of the error, "" for valid
	}{
		{req("zone", OpIn, "a"), ""},
		{req("example.com/zone", OpNotIn, "a", "b"), ""},
		{req("zone", OpExists), ""},
		{req("zone", OpDoesNotExist), ""},
		{req("cpu", OpGt, "4"), ""},
		{req("cpu", OpLt, "-4"), ""},
		{req("zone", OpIn), `"zone": operator In needs at least one value`},
		{req("zone", OpNotIn), `"zone"`},
		{req("zone", OpExists, "a"), `"zone": operator Exists takes no values`},
		{req("zone", OpDoesNotExist, "a"), `"zone"`},
		{req("cpu", OpGt), `"cpu": operator Gt needs exactly one value`},
		{req("cpu", OpGt, "1", "2"), `"cpu"`},
		{req("cpu", OpLt, "four"), `"cpu": operator Lt needs an integer`},
		{req("cpu", OpGt, "99999999999999999999"), `"cpu"`},
		{req("zone", "Like", "a"), `"zone": unknown operator`},
		{req("", OpExists), "label key is empty"},
		{req("bad key", OpExists), `"bad key"`},
		{req("-zone", OpExists), `"-zone"`},
		{req("a/b/c", OpExists), "more than one"},
		{req("/zone", OpExists), "prefix"},
		{req("UPPER.com/zone", OpExists), "DNS subdomain"},
		{req("zone", OpIn, "a b"), "label value"},
		{req("zone", OpIn, strings.Repeat("x", 64)), "longer than 63"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v.Validate() = %v, want nil", tt.r, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v.Validate() = %v, want error containing %q", tt.r, err, tt.want)
		}
	}
}

func TestSatisfiable(t *testing.T) {
	tests := []struct {
		name string
		rs   Requirements
		ok   bool
	}{
		{"empty", nil, true},
		{"in and notin same value", Requirements{req("k", OpIn, "a"), req("k", OpNotIn, "a")}, false},
		{"in and notin leaves one", Requirements{req("k", OpIn, "a", "b"), req("k", OpNotIn, "a")}, true},
		{"in a and in b", Requirements{req("k", OpIn, "a"), req("k", OpIn, "b")}, false},
		{"in intersect", Requirements{req("k", OpIn, "a", "b"), req("k", OpIn, "b", "c")}, true},
		{"exists and doesnotexist", Requirements{req("k", OpExists), req("k", OpDoesNotExist)}, false},
		{"in and doesnotexist", Requirements{req("k", OpIn, "a"), req("k", OpDoesNotExist)}, false},
		{"notin and doesnotexist", Requirements{req("k", OpNotIn, "a"), req("k", OpDoesNotExist)}, true},
		{"gt 8 lt 4", Requirements{req("k", OpGt, "8"), req("k", OpLt, "4")}, false},
		{"gt 3 lt 4", Requirements{req("k", OpGt, "3"), req("k", OpLt, "4")}, false},
		{"gt 3 lt 5", Requirements{req("k", OpGt, "3"), req("k", OpLt, "5")}, true},
		{"gt and doesnotexist", Requirements{req("k", OpGt, "3"), req("k", OpDoesNotExist)}, false},
		{"gt maxint", Requirements{req("k", OpGt, "9223372036854775807")}, false},
		{"lt minint", Requirements{req("k", OpLt, "-9223372036854775808")}, false},
		{"in values outside range", Requirements{req("k", OpIn, "2", "9", "x"), req("k", OpGt, "3"), req("k", OpLt, "8")}, false},
		{"in value inside range", Requirements{req("k", OpIn, "2", "5"), req("k", OpGt, "3")}, true},
		{"range with notin", Requirements{req("k", OpGt, "1"), req("k", OpLt, "3"), req("k", OpNotIn, "2")}, true}, // "02"
		{"different keys", Requirements{req("a", OpIn, "x"), req("b", OpNotIn, "x")}, true},
	}
	for _, tt := range tests {
		err := tt.rs.Satisfiable()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Satisfiable() = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), `"k"`) {
			t.Errorf("%s: error %q does not name the key", tt.name, err)
		}
	}
	if err := (Requirements{req("k", OpIn)}).Satisfiable(); err == nil {
		t.Error("Satisfiable accepted an invalid requirement")
	}
	pool := Requirements{req(LabelArch, OpIn, "amd64")}
	if err := pool.CompatibleWith(Requirements{req(LabelArch, OpIn, "arm64")}); err == nil {
		t.Error("CompatibleWith: amd64-only pool and arm64 pod should not be compatible")
	}
	if err := pool.CompatibleWith(Requirements{req(LabelZone, OpIn, "a")}); err != nil {
		t.Errorf("CompatibleWith: %v", err)
	}
}

// TestSatisfiableBruteForce compares Satisfiable with a search for a witness over a domain that is complete
// for the small values used: absence, every value mentioned, integers around them, and leading-zero forms.
func TestSatisfiableBruteForce(t *testing.T) {
	values := []string{"1", "2", "3", "a"}
	ops := []Operator{OpIn, OpNotIn, OpExists, OpDoesNotExist, OpGt, OpLt}
	var atoms []Requirement
	for _, op := range ops {
		switch op {
		case OpExists, OpDoesNotExist:
			atoms = append(atoms, req("k", op))
		case OpGt, OpLt:
			for _, v := range values[:3] {
				atoms = append(atoms, req("k", op, v))
			}
		default:
			for _, v := range values {
				atoms = append(atoms, req("k", op, v))
			}
			atoms = append(atoms, req("k", op, "1", "a"))
		}
	}
	witnesses := []map[string]string{{}}
	for _, v := range []string{"a", "b", "-1", "0", "1", "2", "3", "4", "5", "00", "01", "02", "03", "04"} {
		witnesses = append(witnesses, map[string]string{"k": v})
	}
	for i := range atoms {
		for j := i; j < len(atoms); j++ {
			for k := j; k < len(atoms); k++ {
				rs := Requirements{atoms[i], atoms[j], atoms[k]}
				want := false
				for _, w := range witnesses {
					if rs.Matches(w) {
						want = true
						break
					}
				}
				if got := rs.Satisfiable() == nil; got != want {
					t.Fatalf("Satisfiable(%v) = %v, brute force says %v", rs, got, want)
				}
			}
		}
	}
}

func TestRequirementString(t *testing.T) {
	tests := []struct {
		r    Requirement
		want string
	}{
		{req("k", OpIn, "a"), "k=a"},
		{req("k", OpIn, "a", "b"), "k in (a,b)"},
		{req("k", OpNotIn, "a"), "k!=a"},
		{req("k", OpNotIn, "a", "b"), "k notin (a,b)"},
		{req("k", OpExists), "k"},
		{req("k", OpDoesNotExist), "!k"},
		{req("k", OpGt, "3"), "k>3"},
		{req("k", OpLt, "3"), "k<3"},
		{req("k", OpGt), `k Gt []`},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func ExampleRequirements_Satisfiable() {
	pool := Requirements{
		{Key: LabelArch, Operator: OpIn, Values: []string{"amd64"}},
		{Key: LabelArch, Operator: OpNotIn, Values: []string{"amd64"}},
	}
	fmt.Println(pool.Satisfiable())
	// Output: requirements on "kubernetes.io/arch" contradict: kubernetes.io/arch=amd64, kubernetes.io/arch!=amd64
}
