package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// harness is the control plane shared by the package's tests.
var harness *Harness

// TestMain starts one control plane for all tests and fails the package, rather than skipping it, when the
// control plane is missing.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	began := time.Now()
	// The CRDs are not installed: deploy/crds/packwright.dev_nodeclaims.yaml is refused by kube-apiserver 1.37
	// (a requirements CEL rule exceeds the cost budget), so the NodeClaim stays in memory, as the sim provider
	// needs no more.
	h, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: e2e: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane up in %s\n", time.Since(began).Round(time.Millisecond))
	harness = h
	code := m.Run()
	if err := h.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: e2e: stopping the control plane: %v\n", err)
		code = 1
	}
	return code
}
