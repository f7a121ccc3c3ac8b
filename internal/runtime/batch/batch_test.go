package batch

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// recorder is a Run that records its calls and answers with the items.
type recorder struct {
	mu    sync.Mutex
	calls [][]string
	err   error
}

func (r *recorder) run(_ context.Context, key string, items []string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, append([]string{key}, items...))
	return append([]string{key}, items...), r.err
}

func (r *recorder) got() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// waitOpen waits until the clock holds n timers (open batches).
func waitOpen(t *testing.T, c *clocktesting.FakeClock, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.Waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d open batches, want %d", c.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestBatcher(t *testing.T) {
	type ask struct {
		key   string
		items []string
	}
	cases := map[string]struct {
		window time.Duration
		max    int
		asks   []ask
		// opens is how many batches are open before the window ends.
		opens int
		want  [][]string // calls, each key then items, in any order
	}{
		"one call per window and key, items distinct in first-asked order": {
			window: time.Second, opens: 2,
			asks: []ask{{"a", []string{"1", "2"}}, {"a", []string{"2", "3"}}, {"b", []string{"9"}}, {"a", nil}},
			want: [][]string{{"a", "1", "2", "3"}, {"b", "9"}},
		},
		"a full batch runs at once, the next item opens another": {
			window: time.Second, max: 2, opens: 1,
			asks: []ask{{"a", []string{"1", "2"}}, {"a", []string{"3"}}},
			want: [][]string{{"a", "1", "2"}, {"a", "3"}},
		},
		"no window: every call on its own": {
			asks: []ask{{"a", []string{"1", "1"}}, {"a", []string{"2"}}},
			want: [][]string{{"a", "1"}, {"a", "2"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Unix(0, 0))
			rec := &recorder{}
			b := New(Config[string, string, []string]{Window: tc.window, Max: tc.max, Run: rec.run, Clock: clk})
			results := make([][]string, len(tc.asks))
			var wg sync.WaitGroup
			for i, a := range tc.asks {
				before := callers(b, a.key)
				// One after the other, so the order of items is known.
				wg.Go(func() {
					res, err := b.Do(context.Background(), a.key, a.items...)
					if err != nil {
						t.Errorf("Do(%s, %v): %v", a.key, a.items, err)
					}
					results[i] = res
				})
				if tc.window > 0 {
					waitJoined(t, b, rec, a.key, a.items, before)
				} else {
					wg.Wait()
				}
			}
			if tc.window > 0 {
				waitOpen(t, clk, tc.opens)
				if len(rec.got()) != len(tc.want)-tc.opens {
					t.Fatalf("calls before the window ended: %v", rec.got())
				}
				clk.Step(tc.window)
			}
			wg.Wait()
			got := rec.got()
			slices.SortFunc(got, slices.Compare)
			want := slices.Clone(tc.want)
			slices.SortFunc(want, slices.Compare)
			if !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("calls %v, want %v", got, want)
			}
			for i, a := range tc.asks {
				if !slices.ContainsFunc(tc.want, func(c []string) bool { return slices.Equal(c, results[i]) }) || results[i][0] != a.key {
					t.Errorf("ask %d (%s %v) got %v, not the result of its batch", i, a.key, a.items, results[i])
				}
			}
		})
	}
}

// callers returns how many callers have joined key's open batch.
func callers(b *Batcher[string, string, []string], key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.open[key]; c != nil {
		return c.callers
	}
	return 0
}

// waitJoined waits until a caller has joined key's batch since it held
// before callers, or until rec has recorded a call of key holding items
// (the batch ran full).
func waitJoined(t *testing.T, b *Batcher[string, string, []string], rec *recorder, key string, items []string, before int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if callers(b, key) > before || len(items) > 0 && slices.ContainsFunc(rec.got(), func(call []string) bool {
			return call[0] == key && !slices.ContainsFunc(items, func(it string) bool { return !slices.Contains(call[1:], it) })
		}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a caller asking %v never joined the batch of %s", items, key)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBatcherError: every caller of a batch gets its error.
func TestBatcherError(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	boom := errors.New("boom")
	rec := &recorder{err: boom}
	b := New(Config[string, string, []string]{Window: time.Second, Run: rec.run, Clock: clk})
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = b.Do(context.Background(), "k", "x") })
	}
	waitOpen(t, clk, 1)
	waitJoined(t, b, rec, "k", nil, len(errs)-1)
	clk.Step(time.Second)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d: %v, want the batch's error", i, err)
		}
	}
	if n := len(rec.got()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// TestBatcherCallerGivesUp: a caller whose context ends stops waiting with
// its context's error; the batch still runs for the others.
func TestBatcherCallerGivesUp(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	rec := &recorder{}
	b := New(Config[string, string, []string]{Window: time.Second, Run: rec.run, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := b.Do(ctx, "k", "1"); gaveUp <- err }()
	waitOpen(t, clk, 1)
	waited := make(chan []string, 1)
	go func() { res, _ := b.Do(context.Background(), "k", "2"); waited <- res }()
	waitJoined(t, b, rec, "k", nil, 1)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v, want context.Canceled", err)
	}
	clk.Step(time.Second)
	if res := <-waited; !slices.Equal(res, []string{"k", "1", "2"}) {
		t.Errorf("the other caller got %v", res)
	}
}
