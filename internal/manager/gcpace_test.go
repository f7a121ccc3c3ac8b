package manager

import (
	"context"
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
		{0, DefaultGCPercent},        // before the first collection
		{20 * mib, DefaultGCPercent}, // small: 40% is 8 MiB
		{40 * mib, DefaultGCPercent}, // 40% is exactly the headroom
		{41 * mib, 39},               // past it the headroom stays 16 MiB
		{150 * mib, 10},              // the 5,000-node envelope: 10.7%
		{100 * mib, 16},
		{2000 * mib, minGCPercent},  // never below
		{GCHeadroom * 100 / 25, 25}, // exact
		{GCHeadroom*100/25 + 1, 24}, // rounds down: never more headroom than GCHeadroom
	} {
		if got := gcPercentFor(tc.live); got != tc.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tc.live/mib, got, tc.want)
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
		{"unchanged", 40, 10 * mib, 40, false},
		{"grown past the knee", 40, 80 * mib, 20, true},
		{"one point is left alone", 20, 84 * mib, 20, false}, // 19
		{"two points are not", 20, 90 * mib, 17, true},
		{"back to the default, even by one point", 39, 30 * mib, 40, true},
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

// TestPaceGC: the pacing sets the GC percent the live heap calls for, only
// when it changes, and stops with its context.
func TestPaceGC(t *testing.T) {
	const mib = 1 << 20
	var mu sync.Mutex
	lives := []uint64{10 * mib, 80 * mib, 81 * mib, 30 * mib}
	reads := 0
	var set []int
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		paceGC(ctx, logr.Discard(), DefaultGCPercent, time.Millisecond, func() uint64 {
			mu.Lock()
			defer mu.Unlock()
			live := lives[min(reads, len(lives)-1)]
			reads++
			if reads == 2*len(lives) {
				cancel()
			}
			return live
		}, func(pct int) {
			mu.Lock()
			defer mu.Unlock()
			set = append(set, pct)
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("paceGC did not stop with its context")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{20, DefaultGCPercent}; len(set) != len(want) || set[0] != want[0] || set[1] != want[1] {
		t.Errorf("set %v, want %v", set, want)
	}
}
