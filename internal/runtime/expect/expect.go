// Package expect gives a controller read-your-writes: it remembers, per
// object, what this process last wrote (or is writing) and which versions
// that write superseded, so that a pass served an older copy by a cache
// that has not caught up yet (an informer, a cloud listing) uses the
// written one instead of writing again from stale data. It is the
// "expectations" of Kubernetes' own controllers, in one place:
//
//   - a write that landed: Record(key, written, newVersion, oldVersion);
//     a write still in flight: InFlight(key, toBeWritten, oldVersion);
//   - a reader's copy at version v: Check(key, v) says Behind (use the
//     remembered value), Current (the reader shows the write), Newer
//     (someone else changed it since; trust the reader) or None;
//   - things without versions (a cloud object just written): Get;
//   - a key two workers of one process must not both act on (an IP being
//     allocated): Claim.
//
// Entries expire after a TTL and the oldest go first beyond a size bound
// (apimachinery's LRUExpireCache), so a missed Forget never leaks: a
// restarted process starts with none and a fresh cache, losing nothing.
package expect

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// Verdict is what a reader's copy is, compared with this process's writes.
type Verdict int

const (
	// None: nothing is remembered for the key.
	None Verdict = iota
	// Behind: the copy predates this process's last write (or the write
	// is still in flight): use the remembered value.
	Behind
	// Current: the copy is the version this process last wrote or saw.
	Current
	// Newer: the copy is a version this process has neither written nor
	// seen: someone else changed the object since.
	Newer
)

// maxSuperseded bounds the versions remembered per key.
const maxSuperseded = 16

// Writes remembers values of type V by key K. Use New.
type Writes[K comparable, V any] struct {
	ttl time.Duration
	mu  sync.Mutex
	lru *cache.LRUExpireCache
}

type entry[V any] struct {
	value V
	// version is what the last write produced; "" while it is in flight.
	version string
	// superseded are older versions of the key (oldest first).
	superseded []string
}

// New returns a store whose entries live ttl after their last Record, at
// most size of them.
func New[K comparable, V any](ttl time.Duration, size int, clk clock.PassiveClock) *Writes[K, V] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Writes[K, V]{ttl: ttl, lru: cache.NewLRUExpireCacheWithClock(size, clk)}
}

func (w *Writes[K, V]) get(key K) *entry[V] {
	v, ok := w.lru.Get(key)
	if !ok {
		return nil
	}
	return v.(*entry[V])
}

// Record remembers value as key's newest copy at version (one this
// process wrote, or read from the source of truth), superseding the
// versions named and any it knew before.
func (w *Writes[K, V]) Record(key K, value V, version string, supersedes ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recordLocked(key, value, version, supersedes)
}

// InFlight remembers value as what a write of key that has not returned
// yet will produce, superseding version.
func (w *Writes[K, V]) InFlight(key K, value V, supersedes string) {
	w.Record(key, value, "", supersedes)
}

func (w *Writes[K, V]) recordLocked(key K, value V, version string, supersedes []string) {
	e := &entry[V]{value: value, version: version}
	if old := w.get(key); old != nil {
		e.superseded = append(slices.Clone(old.superseded), old.version)
	}
	e.superseded = append(e.superseded, supersedes...)
	e.superseded = slices.DeleteFunc(e.superseded, func(v string) bool { return v == "" || v == version })
	if n := len(e.superseded); n > maxSuperseded {
		e.superseded = e.superseded[n-maxSuperseded:]
	}
	w.lru.Add(key, e, w.ttl)
}

// Check compares a reader's copy of key at version with what is
// remembered, and returns the remembered value with the verdict.
func (w *Writes[K, V]) Check(key K, version string) (V, Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.get(key)
	switch {
	case e == nil:
		var zero V
		return zero, None
	case e.version == "" || slices.Contains(e.superseded, version):
		return e.value, Behind
	case e.version == version:
		return e.value, Current
	default:
		return e.value, Newer
	}
}

// Get returns the value remembered for key, whatever its version.
func (w *Writes[K, V]) Get(key K) (V, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.get(key); e != nil {
		return e.value, true
	}
	var zero V
	return zero, false
}

// Claim remembers value for key unless something is remembered for it
// already; it reports whether it did. Two workers of one process claiming
// the same key: one wins, until the TTL passes or the key is forgotten.
func (w *Writes[K, V]) Claim(key K, value V) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.get(key) != nil {
		return false
	}
	w.recordLocked(key, value, "", nil)
	return true
}

// Forget drops what is remembered for key (the write failed, or the
// object is gone).
func (w *Writes[K, V]) Forget(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lru.Remove(key)
}
