package chaos

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// repairAllowance is the slowest repair after a fault: a leaked address's
// orphan grace period (1m in the run) and the sweep after it (every 30s).
const repairAllowance = 90 * time.Second

func TestProfiles(t *testing.T) {
	for _, name := range []string{"", "ci", "full"} {
		p, err := LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Duration <= 0 || p.Converge <= 0 || p.LeaderKill.Min <= 0 || p.MaxEIPPods <= 0 || p.WebhookOutage <= 0 || p.ProofWait <= 0 {
			t.Errorf("profile %q is incomplete: %+v", name, p)
		}
		// Every pod the run may create draws from one /24 of kwok pod IPs
		// (maxProbes: a fault window's probe pods).
		if pods := p.MaxEIPPods + 2*p.MaxBurstReplicas + 3*p.MaxFloatReplicas + 2*(3+p.MaxIngressJoins) + maxProbes; pods > 200 {
			t.Errorf("profile %q may run %d pods", name, pods)
		}
		// Every fault kind gets a window even when every pick is the
		// longest, and so do the minimum of leader kills.
		if pass := p.PassMax(); pass > p.Duration {
			t.Errorf("profile %q: one window of every fault kind may take %s, longer than its %s of churn", name, pass, p.Duration)
		}
		if p.MinLeaderKills < 1 {
			t.Errorf("profile %q requires no leader kill", name)
		}
		if kills := p.KillsMax(); kills > p.Duration {
			t.Errorf("profile %q: %d leader kills may take %s, longer than its %s of churn", name, p.MinLeaderKills, kills, p.Duration)
		}
		// After the longest revocation the managers' credential gate may
		// hold an account's calls for one more window; what is left of the
		// convergence wait must still cover the slowest repair, an orphan
		// address's grace period and the next sweep.
		if held := CredentialRecoveryMax(max(p.FaultOn.Max, p.ProofWait), cloud.DefaultCredentialBackoff()); held+repairAllowance > p.Converge {
			t.Errorf("profile %q: calls may stay held %s after a revocation, too long for its %s convergence wait", name, held, p.Converge)
		}
	}
	if _, err := LookupProfile("nope"); err == nil {
		t.Error("an unknown profile was accepted")
	}
}

func TestFaultSetsAreValid(t *testing.T) {
	for _, fs := range FaultSets {
		var specs []core.FaultSpec
		if err := json.Unmarshal([]byte(fs.Specs), &specs); err != nil {
			t.Errorf("%s: %v", fs.Name, err)
			continue
		}
		for _, s := range specs {
			if err := s.Validate(); err != nil {
				t.Errorf("%s: %v", fs.Name, err)
			}
		}
	}
}

func TestFaultKinds(t *testing.T) {
	kinds := FaultKinds()
	if len(kinds) != len(FaultSets)+3 {
		t.Fatalf("%d kinds for %d fault sets: %v", len(kinds), len(FaultSets), kinds)
	}
	seen := map[string]bool{}
	for _, k := range kinds {
		if seen[k] {
			t.Errorf("kind %s listed twice", k)
		}
		seen[k] = true
		_, isSet := LookupFaultSet(k)
		if isSet == NeedsProof(k) {
			t.Errorf("kind %s: emulator fault set %v, needs proof %v; want exactly one", k, isSet, NeedsProof(k))
		}
	}
	for _, k := range []string{KindCredentialRevocation, KindQuotaShrink, KindWebhookOutage} {
		if !seen[k] {
			t.Errorf("kind %s missing", k)
		}
	}
}

func TestDeckDealsWithoutReplacement(t *testing.T) {
	kinds := FaultKinds()
	for seed := range uint64(50) {
		d := NewDeck(kinds, rand.New(rand.NewPCG(seed, 201)))
		for pass := range 3 {
			var got []string
			for range kinds {
				got = append(got, d.Next())
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(kinds)), slices.Sorted(slices.Values(got))); diff != "" {
				t.Fatalf("seed %d pass %d does not hold every kind once (-want +got):\n%s", seed, pass, diff)
			}
		}
	}
	// The same seed deals the same order; shuffling is not a no-op.
	a, b := NewDeck(kinds, rand.New(rand.NewPCG(7, 201))), NewDeck(kinds, rand.New(rand.NewPCG(7, 201)))
	var orders [2][]string
	for range 2 * len(kinds) {
		orders[0], orders[1] = append(orders[0], a.Next()), append(orders[1], b.Next())
	}
	if diff := cmp.Diff(orders[0], orders[1]); diff != "" {
		t.Errorf("one seed, two orders (-a +b):\n%s", diff)
	}
	if slices.Equal(orders[0][:len(kinds)], orders[0][len(kinds):]) && slices.Equal(orders[0][:len(kinds)], kinds) {
		t.Errorf("the deck never shuffled: %v", orders[0])
	}
}

func TestWindowMax(t *testing.T) {
	p := Profile{FaultOff: Span{5 * time.Second, 10 * time.Second}, FaultOn: Span{15 * time.Second, 20 * time.Second},
		ProofWait: 45 * time.Second, WebhookOutage: 30 * time.Second}
	for kind, want := range map[string]time.Duration{
		"throttling":             10*time.Second + 20*time.Second + windowOverhead,
		KindWebhookOutage:        10*time.Second + 30*time.Second + windowOverhead,
		KindCredentialRevocation: 10*time.Second + 45*time.Second + windowOverhead,
		KindQuotaShrink:          10*time.Second + 45*time.Second + windowOverhead,
	} {
		if got := p.WindowMax(kind); got != want {
			t.Errorf("%s: %s, want %s", kind, got, want)
		}
	}
	want := time.Duration(len(FaultSets))*(30*time.Second+windowOverhead) + 40*time.Second + 2*55*time.Second + 3*windowOverhead
	if got := p.PassMax(); got != want {
		t.Errorf("pass: %s, want %s", got, want)
	}
	p.MinLeaderKills, p.LeaderKill = 3, Span{40 * time.Second, 60 * time.Second}
	if got := p.KillsMax(); got != 3*(60*time.Second+FailoverAllowance) {
		t.Errorf("kills: %s", got)
	}
}

func TestCredentialRecoveryMax(t *testing.T) {
	b := cloud.CredentialBackoff{Initial: 30 * time.Second, Max: 10 * time.Minute}
	for _, tc := range []struct {
		revoked, want time.Duration
	}{
		// The first probe, 30 s after the first rejection, comes after
		// the key is back.
		{20 * time.Second, 30 * time.Second},
		{30 * time.Second, 30 * time.Second},
		// The first probe may be rejected: the 60 s window follows.
		{45 * time.Second, time.Minute},
		{90 * time.Second, time.Minute},
		{91 * time.Second, 2 * time.Minute},
		// The window stops growing at Max.
		{time.Hour, 10 * time.Minute},
	} {
		if got := CredentialRecoveryMax(tc.revoked, b); got != tc.want {
			t.Errorf("revoked %s: %s, want %s", tc.revoked, got, tc.want)
		}
	}
}

func TestSpanPick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s := Span{time.Second, 3 * time.Second}
	for range 100 {
		if d := s.Pick(r); d < s.Min || d > s.Max {
			t.Fatalf("picked %s outside %v", d, s)
		}
	}
	if d := (Span{Min: time.Second}).Pick(r); d != time.Second {
		t.Errorf("a fixed span picked %s", d)
	}
}
