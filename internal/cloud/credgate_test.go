package cloud

import (
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestCredentialGate(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(1_800_000_000, 0))
	g := NewCredentialGate(CredentialBackoff{Initial: 10 * time.Second, Max: 25 * time.Second}, clk)
	denied := errors.New("AuthFailure")

	admit := func(wantProbe, wantAllowed bool) bool {
		t.Helper()
		probe, err := g.Admit()
		if (err == nil) != wantAllowed || probe != wantProbe {
			t.Fatalf("Admit = %v, %v; want probe %v, allowed %v", probe, err, wantProbe, wantAllowed)
		}
		var rej *CredentialsRejectedError
		if err != nil && (!errors.As(err, &rej) || !errors.Is(err, denied)) {
			t.Fatalf("a blocked call's error %v must be a CredentialsRejectedError wrapping the cloud's answer", err)
		}
		return probe
	}

	// Open: every call goes out; two in flight when the key is revoked.
	a, b := admit(false, true), admit(false, true)
	g.Done(a, denied)
	g.Done(b, denied) // in flight before the gate closed: no longer window
	if r := g.Rejected(); r == nil || !r.RetryAt.Equal(clk.Now().Add(10*time.Second)) {
		t.Fatalf("rejection %v, want a retry at now+10s", r)
	}
	// Closed: no call, however many resources ask.
	for range 100 {
		admit(false, false)
	}
	// The window passes: exactly one probe, the others still wait.
	clk.Step(10 * time.Second)
	p := admit(true, true)
	admit(false, false)
	g.Done(p, denied)
	if r := g.Rejected(); r == nil || !r.RetryAt.Equal(clk.Now().Add(20*time.Second)) {
		t.Fatalf("after a rejected probe %v, want a retry at now+20s (doubled)", r)
	}
	clk.Step(20 * time.Second)
	g.Done(admit(true, true), denied)
	if r := g.Rejected(); r == nil || !r.RetryAt.Equal(clk.Now().Add(25*time.Second)) {
		t.Fatalf("rejection %v, want a retry at now+25s (capped)", r)
	}
	// Fixed credentials: the next probe succeeds and the gate opens.
	clk.Step(25 * time.Second)
	g.Done(admit(true, true), nil)
	if r := g.Rejected(); r != nil {
		t.Fatalf("still rejected after a successful probe: %v", r)
	}
	admit(false, true)
	// A new rejection starts from the initial window again.
	g.Done(false, denied)
	if r := g.Rejected(); r == nil || !r.RetryAt.Equal(clk.Now().Add(10*time.Second)) {
		t.Fatalf("rejection %v, want a retry at now+10s", r)
	}
}
