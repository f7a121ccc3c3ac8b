//go:build linux

package localcluster

import "syscall"

// sysProcAttr puts each child in its own process group, so a Ctrl-C in the
// terminal reaches only the supervisor (which then stops the children in
// order), and asks the kernel to SIGKILL the child when its parent dies, so a
// killed test binary leaves nothing behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
