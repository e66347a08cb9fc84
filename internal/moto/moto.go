// Package moto runs moto's AWS emulator server (installed by hack/install-moto.sh) on 127.0.0.1 for the tests
// that drive the real aws-sdk-go-v2 clients against it. One server serves a whole test binary: Shared starts it
// on first use, and the test binary's TestMain calls Stop.
package moto

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Env names the moto_server program; hack/install-moto.sh installs it and prints its path.
const Env = "PACKWRIGHT_MOTO_SERVER"

var shared struct {
	once   sync.Once
	url    string
	err    error
	proc   *os.Process
	exited chan error // receives the process's exit once
}

// URL returns the base URL of the shared moto server, starting it on first use, and fails the test (it does not
// skip it) when moto is not installed.
func URL(tb testing.TB) string {
	tb.Helper()
	bin := os.Getenv(Env)
	if bin == "" {
		tb.Fatalf("%s is not set. These tests need moto's AWS emulator: run\n"+
			"\texport %s=\"$(hack/install-moto.sh)\"\n(make test does this)", Env, Env)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		tb.Fatalf("%s=%s is not a moto_server program (%v); rerun hack/install-moto.sh", Env, bin, err)
	}
	shared.once.Do(func() { shared.url, shared.err = start(bin) })
	if shared.err != nil {
		tb.Fatalf("moto: %v", shared.err)
	}
	return shared.url
}

// Stop stops the shared server, if one was started.
func Stop() {
	if shared.proc == nil {
		return
	}
	_ = shared.proc.Signal(syscall.SIGTERM)
	select {
	case <-shared.exited:
	case <-time.After(5 * time.Second):
		_ = shared.proc.Kill()
		<-shared.exited
	}
	shared.proc = nil
}

// start runs moto_server on a free loopback port and waits until it answers. A port taken between the probe and
// moto's bind makes moto exit at once; then another port is tried.
func start(bin string) (string, error) {
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return "", err
		}
		logs := &syncBuffer{}
		cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			return "", fmt.Errorf("start %s: %w", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		url := fmt.Sprintf("http://127.0.0.1:%d", port)
		deadline := time.After(60 * time.Second)
		for {
			select {
			case err := <-exited:
				lastErr = fmt.Errorf("moto_server exited before it answered (%v); its output:\n%s", err, logs)
			case <-deadline:
				_ = cmd.Process.Kill()
				<-exited
				return "", fmt.Errorf("moto_server did not answer on %s within 60s; its output:\n%s", url, logs)
			case <-time.After(100 * time.Millisecond):
				resp, err := http.Get(url + "/moto-api/")
				if err != nil {
					continue
				}
				resp.Body.Close()
				shared.proc, shared.exited = cmd.Process, exited
				return url, nil
			}
			break // moto exited: try another port
		}
	}
	return "", lastErr
}

// FreePort returns a loopback TCP port that was free a moment ago (for tests that want an address nobody
// listens on).
func FreePort() (int, error) { return freePort() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer collects a child's output from two goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
