package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// Span is a random duration in [Min, Max].
type Span struct{ Min, Max time.Duration }

// Pick draws a duration from the span.
func (s Span) Pick(r *rand.Rand) time.Duration {
	if s.Max <= s.Min {
		return s.Min
	}
	return s.Min + time.Duration(r.Int64N(int64(s.Max-s.Min)))
}

// Profile sizes a run.
type Profile struct {
	Name string
	// Duration is how long churn and faults go on.
	Duration time.Duration
	// LeaderKill is the time between two SIGKILLs of the leader, counted
	// from the moment both replicas are back. The killed replica stays down
	// until the failover has completed.
	LeaderKill Span
	// MinLeaderKills is how many leader kills, each with a completed
	// failover, the run must reach; fewer fail it.
	MinLeaderKills int
	// FaultOff is how long the run stays free of fault windows between two;
	// FaultOn how long an emulator fault set stays on.
	FaultOff, FaultOn Span
	// ProofWait is how long a credential-revocation or quota-shrink window
	// may stay on (at least FaultOn) until the run has seen the managers
	// report it.
	ProofWait time.Duration
	// WebhookOutage is how long the webhook proxy refuses connections.
	WebhookOutage time.Duration
	// EtcdPause is how long etcd is stopped (once, between 30% and 70% of
	// Duration).
	EtcdPause time.Duration
	// Churn paces: the time between two operations of each churner.
	PodChurn, NodeChurn, ScaleChurn, Rollout, NodeJoin Span
	// Caps keep the cluster (one kwok pod CIDR of 253 addresses) small.
	MaxEIPPods, MaxAIANodes, MaxIngressJoins, MaxBurstReplicas, MaxFloatReplicas int
	// Converge bounds the wait for convergence after the last fault.
	Converge time.Duration
}

// Profiles are the named run sizes. "ci" (make chaos-ci) must finish in
// under 15 minutes on a 2-core machine including cluster start-up; "full"
// (make chaos) takes about 22 minutes. TestProfiles checks that each fits
// one window of every fault kind and its minimum of leader kills into
// Duration, even when every random pick is the longest.
var Profiles = map[string]Profile{
	"ci": {
		Name: "ci", Duration: 7 * time.Minute,
		LeaderKill: Span{40 * time.Second, 60 * time.Second}, MinLeaderKills: 3,
		FaultOn: Span{15 * time.Second, 20 * time.Second}, FaultOff: Span{5 * time.Second, 10 * time.Second},
		ProofWait: 45 * time.Second, WebhookOutage: 30 * time.Second,
		EtcdPause: 4 * time.Second,
		PodChurn:  Span{time.Second, 4 * time.Second}, NodeChurn: Span{6 * time.Second, 15 * time.Second},
		ScaleChurn: Span{5 * time.Second, 12 * time.Second}, Rollout: Span{45 * time.Second, 75 * time.Second},
		NodeJoin:   Span{40 * time.Second, 70 * time.Second},
		MaxEIPPods: 12, MaxAIANodes: 5, MaxIngressJoins: 2, MaxBurstReplicas: 5, MaxFloatReplicas: 3,
		Converge: 6 * time.Minute,
	},
	"full": {
		Name: "full", Duration: 20 * time.Minute,
		LeaderKill: Span{45 * time.Second, 100 * time.Second}, MinLeaderKills: 6,
		FaultOn: Span{20 * time.Second, 60 * time.Second}, FaultOff: Span{10 * time.Second, 30 * time.Second},
		ProofWait: 60 * time.Second, WebhookOutage: 30 * time.Second,
		EtcdPause: 5 * time.Second,
		PodChurn:  Span{time.Second, 4 * time.Second}, NodeChurn: Span{6 * time.Second, 15 * time.Second},
		ScaleChurn: Span{5 * time.Second, 12 * time.Second}, Rollout: Span{60 * time.Second, 120 * time.Second},
		NodeJoin:   Span{45 * time.Second, 90 * time.Second},
		MaxEIPPods: 20, MaxAIANodes: 8, MaxIngressJoins: 3, MaxBurstReplicas: 6, MaxFloatReplicas: 4,
		Converge: 10 * time.Minute,
	},
}

// LookupProfile returns the named profile; empty means "full".
func LookupProfile(name string) (Profile, error) {
	if name == "" {
		name = "full"
	}
	p, ok := Profiles[name]
	if !ok {
		names := make([]string, 0, len(Profiles))
		for n := range Profiles {
			names = append(names, n)
		}
		sort.Strings(names)
		return Profile{}, fmt.Errorf("unknown chaos profile %q (known: %s)", name, strings.Join(names, ", "))
	}
	return p, nil
}

// FaultSet is one emulator fault set, switched on and off as a whole: a
// name for the log and the JSON the emulator's PUT /admin/faults takes
// (a list of core.FaultSpec).
type FaultSet struct {
	Name  string
	Specs string
}

