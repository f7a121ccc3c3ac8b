package chaos

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTally(t *testing.T) {
	full := func() Tally {
		tl := NewTally(Profile{MinLeaderKills: 3})
		tl.LeaderKills, tl.Failovers = 3, 3
		for _, k := range tl.Kinds {
			tl.Injected[k] = 1
			if NeedsProof(k) {
				tl.Proven[k] = 1
			}
		}
		return tl
	}
	tests := map[string]struct {
		change func(*Tally)
		want   []string // substrings of the shortfalls, in order
	}{
		"every requirement met":     {change: func(*Tally) {}},
		"more than required":        {change: func(tl *Tally) { tl.LeaderKills, tl.Failovers, tl.Injected["latency"] = 5, 5, 2 }},
		"the zero tally needs none": {change: func(tl *Tally) { *tl = Tally{} }},
		"too few kills, counted misses": {change: func(tl *Tally) { tl.LeaderKills, tl.Failovers, tl.NoLeader = 2, 2, 4 },
			want: []string{"2 leader kills, at least 3 required (4 attempts found no leader to kill)", "2 completed failovers, at least 3 required"}},
		"a kill without a completed failover": {change: func(tl *Tally) { tl.LeaderKills, tl.Failovers = 4, 2 },
			want: []string{"2 completed failovers, at least 3 required"}},
		"a kind never injected": {change: func(tl *Tally) { delete(tl.Injected, "task-failures") },
			want: []string{"fault kind task-failures was never injected"}},
		"a proof kind never injected": {change: func(tl *Tally) { tl.Injected[KindWebhookOutage], tl.Proven[KindWebhookOutage] = 0, 0 },
			want: []string{"fault kind webhook-outage was never injected"}},
		"an unproven window": {change: func(tl *Tally) { tl.Injected[KindQuotaShrink] = 2 },
			want: []string{"fault kind quota-shrink: 1 of 2 windows without proof"}},
		"no proof at all": {change: func(tl *Tally) { tl.Proven[KindCredentialRevocation] = 0 },
			want: []string{"fault kind credential-revocation: 1 of 1 windows without proof"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tl := full()
			tc.change(&tl)
			got := tl.Shortfalls()
			if len(got) != len(tc.want) {
				t.Fatalf("shortfalls %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("shortfall %q lacks %q", got[i], w)
				}
			}
		})
	}
}

func TestTallyLines(t *testing.T) {
	tl := NewTally(Profile{MinLeaderKills: 3})
	tl.LeaderKills, tl.Failovers, tl.NoLeader = 4, 4, 1
	tl.Injected["latency"], tl.Injected[KindCredentialRevocation], tl.Proven[KindCredentialRevocation] = 2, 1, 1
	got := tl.Lines()
	for _, want := range []string{"leader kills: 4 (at least 3)", "failovers completed: 4 (at least 3)", "kill attempts without a leader to kill: 1",
		"fault windows latency: 2", "fault windows throttling: 0", "fault windows credential-revocation: 1 (proven 1)", "fault windows webhook-outage: 0 (proven 0)"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("lines lack %q:\n%s", want, strings.Join(got, "\n"))
		}
	}
	if n := len(got); n != 3+len(FaultKinds()) {
		t.Errorf("%d lines, want one per kind after the three of the kills", n)
	}
}

func TestSightings(t *testing.T) {
	s := Sightings{}
	s.Add("ClusterProviderConfig", "default", "CredentialsRejected")
	s.Add("PodElasticIP", "ns/p", "CredentialsRejected")
	s.Add("AnycastIPBinding", "n1", "") // a condition without a reason is no sighting
	want := []string{"ClusterProviderConfig/default=CredentialsRejected", "ClusterProviderConfig/tencentcloud=CredentialsRejected",
		"PodElasticIP=CredentialsRejected", "AnycastIPBinding=CredentialsRejected"}
	if diff := cmp.Diff([]string{"ClusterProviderConfig/tencentcloud=CredentialsRejected", "AnycastIPBinding=CredentialsRejected"}, s.Missing(want)); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	s.Add("ClusterProviderConfig", "tencentcloud", "CredentialsRejected")
	s.Add("AnycastIPBinding", "n2", "CredentialsRejected")
	if m := s.Missing(want); len(m) != 0 {
		t.Errorf("still missing %v", m)
	}
	if m := s.Missing([]string{"PodElasticIP=QuotaExceeded"}); len(m) != 1 {
		t.Errorf("a reason never seen is not missing: %v", m)
	}
}
