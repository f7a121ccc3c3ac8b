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
}

// Batcher runs one call per open batch of a key. Use New.
type Batcher[K comparable, I comparable, R any] struct {
	cfg Config[K, I, R]

	mu   sync.Mutex
	open map[K]*call[I, R]
}

// call is one batch: its items while open, its result once done.
type call[I comparable, R any] struct {
	items []I
	seen  map[I]bool
	// callers counts the Do calls that joined it.
	callers int
	// timer ends the window; stopped when the batch runs full first.
	timer clock.Timer
	done  chan struct{}
	res   R
	err   error
}

// New returns a Batcher for cfg.
func New[K comparable, I comparable, R any](cfg Config[K, I, R]) *Batcher[K, I, R] {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Batcher[K, I, R]{cfg: cfg, open: map[K]*call[I, R]{}}
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

// close runs c when its window ends, unless it already ran full.
func (b *Batcher[K, I, R]) close(key K, c *call[I, R]) {
	b.mu.Lock()
	if b.open[key] != c {
		b.mu.Unlock()
		return
	}
	delete(b.open, key)
	b.mu.Unlock()
	b.run(key, c)
}

func (b *Batcher[K, I, R]) run(key K, c *call[I, R]) {
	defer close(c.done)
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Timeout)
	defer cancel()
	c.res, c.err = b.cfg.Run(ctx, key, c.items)
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
