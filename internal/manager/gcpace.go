package manager

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/go-logr/logr"
)

// GCHeadroom is the most the heap may grow between two collections once
// the caches are large. DefaultGCPercent's headroom grows with the caches
// (40% of them), but what the manager allocates between collections (a
// burst of events, reconciles, cloud listings) does not grow with the
// cluster: at 5,000 nodes and 50,000 pods 40% of the caches was about 60
// MiB of resident memory that bought nothing, and at 3,000 nodes a
// headroom of 32 MiB still left the idle manager at 214 MiB, on course for
// about 290 at 5,000. Past MinHeapGoal − GCHeadroom = 48 MiB of live heap
// the next collection starts GCHeadroom above the live heap (11% at 150
// MiB), never below minGCPercent. The collector then runs as often as it
// does at 48 MiB, not less often, so its CPU per allocated byte grows with
// the live heap (docs/operations.md, "Go runtime defaults").
const GCHeadroom = 16 << 20

// MinHeapGoal is the heap the collector lets the manager reach before a
// collection however small its live heap. With caches of 15 MiB (a small
// cluster) GOGC 40 alone collected after every 6 MiB allocated: in a wave
// of 2,000 pods, each admitted by the pod webhook and scheduled through the
// float-IP extender, the collector took over a quarter of the manager's
// CPU, and slowed the webhook every pod creation waits for. Below 48 MiB of
// live heap the next collection starts at MinHeapGoal. The figures at
// scale (hundreds of MiB live) are not touched by the floor.
const MinHeapGoal = 64 << 20

// minGCPercent is the lowest GC percent the pacing sets.
const minGCPercent = 10

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
		// The floor wins where the two meet (about 48 MiB): rounded up.
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

// paceGC sets the GC percent from the live heap after every collection
// (a receive from gcs) until ctx ends, starting from current. After each
// collection, not every second: the live heap changes only then, and a
// percent set for a small live heap applies to the next one at once. A
// restarted manager's caches fill within a second or two (10,000 pods
// streamed at 1,000 nodes): the floor's 274% set at 15 MiB live, left for a
// second, let the heap grow to 3.74 times the 40 MiB the next collection
// found, and the resync's resident memory peaked 30 to 70 MiB above the idle
// one.
func paceGC(ctx context.Context, log logr.Logger, current int, gcs <-chan struct{}, liveHeap func() uint64, set func(int)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-gcs:
		}
		live := liveHeap()
		if next, ok := nextGCPercent(current, live); ok {
			set(next)
			log.V(1).Info("Set the Go GC percent for the live heap", "gcPercent", next, "liveHeapBytes", live)
			current = next
		}
	}
}

// afterEachGC returns a channel that receives after every garbage
// collection until ctx ends (one pending signal at most: the runtime never
// waits on it). A sentinel object's finalizer signals and arms a new
// sentinel: it runs once the collection that found the sentinel unreachable
// has ended, when /gc/heap/live:bytes already holds that collection's figure.
func afterEachGC(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
			if ctx.Err() != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
			arm()
		})
	}
	arm()
	return ch
}

// gcSentinel holds a pointer so that it is never a tiny allocation, which
// shares its memory block with others and may never be finalized.
type gcSentinel struct {
	_ *byte
	_ [8]byte
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
