package clientcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

type client struct{ name string }

// configs stands for provider configs: resolving one counts a read.
type configs struct {
	reads   atomic.Int32
	builds  atomic.Int32
	keys    map[string]string // config -> credentials
	release chan struct{}     // holds each read until closed (nil: none)
	err     error
}

func (f *configs) resolve(key string) func(context.Context) (Account[*client], error) {
	return func(ctx context.Context) (Account[*client], error) {
		f.reads.Add(1)
		if f.release != nil {
			select {
			case <-f.release:
			case <-ctx.Done():
				return Account[*client]{}, ctx.Err()
			}
		}
		if f.err != nil {
			return Account[*client]{}, f.err
		}
		creds := f.keys[key]
		return Account[*client]{Fingerprint: Fingerprint("endpoint", creds), New: func(context.Context) (*client, error) {
			f.builds.Add(1)
			return &client{name: creds}, nil
		}}, nil
	}
}

// TestSharedResolution: concurrent Gets of one config read it once and get
// one client.
func TestSharedResolution(t *testing.T) {
	f := &configs{keys: map[string]string{"a": "k1"}, release: make(chan struct{})}
	c := New[*client](Config{ConfigTTL: time.Minute})
	const callers = 8
	got := make([]*client, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			var err error
			if got[i], err = c.Get(context.Background(), "a", f.resolve("a")); err != nil {
				t.Error(err)
			}
		})
	}
	for f.reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the others find the resolution under way
	close(f.release)
	wg.Wait()
	for i := range callers {
		if got[i] != got[0] {
			t.Errorf("caller %d got another client", i)
		}
	}
	if n := f.reads.Load(); n != 1 {
		t.Errorf("config read %d times, want once", n)
	}
}

// TestTTLAndFingerprint: a config is read again after ConfigTTL; an
// unchanged one keeps its client, changed keys get a new one; errors are
// not remembered.
func TestTTLAndFingerprint(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	f := &configs{keys: map[string]string{"a": "k1", "b": "k1"}}
	c := New[*client](Config{ConfigTTL: 10 * time.Second, Clock: clk})
	ctx := context.Background()
	first, _ := c.Get(ctx, "a", f.resolve("a"))
	if again, _ := c.Get(ctx, "a", f.resolve("a")); again != first || f.reads.Load() != 1 {
		t.Errorf("a second Get within the TTL read the config (%d reads) or got another client", f.reads.Load())
	}
	// Another config of the same account shares the client.
	if other, _ := c.Get(ctx, "b", f.resolve("b")); other != first || f.builds.Load() != 1 {
		t.Errorf("a config with the same fingerprint got another client (%d built)", f.builds.Load())
	}
	clk.SetTime(clk.Now().Add(11 * time.Second))
	if again, _ := c.Get(ctx, "a", f.resolve("a")); again != first || f.reads.Load() != 3 {
		t.Errorf("after the TTL: %d reads, same client %v; want the config read again and the same client", f.reads.Load(), again == first)
	}
	f.keys["a"] = "k2"
	clk.SetTime(clk.Now().Add(11 * time.Second))
	if rotated, _ := c.Get(ctx, "a", f.resolve("a")); rotated == first || rotated.name != "k2" {
		t.Errorf("rotated keys kept the old client")
	}
	clk.SetTime(clk.Now().Add(11 * time.Second))
	f.err = errors.New("secret missing")
	if _, err := c.Get(ctx, "a", f.resolve("a")); !errors.Is(err, f.err) {
		t.Errorf("Get = %v, want the resolution's error", err)
	}
	f.err = nil
	if _, err := c.Get(ctx, "a", f.resolve("a")); err != nil {
		t.Errorf("the error was remembered: %v", err)
	}
}

// TestIdleClientDropped: a client nobody resolves to for ClientTTL is
// dropped, and built again when needed.
func TestIdleClientDropped(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	f := &configs{keys: map[string]string{"a": "k1"}}
	c := New[*client](Config{ConfigTTL: time.Second, ClientTTL: time.Hour, Clock: clk})
	first, _ := c.Get(context.Background(), "a", f.resolve("a"))
	clk.SetTime(clk.Now().Add(2 * time.Hour))
	if again, _ := c.Get(context.Background(), "a", f.resolve("a")); again == first || f.builds.Load() != 2 {
		t.Errorf("an idle client was kept (%d built)", f.builds.Load())
	}
}
