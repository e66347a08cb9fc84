package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// process is a control-plane binary that the harness runs itself, with its output in a log file.
type process struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed when the process has exited; err is set then
	err    error
}

// startProcess starts path with args, logging stdout and stderr to logPath.
func startProcess(path, logPath string, args ...string) (*process, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", path, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	p := &process{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after the grace period, and waits for the exit. An exit before stop was
// called is reported as an error.
func (p *process) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s had exited before the harness stopped it: %v", p.cmd.Path, p.err)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", p.cmd.Path, err)
	}
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
}

// tail returns the last n bytes of the log, with a note if the process has exited.
func (p *process) tail(n int64) string {
	status := "running"
	select {
	case <-p.exited:
		status = fmt.Sprintf("exited: %v", p.err)
	default:
	}
	data, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("%s (%s); reading its log: %v", p.cmd.Path, status, err)
	}
	if int64(len(data)) > n {
		data = data[int64(len(data))-n:]
	}
	return fmt.Sprintf("%s (%s), log tail:\n%s", p.cmd.Path, status, data)
}
