package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Matches reports whether labels satisfy r with Kubernetes node-selector semantics:
//
//   - In: the key is present and its value is one of Values;
//   - NotIn: the key is absent, or its value is none of Values;
//   - Exists / DoesNotExist: the key is present / absent;
//   - Gt / Lt: the key is present, both its value and the single element of Values parse as base-10 int64,
//     and the label is greater / less. An absent key, a non-integer label or a malformed requirement fails.
//
// An unknown operator matches nothing.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case OpIn:
		return ok && slices.Contains(r.Values, v)
	case OpNotIn:
		return !ok || !slices.Contains(r.Values, v)
	case OpExists:
		return ok
	case OpDoesNotExist:
		return !ok
	case OpGt, OpLt:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.Operator == OpGt {
			return have > want
		}
		return have < want
	default:
		return false
	}
}

// Validate checks r as the API server checks a node selector requirement: the key is a qualified label name,
// the operator is known, In and NotIn have at least one value and every value is a label value, Exists and
// DoesNotExist have none, Gt and Lt have exactly one, a base-10 int64. Errors name the key.
func (r Requirement) Validate() error {
	if err := ValidateLabelKey(r.Key); err != nil {
		return fmt.Errorf("requirement on %q: %w", r.Key, err)
	}
	switch r.Operator {
	case OpIn, OpNotIn:
		if len(r.Values) == 0 {
			return fmt.Errorf("requirement on %q: operator %s needs at least one value", r.Key, r.Operator)
		}
		for _, v := range r.Values {
			if err := ValidateLabelValue(v); err != nil {
				return fmt.Errorf("requirement on %q: %w", r.Key, err)
			}
		}
	case OpExists, OpDoesNotExist:
		if len(r.Values) != 0 {
			return fmt.Errorf("requirement on %q: operator %s takes no values, got %d", r.Key, r.Operator, len(r.Values))
		}
	case OpGt, OpLt:
		if len(r.Values) != 1 {
			return fmt.Errorf("requirement on %q: operator %s needs exactly one value, got %d", r.Key, r.Operator, len(r.Values))
		}
		if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			return fmt.Errorf("requirement on %q: operator %s needs an integer, got %q", r.Key, r.Operator, r.Values[0])
		}
	default:
		return fmt.Errorf("requirement on %q: unknown operator %q", r.Key, r.Operator)
	}
	return nil
}

// String formats r in the syntax ParseRequirement reads: "key in (a,b)", "key notin (a,b)", "key=v",
// "key!=v" (In and NotIn with one value), "key", "!key", "key>3", "key<3". A requirement that does not
// validate is printed in a descriptive form that ParseRequirement rejects.
func (r Requirement) String() string {
	switch {
	case r.Operator == OpIn && len(r.Values) == 1:
		return r.Key + "=" + r.Values[0]
	case r.Operator == OpNotIn && len(r.Values) == 1:
		return r.Key + "!=" + r.Values[0]
	case r.Operator == OpIn && len(r.Values) > 1:
		return r.Key + " in (" + strings.Join(r.Values, ",") + ")"
	case r.Operator == OpNotIn && len(r.Values) > 1:
		return r.Key + " notin (" + strings.Join(r.Values, ",") + ")"
	case r.Operator == OpExists && len(r.Values) == 0:
		return r.Key
	case r.Operator == OpDoesNotExist && len(r.Values) == 0:
		return "!" + r.Key
	case r.Operator == OpGt && len(r.Values) == 1:
		return r.Key + ">" + r.Values[0]
	case r.Operator == OpLt && len(r.Values) == 1:
		return r.Key + "<" + r.Values[0]
	default:
		return fmt.Sprintf("%s %s %q", r.Key, r.Operator, r.Values)
	}
}

