package manager

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-logr/logr"
)

// GCHeadroom is the most the heap may grow between two collections once
// the caches are large. DefaultGCPercent's headroom grows with the caches
// (40% of them), but what the manager allocates between collections (a
// burst of events, reconciles, cloud listings) does not grow with the
// cluster: at 5,000 nodes and 50,000 pods 40% of the caches was about 60
// MiB of resident memory that bought nothing, and at 3,000 nodes a
// headroom of 32 MiB still left the idle manager at 214 MiB, on course for
// about 290 at 5,000. Past MinHeapGoal − GCHeadroom = 40 MiB of live heap
// the next collection starts GCHeadroom above the live heap (11% at 150
// MiB), never below minGCPercent. The collector then runs as often as it
// does at 40 MiB, not less often, so its CPU per allocated byte grows with
// the live heap (docs/operations.md, "Go runtime defaults").
const GCHeadroom = 16 << 20

// MinHeapGoal is the heap the collector lets the manager reach before a
// collection however small its live heap. With caches of 15 MiB (a small
// cluster) GOGC 40 alone collected after every 6 MiB allocated: in a wave
// of 2,000 pods, each admitted by the pod webhook and scheduled through the
// float-IP extender, the collector took over a quarter of the manager's
// CPU, and slowed the webhook every pod creation waits for. Below 40 MiB of
// live heap the next collection starts at MinHeapGoal (after 41 MiB
// allocated at 15 MiB live). It was 64 MiB: at 1,000 nodes and 10,000 pods
// the live heap is about 40 MiB, so that floor, not the headroom, set the
// goal, and 24 MiB of garbage sat in the resident set of the idle and the
// resyncing manager; 56 MiB is where the floor meets live + GCHeadroom and
// DefaultGCPercent (40 MiB × 1.4). The figures at scale (hundreds of MiB
// live) are not touched by the floor.
const MinHeapGoal = 56 << 20

// minGCPercent is the lowest GC percent the pacing sets.
const minGCPercent = 10

// gcPaceInterval is how often the pacing reads the live heap: often enough
// to follow a full resync filling the caches, or a wave of pods.
const gcPaceInterval = time.Second

// gcPercentFor is the GC percent for a live heap of live bytes: the one
// whose goal is the larger of MinHeapGoal and the smaller of
// DefaultGCPercent's goal and live + GCHeadroom. Rounded so that the goal
// is never below MinHeapGoal, and past it the headroom never above
// GCHeadroom.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return DefaultGCPercent // before the first collection
	}
	pct := int(max(min(GCHeadroom*100/live, DefaultGCPercent), minGCPercent)) // rounded down
	if live < MinHeapGoal {
		// The floor wins where the two meet (40 MiB): rounded up.
		pct = max(pct, int((uint64(MinHeapGoal)*100+live-1)/live-100))
	}
	return pct
}

// nextGCPercent is what to set after current, for a live heap of live
// bytes: a change of one point is left alone, so that a live heap going
// up and down a little does not flip it back and forth.
func nextGCPercent(current int, live uint64) (int, bool) {
	want := gcPercentFor(live)
	if d := want - current; d >= -1 && d <= 1 && want != DefaultGCPercent && want != minGCPercent {
		return current, false
	}
	return want, want != current
}

// paceGC sets the GC percent from the live heap every interval until ctx
// ends, starting from current.
func paceGC(ctx context.Context, log logr.Logger, current int, interval time.Duration, liveHeap func() uint64, set func(int)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		live := liveHeap()
		if next, ok := nextGCPercent(current, live); ok {
			set(next)
			log.V(1).Info("Set the Go GC percent for the live heap", "gcPercent", next, "liveHeapBytes", live)
			current = next
		}
	}
}

// liveHeap reads the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func setGCPercent(pct int) { debug.SetGCPercent(pct) }
