package decide

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// pod builds a PodState created i seconds after a base time.
func pod(name, rev string, i int, placement Placement) PodState {
	return PodState{Name: name, Revision: rev, Created: now.Add(-time.Hour + time.Duration(i)*time.Second), Placement: placement}
}

func unsched(s PodState, ago time.Duration) PodState {
	s.UnschedulableSince = now.Add(-ago)
	return s
}

func burst(s PodState) PodState {
	s.Burst = true
	return s
}

func gated(s PodState) PodState {
	s.Gated = true
	return s
}

func refused(s PodState, reason string) PodState {
	s.Refusal = Refusal{Reason: reason, Message: "m"}
	return s
}

func TestDecide(t *testing.T) {
	pendingTrigger := Params{Burst: true, LocalReplicas: 1, MaxBurst: -1, Trigger: schedulingv1alpha1.TriggerPending}
	overflow := Params{Burst: true, LocalReplicas: 1, MaxBurst: -1, Trigger: schedulingv1alpha1.TriggerUnschedulable, BurstAfter: 30 * time.Second, FloorHandoff: time.Minute}
	cases := []struct {
		name string
		p    Params
		pods []PodState
		want Plan
	}{
		{
			name: "seed: 4 pending, LOCAL_REPLICAS 1: the three newest burst at once",
			p:    pendingTrigger,
			pods: []PodState{pod("a", "r1", 1, Pending), pod("b", "r1", 2, Pending), pod("c", "r1", 3, Pending), pod("d", "r1", 4, Pending)},
			want: Plan{Burst: []string{"b", "c", "d"}, Pending: 4, BurstCount: 3},
		},
		{
			name: "seed after scheduling: one local, three burst pending",
			p:    pendingTrigger,
			pods: []PodState{pod("a", "r1", 1, Local), burst(pod("b", "r1", 2, Pending)), pod("c", "r1", 3, Virtual), pod("d", "r1", 4, Virtual)},
			want: Plan{Local: 1, Virtual: 2, Pending: 1, BurstCount: 3},
		},
		{
			name: "unschedulable trigger: not yet reported unschedulable",
			p:    overflow,
			pods: []PodState{pod("a", "r1", 1, Local), pod("b", "r1", 2, Pending)},
			want: Plan{Local: 1, Pending: 1},
		},
		{
			name: "unschedulable trigger: not due yet requeues",
			p:    overflow,
			pods: []PodState{pod("a", "r1", 1, Local), unsched(pod("b", "r1", 2, Pending), 10*time.Second)},
			want: Plan{Local: 1, Pending: 1, RequeueAfter: 20 * time.Second},
		},
		{
			name: "unschedulable trigger: due bursts",
			p:    overflow,
			pods: []PodState{pod("a", "r1", 1, Local), unsched(pod("b", "r1", 2, Pending), 30*time.Second), unsched(pod("c", "r1", 3, Pending), 5*time.Second)},
			want: Plan{Burst: []string{"b"}, Local: 1, Pending: 2, BurstCount: 1, RequeueAfter: 25 * time.Second},
		},
		{
			name: "the floor holds the oldest pending pods local",
			p:    Params{Burst: true, LocalReplicas: 2, MaxBurst: -1, Trigger: schedulingv1alpha1.TriggerUnschedulable},
			pods: []PodState{pod("a", "r1", 1, Local), unsched(pod("b", "r1", 2, Pending), time.Second), unsched(pod("c", "r1", 3, Pending), time.Second), unsched(pod("d", "r1", 4, Pending), time.Second)},
			want: Plan{Burst: []string{"c", "d"}, Local: 1, Pending: 3, BurstCount: 2, LocalWaiting: 1},
		},
		{
			name: "no floor: every due pod bursts",
			p:    Params{Burst: true, MaxBurst: -1, Trigger: schedulingv1alpha1.TriggerUnschedulable},
			pods: []PodState{unsched(pod("a", "", 1, Pending), time.Second), unsched(pod("b", "", 2, Pending), time.Second)},
			want: Plan{Burst: []string{"a", "b"}, Pending: 2, BurstCount: 2},
		},
		{
			name: "switched off: nothing bursts and every pending pod says why",
			p:    Params{Burst: false, LocalReplicas: 1, MaxBurst: -1, Trigger: schedulingv1alpha1.TriggerPending},
			pods: []PodState{pod("a", "r1", 1, Local), unsched(pod("b", "r1", 2, Pending), time.Minute), pod("c", "r1", 3, Pending)},
			want: Plan{Local: 1, Pending: 2, LocalWaiting: 1, NonBurstable: []schedulingv1alpha1.NonBurstablePod{
				{Name: "b", Reason: schedulingv1alpha1.NotBurstableDisabled, Message: "bursting is switched off for this workload"},
				{Name: "c", Reason: schedulingv1alpha1.NotBurstableDisabled, Message: "bursting is switched off for this workload"},
			}},
		},
		{
			name: "max burst caps and counts pods already burst",
			p:    Params{Burst: true, LocalReplicas: 1, MaxBurst: 2, Trigger: schedulingv1alpha1.TriggerPending},
			pods: []PodState{pod("a", "r1", 1, Local), pod("b", "r1", 2, Virtual), pod("c", "r1", 3, Pending), pod("d", "r1", 4, Pending)},
			want: Plan{Burst: []string{"d"}, Local: 1, Virtual: 1, Pending: 2, BurstCount: 2, MaxBurstReached: true},
		},
		{
			name: "max burst zero: nothing bursts",
			p:    Params{Burst: true, MaxBurst: 0, Trigger: schedulingv1alpha1.TriggerPending},
			pods: []PodState{pod("a", "r1", 1, Pending)},
			want: Plan{Pending: 1, MaxBurstReached: true},
		},
		{
			name: "a refused pod stays local and is listed; the others burst",
			p:    pendingTrigger,
			pods: []PodState{pod("a", "r1", 1, Local), unsched(refused(pod("b", "r1", 2, Pending), schedulingv1alpha1.NotBurstableReservedPort), time.Second), pod("c", "r1", 3, Pending)},
			want: Plan{Burst: []string{"c"}, Local: 1, Pending: 2, BurstCount: 1, LocalWaiting: 1, NonBurstable: []schedulingv1alpha1.NonBurstablePod{
				{Name: "b", Reason: schedulingv1alpha1.NotBurstableReservedPort, Message: "m"},
			}},
		},
		{
			name: "rollout: the new revision keeps its own local floor",
			p:    overflow,
			pods: []PodState{
				pod("old-a", "r1", 1, Local), pod("old-b", "r1", 2, Virtual),
				unsched(pod("new-a", "r2", 10, Pending), 40*time.Second), unsched(pod("new-b", "r2", 11, Pending), 40*time.Second),
			},
			want: Plan{Burst: []string{"new-b"}, Local: 1, Virtual: 1, Pending: 2, BurstCount: 2, LocalWaiting: 1, RequeueAfter: 20 * time.Second},
		},
		{
			name: "rollout that cannot surge locally: hand-off after FloorHandoff while the old revision keeps the floor",
			p:    overflow,
			pods: []PodState{pod("old-a", "r1", 1, Local), unsched(pod("new-d", "r2", 10, Pending), 2*time.Minute)},
			want: Plan{Burst: []string{"new-d"}, Local: 1, Pending: 1, BurstCount: 1},
		},
		{
			name: "no hand-off when no other revision keeps the floor",
			p:    overflow,
			pods: []PodState{pod("old-a", "r1", 1, Virtual), unsched(pod("new-a", "r2", 10, Pending), 2*time.Minute)},
			want: Plan{Virtual: 1, Pending: 1, BurstCount: 1, LocalWaiting: 1},
		},
		{
			name: "gated seed: the newest three burst, the first is ungated to run locally",
			p:    pendingTrigger,
			pods: []PodState{gated(pod("a", "r1", 1, Pending)), gated(pod("b", "r1", 2, Pending)), gated(pod("c", "r1", 3, Pending)), gated(pod("d", "r1", 4, Pending))},
			want: Plan{Burst: []string{"b", "c", "d"}, Ungate: []string{"a"}, Pending: 4, BurstCount: 3},
		},
		{
			name: "gated pods are ungated when bursting is off, refused, capped or not due",
			p:    Params{Burst: true, MaxBurst: 1, Trigger: schedulingv1alpha1.TriggerUnschedulable},
			pods: []PodState{
				gated(refused(pod("a", "r1", 1, Pending), schedulingv1alpha1.NotBurstableFixedIP)),
				gated(pod("b", "r1", 2, Pending)),
				gated(unsched(pod("c", "r1", 3, Pending), time.Second)),
				gated(unsched(pod("d", "r1", 4, Pending), time.Second)),
			},
			want: Plan{Burst: []string{"d"}, Ungate: []string{"a", "b", "c"}, Pending: 4, BurstCount: 1, MaxBurstReached: true,
				NonBurstable: []schedulingv1alpha1.NonBurstablePod{{Name: "a", Reason: schedulingv1alpha1.NotBurstableFixedIP, Message: "m"}}},
		},
		{
			name: "scale-up arriving in batches: the pod already released stays local, the gated newcomer bursts",
			p:    pendingTrigger,
			pods: []PodState{gated(pod("a", "r1", 1, Pending)), pod("b", "r1", 2, Pending), burst(pod("c", "r1", 3, Pending)), burst(pod("d", "r1", 4, Pending))},
			want: Plan{Burst: []string{"a"}, Pending: 4, BurstCount: 3},
		},
		{
			name: "a burst pod that landed locally counts as local",
			p:    pendingTrigger,
			pods: []PodState{burst(pod("a", "r1", 1, Local)), pod("b", "r1", 2, Pending)},
			want: Plan{Burst: []string{"b"}, Local: 1, Pending: 1, BurstCount: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.p, tc.pods, now)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeletionCost(t *testing.T) {
	cases := []struct {
		name              string
		placement         Placement
		scaleIn           schedulingv1alpha1.ScaleInPolicy
		current           string
		hasCurrent, ours  bool
		want              string
		wantWrite, wantRm bool
	}{
		{name: "virtual pod gets the low cost", placement: Virtual, scaleIn: schedulingv1alpha1.ScaleInBurstFirst, want: BurstDeletionCost, wantWrite: true},
		{name: "already set", placement: Virtual, scaleIn: schedulingv1alpha1.ScaleInBurstFirst, current: BurstDeletionCost, hasCurrent: true, ours: true},
		{name: "a person's cost is kept", placement: Virtual, scaleIn: schedulingv1alpha1.ScaleInBurstFirst, current: "5", hasCurrent: true},
		{name: "local pod gets none", placement: Local, scaleIn: schedulingv1alpha1.ScaleInBurstFirst},
		{name: "pending pod gets none", placement: Pending, scaleIn: schedulingv1alpha1.ScaleInBurstFirst},
		{name: "scale-in Any removes ours", placement: Virtual, scaleIn: schedulingv1alpha1.ScaleInAny, current: BurstDeletionCost, hasCurrent: true, ours: true, wantRm: true},
		{name: "scale-in Any sets none", placement: Virtual, scaleIn: schedulingv1alpha1.ScaleInAny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, write, rm := DeletionCost(tc.placement, tc.scaleIn, tc.current, tc.hasCurrent, tc.ours)
			if want != tc.want || write != tc.wantWrite || rm != tc.wantRm {
				t.Errorf("DeletionCost = (%q, %v, %v), want (%q, %v, %v)", want, write, rm, tc.want, tc.wantWrite, tc.wantRm)
			}
		})
	}
}
