package expect

import (
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// Transitions remembers the version changes this process's own writes
// made (an object went from version before to version after by a write of
// ours alone), so a watch event showing exactly that change can be told
// apart from one showing someone else's: the pass that wrote already acted
// on it, and a pass for its echo would only read and find nothing to do.
//
// Only an exact transition counts. When someone else wrote in between (the
// API server applied our unconditional patch on top of their version, or
// the watch skipped versions and the event spans several writes), the
// event's old version is not the one our write started from, and the
// event is someone else's too.
type Transitions[K comparable] struct {
	ttl time.Duration
	lru *cache.LRUExpireCache
}

// transition is the key of one remembered write: the object and the
// version it produced.
type transition[K comparable] struct {
	key   K
	after string
}

// NewTransitions remembers each write for ttl, at most size of them (the
// oldest go first; a forgotten one costs one pass).
func NewTransitions[K comparable](ttl time.Duration, size int, clk clock.PassiveClock) *Transitions[K] {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Transitions[K]{ttl: ttl, lru: cache.NewLRUExpireCacheWithClock(size, clk)}
}

// Record remembers that a write of ours took key from version before to
// after. Either empty: nothing is remembered (an unknown start proves
// nothing).
func (t *Transitions[K]) Record(key K, before, after string) {
	if t == nil || before == "" || after == "" || before == after {
		return
	}
	t.lru.Add(transition[K]{key: key, after: after}, before, t.ttl)
}

// Own reports whether the change of key from version before to after is
// exactly one write of ours.
func (t *Transitions[K]) Own(key K, before, after string) bool {
	if t == nil || before == "" || after == "" {
		return false
	}
	v, ok := t.lru.Get(transition[K]{key: key, after: after})
	return ok && v.(string) == before //nolint:forcetypeassert // Record stores strings
}
