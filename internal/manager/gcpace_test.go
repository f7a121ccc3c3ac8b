package manager

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, DefaultGCPercent}, // before the first collection
		// Small heaps: the goal is MinHeapGoal (64 MiB).
		{16 * mib, 300},              // 16 × 4
		{15 * mib, 327},              // 15 × 4.27 ≥ 64, rounded up
		{20 * mib, 220},              // 20 × 3.2
		{32 * mib, 100},              // 32 × 2
		{45 * mib, 43},               // 45 × 1.43 ≥ 64
		{46 * mib, DefaultGCPercent}, // 46 × 1.4 ≥ 64
		{48 * mib, 34},               // 48 × 1.34 ≥ 64, the knee: 48 + 16
		{1, int(uint64(MinHeapGoal)*100/1 - 100)}, // tiny: the goal, not an overflow
		// Past the knee the headroom stays 16 MiB, rounded down.
		{50 * mib, 32},
		{64 * mib, 25},
		{81 * mib, 19},
		{150 * mib, minGCPercent},  // the 5,000-node envelope: 10.7%
		{320 * mib, minGCPercent},  // 5%, but never below 10
		{2000 * mib, minGCPercent}, // never below
		{GCHeadroom * 100 / 20, 20},
		{GCHeadroom*100/20 + 1, 19}, // rounds down: never more headroom than GCHeadroom
		{uint64(GCHeadroom) * 100, minGCPercent},
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tc.live/mib, got, tc.want)
		}
		if got := gcPercentFor(tc.live); tc.live > 0 && tc.live < MinHeapGoal && uint64(got+100)*tc.live < MinHeapGoal*100 {
			t.Errorf("gcPercentFor(%d) = %d: goal below MinHeapGoal", tc.live, got)
		}
	}
}

func TestNextGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name    string
		current int
		live    uint64
		want    int
		changed bool
	}{
		{"unchanged", 40, 46 * mib, 40, false},
		{"a small heap gets the floor", 40, 32 * mib, 100, true},
		{"grown past the knee", 40, 80 * mib, 20, true},
		{"one point is left alone", 20, 84 * mib, 20, false}, // 19
		{"two points are not", 20, 90 * mib, 17, true},
		{"back to the default, even by one point", 39, 46 * mib, 40, true},
		{"down to the floor, even by one point", 11, 500 * mib, 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := nextGCPercent(tc.current, tc.live)
			if got != tc.want || changed != tc.changed {
				t.Errorf("nextGCPercent(%d, %d MiB) = %d, %v; want %d, %v", tc.current, tc.live/mib, got, changed, tc.want, tc.changed)
			}
		})
	}
}

// TestPaceGC: the pacing sets the GC percent the live heap calls for after
// each collection, only when it changes, and stops with its context.
func TestPaceGC(t *testing.T) {
	const mib = 1 << 20
	var mu sync.Mutex
	lives := []uint64{46 * mib, 80 * mib, 81 * mib, 46 * mib}
	reads := 0
	var set []int
	ctx, cancel := context.WithCancel(context.Background())
	gcs := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		paceGC(ctx, logr.Discard(), DefaultGCPercent, gcs, func() uint64 {
			mu.Lock()
			defer mu.Unlock()
			live := lives[min(reads, len(lives)-1)]
			reads++
			return live
		}, func(pct int) {
			mu.Lock()
			defer mu.Unlock()
			set = append(set, pct)
		})
	}()
	for range lives {
		gcs <- struct{}{} // a collection
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("paceGC did not stop with its context")
	}
	mu.Lock()
	defer mu.Unlock()
	if reads != len(lives) {
		t.Errorf("read the live heap %d times for %d collections", reads, len(lives))
	}
	if want := []int{20, DefaultGCPercent}; len(set) != len(want) || set[0] != want[0] || set[1] != want[1] {
		t.Errorf("set %v, want %v", set, want)
	}
}

// TestAfterEachGC: the channel receives after a collection, again after the
// next one, and no more once its context has ended.
func TestAfterEachGC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	gcs := afterEachGC(ctx)
	for i := range 2 {
		if !signalled(gcs, 5*time.Second) {
			t.Fatalf("no signal after collection %d", i+1)
		}
	}
	cancel()
	runtime.GC() // the armed sentinel's finalizer sees ctx done and stops
	time.Sleep(100 * time.Millisecond)
	select { // drain what was sent before the cancel
	case <-gcs:
	default:
	}
	if signalled(gcs, 300*time.Millisecond) {
		t.Error("signalled after its context ended")
	}
}

// signalled collects garbage until gcs receives, for at most wait: the
// finalizer runs in its own goroutine after the collection.
func signalled(gcs <-chan struct{}, wait time.Duration) bool {
	deadline := time.After(wait)
	for {
		runtime.GC()
		select {
		case <-gcs:
			return true
		case <-deadline:
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}
