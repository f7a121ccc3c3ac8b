package manager

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// DefaultGCPercent is the manager's GOGC unless the environment sets one.
// Almost all of the manager's heap is its informer caches, long-lived and
// growing only with the cluster; with Go's default (100) the heap may reach
// twice the caches before a collection. 40 bounds it at 1.4 times for a
// little more collector CPU during a full resync, and next to none when
// idle (see docs/operations.md, "Figures at scale").
const DefaultGCPercent = 40

// MinHeapGoal is the heap the collector lets the manager reach before a
// collection however small its live heap, while GOGC is the manager's
// (unset in the environment). With caches of 15 MiB (a small cluster) GOGC 40
// alone collected after every 6 MiB allocated: in a wave of 2,000 pods, each
// admitted by the pod webhook and scheduled through the float-IP extender,
// the collector took over a quarter of the manager's CPU, and slowed the
// webhook every pod creation waits for. From 46 MiB of live heap up
// (46 × 1.4 ≈ 64) DefaultGCPercent alone decides, as before, so the memory
// figures at scale do not change.
const MinHeapGoal = 64 << 20

// gcTuneInterval is how often the GC percent follows the live heap.
const gcTuneInterval = time.Second

// memoryLimitShare is the part of the container's memory limit the Go
// runtime aims to stay under (GOMEMLIMIT), leaving room for non-heap memory.
const memoryLimitShare = 0.9

// cgroup files holding the container's memory limit: v2, then v1.
var cgroupMemoryLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// runtimeSettings decides the GC percent and soft memory limit to apply:
// GOGC and GOMEMLIMIT from the environment win (0 / -1 mean "leave as is");
// otherwise DefaultGCPercent, and memoryLimitShare of the first cgroup
// memory limit found (none when unlimited or unreadable).
func runtimeSettings(getenv func(string) string, readFile func(string) ([]byte, error)) (gcPercent int, memLimit int64) {
	gcPercent, memLimit = -1, -1
	if getenv("GOGC") == "" {
		gcPercent = DefaultGCPercent
	}
	if getenv("GOMEMLIMIT") != "" {
		return gcPercent, memLimit
	}
	for _, f := range cgroupMemoryLimitFiles {
		raw, err := readFile(f)
		if err != nil {
			continue
		}
		limit, ok := parseCgroupLimit(string(raw))
		if ok {
			memLimit = int64(float64(limit) * memoryLimitShare)
		}
		break
	}
	return gcPercent, memLimit
}

// parseCgroupLimit reads a cgroup memory limit: "max" (v2) or a very large
// number (v1's unlimited) mean no limit.
func parseCgroupLimit(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0, false
	}
	return n, true
}

// gcPercentFor is the GC percent that gives a live heap of live bytes a
// goal (the heap at which the next collection starts) of at least minGoal,
// and never less than base.
func gcPercentFor(live uint64, base int, minGoal uint64) int {
	if live == 0 || live >= minGoal {
		return base
	}
	need := (minGoal*100+live-1)/live - 100 // rounded up
	return max(base, int(need))
}

// tuneGC keeps the GC percent at gcPercentFor(the live heap) until ctx
// ends, looking every interval.
func tuneGC(ctx context.Context, base int, minGoal uint64, interval time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := base
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			if p := gcPercentFor(sample[0].Value.Uint64(), base, minGoal); p != current {
				debug.SetGCPercent(p)
				current = p
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// applyRuntimeSettings sets the GC percent and soft memory limit that
// runtimeSettings decides for this process, and logs what it changed. A GC
// percent of its own follows the live heap (MinHeapGoal) until ctx ends.
func applyRuntimeSettings(ctx context.Context, log logr.Logger) {
	gcPercent, memLimit := runtimeSettings(os.Getenv, os.ReadFile)
	if gcPercent >= 0 {
		debug.SetGCPercent(gcPercent)
		log.Info("Set the Go GC percent (GOGC unset)", "gcPercent", gcPercent, "minHeapGoal", MinHeapGoal)
		go tuneGC(ctx, gcPercent, MinHeapGoal, gcTuneInterval)
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
		log.Info("Set the Go soft memory limit from the container's memory limit (GOMEMLIMIT unset)", "bytes", memLimit)
	}
}
