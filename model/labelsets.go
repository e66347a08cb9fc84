package model

import (
	"sort"
	"strings"
)

// WithLabel returns a copy of labels with key set to value.
func WithLabel(labels map[string]string, key, value string) map[string]string {
	m := make(map[string]string, len(labels)+1)
	for k, v := range labels {
		m[k] = v
	}
	m[key] = value
	return m
}

// LabelSetKey is a canonical key for a namespace and a label set: pods with the same key are matched alike by
// every label selector and affinity term, so they can be counted as one class.
func LabelSetKey(namespace string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString(namespace)
	for _, k := range keys {
		sb.WriteByte(0)
		sb.WriteString(k)
		sb.WriteByte(1)
		sb.WriteString(labels[k])
	}
	return sb.String()
}
