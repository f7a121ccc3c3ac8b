package core

import (
	"sync"
	"time"
)

// Clock is the emulator's notion of "now". Async tasks, eventual-consistency
// windows, token buckets and creation timestamps all read it, so a test that
// injects a ManualClock controls every time-dependent behaviour of the
// emulator (fault latency and commit-then-drop holds are deliberately wall
// clock: they are about what the client sees on the wire).
type Clock interface {
	Now() time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// ManualClock only moves when told to. It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock stopped at start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

// Now returns the current manual time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (negative values are ignored so time
// never runs backwards for the token buckets).
func (c *ManualClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t if t is later than the current time.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	c.mu.Unlock()
}
