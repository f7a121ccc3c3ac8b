package manager

import (
	"context"
	"io/fs"
	"runtime/debug"
	"testing"
	"time"
)

func TestRuntimeSettings(t *testing.T) {
	v2, v1 := cgroupMemoryLimitFiles[0], cgroupMemoryLimitFiles[1]
	tests := []struct {
		name         string
		env          map[string]string
		files        map[string]string
		wantGC       int
		wantMemLimit int64
	}{
		{name: "nothing set, no cgroup", wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "cgroup v2 limit", files: map[string]string{v2: "268435456\n"}, wantGC: DefaultGCPercent, wantMemLimit: 241591910},
		{name: "cgroup v2 unlimited", files: map[string]string{v2: "max\n"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "cgroup v1 limit", files: map[string]string{v1: "1073741824"}, wantGC: DefaultGCPercent, wantMemLimit: 966367641},
		{name: "cgroup v1 unlimited", files: map[string]string{v1: "9223372036854771712"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "garbage", files: map[string]string{v2: "lots"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "GOGC set wins", env: map[string]string{"GOGC": "200"}, files: map[string]string{v2: "268435456"}, wantGC: -1, wantMemLimit: 241591910},
		{name: "GOMEMLIMIT set wins", env: map[string]string{"GOMEMLIMIT": "100MiB"}, files: map[string]string{v2: "268435456"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "both set", env: map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, wantGC: -1, wantMemLimit: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			read := func(f string) ([]byte, error) {
				if s, ok := tt.files[f]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			gc, limit := runtimeSettings(getenv, read)
			if gc != tt.wantGC || limit != tt.wantMemLimit {
				t.Errorf("got GC %d, limit %d; want %d, %d", gc, limit, tt.wantGC, tt.wantMemLimit)
			}
		})
	}
}

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live uint64
		want int
	}{
		{live: 0, want: DefaultGCPercent},             // nothing read yet
		{live: 16 * mib, want: 300},                   // goal 16 × 4 = 64 MiB
		{live: 15 * mib, want: 327},                   // 15 × 4.27 ≥ 64 MiB
		{live: 32 * mib, want: 100},                   // 32 × 2
		{live: 46 * mib, want: 40},                    // 46 × 1.4 ≥ 64: GOGC 40 alone
		{live: 45 * mib, want: 43},                    // 45 × 1.43 ≥ 64
		{live: 64 * mib, want: DefaultGCPercent},      // at the goal
		{live: 500 * mib, want: DefaultGCPercent},     // at scale
		{live: 1, want: int(MinHeapGoal*100/1 - 100)}, // tiny: the goal, not an overflow
	}
	for _, tt := range tests {
		got := gcPercentFor(tt.live, DefaultGCPercent, MinHeapGoal)
		if got != tt.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", tt.live/mib, got, tt.want)
		}
		if tt.live > 0 && uint64(got+100)*tt.live < MinHeapGoal*100 {
			t.Errorf("gcPercentFor(%d) = %d: goal below MinHeapGoal", tt.live, got)
		}
	}
}

// TestTuneGC: the tuner sets the GC percent the live heap calls for, and
// stops with its context.
func TestTuneGC(t *testing.T) {
	orig := debug.SetGCPercent(DefaultGCPercent)
	t.Cleanup(func() { debug.SetGCPercent(orig) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tuneGC(ctx, DefaultGCPercent, 1<<40, 10*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Reading the percent means setting one: put back what was read.
		p := debug.SetGCPercent(DefaultGCPercent)
		debug.SetGCPercent(p)
		if p > 1000 { // a 1 TiB goal over a test binary's heap
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GC percent still %d", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("tuneGC did not stop with its context")
	}
}
