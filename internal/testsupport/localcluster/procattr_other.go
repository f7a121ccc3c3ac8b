//go:build unix && !linux

package localcluster

import "syscall"

// sysProcAttr puts each child in its own process group. Parent-death signals
// exist only on Linux; elsewhere a killed test binary can leave children.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
