// Package steppedclock is a clock for tests that run a controller against
// real servers: it follows real time, plus the steps the test takes. A
// frozen fake clock (k8s.io/utils/clock/testing) would stop the
// controller's own time while the API server's and the cloud emulator's go
// on; this one lets a test jump past a long backoff without stopping the
// rest.
package steppedclock

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Clock is real time plus the steps taken. The zero value is real time.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
}

var _ clock.PassiveClock = (*Clock)(nil)

// Now returns real time plus the steps taken.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Since returns the time elapsed since t on this clock.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Step moves the clock forward by d.
func (c *Clock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}
