package localcluster

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// Process is a child process started the way the cluster starts its own
// components: in its own process group, forked from the spawner thread with a
// parent-death SIGKILL (so it cannot outlive a killed test binary), its output
// appended to <logDir>/<name>.log. Tests use it for processes of their own
// that must die with them, such as manager replicas and the cloud emulator.
type Process struct{ p *process }

// StartProcess starts bin with args (env is added to the test's
// environment). It does not wait for the process to serve anything.
func StartProcess(name, bin string, args, env []string, logDir string) (*Process, error) {
	p, err := startProcess(name, bin, args, env, logDir)
	if err != nil {
		return nil, err
	}
	return &Process{p: p}, nil
}

// Pid is the process id.
func (p *Process) Pid() int { return p.p.pid() }

// LogPath is the file the process writes to.
func (p *Process) LogPath() string { return p.p.logPath }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool { return p.p.exited() }

// ExitError describes how the process ended, with the tail of its log; nil
// while it runs.
func (p *Process) ExitError() error {
	if !p.p.exited() {
		return nil
	}
	return p.p.exitError()
}

// Signal sends sig (SIGSTOP, SIGCONT, ...) to the process. Signalling an
// exited process is an error wrapping os.ErrProcessDone.
func (p *Process) Signal(sig os.Signal) error {
	if err := p.p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("sending %v to %s (pid %d): %w", sig, p.p.name, p.p.pid(), err)
	}
	return nil
}

// Kill sends SIGKILL and returns once the process has exited. Killing an
// exited process is not an error.
func (p *Process) Kill() error {
	if err := p.p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s (pid %d): %w", p.p.name, p.p.pid(), err)
	}
	<-p.p.done
	return nil
}

// Stop sends SIGTERM, then SIGKILL after timeout, and returns once the
// process has exited.
func (p *Process) Stop(timeout time.Duration) error { return p.p.stop(timeout, logr.Discard()) }

// Signal sends sig to a running component (Etcd, APIServer, ...): chaos
// tests pause etcd with SIGSTOP and resume it with SIGCONT. The cluster's
// supervision is unaffected, as a stopped process has not exited.
func (c *Cluster) Signal(component string, sig os.Signal) error {
	c.mu.Lock()
	var target *process
	for _, p := range c.procs {
		if p.name == component && !p.exited() {
			target = p
		}
	}
	c.mu.Unlock()
	if target == nil {
		return fmt.Errorf("signalling %s: no running process of that component", component)
	}
	if err := target.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("sending %v to %s (pid %d): %w", sig, component, target.pid(), err)
	}
	return nil
}
