// Package cpuuse reads the CPU time a benchmark's process and its children
// (envtest's etcd and kube-apiserver) have used, so that a benchmark can
// say where its time went.
package cpuuse

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Use is the CPU time this process (manager, emulator and benchmark
// client) and its children (envtest's etcd and kube-apiserver) have used,
// by process name ("test process" for this one), read from /proc.
type Use map[string]time.Duration

// Read returns the CPU time used so far.
func Read() Use {
	use := Use{}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		use["test process"] = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	self := os.Getpid()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The command is in parentheses and may hold spaces: fields
		// start after its closing one.
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid != self {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		// USER_HZ is 100 on every Linux the project runs on.
		use[s[open+1:closing]] += time.Duration(utime+stime) * 10 * time.Millisecond
	}
	return use
}

// Since formats the CPU used from before to u, over wall.
func (u Use) Since(before Use, wall time.Duration) string {
	var b strings.Builder
	var total time.Duration
	for _, name := range []string{"test process", "kube-apiserver", "etcd"} {
		d := u[name] - before[name]
		total += d
		fmt.Fprintf(&b, "  %-15s %6.2fs CPU\n", name, d.Seconds())
	}
	fmt.Fprintf(&b, "  %-15s %6.2fs CPU in %.2fs (%.2f cores)\n", "total", total.Seconds(), wall.Seconds(), total.Seconds()/wall.Seconds())
	return b.String()
}

// Load1 is the machine's 1-minute load average (NaN if unreadable): a
// benchmark reports it beside its times, which are only comparable at
// similar loads.
func Load1() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	fields := strings.Fields(string(raw))
	if len(fields) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