// FaultSets are the emulator faults the run switches on, one set at a time:
// throttling, server errors, latency, commit-then-drop, eventual-consistency
// windows and failing Tencent tasks, then all at once at lower rates.
var FaultSets = []FaultSet{
	{"throttling", `[{"errorRate":0.3,"errorCode":"RequestLimitExceeded"}]`},
	{"5xx", `[{"provider":"ec2","errorRate":0.25,"errorCode":"InternalError","errorHTTPStatus":500},{"provider":"tencent","errorRate":0.25,"errorCode":"InternalError"}]`},
	{"latency", `[{"latency":"1500ms"}]`},
	{"commit-then-drop", `[{"dropRate":0.2,"dropHold":"3s"}]`},
	{"eventual-consistency", `[{"provider":"ec2","action":"AllocateAddress","visibilityDelay":"10s"},{"provider":"tencent","action":"AllocateAddresses","visibilityDelay":"10s"}]`},
	{"task-failures", `[{"provider":"tencent","taskFailureRate":0.3}]`},
	{"mixed", `[{"errorRate":0.1,"errorCode":"RequestLimitExceeded"},{"errorRate":0.05,"errorCode":"InternalError"},{"latency":"300ms"},{"dropRate":0.05,"dropHold":"3s"},{"provider":"tencent","taskFailureRate":0.1}]`},
}

// The fault kinds the run injects itself, besides the emulator's fault sets.
const (
	// KindCredentialRevocation revokes the emulator keys the managers sign
	// with (PATCH /admin/settings with a null credential) and registers
	// them again.
	KindCredentialRevocation = "credential-revocation"
	// KindQuotaShrink lowers both providers' address quotas to one address
	// and restores them.
	KindQuotaShrink = "quota-shrink"
	// KindWebhookOutage makes the webhook proxy refuse every connection.
	KindWebhookOutage = "webhook-outage"
)

// FaultKinds lists every kind of fault window: the emulator's fault sets,
// then the kinds the run injects itself.
func FaultKinds() []string {
	kinds := make([]string, 0, len(FaultSets)+3)
	for _, fs := range FaultSets {
		kinds = append(kinds, fs.Name)
	}
	return append(kinds, KindCredentialRevocation, KindQuotaShrink, KindWebhookOutage)
}

// LookupFaultSet returns the emulator fault set of that name.
func LookupFaultSet(name string) (FaultSet, bool) {
	for _, fs := range FaultSets {
		if fs.Name == name {
			return fs, true
		}
	}
	return FaultSet{}, false
}

// NeedsProof reports whether a window of the kind counts only once the run
// has seen its effect (the managers' CredentialsRejected or QuotaExceeded,
// the API server admitting objects without the webhooks).
func NeedsProof(kind string) bool {
	switch kind {
	case KindCredentialRevocation, KindQuotaShrink, KindWebhookOutage:
		return true
	}
	return false
}

// Deck deals fault kinds without replacement: each pass is a new shuffle of
// every kind, so the first len(kinds) draws, and each len(kinds) after
// them, hold every kind once.
type Deck struct {
	kinds []string
	rng   *rand.Rand
	hand  []string
}

// NewDeck returns a deck of kinds shuffled by rng.
func NewDeck(kinds []string, rng *rand.Rand) *Deck {
	return &Deck{kinds: slices.Clone(kinds), rng: rng}
}

// Next deals the next kind, shuffling a new pass when the last is spent.
func (d *Deck) Next() string {
	if len(d.hand) == 0 {
		d.hand = slices.Clone(d.kinds)
		d.rng.Shuffle(len(d.hand), func(i, j int) { d.hand[i], d.hand[j] = d.hand[j], d.hand[i] })
	}
	k := d.hand[0]
	d.hand = d.hand[1:]
	return k
}

// windowOverhead is what a fault window costs beyond its picks: admin
// calls, creating and deleting probe objects.
const windowOverhead = 3 * time.Second

// WindowMax is the longest a window of the kind can take, the pause before
// it included: the run starts a window only while that much of Duration is
// left, so a started window always runs its course.
func (p Profile) WindowMax(kind string) time.Duration {
	on := p.FaultOn.Max
	switch kind {
	case KindWebhookOutage:
		on = p.WebhookOutage
	case KindCredentialRevocation, KindQuotaShrink:
		on = max(on, p.ProofWait)
	}
	return p.FaultOff.Max + on + windowOverhead
}

// PassMax is the longest one window of every fault kind can take.
func (p Profile) PassMax() time.Duration {
	var d time.Duration
	for _, k := range FaultKinds() {
		d += p.WindowMax(k)
	}
	return d
}

// FailoverAllowance is what a leader kill is planned to cost beyond the
// pause before it: the Lease running out (15 s), the survivor's next try
// (2 s), its controllers starting and reconciling the probe, and the killed
// replica's restart until /readyz.
const FailoverAllowance = 45 * time.Second

// KillsMax is the longest the profile's minimum of leader kills can take
// when each failover stays within FailoverAllowance.
func (p Profile) KillsMax() time.Duration {
	return time.Duration(p.MinLeaderKills) * (p.LeaderKill.Max + FailoverAllowance)
}

// CredentialRecoveryMax is the longest an account's calls can stay held
// after its key is registered again, when the key was revoked for at most
// revoked and the credential gate backs off as b: the gate's window open at
// that moment, i.e. the longest window whose probe went out (and was
// rejected) while the key was still revoked.
func CredentialRecoveryMax(revoked time.Duration, b cloud.CredentialBackoff) time.Duration {
	window, elapsed := b.Initial, time.Duration(0)
	for {
		next := min(window*2, b.Max)
		// The probe that would open the next window goes out after
		// elapsed+window; it can be rejected only before the key returns.
		if elapsed+window >= revoked || next == window {
			return window
		}
		elapsed += window
		window = next
	}
}

// maxProbes is how many probe pods, and probe nodes, a fault window creates
// at most.
const maxProbes = 2
