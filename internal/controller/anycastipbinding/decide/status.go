package decide

import (
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// StatusWrite is what DeferStatus needs to know about a binding's status
// write.
type StatusWrite struct {
	// Written is the status this process last wrote; Next the one a pass
	// computed.
	Written, Next networkingv1alpha1.AnycastIPBindingStatus
	// ExternalName is the address recorded in the binding's annotations.
	ExternalName string
	// Age is the time since Written was written.
	Age time.Duration
	// Window is how long transitional progress may go unwritten (0: never).
	Window time.Duration
}

// DeferStatus reports whether the write of w.Next may be left to a later
// pass: it only moves transitional progress on (Ready=False, Creating or
// Binding, before and after) for the address already recorded in the
// annotations and in the written status, with no new error and nothing
// else changed, and the last write is younger than the window. The next
// step of such a binding follows within a task poll interval and its write
// carries the progress; a binding still in transition when the window has
// passed is written, so the stored status is never stale for long.
//
// A new binding's first progress is deferrable too: when the status was
// never written (Written is empty, Age counts from the recording of the
// address in the annotations, which is what a crash must not lose) and
// Next is transitional progress for that recorded address with a
// successful reconcile and nothing else. Most bindings are then written
// once, Ready, instead of Creating, Binding and Ready.
//
// An error, a new address on a written status, Ready, a spec change
// (generation) and anything a person must see is always written at once.
func DeferStatus(w StatusWrite) bool {
	if w.Window <= 0 || w.Age < 0 || w.Age >= w.Window {
		return false
	}
	if !transitionalReady(w.Next) || w.Next.AddressID == "" || w.Next.AddressID != w.ExternalName {
		return false
	}
	if NeverWritten(w.Written) {
		return onlySuccessfulSync(w.Next)
	}
	if !transitionalReady(w.Written) || w.Next.AddressID != w.Written.AddressID {
		return false
	}
	if w.Next.ObservedGeneration != w.Written.ObservedGeneration || w.Next.InstanceID != w.Written.InstanceID ||
		w.Next.AddressType != w.Written.AddressType || w.Next.Adopted != w.Written.Adopted {
		return false
	}
	// Every other condition (Synced above all: a reconcile error) must be
	// unchanged.
	return equality.Semantic.DeepEqual(otherConditions(w.Written), otherConditions(w.Next))
}

// NeverWritten reports whether s is the empty status of a binding no
// controller has written yet.
func NeverWritten(s networkingv1alpha1.AnycastIPBindingStatus) bool {
	return equality.Semantic.DeepEqual(s, networkingv1alpha1.AnycastIPBindingStatus{})
}

// onlySuccessfulSync reports whether Synced=True (ReconcileSuccess) is the
// only condition of s besides Ready and the kstatus ones.
func onlySuccessfulSync(s networkingv1alpha1.AnycastIPBindingStatus) bool {
	others := otherConditions(s)
	synced, ok := others[string(xpv2.TypeSynced)]
	return len(others) == 1 && ok && synced.Status == string(corev1.ConditionTrue) && synced.Reason == string(xpv2.ReasonReconcileSuccess)
}

// progressReasons are the Ready reasons of a binding on its way to bound.
var progressReasons = map[xpv2.ConditionReason]bool{
	xpv2.ReasonCreating:                     true,
	networkingv1alpha1.AnycastReasonBinding: true,
}

func transitionalReady(s networkingv1alpha1.AnycastIPBindingStatus) bool {
	r := s.GetCondition(xpv2.TypeReady)
	if r.Status != corev1.ConditionFalse || !progressReasons[r.Reason] {
		return false
	}
	st := s.GetCondition(status.TypeStalled)
	return st.Status != corev1.ConditionTrue
}

// condition is a condition without its times.
type condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
}

// otherConditions are the conditions but Ready and the kstatus ones that
// follow it, by type.
func otherConditions(s networkingv1alpha1.AnycastIPBindingStatus) map[string]condition {
	out := map[string]condition{}
	for _, c := range s.Conditions {
		switch c.Type {
		case xpv2.TypeReady, status.TypeReconciling, status.TypeStalled:
			continue
		}
		out[string(c.Type)] = condition{Type: string(c.Type), Status: string(c.Status), Reason: string(c.Reason), Message: c.Message, ObservedGeneration: c.ObservedGeneration}
	}
	return out
}

// LikelyAllocation reports whether a pass of a binding will likely ask for
// an allocation: nothing is recorded, it is not being deleted, and it is
// new or was last seen allocating (not blocked, which waits for a change).
func LikelyAllocation(externalName string, deleting bool, readyReason string) bool {
	if externalName != "" || deleting {
		return false
	}
	switch readyReason {
	case "", string(xpv2.ReasonCreating), networkingv1alpha1.AnycastReasonTaskFailed:
		return true
	}
	return false
}
