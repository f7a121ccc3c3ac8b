package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// readPID returns the pid recorded in dir, or 0 when there is no pid file.
func readPID(dir string) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, pidFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s holds %q, not a pid", filepath.Join(dir, pidFileName), data)
	}
	return pid, nil
}

// writeFileAtomic writes data so readers never see a partial file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	return nil
}

// removeIfExists removes path, ignoring a missing file.
func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}

// isLocalcluster reports whether pid is a live localcluster process. A pid
// file can outlive its process (SIGKILL, reboot) and the pid be reused, so
// the command line is checked too where /proc exists.
func isLocalcluster(pid int) bool {
	if !alive(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc (not Linux): trust the pid
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return strings.Contains(filepath.Base(string(argv0)), "localcluster")
}

// alive reports whether pid exists and is not a zombie. A zombie has exited
// but waits for its parent (the shell that ran `up`) to reap it; for `down`
// it is gone.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, statErr := os.Stat("/proc/self/stat"); statErr != nil {
			// No /proc: signal 0 tests existence.
			return syscall.Kill(pid, 0) == nil
		}
		return false
	}
	state, _, ok := procStat(stat)
	return ok && state != "Z" && state != "X"
}

// procStat extracts the state and parent pid from /proc/<pid>/stat. The
// command name (field 2) may contain spaces and parentheses, so fields are
// counted from its last ')'.
func procStat(stat []byte) (state string, ppid int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "", 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, false
	}
	return fields[0], ppid, true
}

// childrenOf lists the live direct children of pid (empty without /proc).
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var children []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if state, ppid, ok := procStat(stat); ok && ppid == pid && state != "Z" {
			children = append(children, child)
		}
	}
	return children
}
