package cluster

import (
	"bytes"
	_ "embed"
)

// SampleSnapshot is a realistic small cluster snapshot in YAML (samples/snapshot.yaml): two NodePools
// (on-demand general, tainted spot), three DaemonSets (one only on NVIDIA GPU nodes), three nodes with pods
// bound, and pending web, api (zone spread, one per node), cache (memory-heavy) and GPU training pods. It is
// the default input of `packwright plan`, planned against the aws/us-east-1 catalog.
//
//go:embed samples/snapshot.yaml
var SampleSnapshot []byte

// SampleState reads SampleSnapshot.
func SampleState() (*State, error) {
	return ReadSnapshot(bytes.NewReader(SampleSnapshot))
}
