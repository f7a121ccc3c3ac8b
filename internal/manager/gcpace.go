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
// MiB of resident memory that bought nothing. Past GCHeadroom·100/40 = 40
// MiB of live heap, the GC percent falls so that the headroom stays
// GCHeadroom (11% at 150 MiB), never below minGCPercent; below it nothing
// changes. The collector then runs as often as it does at 40 MiB, not less
// often, so its CPU per allocated byte grows with the live heap (docs/
// operations.md, "Go runtime defaults").
const GCHeadroom = 16 << 20

// minGCPercent is the lowest GC percent the pacing sets.
const minGCPercent = 10

// gcPaceInterval is how often the pacing reads the live heap: often enough
// to follow a full resync filling the caches.
const gcPaceInterval = 5 * time.Second

// gcPercentFor is the GC percent for a live heap of live bytes.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return DefaultGCPercent
	}
	pct := uint64(GCHeadroom) * 100 / live
	return int(max(min(pct, DefaultGCPercent), minGCPercent))
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
