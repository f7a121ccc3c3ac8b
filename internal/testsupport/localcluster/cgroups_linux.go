//go:build linux

package localcluster

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// Every process of a cluster's real nodes (the namespace holders,
// containerd, its shims, kubelet, kube-proxy) and every container their
// kubelets start lives in one cgroup subtree per cluster:
//
//	/sys/fs/cgroup/<hierarchy>/edgeplane-localcluster/<owner>/
//
// The daemons are moved into <owner>/daemons of the freezer hierarchy as
// they start (a shim forked by containerd inherits that); each kubelet's
// --cgroup-root is <owner>/<node>, so its pods are there in every
// hierarchy. Tearing a cluster down is then: freeze the subtree, kill every
// process in it, thaw, remove the directories. <owner> names the process
// that started the cluster and its start time, so a later start can tell a
// crashed cluster's leftovers (owner gone) from a running cluster's and
// remove them: containers and shims outlive a killed test binary, the
// parent-death signal reaches only its direct children.
const (
	cgroupRoot    = "/sys/fs/cgroup"
	cgroupParent  = "edgeplane-localcluster"
	cgroupDaemons = "daemons"
	// trackingHierarchy is the cgroup v1 hierarchy that holds the daemons
	// and can freeze the whole subtree.
	trackingHierarchy = "freezer"
)

// ownerSeq tells apart several clusters started by one process.
var ownerSeq atomic.Int64

// cgroupTree is one cluster's subtree, named relative to each hierarchy's
// root: edgeplane-localcluster/<owner>.
type cgroupTree struct {
	rel string
}

// newCgroupTree names the subtree of a cluster this process starts now.
func newCgroupTree() (cgroupTree, error) {
	start, err := processStartTime(os.Getpid())
	if err != nil {
		return cgroupTree{}, err
	}
	return cgroupTree{rel: filepath.Join(cgroupParent, ownerName(os.Getpid(), start, int(ownerSeq.Add(1))))}, nil
}

// ownerName is <pid>-<start time in clock ticks since boot>-<seq>.
func ownerName(pid int, start uint64, seq int) string {
	return fmt.Sprintf("%d-%d-%d", pid, start, seq)
}

// parseOwner reverses ownerName.
func parseOwner(name string) (pid int, start uint64, ok bool) {
	parts := strings.Split(name, "-")
	if len(parts) != 3 {
		return 0, 0, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 {
		return 0, 0, false
	}
	start, err = strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if _, err := strconv.Atoi(parts[2]); err != nil {
		return 0, 0, false
	}
	return pid, start, true
}

// ownerGone decides whether the subtree named name belongs to a process
// that no longer runs: its pid is gone or now belongs to a process that
// started at another time. startTime reports a live process's start time.
// A name this package did not write is never "gone": it is not ours.
func ownerGone(name string, startTime func(pid int) (uint64, bool)) bool {
	pid, start, ok := parseOwner(name)
	if !ok {
		return false
	}
	got, alive := startTime(pid)
	return !alive || got != start
}

// cgroupHierarchies lists the mount points of the cgroup file systems
// (cgroup v1 hierarchies and a cgroup v2 tree) in a /proc/self/mountinfo.
func cgroupHierarchies(mountinfo string) []string {
	var points []string
	for line := range strings.Lines(mountinfo) {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields, fsFields := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(fsFields) < 1 {
			continue
		}
		if fsFields[0] == "cgroup" || fsFields[0] == "cgroup2" {
			points = append(points, unescapeMountPath(fields[4]))
		}
	}
	slices.Sort(points)
	return slices.Compact(points)
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hierarchies lists this machine's cgroup mount points, failing when there
// is no cgroup v1 freezer hierarchy to track and freeze the processes with.
func hierarchies() ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("listing cgroup hierarchies: %w", err)
	}
	points := cgroupHierarchies(string(data))
	if !slices.Contains(points, filepath.Join(cgroupRoot, trackingHierarchy)) {
		return nil, fmt.Errorf("real nodes need the cgroup v1 %s hierarchy at %s (found cgroup mounts %v)",
			trackingHierarchy, filepath.Join(cgroupRoot, trackingHierarchy), points)
	}
	return points, nil
}

