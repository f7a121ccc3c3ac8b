package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// roleEnv selects what a re-executed test binary does: this test runs the
// real main as PID 1 of a new PID namespace, and two helpers that leave an
// orphan behind in it.
const roleEnv = "PAUSE_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "pid1":
		startHelper("orphaner")
		main()
		os.Exit(0)
	case "orphaner":
		// Start a child and exit without waiting for it: the child is
		// reparented to PID 1, which must reap it, and this process is
		// PID 1's own child, which it must reap too.
		startHelper("orphan")
		os.Exit(0)
	case "orphan":
		// Exit only once reparented, so PID 1 is the one to collect it.
		for os.Getppid() != 1 {
			time.Sleep(10 * time.Millisecond)
		}
		if err := os.WriteFile(os.Getenv("PAUSE_TEST_MARKER"), nil, 0o600); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func startHelper(role string) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
}

func TestRunReapsOnSIGCHLDAndReturnsTheStopSignal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		signals   []os.Signal
		wantReaps int
		want      os.Signal
	}{
		{"SIGTERM", []os.Signal{syscall.SIGTERM}, 0, syscall.SIGTERM},
		{"SIGINT", []os.Signal{syscall.SIGINT}, 0, syscall.SIGINT},
		{"children exit, then SIGTERM", []os.Signal{syscall.SIGCHLD, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGCHLD}, 2, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan os.Signal, len(tc.signals))
			for _, s := range tc.signals {
				ch <- s
			}
			reaps := 0
			if got := run(ch, func() { reaps++ }); got != tc.want {
				t.Errorf("run returned %v, want %v", got, tc.want)
			}
			if reaps != tc.wantReaps {
				t.Errorf("reaped %d times, want %d", reaps, tc.wantReaps)
			}
		})
	}
}

// TestPID1ReapsOrphansAndExitsOnSIGTERM runs main as PID 1 of a PID
// namespace of its own (as in a pod's sandbox; creating it needs root, which
// the development and CI machines run as), lets a process there orphan a
// child, and checks that PID 1 collects both, then stops on SIGTERM with
// status 0.
func TestPID1ReapsOrphansAndExitsOnSIGTERM(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "reparented")
	var stderr bytes.Buffer
	pid1 := exec.Command(os.Args[0])
	pid1.Env = append(os.Environ(), roleEnv+"=pid1", "PAUSE_TEST_MARKER="+marker)
	pid1.Stderr = &stderr
	pid1.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	if err := pid1.Start(); err != nil {
		t.Fatalf("starting PID 1 in a new PID namespace: %v", err)
	}
	t.Cleanup(func() {
		if pid1.ProcessState == nil {
			_ = pid1.Process.Kill()
			_ = pid1.Wait()
		}
	})

	children := filepath.Join("/proc", strconv.Itoa(pid1.Process.Pid), "task", strconv.Itoa(pid1.Process.Pid), "children")
	eventually.That(context.Background(), t, "PID 1 to have reaped the orphan and its parent", func() (bool, string) {
		if _, err := os.Stat(marker); err != nil {
			return false, "the orphan has not been reparented yet"
		}
		b, err := os.ReadFile(children)
		if err != nil {
			return false, err.Error()
		}
		// An exited child that was not reaped stays listed, a zombie.
		return strings.TrimSpace(string(b)) == "", "children not reaped: " + string(b) + states(string(b))
	})

	if err := pid1.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("sending SIGTERM: %v", err)
	}
	if err := pid1.Wait(); err != nil {
		t.Fatalf("PID 1 after SIGTERM: %v, want exit status 0; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "shutting down, got terminated") {
		t.Errorf("stderr %q does not say why it stopped", stderr.String())
	}
}

// states names each listed pid's state (Z for a zombie), for the failure
// message.
func states(pids string) string {
	var out strings.Builder
	for _, pid := range strings.Fields(pids) {
		b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) {
			out.WriteString(" " + pid + ":" + string(b[i+2]))
		}
	}
	return out.String()
}
