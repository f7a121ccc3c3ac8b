package localcluster

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// procState is the state letter of /proc/<pid>/stat ("S", "T" for stopped, ...).
func procState(t *testing.T, pid int) string {
	t.Helper()
	state, _, ok := procStatus(pid)
	if !ok {
		t.Fatalf("pid %d: no such process", pid)
	}
	return state
}

// waitState polls until the process is (or is no longer) stopped.
func waitState(t *testing.T, pid int, stopped bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, waitTimeout, true, func(context.Context) (bool, error) {
		return (procState(t, pid) == "T") == stopped, nil
	})
	if err != nil {
		t.Fatalf("pid %d: waiting for stopped=%v: %v (state %s)", pid, stopped, err, procState(t, pid))
	}
}

func TestStartProcessSignalAndKill(t *testing.T) {
	p, err := StartProcess("sleeper", "sleep", []string{"600"}, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if p.Exited() || p.ExitError() != nil {
		t.Fatalf("the process exited at once: %v", p.ExitError())
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.Pid(), true)
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitState(t, p.Pid(), false)
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done is open after Kill returned")
	}
	if !p.Exited() || p.ExitError() == nil || !strings.Contains(p.ExitError().Error(), "killed") {
		t.Errorf("after Kill: exited=%v err=%v, want a 'signal: killed' exit", p.Exited(), p.ExitError())
	}
	if err := p.Kill(); err != nil {
		t.Errorf("killing an exited process: %v", err)
	}
	if err := p.Signal(syscall.SIGCONT); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signalling an exited process = %v, want os.ErrProcessDone", err)
	}
}

// testEtcdPause pauses etcd with SIGSTOP and resumes it: the API server
// serves again afterwards and the cluster's supervision saw no exit.
func testEtcdPause(t *testing.T, c *Cluster) {
	pid := c.PIDs()[Etcd]
	if err := c.Signal(Etcd, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, true)
	if err := c.Signal(Etcd, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitState(t, pid, false)
	err := wait.PollUntilContextTimeout(t.Context(), pollInterval, waitTimeout, true, func(ctx context.Context) (bool, error) {
		return httpOK(insecureHTTP, c.apiServerURL+"/readyz")(ctx) == nil || c.Client().List(ctx, &corev1.NamespaceList{}) == nil, nil
	})
	if err != nil {
		t.Fatalf("the API server did not serve again after etcd resumed: %v", err)
	}
	if got := c.PIDs()[Etcd]; got != pid {
		t.Errorf("etcd pid %d after the pause, want %d", got, pid)
	}
	if err := c.Signal("no-such-component", syscall.SIGCONT); err == nil {
		t.Error("signalling an unknown component succeeded")
	}
}
