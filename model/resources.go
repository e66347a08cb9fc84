package model

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Binary byte multiples, for memory and storage quantities.
const (
	Ki int64 = 1 << 10
	Mi int64 = 1 << 20
	Gi int64 = 1 << 30
	Ti int64 = 1 << 40
)

// ErrOverflow is returned (wrapped) by the checked arithmetic when a result does not fit in an int64.
var ErrOverflow = errors.New("quantity overflows int64")

// Add returns r+o element-wise. A missing entry is zero. A sum that does not fit in an int64 saturates at
// math.MaxInt64 or math.MinInt64 rather than wrapping, so an absurd input can never turn into a small or
// negative quantity that fits somewhere it should not; use AddChecked to detect it.
func (r Resources) Add(o Resources) Resources {
	out := make(Resources, max(len(r), len(o)))
	for k, v := range r {
		out[k] = v
	}
	for k, v := range o {
		out[k] = satAdd(out[k], v)
	}
	return out
}

// AddChecked is Add that reports an overflow instead of saturating.
func (r Resources) AddChecked(o Resources) (Resources, error) {
	out := r.Clone()
	if out == nil {
		out = make(Resources, len(o))
	}
	for k, v := range o {
		s, ok := addOK(out[k], v)
		if !ok {
			return nil, fmt.Errorf("add %s: %d + %d: %w", k, out[k], v, ErrOverflow)
		}
		out[k] = s
	}
	return out, nil
}

// Sub returns r-o element-wise, saturating like Add. Entries may become negative.
func (r Resources) Sub(o Resources) Resources {
	out := make(Resources, max(len(r), len(o)))
	for k, v := range r {
		out[k] = v
	}
	for k, v := range o {
		out[k] = satSub(out[k], v)
	}
	return out
}

// Scale returns r*n element-wise, saturating at the int64 limits instead of wrapping.
func (r Resources) Scale(n int64) Resources {
	out := make(Resources, len(r))
	for k, v := range r {
		out[k] = satMul(v, n)
	}
	return out
}

// ScaleChecked is Scale that reports an overflow instead of saturating.
func (r Resources) ScaleChecked(n int64) (Resources, error) {
	out := make(Resources, len(r))
	for k, v := range r {
		p, ok := mulOK(v, n)
		if !ok {
			return nil, fmt.Errorf("scale %s: %d * %d: %w", k, v, n, ErrOverflow)
		}
		out[k] = p
	}
	return out, nil
}

// Fits reports whether every quantity in r is at most the same quantity in avail. A resource that r has and
// avail lacks counts as 0 available, so a request for an absent extended resource does not fit.
func (r Resources) Fits(avail Resources) bool {
	for k, v := range r {
		if v > avail[k] {
			return false
		}
	}
	return true
}

// Exceeds returns, in canonical order (see Names), the resources whose quantity in r is greater than in avail;
// nil when r fits.
func (r Resources) Exceeds(avail Resources) []ResourceName {
	var out []ResourceName
	for k, v := range r {
		if v > avail[k] {
			out = append(out, k)
		}
	}
	sortResourceNames(out)
	return out
}

