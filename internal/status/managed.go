package status

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Managed is a cloud-backed kind (a crossplane managed resource, reconciled
// by internal/runtime/reconciler): its status embeds crossplane's
// ManagedResourceStatus (ConditionedStatus and ObservedStatus), whose
// methods satisfy this.
type Managed interface {
	metav1.Object
	resource.Conditioned
	resource.ReconciliationObserver
}

// ObserveManagedGeneration records in status.observedGeneration that the
// cloud side has been observed for the current spec (crossplane stamps each
// condition's observedGeneration, but kstatus, Argo CD and printer columns
// read status.observedGeneration). The cloud reconciler calls it after every
// successful Observe. It reports whether the value changed.
func ObserveManagedGeneration(mg Managed) bool {
	if mg.GetObservedGeneration() == mg.GetGeneration() {
		return false
	}
	mg.SetObservedGeneration(mg.GetGeneration())
	return true
}

// ManagedKstatus returns the kstatus conditions that go with a managed
// kind's Ready condition, as SetReady and SetStalled keep them for in-cluster
// kinds: none True when Ready is True; Stalled=True when stalled (only a
// person can fix it: a bad spec, an account without the feature);
// Reconciling=True otherwise. Set them together with Ready.
func ManagedKstatus(ready xpv2.Condition, stalled bool) []xpv2.Condition {
	reconciling := xpv2.Condition{Type: TypeReconciling, Status: corev1.ConditionFalse, Reason: ready.Reason,
		LastTransitionTime: ready.LastTransitionTime, ObservedGeneration: ready.ObservedGeneration}
	stall := reconciling
	stall.Type = TypeStalled
	switch {
	case ready.Status == corev1.ConditionTrue:
	case stalled:
		stall.Status, stall.Message = corev1.ConditionTrue, ready.Message
	default:
		reconciling.Status, reconciling.Message = corev1.ConditionTrue, ready.Message
	}
	return []xpv2.Condition{reconciling, stall}
}
