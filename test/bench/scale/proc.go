// Package scale measures the manager's memory and CPU at scale (issue 10):
// see bench_test.go. This file reads a process's figures from /proc.
package scale

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ, which
// Linux fixes at 100 for user space whatever the kernel's tick rate.
const userHZ = 100

// Memory is a process's resident set now and at its peak, and the part of
// the resident set that is anonymous memory (the heap, stacks) and mapped
// files (mostly the binary's code), in bytes.
type Memory struct{ RSS, HWM, Anon, File int64 }

// ReadMemory reads the resident set figures from /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	return ParseStatus(raw)
}

// ParseStatus extracts VmRSS, VmHWM, RssAnon and RssFile (kB in the file) from a
// /proc/<pid>/status text.
func ParseStatus(raw []byte) (Memory, error) {
	var m Memory
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		field := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM, "RssAnon": &m.Anon, "RssFile": &m.File}[key]
		if !ok || field == nil {
			continue
		}
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			return Memory{}, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("parsing %s: %w", key, err)
		}
		*field = kb << 10
		seen++
	}
	if seen != 4 {
		return Memory{}, fmt.Errorf("VmRSS, VmHWM, RssAnon or RssFile missing from the process status")
	}
	return m, nil
}

// ReadCPU reads the user plus system CPU time a process has used from
// /proc/<pid>/stat.
func ReadCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	return ParseStat(raw)
}

// ParseStat extracts utime+stime (fields 14 and 15) from a /proc/<pid>/stat
// line. The command name (field 2) is parenthesised and may hold spaces, so
// fields are counted from its closing parenthesis.
func ParseStat(raw []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line %q", raw)
	}
	fields := strings.Fields(string(raw[i+1:]))
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat line has %d fields after the command, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing CPU ticks %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// Mutations counts the emulator's answered requests that change cloud state:
// every action except reads (Describe*, Get*, List*, Inquiry*, Check*). The
// keys are the emulator's counters, provider/action/code; only successful
// ones ("OK") changed anything.
func Mutations(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for key, n := range after {
		parts := strings.Split(key, "/")
		if len(parts) != 3 || parts[2] != "OK" || isRead(parts[1]) {
			continue
		}
		if d := n - before[key]; d > 0 {
			out[parts[0]+"/"+parts[1]] += d
		}
	}
	return out
}

func isRead(action string) bool {
	for _, p := range []string{"Describe", "Get", "List", "Inquiry", "Check"} {
		if strings.HasPrefix(action, p) {
			return true
		}
	}
	return false
}
