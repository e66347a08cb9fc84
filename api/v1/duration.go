package v1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Never is the NillableDuration value that disables a duration, e.g. expireAfter: Never.
const Never = "Never"

// NillableDuration is a duration that may also be "Never". It is written as a Go duration string ("720h") or
// as "Never"; a nil Duration means Never.
//
// +kubebuilder:validation:Type=string
type NillableDuration struct {
	// Duration is the duration, or nil for Never.
	Duration *time.Duration `json:"-"`
}

// MustParseNillableDuration parses s as a duration or "Never" and panics on error. It is meant for constants
// and tests.
func MustParseNillableDuration(s string) NillableDuration {
	d, err := ParseNillableDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// ParseNillableDuration parses s as a Go duration or as "Never".
func ParseNillableDuration(s string) (NillableDuration, error) {
	if s == Never {
		return NillableDuration{}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return NillableDuration{}, fmt.Errorf("parse duration %q: %w", s, err)
	}
	return NillableDuration{Duration: &d}, nil
}

// String returns the duration in Go syntax, or "Never".
func (d NillableDuration) String() string {
	if d.Duration == nil {
		return Never
	}
	return d.Duration.String()
}

// MarshalJSON writes the duration as a string, "Never" when nil.
func (d NillableDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON reads a duration string or "Never". JSON null leaves the duration unchanged, as for other
// optional fields.
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"720h\" or \"Never\": %w", err)
	}
	v, err := ParseNillableDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
