// Package batch coalesces the reads that concurrent reconciles make of one
// cloud account into one call per window, so that read calls grow with time
// rather than with objects: a Batcher collects the items asked for under a
// key while the key's batch is open (Window after its first item, or until
// it holds Max items), runs one call for all of them and hands every caller
// the shared result, from which each picks its part.
//
// PodElasticIP lists an account's addresses and looks up pod ENIs this way,
// AnycastIPBinding its DescribeAddresses look-ups by ID, instance and tag.
package batch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Config configures a Batcher.
type Config[K comparable, I comparable, R any] struct {
	// Window is how long a batch stays open after its first item; 0 runs
	// every call at once with its own items.
	Window time.Duration
	// Max closes a batch once it holds this many items (0: no limit).
	Max int
	// Timeout bounds one run. A batch serves many callers, so it runs on a
	// context of its own rather than the first caller's (default 1 minute).
	Timeout time.Duration
	// Run makes the one call for a batch: key, and the distinct items
	// asked for, in the order they were first asked for.
	Run func(ctx context.Context, key K, items []I) (R, error)
	// Clock times the window (default: the real clock).
	Clock clock.WithDelayedExecution
	// Serial allows one run per key at a time: a batch whose window ends
	// while the key's previous run is still going stays open, collecting
	// callers, and runs when that run ends. For calls whose answers are
	// large (a listing of every address of an account): overlapping runs
	// each hold a whole answer in memory at once, and the later ones repeat
	// work the machine is already busy with. Serial batches have no Max.
	Serial bool
}

// Batcher runs one call per open batch of a key. Use New.
type Batcher[K comparable, I comparable, R any] struct {
	cfg Config[K, I, R]

	mu   sync.Mutex
	open map[K]*call[I, R]
	// running holds, with Serial, the keys whose run is in flight.
	running map[K]bool
}

// call is one batch: its items while open, its result once done.
type call[I comparable, R any] struct {
	items []I
	seen  map[I]bool
	// callers counts the Do calls that joined it.
	callers int
	// timer ends the window; stopped when the batch runs full first.
	timer clock.Timer
	// due: the window has ended, and (Serial) the batch waits for the
	// key's run in flight.
	due  bool
	done chan struct{}
	res  R
	err  error
}

// New returns a Batcher for cfg.
func New[K comparable, I comparable, R any](cfg Config[K, I, R]) *Batcher[K, I, R] {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Serial {
		cfg.Max = 0
	}
	return &Batcher[K, I, R]{cfg: cfg, open: map[K]*call[I, R]{}, running: map[K]bool{}}
}

// Do adds items to key's open batch (opening one if there is none) and
// returns the batch's result once it has run. A caller whose context ends
// first stops waiting; the batch runs for the others.
func (b *Batcher[K, I, R]) Do(ctx context.Context, key K, items ...I) (R, error) {
	if b.cfg.Window <= 0 {
		return b.cfg.Run(ctx, key, distinct(items))
	}
	b.mu.Lock()
	c := b.open[key]
	if c == nil {
		c = &call[I, R]{seen: map[I]bool{}, done: make(chan struct{})}
		b.open[key] = c
		c.timer = b.cfg.Clock.AfterFunc(b.cfg.Window, func() { b.close(key, c) })
	}
	c.callers++
	for _, it := range items {
		if !c.seen[it] {
			c.seen[it] = true
			c.items = append(c.items, it)
		}
	}
	full := b.cfg.Max > 0 && len(c.items) >= b.cfg.Max
	if full {
		delete(b.open, key)
		c.timer.Stop()
	}
	b.mu.Unlock()
	if full {
		go b.run(key, c)
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		var zero R
		return zero, fmt.Errorf("waiting for a batched call: %w", ctx.Err())
	}
}

// close runs c when its window ends, unless it already ran full or
// (Serial) the key's previous run is still going: then c stays open until
// that run ends.
func (b *Batcher[K, I, R]) close(key K, c *call[I, R]) {
	b.mu.Lock()
	if b.open[key] != c {
		b.mu.Unlock()
		return
	}
	if b.cfg.Serial && b.running[key] {
		c.due = true
		b.mu.Unlock()
		return
	}
	delete(b.open, key)
	if b.cfg.Serial {
		b.running[key] = true
	}
	b.mu.Unlock()
	// In a goroutine of its own: a clock may call close from its timer
	// loop (a fake clock does, holding its lock).
	go b.run(key, c)
}

func (b *Batcher[K, I, R]) run(key K, c *call[I, R]) {
	for c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
		c.res, c.err = b.cfg.Run(ctx, key, c.items)
		cancel()
		close(c.done)
		c = b.next(key)
	}
}

// next, with Serial, ends key's run and returns the batch whose window
// ended during it (now taken out of open, its run begun), if any.
func (b *Batcher[K, I, R]) next(key K) *call[I, R] {
	if !b.cfg.Serial {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.open[key]
	if c == nil || !c.due {
		delete(b.running, key)
		return nil
	}
	delete(b.open, key)
	return c
}

func distinct[I comparable](items []I) []I {
	seen := make(map[I]bool, len(items))
	out := items[:0:0]
	for _, it := range items {
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out
}
