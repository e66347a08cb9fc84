package model

import (
	"errors"
	"fmt"
	"strings"
)

// Kubernetes label syntax limits.
const (
	maxLabelNameLen   = 63
	maxLabelPrefixLen = 253
	maxLabelValueLen  = 63
)

// ValidateLabelKey checks that key is a Kubernetes qualified name: an optional DNS-subdomain prefix and a
// slash, then a name of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
func ValidateLabelKey(key string) error {
	if key == "" {
		return errors.New("label key is empty")
	}
	prefix, name, hasPrefix := strings.Cut(key, "/")
	if !hasPrefix {
		name = prefix
		prefix = ""
	} else if prefix == "" {
		return fmt.Errorf("label key %q: prefix before '/' is empty", key)
	}
	if strings.Contains(name, "/") {
		return fmt.Errorf("label key %q: more than one '/'", key)
	}
	if name == "" {
		return fmt.Errorf("label key %q: name is empty", key)
	}
	if len(name) > maxLabelNameLen {
		return fmt.Errorf("label key %q: name longer than %d characters", key, maxLabelNameLen)
	}
	if !isLabelToken(name) {
		return fmt.Errorf("label key %q: name must be alphanumerics, '-', '_' or '.', starting and ending alphanumeric", key)
	}
	if hasPrefix {
		if len(prefix) > maxLabelPrefixLen {
			return fmt.Errorf("label key %q: prefix longer than %d characters", key, maxLabelPrefixLen)
		}
		if !isDNSSubdomain(prefix) {
			return fmt.Errorf("label key %q: prefix must be a lowercase DNS subdomain", key)
		}
	}
	return nil
}

// ValidateLabelValue checks that v is a Kubernetes label value: empty, or at most 63 alphanumerics, '-', '_'
// or '.', starting and ending alphanumeric.
func ValidateLabelValue(v string) error {
	if v == "" {
		return nil
	}
	if len(v) > maxLabelValueLen {
		return fmt.Errorf("label value %q longer than %d characters", v, maxLabelValueLen)
	}
	if !isLabelToken(v) {
		return fmt.Errorf("label value %q must be alphanumerics, '-', '_' or '.', starting and ending alphanumeric", v)
	}
	return nil
}

// isLabelToken reports whether s matches ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] (s non-empty).
func isLabelToken(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is dot-separated DNS-1123 labels: [a-z0-9]([-a-z0-9]*[a-z0-9])?.
func isDNSSubdomain(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		if !isLowerAlnum(label[0]) || !isLowerAlnum(label[len(label)-1]) {
			return false
		}
		for i := 1; i < len(label)-1; i++ {
			if c := label[i]; !isLowerAlnum(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

func isLowerAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
}
