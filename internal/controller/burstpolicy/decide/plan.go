package decide

import (
	"slices"
	"sort"
	"strings"
	"time"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Placement says where a governed pod is.
type Placement int

const (
	// Pending: not bound to a node yet.
	Pending Placement = iota
	// Local: bound to a node that is not virtual.
	Local
	// Virtual: bound to a virtual node.
	Virtual
)

// PodState is what Plan needs to know about one governed, non-terminating pod.
type PodState struct {
	Name string
	// Revision is the pod's template revision (pod-template-hash or
	// controller-revision-hash); "" when it has none.
	Revision string
	// Created orders pods: older pods are the first replicas.
	Created time.Time
	// Placement says where the pod is.
	Placement Placement
	// Burst says the pod already carries the burst tolerations.
	Burst bool
	// UnschedulableSince is when the scheduler last reported the pod
	// unschedulable, zero when it has not.
	UnschedulableSince time.Time
	// Refusal says why the pod may not burst (zero: it may).
	Refusal Refusal
	// Gated says the pod carries the burst-decision scheduling gate: the
	// scheduler ignores it until the plan bursts it (pinned to virtual
	// nodes) or ungates it (free to run locally).
	Gated bool
}

// Params are a policy's inputs to Plan.
type Params struct {
	// Burst is the switch table's outcome.
	Burst bool
	// LocalReplicas is the effective local floor.
	LocalReplicas int32
	// MaxBurst caps the burst pods; negative means no cap.
	MaxBurst int32
	// Trigger says when a pod beyond the floor bursts.
	Trigger schedulingv1alpha1.BurstTrigger
	// BurstAfter is how long a pod must have been unschedulable (trigger Unschedulable).
	BurstAfter time.Duration
	// FloorHandoff is how long a pod that the floor of its own revision holds
	// back waits before it may burst anyway, as long as pods of other
	// revisions keep the floor on local nodes. It keeps rollouts that cannot
	// surge locally (StatefulSets, maxUnavailable 0) from waiting forever.
	FloorHandoff time.Duration
}

// Plan is what to do with a policy's pods now.
type Plan struct {
	// Burst lists the pods to burst now, by name, sorted.
	Burst []string
	// Ungate lists gated pods that do not burst now and go to the scheduler
	// as local pods, sorted.
	Ungate []string
	// NonBurstable lists pending pods that may not burst, sorted by name.
	NonBurstable []schedulingv1alpha1.NonBurstablePod
	// Local, Virtual and Pending count the pods by placement.
	Local, Virtual, Pending int32
	// BurstCount counts pods on or bound for virtual nodes after the plan.
	BurstCount int32
	// LocalWaiting counts pending pods held back for the local floor that
	// the scheduler reported unschedulable.
	LocalWaiting int32
	// MaxBurstReached says pods that could burst wait for the cap.
	MaxBurstReached bool
	// RequeueAfter is when a pod that is not due yet becomes due; 0 if none.
	RequeueAfter time.Duration
}

// Decide computes the plan for pods at now.
//
// The local floor is counted per revision: within one revision, the pods that
// are held local (bound to a local node, or pending without the burst
// tolerations) must stay at least LocalReplicas, so a rollout keeps N replicas
// of the new revision local (the old revision's local pods are deleted last,
// see DeletionCost). A pod beyond the floor bursts when it is due: at once
// with trigger Pending, after BurstAfter of being unschedulable with trigger
// Unschedulable. Gated pods burst before pods already released to the
// scheduler, and newer pods before older ones, so the first replicas stay local.
// Gated pods that do not burst now are ungated: they are the local replicas.
func Decide(p Params, pods []PodState, now time.Time) Plan {
	var plan Plan
	held := map[string]int32{}      // per revision: pods held local
	heldOther := map[string]int32{} // per revision: pods bound local in the other revisions
	var localTotal int32
	for _, s := range pods {
		switch s.Placement {
		case Local:
			plan.Local++
			held[s.Revision]++
			localTotal++
		case Virtual:
			plan.Virtual++
			plan.BurstCount++
		case Pending:
			plan.Pending++
			if s.Burst {
				plan.BurstCount++
			} else {
				held[s.Revision]++
			}
		}
	}
	localByRev := map[string]int32{}
	for _, s := range pods {
		if s.Placement == Local {
			localByRev[s.Revision]++
		}
	}
	for rev := range held {
		heldOther[rev] = localTotal - localByRev[rev]
	}

	// Candidates: pending pods without the burst tolerations. Gated pods
	// burst first: they can still be pinned, and a pod already released as
	// a local replica stays one, so the choice of local replicas does not
	// change as more pods of a scale-up arrive. Then newest first.
	var cands []PodState
	for _, s := range pods {
		if s.Placement == Pending && !s.Burst {
			cands = append(cands, s)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Gated != cands[j].Gated {
			return cands[i].Gated
		}
		if !cands[i].Created.Equal(cands[j].Created) {
			return cands[i].Created.After(cands[j].Created)
		}
		return cands[i].Name > cands[j].Name
	})

	var requeue time.Duration
	due := func(s PodState, wait time.Duration) bool {
		if p.Trigger == schedulingv1alpha1.TriggerPending && wait == 0 {
			return true
		}
		if s.UnschedulableSince.IsZero() {
			return false
		}
		left := s.UnschedulableSince.Add(wait).Sub(now)
		if left <= 0 {
			return true
		}
		if requeue == 0 || left < requeue {
			requeue = left
		}
		return false
	}

	for _, s := range cands {
		if s.Refusal.Refused() {
			plan.NonBurstable = append(plan.NonBurstable, schedulingv1alpha1.NonBurstablePod{Name: s.Name, Reason: s.Refusal.Reason, Message: s.Refusal.Message})
			if !s.UnschedulableSince.IsZero() {
				plan.LocalWaiting++
			}
			continue
		}
		if !p.Burst {
			plan.NonBurstable = append(plan.NonBurstable, schedulingv1alpha1.NonBurstablePod{Name: s.Name, Reason: schedulingv1alpha1.NotBurstableDisabled, Message: "bursting is switched off for this workload"})
			if !s.UnschedulableSince.IsZero() {
				plan.LocalWaiting++
			}
			continue
		}
		beyondFloor := held[s.Revision]-1 >= p.LocalReplicas
		handoff := false
		if !beyondFloor && heldOther[s.Revision] >= p.LocalReplicas && p.LocalReplicas > 0 {
			// The floor is kept by another revision's local pods: after
			// FloorHandoff of waiting, this pod may burst anyway.
			handoff = due(s, max(p.FloorHandoff, p.BurstAfter))
		}
		if !beyondFloor && !handoff {
			if !s.UnschedulableSince.IsZero() {
				plan.LocalWaiting++
			}
			continue
		}
		wait := p.BurstAfter
		if p.Trigger == schedulingv1alpha1.TriggerPending {
			wait = 0
		}
		if beyondFloor && !due(s, wait) {
			continue
		}
		if p.MaxBurst >= 0 && plan.BurstCount >= p.MaxBurst {
			plan.MaxBurstReached = true
			continue
		}
		plan.Burst = append(plan.Burst, s.Name)
		plan.BurstCount++
		held[s.Revision]--
	}
	plan.RequeueAfter = requeue
	bursting := make(map[string]bool, len(plan.Burst))
	for _, name := range plan.Burst {
		bursting[name] = true
	}
	for _, s := range cands {
		if s.Gated && !bursting[s.Name] {
			plan.Ungate = append(plan.Ungate, s.Name)
		}
	}
	slices.Sort(plan.Ungate)
	slices.Sort(plan.Burst)
	slices.SortFunc(plan.NonBurstable, func(a, b schedulingv1alpha1.NonBurstablePod) int { return strings.Compare(a.Name, b.Name) })
	return plan
}

// BurstDeletionCost is the pod-deletion-cost given to pods on virtual nodes
// under ScaleIn BurstFirst; pods without the annotation count as 0, so burst
// pods go first.
const BurstDeletionCost = "-100"

// DeletionCost says which pod-deletion-cost a pod should carry: want is the
// value and set says whether edgeplane should write it. current is the pod's
// current value and ours whether edgeplane wrote it. A cost a person set is
// never touched.
func DeletionCost(placement Placement, scaleIn schedulingv1alpha1.ScaleInPolicy, current string, hasCurrent, ours bool) (want string, write, remove bool) {
	if hasCurrent && !ours {
		return "", false, false
	}
	wantCost := placement == Virtual && scaleIn != schedulingv1alpha1.ScaleInAny
	switch {
	case wantCost && current != BurstDeletionCost:
		return BurstDeletionCost, true, false
	case !wantCost && hasCurrent && ours:
		return "", false, true
	}
	return "", false, false
}
