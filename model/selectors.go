package model

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Matches reports whether labels satisfy s with metav1.LabelSelector semantics: a nil selector matches
// nothing, an empty one everything; otherwise every MatchLabels pair must be present with that value and
// every MatchExpressions entry must hold (In, NotIn — true when the key is absent —, Exists, DoesNotExist).
// An expression that metav1.LabelSelectorAsSelector rejects (another operator, In or NotIn without values,
// Exists or DoesNotExist with values) makes the whole selector match nothing, as a selector that fails to
// convert does in the scheduler; Validate reports it.
func (s *LabelSelector) Matches(labels map[string]string) bool {
	if s == nil {
		return false
	}
	for k, v := range s.MatchLabels {
		if have, ok := labels[k]; !ok || have != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		if !selectorOperatorOK(r) || !r.Matches(labels) {
			return false
		}
	}
	return true
}

// selectorOperatorOK reports whether r is a well-formed label-selector expression.
func selectorOperatorOK(r Requirement) bool {
	switch r.Operator {
	case OpIn, OpNotIn:
		return len(r.Values) > 0
	case OpExists, OpDoesNotExist:
		return len(r.Values) == 0
	default:
		return false
	}
}

// Validate checks s as metav1 does: label keys and values well formed, expressions limited to In, NotIn,
// Exists and DoesNotExist with the right number of values. A nil selector is valid (it matches nothing).
func (s *LabelSelector) Validate() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, k := range sortedKeys(s.MatchLabels) {
		if err := ValidateLabelKey(k); err != nil {
			errs = append(errs, fmt.Errorf("matchLabels: %w", err))
		}
		if err := ValidateLabelValue(s.MatchLabels[k]); err != nil {
			errs = append(errs, fmt.Errorf("matchLabels %q: %w", k, err))
		}
	}
	for _, r := range s.MatchExpressions {
		if r.Operator == OpGt || r.Operator == OpLt {
			errs = append(errs, fmt.Errorf("matchExpressions on %q: operator %s is not allowed in a label selector", r.Key, r.Operator))
			continue
		}
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("matchExpressions: %w", err))
		}
	}
	return errors.Join(errs...)
}

// String formats s as a comma-separated selector ("app=web,tier in (a,b)"); "<none>" for nil, "<all>" for
// an empty selector.
func (s *LabelSelector) String() string {
	if s == nil {
		return "<none>"
	}
	if len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0 {
		return "<all>"
	}
	parts := make([]string, 0, len(s.MatchLabels)+len(s.MatchExpressions))
	for _, k := range sortedKeys(s.MatchLabels) {
		parts = append(parts, k+"="+s.MatchLabels[k])
	}
	for _, r := range s.MatchExpressions {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
