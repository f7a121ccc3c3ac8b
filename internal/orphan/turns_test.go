package orphan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestTurns: the sweeps sharing Turns never overlap; one waiting for its
// turn gives up when its context ends; without Turns a sweep runs at once.
func TestTurns(t *testing.T) {
	turns := NewTurns()
	var mu sync.Mutex
	var running, most, ran int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_ = turns.take(context.Background(), func() error {
				mu.Lock()
				running++
				ran++
				most = max(most, running)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				return nil
			})
		})
	}
	wg.Wait()
	if most != 1 || ran != 4 {
		t.Errorf("%d sweeps ran, at most %d at once; want 4, 1 at once", ran, most)
	}

	release := make(chan struct{})
	held := make(chan struct{})
	go func() {
		_ = turns.take(context.Background(), func() error { close(held); <-release; return nil })
	}()
	<-held
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	waited := false
	if err := turns.take(ctx, func() error { waited = true; return nil }); !errors.Is(err, context.Canceled) || waited {
		t.Errorf("a waiter whose context ended: err %v, ran %v; want context.Canceled, not run", err, waited)
	}
	// Another process's sweeps (their own Turns, or none) do not wait.
	want := errors.New("swept")
	if err := NewTurns().take(context.Background(), func() error { return want }); !errors.Is(err, want) {
		t.Errorf("other Turns: err %v, want %v", err, want)
	}
	var none *Turns
	if err := none.take(context.Background(), func() error { return want }); !errors.Is(err, want) {
		t.Errorf("nil Turns: err %v, want %v", err, want)
	}
	close(release)
	// The turn is free again once the holder is done.
	done := make(chan error, 1)
	go func() { done <- turns.take(context.Background(), func() error { return nil }) }()
	if err := receive(t, done, "the turn given back"); err != nil {
		t.Errorf("after release: %v", err)
	}
}

// TestStartTakesTurns: two sweepers sharing Turns, started together: the
// second's first sweep waits until the first's is done (its owners listed,
// the last step of its listing).
func TestStartTakesTurns(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	turns := NewTurns()
	release := make(chan struct{})
	var firstDone atomic.Bool
	events := make(chan string, 10)
	sweepers := make([]*Sweeper, 2)
	for i, kind := range []string{"first", "second"} {
		s := newSweeper(t, kind, mixedCloud(), ModeReport, clk)
		s.cfg.Turns = turns
		list, owners := s.cfg.ListCloud, s.cfg.ListOwners
		s.cfg.ListCloud = func(ctx context.Context) ([]CloudObject, error) {
			events <- fmt.Sprintf("%s listing (first sweep done: %t)", kind, firstDone.Load())
			if kind == "first" {
				<-release
			}
			return list(ctx)
		}
		if kind == "first" {
			s.cfg.ListOwners = func(ctx context.Context) (sets.Set[types.UID], error) {
				defer firstDone.Store(true)
				return owners(ctx)
			}
		}
		sweepers[i] = s
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = sweepers[0].Start(ctx) }()
	if e := receive(t, events, "the first sweep"); e != "first listing (first sweep done: false)" {
		t.Fatalf("got %q, want the first sweeper's listing", e)
	}
	go func() { _ = sweepers[1].Start(ctx) }()
	// Give the second sweeper the chance to sweep out of turn.
	select {
	case e := <-events:
		t.Fatalf("%s while the first sweep still held its turn", e)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if e := receive(t, events, "the second sweep"); e != "second listing (first sweep done: true)" {
		t.Fatalf("got %q, want the second sweeper's listing after the first sweep", e)
	}
}
