// Package catalog describes the machines Packwright may launch: instance types with their capacity, maximum
// pods and per-zone on-demand and spot prices, loaded from a JSON file (see docs/catalog-format.md) or from the
// embedded default AWS catalogs, or generated synthetically for benchmarks.
//
// It turns a catalog and a NodePool into model.Offering values: one per (instance type, zone, capacity type) that
// the pool allows, with capacity, EKS-style allocatable and the well-known node labels, including Karpenter's,
// so that pods written for Karpenter select the same machines here.
package catalog

//go:generate go run ./internal/gen -out data
