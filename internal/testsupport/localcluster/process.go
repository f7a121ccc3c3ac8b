package localcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// process is one child process started by the cluster.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed once the process has exited and been reaped
	exitErr error         // valid once done is closed
	// retired is set, under the cluster's mu, on a process the cluster
	// replaces (RestartScheduler): its exit is no component dying.
	retired bool
}

// startProcess starts bin with args, sending stdout and stderr to
// <logDir>/<name>.log. The log is appended to, so a retried start keeps the
// earlier attempt's output for debugging.
func startProcess(name, bin string, args, env []string, logDir string) (*process, error) {
	return startProcessAttr(name, bin, args, env, logDir, sysProcAttr())
}

// startProcessAttr is startProcess with the child's attributes given: the
// real nodes' namespace holders add namespace flags to sysProcAttr's.
func startProcessAttr(name, bin string, args, env []string, logDir string, attr *syscall.SysProcAttr) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", name, err)
	}
	// The command line heads the log: it is the first thing one needs when a
	// component misbehaves.
	_, _ = fmt.Fprintf(logFile, "### %s %s\n", bin, strings.Join(args, " "))

	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attr
	if err := spawn(cmd); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}

	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// pid is the child's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has exited (and been reaped).
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL if the process is still there after
// timeout, and returns once it has exited. Signals go through the
// *os.Process, which (unlike a bare pid) cannot hit a recycled pid because
// the child is not reaped before Wait returns.
func (p *process) stop(timeout time.Duration, log logr.Logger) error {
	if p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending SIGTERM to %s (pid %d): %w", p.name, p.pid(), err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	log.Info("process did not exit after SIGTERM, killing it", "component", p.name, "pid", p.pid(), "timeout", timeout)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("sending SIGKILL to %s (pid %d): %w", p.name, p.pid(), err)
	}
	<-p.done
	return nil
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError() error {
	err := p.exitErr
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s (pid %d) exited: %w%s", p.name, p.pid(), err, p.logTail())
}

// logTail returns the last lines of the process's log, formatted to be
// appended to an error message.
func (p *process) logTail() string {
	return fmt.Sprintf("\n--- last lines of %s ---\n%s", p.logPath, tailFile(p.logPath, 30))
}

// tailFile returns up to maxLines final lines of the file at path.
func tailFile(path string, maxLines int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	defer func() { _ = f.Close() }()
	const window = 16 << 10
	if info, err := f.Stat(); err == nil && info.Size() > window {
		_, _ = f.Seek(-window, io.SeekEnd)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return strings.Join(lines, "\n")
}

// The kernel sends the parent-death signal when the *thread* that forked the
// child exits, not when the process does. The Go runtime ends an OS thread
// whose goroutine exits while locked to it, so a child forked from an
// arbitrary goroutine could be killed early. All children are therefore forked
// from one goroutine that locks its thread and never exits.
var (
	spawnOnce     sync.Once
	spawnRequests chan spawnRequest
)

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

// spawn starts cmd from the dedicated spawner thread.
func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must live as long as the program
			for req := range spawnRequests {
				req.result <- req.cmd.Start()
			}
		}()
	})
	req := spawnRequest{cmd: cmd, result: make(chan error, 1)}
	spawnRequests <- req
	return <-req.result
}
