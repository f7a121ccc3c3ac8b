// Command pause is the pod sandbox's process in the images the real-node
// tests load (the pause image): it holds the pod's namespaces by doing
// nothing until SIGTERM or SIGINT, then exits 0. As PID 1 of a pod that
// shares its process namespace it is also the parent of every orphaned
// process there, so it reaps them: without that they would stay zombies
// until the pod ends. It is the Go counterpart of Kubernetes' pause.c, a
// static binary with no libc.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Buffered: SIGCHLDs arriving while it reaps coalesce into one, and
	// every reap collects all exited children.
	signals := make(chan os.Signal, 4)
	// Notify installs handlers, which PID 1 needs: the kernel drops a
	// signal sent to a namespace's init that has no handler for it.
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	got := run(signals, reapChildren)
	fmt.Fprintf(os.Stderr, "pause: shutting down, got %v\n", got)
}

// run waits on signals, calling reap for every SIGCHLD, and returns the
// first signal that is not SIGCHLD (SIGTERM or SIGINT: the only others
// Notify delivers).
func run(signals <-chan os.Signal, reap func()) os.Signal {
	for s := range signals {
		if s != syscall.SIGCHLD {
			return s
		}
		reap()
	}
	return nil
}

// reapChildren collects every child that has exited, without blocking on
// those still running.
func reapChildren() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		// 0: children remain, none exited; ECHILD: no children at all.
		if pid <= 0 || err != nil {
			return
		}
	}
}