// create makes the subtree, with one child per node (each kubelet's
// --cgroup-root) and the daemons' cgroup, in every hierarchy: the kubelet
// refuses a cgroup root missing from any hierarchy it uses.
func (t cgroupTree) create(nodes []string) error {
	points, err := hierarchies()
	if err != nil {
		return err
	}
	for _, h := range points {
		for _, child := range append([]string{cgroupDaemons}, nodes...) {
			if err := mkdirCgroup(h, filepath.Join(t.rel, child)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mkdirCgroup creates rel under the hierarchy h one level at a time. In the
// cpuset hierarchy a new cgroup starts with no CPUs and no memory nodes,
// which no process may join: each level copies its parent's.
func mkdirCgroup(h, rel string) error {
	dir := h
	for part := range strings.SplitSeq(rel, string(filepath.Separator)) {
		parent := dir
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(parent, f))
			if err != nil {
				continue // not the cpuset hierarchy
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("initialising %s of cgroup %s: %w", f, dir, err)
			}
		}
	}
	return nil
}

// kubeletRoot is a node's --cgroup-root, as the kubelet writes it.
func (t cgroupTree) kubeletRoot(node string) string { return "/" + filepath.Join(t.rel, node) }

// track moves pid into the daemons' cgroup, so teardown finds it and
// everything it forks.
func (t cgroupTree) track(pid int) error {
	procs := filepath.Join(cgroupRoot, trackingHierarchy, t.rel, cgroupDaemons, "cgroup.procs")
	if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("moving pid %d into %s: %w", pid, procs, err)
	}
	return nil
}

// remove kills every process left in the subtree and removes its cgroups
// in every hierarchy; a missing subtree is not an error.
func (t cgroupTree) remove(log logr.Logger) error {
	points, err := hierarchies()
	if err != nil {
		return err
	}
	tracking := filepath.Join(cgroupRoot, trackingHierarchy, t.rel)
	if _, err := os.Stat(tracking); err == nil {
		if err := killCgroupTree(tracking, log); err != nil {
			return err
		}
	}
	var errs []error
	for _, h := range points {
		if err := rmdirTree(filepath.Join(h, t.rel)); err != nil {
			errs = append(errs, err)
		}
		// The shared parent goes once the last cluster's subtree has.
		_ = syscall.Rmdir(filepath.Join(h, cgroupParent))
	}
	return errors.Join(errs...)
}

// killCgroupTree freezes the freezer cgroup dir (so nothing forks while
// the processes are collected), SIGKILLs every process in it and below,
// thaws it, and waits until all are gone.
func killCgroupTree(dir string, log logr.Logger) error {
	state := filepath.Join(dir, "freezer.state")
	if err := os.WriteFile(state, []byte("FROZEN"), 0o644); err != nil {
		return fmt.Errorf("freezing %s: %w", dir, err)
	}
	// A process in uninterruptible sleep delays the freeze; it is killed
	// all the same, SIGKILL is delivered on thawing.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(state)
		if err != nil || strings.TrimSpace(string(b)) == "FROZEN" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pids, err := cgroupProcs(dir)
	if err != nil {
		return err
	}
	started := map[int]uint64{}
	for _, pid := range pids {
		if _, start, ok := procStatus(pid); ok {
			started[pid] = start
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			log.Info("cannot kill a process of the real nodes", "pid", pid, "error", err)
		}
	}
	if err := os.WriteFile(state, []byte("THAWED"), 0o644); err != nil {
		return fmt.Errorf("thawing %s: %w", dir, err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		left, err := cgroupProcs(dir)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v in %s survived SIGKILL", left, dir)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A killed process leaves its cgroup at once but stays a zombie until
	// its parent (a killed shim's orphans: the machine's init) reaps it.
	for {
		var unreaped []int
		for pid, start := range started {
			if _, now, ok := procStatus(pid); ok && now == start {
				unreaped = append(unreaped, pid)
			} else {
				delete(started, pid)
			}
		}
		if len(unreaped) == 0 {
			if len(pids) > 0 {
				log.Info("killed the real nodes' remaining processes", "cgroup", dir, "count", len(pids))
			}
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("killed processes %v of %s were not reaped by their parents", unreaped, dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cgroupProcs lists the processes in dir and every cgroup below it.
func cgroupProcs(dir string) ([]int, error) {
	var pids []int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		f, err := os.Open(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
				pids = append(pids, pid)
			}
		}
		return sc.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing the processes in %s: %w", dir, err)
	}
	return pids, nil
}

// rmdirTree removes the empty cgroups at and below dir, deepest first. A
// cgroup's control files vanish with it; only directories are removed.
func rmdirTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("listing cgroups under %s: %w", dir, err)
	}
	var errs []error
	for _, d := range slices.Backward(dirs) {
		// The kernel may still be tearing down a cgroup whose last
		// process just died (EBUSY): retry briefly.
		var err error
		for range 50 {
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// RemoveStaleRealNodes kills what the real nodes of crashed clusters left
// on this machine (their containers and containerd shims, which outlive a
// killed cluster process, and with them the nodes' network and mount
// namespaces) and removes their cgroups. Clusters whose process still runs
// are left alone. Start calls it before starting real nodes; `localcluster
// down` calls it after stopping a cluster it had to kill.
func RemoveStaleRealNodes(log logr.Logger) error {
	points, err := hierarchies()
	if err != nil {
		return err
	}
	owners := map[string]bool{}
	for _, h := range points {
		entries, err := os.ReadDir(filepath.Join(h, cgroupParent))
		if err != nil {
			continue // no local cluster ever ran real nodes here
		}
		for _, e := range entries {
			if e.IsDir() {
				owners[e.Name()] = true
			}
		}
	}
	var errs []error
	for owner := range owners {
		if !ownerGone(owner, liveStartTime) {
			continue
		}
		log.Info("removing a crashed local cluster's real nodes", "owner", owner)
		if err := (cgroupTree{rel: filepath.Join(cgroupParent, owner)}).remove(log); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
