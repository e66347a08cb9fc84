package model

import "fmt"

// String formats t as kubectl does: key=value:Effect, or key:Effect when the value is empty.
func (t Taint) String() string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// Blocks reports whether the taint keeps untolerating pods off the node: NoSchedule and NoExecute do,
// PreferNoSchedule (and any unknown effect) does not, as in kube-scheduler's TaintToleration filter.
func (t Taint) Blocks() bool { return t.Effect == NoSchedule || t.Effect == NoExecute }

// Tolerates reports whether tol tolerates t, with Kubernetes semantics: a non-empty Effect must equal the
// taint's; a non-empty Key must equal the taint's (so an empty key with Exists tolerates every taint);
// Exists ignores the value, Equal (or an empty operator) compares it. An unknown operator tolerates nothing.
func (tol Toleration) Tolerates(t Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case TolerationExists:
		return true
	case TolerationEqual, "":
		return tol.Value == t.Value
	default:
		return false
	}
}

// Validate checks tol as the API server does: a known operator and effect, an empty key only with Exists,
// and no value with Exists.
func (tol Toleration) Validate() error {
	switch tol.Operator {
	case "", TolerationEqual:
		if tol.Key == "" {
			return fmt.Errorf("toleration %s: an empty key needs operator Exists", tol)
		}
	case TolerationExists:
		if tol.Value != "" {
			return fmt.Errorf("toleration %s: operator Exists takes no value", tol)
		}
	default:
		return fmt.Errorf("toleration %s: unknown operator %q", tol, tol.Operator)
	}
	switch tol.Effect {
	case "", NoSchedule, PreferNoSchedule, NoExecute:
	default:
		return fmt.Errorf("toleration %s: unknown effect %q", tol, tol.Effect)
	}
	return nil
}

// String formats tol as key=value:Effect (Equal) or key:Effect (Exists); an empty key or effect reads "*".
func (tol Toleration) String() string {
	key, effect := tol.Key, string(tol.Effect)
	if key == "" {
		key = "*"
	}
	if effect == "" {
		effect = "*"
	}
	if tol.Operator == TolerationExists {
		return key + ":" + effect
	}
	return key + "=" + tol.Value + ":" + effect
}

// Tolerates reports whether tols tolerate every NoSchedule and NoExecute taint in taints. PreferNoSchedule
// taints never block (see UntoleratedPreferNoSchedule).
func Tolerates(tols []Toleration, taints []Taint) bool {
	_, ok := UntoleratedTaint(tols, taints)
	return !ok
}

// UntoleratedTaint returns the first NoSchedule or NoExecute taint that no toleration in tols tolerates, and
// whether there is one.
func UntoleratedTaint(tols []Toleration, taints []Taint) (Taint, bool) {
	for _, t := range taints {
		if t.Blocks() && !tolerated(tols, t) {
			return t, true
		}
	}
	return Taint{}, false
}

// UntoleratedPreferNoSchedule counts the PreferNoSchedule taints that tols do not tolerate, the quantity
// kube-scheduler's TaintToleration score minimises.
func UntoleratedPreferNoSchedule(tols []Toleration, taints []Taint) int {
	n := 0
	for _, t := range taints {
		if t.Effect == PreferNoSchedule && !tolerated(tols, t) {
			n++
		}
	}
	return n
}

func tolerated(tols []Toleration, t Taint) bool {
	for _, tol := range tols {
		if tol.Tolerates(t) {
			return true
		}
	}
	return false
}
