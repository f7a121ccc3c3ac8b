//go:build linux

package localcluster

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOwnerNames(t *testing.T) {
	name := ownerName(4242, 987654, 3)
	pid, start, ok := parseOwner(name)
	if !ok || pid != 4242 || start != 987654 {
		t.Errorf("parseOwner(%q) = %d, %d, %v; want 4242, 987654, true", name, pid, start, ok)
	}
	for _, bad := range []string{"", "daemons", "real-1", "12-34", "x-1-2", "0-1-2", "1-2-3-4", "1-x-2", "1-2-x"} {
		if _, _, ok := parseOwner(bad); ok {
			t.Errorf("parseOwner(%q) accepted a name ownerName never writes", bad)
		}
	}
}

func TestOwnerGone(t *testing.T) {
	live := map[int]uint64{100: 5000}
	startTime := func(pid int) (uint64, bool) {
		s, ok := live[pid]
		return s, ok
	}
	for _, tt := range []struct {
		name string
		want bool
	}{
		{ownerName(100, 5000, 1), false}, // the owner runs
		{ownerName(100, 4000, 1), true},  // the pid was reused by a later process
		{ownerName(200, 5000, 1), true},  // the owner is gone
		{"not-ours", false},              // never removed: not written by this package
	} {
		if got := ownerGone(tt.name, startTime); got != tt.want {
			t.Errorf("ownerGone(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseStartTime(t *testing.T) {
	// A command name with spaces and parentheses; start time is field 22.
	stat := "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 778899 1000 10 18446744073709551615"
	got, err := parseStartTime(stat)
	if err != nil || got != 778899 {
		t.Errorf("parseStartTime = %d, %v; want 778899", got, err)
	}
	if _, err := parseStartTime("1234 (x) S 1 2"); err == nil {
		t.Error("parseStartTime accepted a truncated line")
	}
	if _, err := parseStartTime("garbage"); err == nil {
		t.Error("parseStartTime accepted a line without a command name")
	}
	// This process's own line parses.
	if _, err := processStartTime(1); err != nil {
		t.Errorf("processStartTime(1): %v", err)
	}
}

func TestCgroupHierarchies(t *testing.T) {
	mountinfo := `24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
28 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
29 28 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw
30 28 0:28 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd
33 28 0:31 / /sys/fs/cgroup/freezer rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,freezer
34 28 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,cpu,cpuacct
35 28 0:33 / /sys/fs/cgroup/odd\040name rw - cgroup cgroup rw,pids
36 30 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
`
	want := []string{"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/freezer", "/sys/fs/cgroup/odd name", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified"}
	if diff := cmp.Diff(want, cgroupHierarchies(mountinfo)); diff != "" {
		t.Errorf("cgroupHierarchies (-want +got):\n%s", diff)
	}
}

func TestTunableMasks(t *testing.T) {
	machine := map[string]int{"vm/overcommit_memory": 0, "kernel/panic": 10, "kernel/panic_on_oops": 0}
	read := func(name string) (int, error) {
		v, ok := machine[name]
		if !ok {
			return 0, errors.New("no such setting")
		}
		return v, nil
	}
	want := map[string]int{"vm/overcommit_memory": 1, "kernel/panic": 10, "kernel/panic_on_oops": 1}
	masks, err := tunableMasks(want, read)
	if err != nil {
		t.Fatal(err)
	}
	// Only the settings that differ are masked.
	if diff := cmp.Diff(map[string]int{"vm/overcommit_memory": 1, "kernel/panic_on_oops": 1}, masks); diff != "" {
		t.Errorf("masks (-want +got):\n%s", diff)
	}
	if _, err := tunableMasks(map[string]int{"vm/missing": 1}, read); err == nil {
		t.Error("an unreadable setting was not reported")
	}
}
