package burstpolicy

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// maxNonBurstable bounds status.nonBurstablePods (the CRD's MaxItems).
const maxNonBurstable = 100

// computeStatus fills the policy's status from what the pass learned. It
// reads nothing and writes only s.policy.Status.
func computeStatus(s *scope) {
	p := s.policy
	status.MarkUnknownIfMissing(p, schedulingv1alpha1.ReasonReconciling, "not reconciled yet",
		schedulingv1alpha1.TypeReady, schedulingv1alpha1.TypeBursting, schedulingv1alpha1.TypeLocalCapacityShort)

	switch {
	case s.targetErr != nil:
		p.Status.Target = targetName(p)
		if s.targetErr.reason == schedulingv1alpha1.ReasonTargetNotFound {
			// The target may yet be created: waiting, not failed.
			status.SetReady(p, metav1.ConditionFalse, s.targetErr.reason, s.targetErr.message)
		} else {
			status.SetStalled(p, s.targetErr.reason, s.targetErr.message)
		}
		status.ObserveGeneration(p)
		return
	case s.plan == nil:
		return // a transient error; the conditions keep their last state
	}

	plan := s.plan
	p.Status.Target = s.target.name
	p.Status.Selector = ""
	if s.target.selector != nil {
		p.Status.Selector = s.target.selector.String()
	}
	p.Status.LocalReplicas = plan.Local
	p.Status.BurstReplicas = plan.Virtual
	p.Status.PendingReplicas = plan.Pending
	nb := plan.NonBurstable
	if len(nb) > maxNonBurstable {
		nb = nb[:maxNonBurstable]
	}
	p.Status.NonBurstablePods = nb

	total := plan.Local + plan.Virtual + plan.Pending
	status.SetReady(p, metav1.ConditionTrue, schedulingv1alpha1.ReasonReconciled,
		fmt.Sprintf("governs %d pods of %s", total, s.target.name))

	switch {
	case !s.sw.Burst:
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionFalse,
			Reason: schedulingv1alpha1.ReasonBurstDisabled, Message: disabledMessage(p, s.table)})
	case plan.MaxBurstReached:
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: conditionStatus(plan.BurstCount > 0),
			Reason: schedulingv1alpha1.ReasonMaxBurstReached, Message: fmt.Sprintf("%d pods are burst, the maximum; further pods wait for local capacity", plan.BurstCount)})
	case plan.BurstCount > 0:
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionTrue,
			Reason: schedulingv1alpha1.ReasonPodsBurst, Message: fmt.Sprintf("%d pods are on or bound for virtual nodes", plan.BurstCount)})
	default:
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionFalse,
			Reason: schedulingv1alpha1.ReasonNoBurstNeeded, Message: "every pod runs or waits on local nodes"})
	}

	if plan.LocalWaiting > 0 {
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeLocalCapacityShort, Status: metav1.ConditionTrue,
			Reason: schedulingv1alpha1.ReasonLocalReplicasWaiting, Message: fmt.Sprintf("%d pods that may not burst are unschedulable on local nodes", plan.LocalWaiting)})
	} else {
		status.Set(p, metav1.Condition{Type: schedulingv1alpha1.TypeLocalCapacityShort, Status: metav1.ConditionFalse,
			Reason: schedulingv1alpha1.ReasonLocalCapacitySufficient, Message: "no pod that must stay local is unschedulable"})
	}
	status.ObserveGeneration(p)
}

func disabledMessage(p *schedulingv1alpha1.BurstPolicy, table schedulingv1alpha1.LegacySwitchTable) string {
	switch {
	case table == schedulingv1alpha1.SwitchTableLocalOptIn && p.Spec.Enabled != nil:
		return "the ClusterBurstPolicy default has enabled: false and spec.enabled is not true (legacy switch table LocalOptIn)"
	case p.Spec.Enabled != nil:
		return "spec.enabled is false"
	}
	return "spec.enabled is unset and the ClusterBurstPolicy default has enabled: false"
}

func conditionStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

func targetName(p *schedulingv1alpha1.BurstPolicy) string {
	if p.Spec.TargetRef != nil {
		return p.Spec.TargetRef.Kind + "/" + p.Spec.TargetRef.Name
	}
	if p.Spec.Selector != nil {
		return metav1.FormatLabelSelector(p.Spec.Selector)
	}
	return ""
}
