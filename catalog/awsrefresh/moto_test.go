package awsrefresh

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

// motoEnv names the moto_server program; hack/install-moto.sh installs it and prints its path.
const motoEnv = "PACKWRIGHT_MOTO_SERVER"

// moto is the package's one moto server, started by the first test that needs it and stopped by TestMain.
var moto struct {
	once   sync.Once
	url    string
	err    error
	proc   *os.Process
	exited chan error // receives the process's exit once
}

func TestMain(m *testing.M) {
	code := m.Run()
	if moto.proc != nil {
		_ = moto.proc.Signal(syscall.SIGTERM)
		select {
		case <-moto.exited:
		case <-time.After(5 * time.Second):
			_ = moto.proc.Kill()
			<-moto.exited
		}
	}
	os.Exit(code)
}

// motoURL returns the base URL of a running moto server, failing the test (not skipping it) when moto is not
// installed: the AWS refresh is only tested against it.
func motoURL(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(motoEnv)
	if bin == "" {
		t.Fatalf("%s is not set. The AWS refresh tests need moto's EC2 emulator: run\n"+
			"\texport %s=\"$(hack/install-moto.sh)\"\n(make test does this)", motoEnv, motoEnv)
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		t.Fatalf("%s=%s is not a moto_server program (%v); rerun hack/install-moto.sh", motoEnv, bin, err)
	}
	moto.once.Do(func() { moto.url, moto.err = startMoto(bin) })
	if moto.err != nil {
		t.Fatalf("moto: %v", moto.err)
	}
	return moto.url
}

// startMoto runs moto_server on a free loopback port and waits until it answers. A port taken between the probe
// and moto's bind makes moto exit at once; then another port is tried.
func startMoto(bin string) (string, error) {
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
				moto.proc, moto.exited = cmd.Process, exited // TestMain stops it
				return url, nil
			}
			break // moto exited: try another port
		}
	}
	return "", lastErr
}

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