// Clone returns a copy of r that shares no memory with it; nil stays nil.
func (r Resources) Clone() Resources {
	if r == nil {
		return nil
	}
	out := make(Resources, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// IsZero reports whether every quantity is zero (a nil or empty vector is zero).
func (r Resources) IsZero() bool {
	for _, v := range r {
		if v != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether r and o hold the same quantities, a missing entry being zero.
func (r Resources) Equal(o Resources) bool {
	for k, v := range r {
		if o[k] != v {
			return false
		}
	}
	for k, v := range o {
		if r[k] != v {
			return false
		}
	}
	return true
}

// Max returns the element-wise maximum of r and o, a missing entry being zero.
func (r Resources) Max(o Resources) Resources {
	out := make(Resources, max(len(r), len(o)))
	for k, v := range r {
		out[k] = max(v, o[k])
	}
	for k, v := range o {
		if _, ok := r[k]; !ok {
			out[k] = max(v, 0)
		}
	}
	return out
}

// Names returns the resource names of r in canonical order: cpu, memory, ephemeral-storage, pods, then the
// rest alphabetically.
func (r Resources) Names() []ResourceName {
	out := make([]ResourceName, 0, len(r))
	for k := range r {
		out = append(out, k)
	}
	sortResourceNames(out)
	return out
}

// String formats r for people, in canonical order: cpu in cores or millicores ("2", "1500m"), memory and
// storage in binary units ("4Gi", "1536Mi", or rounded to two decimals such as "15.1Gi" when no unit divides
// the quantity), everything else as a plain count. Example: {cpu: 1500m, memory: 2Gi, pods: 3}.
func (r Resources) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range r.Names() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
		b.WriteString(": ")
		b.WriteString(FormatQuantity(k, r[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// FormatQuantity formats one quantity of the named resource the way Resources.String does.
func FormatQuantity(name ResourceName, v int64) string {
	switch {
	case name == CPU:
		if v%1000 == 0 {
			return strconv.FormatInt(v/1000, 10)
		}
		return strconv.FormatInt(v, 10) + "m"
	case isByteResource(name):
		return formatBytes(v)
	default:
		return strconv.FormatInt(v, 10)
	}
}

// isByteResource reports whether quantities of name are bytes.
func isByteResource(name ResourceName) bool {
	return name == Memory || name == EphemeralStorage || strings.HasPrefix(string(name), "hugepages-")
}

func formatBytes(v int64) string {
	if v == 0 {
		return "0"
	}
	abs := math.Abs(float64(v))
	switch {
	case v%Gi == 0:
		return strconv.FormatInt(v/Gi, 10) + "Gi"
	case v%Mi == 0:
		return strconv.FormatInt(v/Mi, 10) + "Mi"
	case abs >= float64(Gi):
		return trimFloat(float64(v)/float64(Gi), 2) + "Gi"
	case abs >= float64(Mi):
		return trimFloat(float64(v)/float64(Mi), 1) + "Mi"
	case v%Ki == 0:
		return strconv.FormatInt(v/Ki, 10) + "Ki"
	default:
		return strconv.FormatInt(v, 10)
	}
}

// trimFloat formats f with at most prec decimals, dropping trailing zeros.
func trimFloat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// resourceRank orders the well-known resources first.
func resourceRank(n ResourceName) int {
	switch n {
	case CPU:
		return 0
	case Memory:
		return 1
	case EphemeralStorage:
		return 2
	case Pods:
		return 3
	default:
		return 4
	}
}

func sortResourceNames(names []ResourceName) {
	slices.SortFunc(names, func(a, b ResourceName) int {
		if ra, rb := resourceRank(a), resourceRank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(string(a), string(b))
	})
}

// addOK returns a+b and whether it did not overflow.
func addOK(a, b int64) (int64, bool) {
	s := a + b // wraps on overflow, which Go defines
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return s, false
	}
	return s, true
}

// satAdd returns a+b clamped to the int64 range.
func satAdd(a, b int64) int64 {
	s, ok := addOK(a, b)
	if ok {
		return s
	}
	if a > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// satSub returns a-b clamped to the int64 range.
func satSub(a, b int64) int64 {
	d := a - b
	if (a >= 0 && b < 0 && d < 0) || (a < 0 && b > 0 && d >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// mulOK returns a*b and whether it did not overflow.
func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(uabs(a), uabs(b))
	if hi != 0 {
		return 0, false
	}
	if neg {
		if lo > 1<<63 {
			return 0, false
		}
		return int64(-lo), true // -lo wraps to the two's complement, MinInt64 included
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// satMul returns a*b clamped to the int64 range.
func satMul(a, b int64) int64 {
	p, ok := mulOK(a, b)
	if ok {
		return p
	}
	if (a < 0) != (b < 0) {
		return math.MinInt64
	}
	return math.MaxInt64
}

func uabs(v int64) uint64 {
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	return u
}
