package chaos

import (
	"fmt"
	"slices"
)

// Tally counts what the run's fault actors did and holds what a run must
// reach: MinLeaderKills kills, each with a completed failover, and at least
// one window of each of Kinds, proven where the kind needs proof. The zero
// Tally requires nothing.
type Tally struct {
	MinLeaderKills int
	Kinds          []string

	// LeaderKills counts SIGKILLs of the leader; Failovers the kills after
	// which the surviving replica took the Lease and reconciled the probe
	// object changed after the kill; NoLeader the kill attempts that found
	// no leader with a ready survivor.
	LeaderKills, Failovers, NoLeader int
	// Injected counts the windows of each fault kind, Proven those of them
	// whose effect the run saw (kinds that need proof only).
	Injected, Proven map[string]int
}

// NewTally returns an empty tally with the profile's requirements.
func NewTally(p Profile) Tally {
	return Tally{MinLeaderKills: p.MinLeaderKills, Kinds: FaultKinds(), Injected: map[string]int{}, Proven: map[string]int{}}
}

// Lines renders the tally as `name: value` lines.
func (t Tally) Lines() []string {
	out := []string{
		fmt.Sprintf("leader kills: %d (at least %d)", t.LeaderKills, t.MinLeaderKills),
		fmt.Sprintf("failovers completed: %d (at least %d)", t.Failovers, t.MinLeaderKills),
		fmt.Sprintf("kill attempts without a leader to kill: %d", t.NoLeader),
	}
	for _, k := range t.Kinds {
		line := fmt.Sprintf("fault windows %s: %d", k, t.Injected[k])
		if NeedsProof(k) {
			line += fmt.Sprintf(" (proven %d)", t.Proven[k])
		}
		out = append(out, line)
	}
	return out
}

// Shortfalls lists what keeps the run below its requirements; empty when it
// reached them all.
func (t Tally) Shortfalls() []string {
	var out []string
	if t.LeaderKills < t.MinLeaderKills {
		out = append(out, fmt.Sprintf("%d leader kills, at least %d required (%d attempts found no leader to kill)",
			t.LeaderKills, t.MinLeaderKills, t.NoLeader))
	}
	if t.Failovers < t.MinLeaderKills {
		out = append(out, fmt.Sprintf("%d completed failovers, at least %d required", t.Failovers, t.MinLeaderKills))
	}
	for _, k := range t.Kinds {
		switch n := t.Injected[k]; {
		case n == 0:
			out = append(out, fmt.Sprintf("fault kind %s was never injected", k))
		case NeedsProof(k) && t.Proven[k] < n:
			out = append(out, fmt.Sprintf("fault kind %s: %d of %d windows without proof that the fault happened", k, n-t.Proven[k], n))
		}
	}
	return out
}

// Sightings records the Ready reasons seen on objects during a fault
// window, as "Kind=Reason" for any object of the kind and
// "Kind/name=Reason" for the named one.
type Sightings map[string]bool

// Add records a reason seen on an object.
func (s Sightings) Add(kind, name, reason string) {
	if reason == "" {
		return
	}
	s[kind+"="+reason] = true
	s[kind+"/"+name+"="+reason] = true
}

// Missing returns the wanted sightings not seen, in want's order.
func (s Sightings) Missing(want []string) []string {
	var out []string
	for _, w := range want {
		if !s[w] {
			out = append(out, w)
		}
	}
	return slices.Clip(out)
}
