package floatippool

import (
	"net/netip"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestReservationExpiresOnTheClock: an IP this allocator created is
// skipped for recentTTL on the allocator's clock, not the wall clock.
func TestReservationExpiresOnTheClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := &Allocator{Clock: clk}
	ip := netip.MustParseAddr("10.0.0.1")
	if !a.tryReserve(ip) {
		t.Fatal("the first reservation was refused")
	}
	if a.tryReserve(ip) {
		t.Fatal("a second reservation within recentTTL was granted")
	}
	clk.Step(recentTTL + time.Second)
	if !a.tryReserve(ip) {
		t.Fatal("the reservation outlived recentTTL on the allocator's clock")
	}
}