// Matches reports whether labels satisfy every requirement; an empty conjunction matches everything.
func (rs Requirements) Matches(labels map[string]string) bool {
	for _, r := range rs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

// Validate validates every requirement, joining the errors.
func (rs Requirements) Validate() error {
	var errs []error
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// String joins the requirements with ", ".
func (rs Requirements) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Matches reports whether labels satisfy at least one term. An empty list matches every node (no required
// node affinity); a term with no requirements matches nothing, as in kube-scheduler.
func (ts NodeSelectorTerms) Matches(labels map[string]string) bool {
	if len(ts) == 0 {
		return true
	}
	for _, t := range ts {
		if len(t) > 0 && t.Matches(labels) {
			return true
		}
	}
	return false
}

// Validate validates every requirement of every term.
func (ts NodeSelectorTerms) Validate() error {
	var errs []error
	for i, t := range ts {
		if err := t.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("term %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// CompatibleWith reports whether some label set satisfies both rs and other, e.g. a pod's node affinity term
// and a NodePool's requirements; it is (rs AND other).Satisfiable().
func (rs Requirements) CompatibleWith(other Requirements) error {
	both := make(Requirements, 0, len(rs)+len(other))
	both = append(both, rs...)
	both = append(both, other...)
	return both.Satisfiable()
}

// Satisfiable reports whether some label set satisfies the whole conjunction, and otherwise names the key
// whose requirements contradict each other (In [a] with NotIn [a], In [a] with In [b], Exists or In with
// DoesNotExist, Gt 8 with Lt 4, an In value outside a Gt/Lt range, ...). Requirements that do not validate
// are reported as such. Label values are treated as arbitrary strings, so NotIn never exhausts an integer
// range: "02" satisfies Gt 1, Lt 3 and NotIn [2].
func (rs Requirements) Satisfiable() error {
	if err := rs.Validate(); err != nil {
		return err
	}
	var keys []string
	byKey := make(map[string][]Requirement)
	for _, r := range rs {
		if _, seen := byKey[r.Key]; !seen {
			keys = append(keys, r.Key)
		}
		byKey[r.Key] = append(byKey[r.Key], r)
	}
	var errs []error
	for _, k := range keys {
		if !keySatisfiable(byKey[k]) {
			errs = append(errs, fmt.Errorf("requirements on %q contradict: %s", k, Requirements(byKey[k])))
		}
	}
	return errors.Join(errs...)
}

// keySatisfiable decides one key's valid requirements: is there a value (or absence) satisfying them all?
func keySatisfiable(rs []Requirement) bool {
	var (
		mustExist, mustBeAbsent bool
		hasIn, bounded          bool
		allowed                 []string // intersection of the In sets, once hasIn
	)
	excluded := make(map[string]bool)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // inclusive integer bounds
	for _, r := range rs {
		switch r.Operator {
		case OpIn:
			mustExist = true
			if !hasIn {
				allowed, hasIn = slices.Clone(r.Values), true
			} else {
				allowed = slices.DeleteFunc(allowed, func(v string) bool { return !slices.Contains(r.Values, v) })
			}
		case OpNotIn:
			for _, v := range r.Values {
				excluded[v] = true
			}
		case OpExists:
			mustExist = true
		case OpDoesNotExist:
			mustBeAbsent = true
		case OpGt:
			mustExist, bounded = true, true
			n, _ := strconv.ParseInt(r.Values[0], 10, 64) // validated
			if n == math.MaxInt64 {
				return false // no int64 is greater
			}
			lo = max(lo, n+1)
		case OpLt:
			mustExist, bounded = true, true
			n, _ := strconv.ParseInt(r.Values[0], 10, 64)
			if n == math.MinInt64 {
				return false
			}
			hi = min(hi, n-1)
		}
	}
	if mustBeAbsent {
		return !mustExist // NotIn alone is satisfied by absence
	}
	if bounded && lo > hi {
		return false
	}
	if !hasIn {
		// Exists/NotIn/Gt/Lt only: a value outside the excluded set exists (for a range, with leading zeros).
		return true
	}
	for _, v := range allowed {
		if excluded[v] {
			continue
		}
		if bounded {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < lo || n > hi {
				continue
			}
		}
		return true
	}
	return false
}
