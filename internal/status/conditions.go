// Package status makes every edgeplane kind report observedGeneration and
// Ready the same way.
//
// There are two families (docs/architecture.md, "Reconcilers"):
//
//   - In-cluster kinds (reconciled by controller-runtime reconcilers) keep
//     []metav1.Condition and status.observedGeneration and implement Object.
//     Their reconcilers compute status in pure functions with Set, SetReady,
//     MarkUnknownIfMissing and ObserveGeneration, then write it once with
//     Patch.
//   - Cloud-backed kinds (reconciled by crossplane-runtime's managed
//     reconciler) use crossplane's Ready/Synced conditions, which that
//     reconciler sets and writes itself; see Managed and
//     ObserveManagedGeneration for the one thing it leaves out.
//
// Condition messages must be stable: no timestamps, no request IDs, sorted
// lists. A message that changes on every pass makes every pass write status.
package status

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TypeReady is the condition every edgeplane kind exposes, so that
// `kubectl wait --for=condition=Ready`, kstatus and Argo CD health work.
const TypeReady = "Ready"

// kstatus's "abnormal-true" conditions, which GitOps tools (Flux, Argo CD
// through kstatus, cli-utils appliers) read before Ready: Reconciling=True
// means in progress, Stalled=True means failed until a person changes
// something. SetReady and SetStalled keep them in step with Ready.
const (
	TypeReconciling = "Reconciling"
	TypeStalled     = "Stalled"
)

// Object is an in-cluster kind whose status holds metav1.Conditions and an
// observedGeneration. API types implement it with four one-line accessors on
// their status.
type Object interface {
	client.Object
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// Set sets cond on obj, replacing any condition of the same type. It stamps
// cond.ObservedGeneration with obj's metadata.generation, and moves
// LastTransitionTime only when the status changes (to cond's, or now if
// cond's is zero), as meta.SetStatusCondition does. It reports whether the
// conditions changed.
func Set(obj Object, cond metav1.Condition) bool {
	cond.ObservedGeneration = obj.GetGeneration()
	// Clone so that a caller's DeepCopy taken before the change is never
	// modified through a shared backing array.
	conds := slices.Clone(obj.GetConditions())
	if !meta.SetStatusCondition(&conds, cond) {
		return false
	}
	obj.SetConditions(conds)
	return true
}

// SetReady sets the Ready condition (see Set) and the kstatus conditions that
// go with it: none when Ready is True; Reconciling=True with the same reason
// and message when it is False or Unknown, for something the controller is
// still working on or waiting for. Use SetStalled for what it cannot fix.
func SetReady(obj Object, status metav1.ConditionStatus, reason, message string) bool {
	changed := Set(obj, metav1.Condition{Type: TypeReady, Status: status, Reason: reason, Message: message})
	changed = remove(obj, TypeStalled) || changed
	if status == metav1.ConditionTrue {
		return remove(obj, TypeReconciling) || changed
	}
	return Set(obj, metav1.Condition{Type: TypeReconciling, Status: metav1.ConditionTrue, Reason: reason, Message: message}) || changed
}

// SetStalled marks obj failed for a reason only a person can fix (an invalid
// or conflicting spec): Ready=False and Stalled=True with reason and
// message, and no Reconciling.
func SetStalled(obj Object, reason, message string) bool {
	changed := Set(obj, metav1.Condition{Type: TypeReady, Status: metav1.ConditionFalse, Reason: reason, Message: message})
	changed = remove(obj, TypeReconciling) || changed
	return Set(obj, metav1.Condition{Type: TypeStalled, Status: metav1.ConditionTrue, Reason: reason, Message: message}) || changed
}

// remove deletes obj's condition of the given type; it reports whether there was one.
func remove(obj Object, conditionType string) bool {
	if meta.FindStatusCondition(obj.GetConditions(), conditionType) == nil {
		return false
	}
	conds := slices.Clone(obj.GetConditions())
	meta.RemoveStatusCondition(&conds, conditionType)
	obj.SetConditions(conds)
	return true
}

// MarkUnknownIfMissing sets each of conditionTypes that obj does not have yet
// to Unknown with reason and message, so a first visit shows every condition
// a kind documents. Existing conditions are left untouched. It reports
// whether anything changed.
func MarkUnknownIfMissing(obj Object, reason, message string, conditionTypes ...string) bool {
	changed := false
	for _, t := range conditionTypes {
		if meta.FindStatusCondition(obj.GetConditions(), t) != nil {
			continue
		}
		changed = Set(obj, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: message}) || changed
	}
	return changed
}

// ObserveGeneration records in status.observedGeneration that the reconciler
// has acted on the current spec. Call it when a pass got to a verdict on the
// current generation (Ready True, or False for a reason only a person can
// fix); skip it on transient errors, so that tools keep reporting the object
// as progressing. It reports whether the value changed.
func ObserveGeneration(obj Object) bool {
	if obj.GetObservedGeneration() == obj.GetGeneration() {
		return false
	}
	obj.SetObservedGeneration(obj.GetGeneration())
	return true
}

// Get returns obj's condition of the given type, or nil.
func Get(obj Object, conditionType string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), conditionType)
}

// IsReady reports whether obj is Ready for its current generation: the Ready
// condition is True and was computed from the current spec. A Ready=True left
// over from an older generation does not count.
func IsReady(obj Object) bool {
	c := Get(obj, TypeReady)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == obj.GetGeneration()
}
