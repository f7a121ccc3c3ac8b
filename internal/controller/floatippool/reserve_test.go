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

// TestReservationsBounded: an IP whose create failed is free again at
// once, and at most maxRecent IPs are remembered, the least recently used
// going first.
func TestReservationsBounded(t *testing.T) {
	a := &Allocator{}
	first := netip.MustParseAddr("10.0.0.1")
	if !a.tryReserve(first) {
		t.Fatal("the first reservation was refused")
	}
	a.unreserve(first)
	if !a.tryReserve(first) {
		t.Fatal("an unreserved IP is still reserved")
	}
	ip := first
	for range maxRecent {
		ip = ip.Next()
		if !a.tryReserve(ip) {
			t.Fatalf("a reservation of %s was refused", ip)
		}
	}
	if a.tryReserve(ip) {
		t.Error("the newest reservation is gone")
	}
	if !a.tryReserve(first) {
		t.Error("the oldest reservation survived beyond maxRecent")
	}
}
