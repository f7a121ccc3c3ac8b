package steppedclock

import (
	"testing"
	"time"
)

func TestFollowsRealTimePlusSteps(t *testing.T) {
	var c Clock
	before := time.Now()
	if got := c.Now(); got.Before(before) || got.Sub(before) > time.Second {
		t.Fatalf("zero Clock reads %s, want about %s", got, before)
	}
	c.Step(time.Hour)
	if got := c.Since(before); got < time.Hour || got > time.Hour+time.Second {
		t.Fatalf("after a one-hour step, %s since the start, want about 1h", got)
	}
	time.Sleep(20 * time.Millisecond)
	if got := c.Since(before); got < time.Hour+20*time.Millisecond {
		t.Fatalf("the clock stood still after a step: %s since the start", got)
	}
}
