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
//     (someone else changed it since; trust the reader) or None; Observe
//     does the same and forgets the key once the reader has caught up;
//   - things without versions (a cloud object just written): Get;
//   - a key two workers of one process must not both act on (an IP being
//     allocated): Claim;
//   - a write handed to a background worker: InFlight returns a Ticket
//     that Landed or Failed settle, unless a newer write of the key
//     replaced it meanwhile;
//   - every write of a group (the per-node objects of one owner): Keys;
//   - the watch event of one of this process's writes (its echo): Echo.
//
// Entries expire after a TTL and the least recently used go first beyond
// a size bound (apimachinery's LRUExpireCache); expired entries that are
// never read again are swept within a TTL, so a missed Forget never leaks:
// a restarted process starts with none and a fresh cache, losing nothing.
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

// Writes remembers values of type V by key K. Use New (or Lazy).
type Writes[K comparable, V any] struct {
	ttl time.Duration
	clk clock.PassiveClock
	mu  sync.Mutex
	lru *cache.LRUExpireCache
	// seq numbers the entries, so a Ticket names one.
	seq uint64
	// nextSweep is when expired entries are dropped next.
	nextSweep time.Time
}

// Ticket names one write in flight (see InFlight).
type Ticket uint64

type entry[V any] struct {
	// ticket is the write this entry stands for.
	ticket Ticket
	value  V
	// version is what the last write produced; "" while it is in flight.
	version string
	// superseded are older versions of the key (oldest first).
	superseded []string
	// from is the version the last write started from, when it named
	// exactly one (kept while the write is in flight).
	from string
	// steps are the writes recorded, as (from, to) versions, oldest first
	// (Echo).
	steps [][2]string
}

// New returns a store whose entries live ttl after their last Record, at
// most size of them.
func New[K comparable, V any](ttl time.Duration, size int, clk clock.PassiveClock) *Writes[K, V] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Writes[K, V]{ttl: ttl, clk: clk, lru: cache.NewLRUExpireCacheWithClock(size, clk)}
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
// yet will produce, superseding version. Whoever makes the write settles
// it with the Ticket: Landed or Failed.
func (w *Writes[K, V]) InFlight(key K, value V, supersedes string) Ticket {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recordLocked(key, value, "", []string{supersedes})
}

// Landed records the write t stands for as landed: value at version. It
// changes nothing and reports false when the key no longer stands for t
// (a newer write replaced it, it expired or was forgotten): the newer
// write is what a reader must see.
func (w *Writes[K, V]) Landed(key K, t Ticket, value V, version string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.get(key); e == nil || e.ticket != t {
		return false
	}
	w.recordLocked(key, value, version, nil)
	return true
}

// Failed forgets the write t stands for (it did not happen), unless the
// key no longer stands for t; it reports whether it did.
func (w *Writes[K, V]) Failed(key K, t Ticket) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e := w.get(key); e == nil || e.ticket != t {
		return false
	}
	w.lru.Remove(key)
	return true
}

func (w *Writes[K, V]) recordLocked(key K, value V, version string, supersedes []string) Ticket {
	w.sweepLocked()
	w.seq++
	e := &entry[V]{ticket: Ticket(w.seq), value: value, version: version}
	if len(supersedes) == 1 {
		e.from = supersedes[0]
	}
	if old := w.get(key); old != nil {
		e.superseded = append(slices.Clone(old.superseded), old.version)
		e.steps = slices.Clone(old.steps)
		if len(supersedes) == 0 && old.version == "" {
			e.from = old.from // an in-flight write landed
		}
	}
	if version != "" && e.from != "" && e.from != version {
		e.steps = append(e.steps, [2]string{e.from, version})
		if n := len(e.steps); n > maxSuperseded {
			e.steps = e.steps[n-maxSuperseded:]
		}
	}
	e.superseded = append(e.superseded, supersedes...)
	e.superseded = slices.DeleteFunc(e.superseded, func(v string) bool { return v == "" || v == version })
	if n := len(e.superseded); n > maxSuperseded {
		e.superseded = e.superseded[n-maxSuperseded:]
	}
	w.lru.Add(key, e, w.ttl)
	return e.ticket
}

// sweepLocked drops the expired entries, at most once per TTL: the cache
// drops one only when it is read or pushed out by the size bound, and a
// key never read again (a pod written, then deleted) would keep its value
// until then.
func (w *Writes[K, V]) sweepLocked() {
	now := w.clk.Now()
	if now.Before(w.nextSweep) {
		return
	}
	w.nextSweep = now.Add(w.ttl)
	keys := w.lru.Keys()
	live := make(map[any]bool, len(keys))
	for _, k := range keys {
		live[k] = true
	}
	w.lru.RemoveAll(func(k any) bool { return !live[k] })
}

// Check compares a reader's copy of key at version with what is
// remembered, and returns the remembered value with the verdict.
func (w *Writes[K, V]) Check(key K, version string) (V, Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checkLocked(key, version)
}

func (w *Writes[K, V]) checkLocked(key K, version string) (V, Verdict) {
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

// Observe is Check for the reader that the remembered value serves: once
// its copy is Current or Newer it needs no help, and the key is forgotten
// in the same step (a write recorded meanwhile is never lost to it).
func (w *Writes[K, V]) Observe(key K, version string) (V, Verdict) {
	w.mu.Lock()
	defer w.mu.Unlock()
	v, verdict := w.checkLocked(key, version)
	if verdict == Current || verdict == Newer {
		w.lru.Remove(key)
	}
	return v, verdict
}

// Echo reports whether an update of key from version old to version new
// is exactly one write recorded here: its watch event, which the pass that
// wrote has already acted on. Someone else's write, one of ours that landed
// on top of someone else's version, or an event spanning several writes
// (the watch skipped versions) is not. Only for a store whose Records are
// this process's writes, not reads.
func (w *Writes[K, V]) Echo(key K, old, new string) bool {
	if w == nil || old == "" || new == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.get(key)
	return e != nil && slices.Contains(e.steps, [2]string{old, new})
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

// Keys returns the keys remembered and not expired, least recently used
// first. What is remembered for one may expire or be forgotten before the
// caller asks Get for it.
func (w *Writes[K, V]) Keys() []K {
	keys := w.lru.Keys()
	out := make([]K, 0, len(keys))
	for _, k := range keys {
		out = append(out, k.(K))
	}
	return out
}

// Forget drops what is remembered for key (the write failed, or the
// object is gone).
func (w *Writes[K, V]) Forget(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lru.Remove(key)
}

// Lazy is a Writes made on first use. Its zero value is ready, for a store
// held in a struct built as a literal whose clock is a field set after
// construction (a controller's Reconciler).
type Lazy[K comparable, V any] struct {
	once sync.Once
	w    *Writes[K, V]
}

// Get returns the store, made by New(ttl, size, clk) on the first call;
// later calls return that store whatever they pass.
func (l *Lazy[K, V]) Get(ttl time.Duration, size int, clk clock.PassiveClock) *Writes[K, V] {
	l.once.Do(func() { l.w = New[K, V](ttl, size, clk) })
	return l.w
}
