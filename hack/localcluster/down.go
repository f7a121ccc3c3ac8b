package main

import (
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

func newDownCommand(stdout, stderr io.Writer, log logr.Logger) *command {
	fs := newFlagSet("down", "--dir DIR [--timeout D]")
	dir := fs.String("dir", "", "directory the cluster was started with (required)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait after SIGTERM before sending SIGKILL")
	return &command{
		name:    "down",
		summary: "stop the cluster started with `up --dir DIR` and wait until all its processes are gone; a no-op if none runs",
		flags:   fs,
		run: func() int {
			d, err := clusterDir(*dir)
			if err != nil {
				_, _ = fmt.Fprintf(stderr, "localcluster down: %v\n", err)
				return exitUsage
			}
			if err := down(d, *timeout, stdout, stderr, log); err != nil {
				_, _ = fmt.Fprintf(stderr, "localcluster down: %v\n", err)
				return exitFailure
			}
			return exitOK
		},
	}
}

// down stops the `up` process recorded in dir. `up` stops its components in
// order on SIGTERM; its children are recorded first so that down can wait
// for them too, and kill them if `up` itself has to be killed.
func down(dir string, timeout time.Duration, stdout, stderr io.Writer, log logr.Logger) error {
	pid, err := readPID(dir)
	if err != nil {
		return err
	}
	if pid == 0 || !isLocalcluster(pid) {
		// Whatever `up` left behind (it was killed, or never got to clean
		// up) points at a dead cluster.
		if err := removeFiles(dir); err != nil {
			return err
		}
		if err := localcluster.RemoveStaleRealNodes(log); err != nil {
			return fmt.Errorf("removing the real nodes of stopped clusters: %w", err)
		}
		_, _ = fmt.Fprintf(stdout, "localcluster is not running in %s\n", dir)
		return nil
	}

	procs := append([]int{pid}, childrenOf(pid)...)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("sending SIGTERM to pid %d: %w", pid, err)
	}
	if !waitGone(procs, timeout) {
		_, _ = fmt.Fprintf(stderr, "localcluster down: still running %s after SIGTERM, sending SIGKILL\n", timeout)
		for _, p := range procs {
			if alive(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
		if !waitGone(procs, 10*time.Second) {
			return fmt.Errorf("processes %v survived SIGKILL", stillAlive(procs))
		}
	}
	// `up` removes its files when it stops cleanly; not when it was killed.
	if err := removeFiles(dir); err != nil {
		return err
	}
	// A killed `up` leaves its real nodes' containers and shims, which do
	// not die with it; nothing of a cleanly stopped one is left.
	if err := localcluster.RemoveStaleRealNodes(log); err != nil {
		return fmt.Errorf("removing the real nodes of stopped clusters: %w", err)
	}
	_, _ = fmt.Fprintf(stdout, "localcluster stopped (pid %d)\n", pid)
	return nil
}

// removeFiles removes the pid file and kubeconfig `up` wrote in dir.
func removeFiles(dir string) error {
	for _, name := range []string{pidFileName, kubeconfigName} {
		if err := removeIfExists(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// waitGone polls until none of pids is alive or timeout passes.
func waitGone(pids []int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if len(stillAlive(pids)) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func stillAlive(pids []int) []int {
	var live []int
	for _, p := range pids {
		if alive(p) {
			live = append(live, p)
		}
	}
	return live
}
