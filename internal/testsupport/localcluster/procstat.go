package localcluster

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processStartTime reads field 22 of /proc/<pid>/stat: when the process
// started, in clock ticks since boot. With the pid it names a process
// uniquely.
func processStartTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the start time of pid %d: %w", pid, err)
	}
	return parseStartTime(string(data))
}

// parseStartTime extracts the start time from a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from its last ')'.
func parseStartTime(stat string) (uint64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("malformed /proc stat %q", stat)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// liveStartTime is processStartTime for ownerGone: false when the process
// does not exist or is a zombie, which has exited.
func liveStartTime(pid int) (uint64, bool) {
	state, start, ok := procStatus(pid)
	return start, ok && state != "Z" && state != "X"
}

// procStatus reads a process's state and start time; ok is false when it
// does not exist (any more).
func procStatus(pid int) (state string, start uint64, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	start, err = parseStartTime(string(data))
	if len(f) == 0 || err != nil {
		return "", 0, false
	}
	return f[0], start, true
}
