package manager

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// DefaultGCPercent is the manager's GOGC unless the environment sets one.
// Almost all of the manager's heap is its informer caches, long-lived and
// growing only with the cluster; with Go's default (100) the heap may reach
// twice the caches before a collection. 40 bounds it at 1.4 times for a
// little more collector CPU during a full resync, and next to none when
// idle (see docs/operations.md, "Figures at scale").
const DefaultGCPercent = 40

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

// applyRuntimeSettings sets the GC percent and soft memory limit that
// runtimeSettings decides for this process, and logs what it changed. With
// GOGC unset, the GC percent then follows the live heap (gcpace.go) until
// ctx ends.
func applyRuntimeSettings(ctx context.Context, log logr.Logger) {
	gcPercent, memLimit := runtimeSettings(os.Getenv, os.ReadFile)
	if gcPercent >= 0 {
		debug.SetGCPercent(gcPercent)
		log.Info("Set the Go GC percent (GOGC unset); it follows the live heap", "gcPercent", gcPercent, "minHeapGoalBytes", MinHeapGoal, "headroomBytes", GCHeadroom)
		go paceGC(ctx, log, gcPercent, afterEachGC(ctx), liveHeap, setGCPercent)
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
		log.Info("Set the Go soft memory limit from the container's memory limit (GOMEMLIMIT unset)", "bytes", memLimit)
	}
}
