package e2e

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
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
	// The controllers' logs go to stderr when PACKWRIGHT_E2E_LOG is set; otherwise nowhere (they are many).
	logs := io.Discard
	if os.Getenv("PACKWRIGHT_E2E_LOG") != "" {
		logs = os.Stderr
	}
	ctrllog.SetLogger(zap.New(zap.WriteTo(logs), zap.Level(zapcore.DebugLevel)))
	// The project's own CRDs, as deploy/ installs them: the controller watches NodePools and NodeClaims.
	h, err := Start(context.Background(), Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "deploy", "crds")}})
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
