package chaos

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
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
	// LeaderKill is the time between two SIGKILLs of the leader (counted
	// from the moment both replicas are back), and LeaderDown how long the
	// killed replica stays down.
	LeaderKill, LeaderDown Span
	// FaultOn and FaultOff are how long an emulator fault set stays on and
	// how long the emulator then runs clean.
	FaultOn, FaultOff Span
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
// (make chaos) takes about 21 minutes.
var Profiles = map[string]Profile{
	"ci": {
		Name: "ci", Duration: 6 * time.Minute,
		LeaderKill: Span{40 * time.Second, 60 * time.Second}, LeaderDown: Span{2 * time.Second, 8 * time.Second},
		FaultOn: Span{15 * time.Second, 30 * time.Second}, FaultOff: Span{5 * time.Second, 15 * time.Second},
		EtcdPause: 4 * time.Second,
		PodChurn:  Span{time.Second, 4 * time.Second}, NodeChurn: Span{6 * time.Second, 15 * time.Second},
		ScaleChurn: Span{5 * time.Second, 12 * time.Second}, Rollout: Span{45 * time.Second, 75 * time.Second},
		NodeJoin:   Span{40 * time.Second, 70 * time.Second},
		MaxEIPPods: 12, MaxAIANodes: 5, MaxIngressJoins: 2, MaxBurstReplicas: 5, MaxFloatReplicas: 3,
		Converge: 6 * time.Minute,
	},
	"full": {
		Name: "full", Duration: 20 * time.Minute,
		LeaderKill: Span{45 * time.Second, 100 * time.Second}, LeaderDown: Span{2 * time.Second, 10 * time.Second},
		FaultOn: Span{20 * time.Second, 60 * time.Second}, FaultOff: Span{10 * time.Second, 30 * time.Second},
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
