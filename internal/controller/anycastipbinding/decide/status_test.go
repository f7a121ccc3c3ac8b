package decide

import (
	"errors"
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// bindingStatus is a status with Ready (and its kstatus conditions) and
// Synced as the binding controller writes them.
func bindingStatus(ready corev1.ConditionStatus, reason xpv2.ConditionReason, msg string, mutate ...func(*networkingv1alpha1.AnycastIPBindingStatus)) networkingv1alpha1.AnycastIPBindingStatus {
	s := networkingv1alpha1.AnycastIPBindingStatus{AddressID: "eip-00000001", InstanceID: "ins-00000001", AddressType: "AnycastEIP", State: "CREATING"}
	s.ObservedGeneration = 1
	r := xpv2.Condition{Type: xpv2.TypeReady, Status: ready, Reason: reason, Message: msg, ObservedGeneration: 1}
	s.SetConditions(r, xpv2.ReconcileSuccess())
	s.SetConditions(status.ManagedKstatus(r, reason == networkingv1alpha1.AnycastReasonInstanceHasPublicIP)...)
	for _, m := range mutate {
		m(&s)
	}
	return s
}

func TestDeferStatus(t *testing.T) {
	creating := bindingStatus(corev1.ConditionFalse, xpv2.ReasonCreating, "")
	binding := bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonBinding, "binding eip-00000001 to ins-00000001", func(s *networkingv1alpha1.AnycastIPBindingStatus) {
		s.State, s.PublicIP = "BINDING", "198.19.0.1"
		s.PendingTask = &networkingv1alpha1.AnycastIPTask{ID: "7", Action: "AssociateAddress"}
	})
	const window = 300 * time.Millisecond
	base := StatusWrite{Written: creating, Next: binding, ExternalName: "eip-00000001", Age: 50 * time.Millisecond, Window: window}
	cases := map[string]struct {
		mutate func(*StatusWrite)
		want   bool
	}{
		"Creating to Binding, recent write": {want: true},
		"Binding to Binding (new message)": {mutate: func(w *StatusWrite) {
			w.Written = binding
			w.Next = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonBinding, "address eip-00000001 is UNBINDING")
		}, want: true},
		"window over":     {mutate: func(w *StatusWrite) { w.Age = window }},
		"no window":       {mutate: func(w *StatusWrite) { w.Window = 0 }},
		"clock went back": {mutate: func(w *StatusWrite) { w.Age = -time.Second }},
		"Available": {mutate: func(w *StatusWrite) {
			w.Next = bindingStatus(corev1.ConditionTrue, xpv2.ReasonAvailable, "")
		}},
		"task failed": {mutate: func(w *StatusWrite) {
			w.Next = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonTaskFailed, "the AssociateAddress task 7 FAILED")
		}},
		"throttled": {mutate: func(w *StatusWrite) {
			w.Next = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonThrottled, "RequestLimitExceeded")
		}},
		"stalled": {mutate: func(w *StatusWrite) {
			w.Next = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonInstanceHasPublicIP, "instance has eip-x")
		}},
		"recovering from an error": {mutate: func(w *StatusWrite) {
			w.Written = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonTaskFailed, "the AssociateAddress task 7 FAILED")
		}},
		"first write, Creating": {mutate: func(w *StatusWrite) {
			w.Written, w.Next = networkingv1alpha1.AnycastIPBindingStatus{}, creating
		}, want: true},
		"first write, Binding": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{}
		}, want: true},
		"first write, window over": {mutate: func(w *StatusWrite) {
			w.Written, w.Age = networkingv1alpha1.AnycastIPBindingStatus{}, window
		}},
		"first write, reconcile error": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{}
			w.Next.SetConditions(xpv2.ReconcileError(errTest))
		}},
		"first write, not synced yet": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{}
			w.Next.Conditions = slices.DeleteFunc(w.Next.Conditions, func(c xpv2.Condition) bool { return c.Type == xpv2.TypeSynced })
		}},
		"first write, another condition": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{}
			w.Next.SetConditions(xpv2.Condition{Type: "Paused", Status: corev1.ConditionTrue, Reason: "Paused"})
		}},
		"first write, address not recorded": {mutate: func(w *StatusWrite) {
			w.Written, w.ExternalName = networkingv1alpha1.AnycastIPBindingStatus{}, ""
		}},
		"first write, no address": {mutate: func(w *StatusWrite) {
			w.Written, w.Next.AddressID, w.ExternalName = networkingv1alpha1.AnycastIPBindingStatus{}, "", ""
		}},
		"first write, Available": {mutate: func(w *StatusWrite) {
			w.Written, w.Next = networkingv1alpha1.AnycastIPBindingStatus{}, bindingStatus(corev1.ConditionTrue, xpv2.ReasonAvailable, "")
		}},
		"first write, stalled": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{}
			w.Next = bindingStatus(corev1.ConditionFalse, networkingv1alpha1.AnycastReasonInstanceHasPublicIP, "instance has eip-x")
		}},
		"written by someone, not transitional": {mutate: func(w *StatusWrite) {
			w.Written = networkingv1alpha1.AnycastIPBindingStatus{AddressID: "eip-00000001"}
		}},
		"reconcile error": {mutate: func(w *StatusWrite) {
			w.Next.SetConditions(xpv2.ReconcileError(errTest))
		}},
		"address not recorded in the annotations": {mutate: func(w *StatusWrite) { w.ExternalName = "" }},
		"another address recorded":                {mutate: func(w *StatusWrite) { w.ExternalName = "eip-00000002" }},
		"new address": {mutate: func(w *StatusWrite) {
			w.Next.AddressID, w.ExternalName = "eip-00000002", "eip-00000002"
		}},
		"no address yet": {mutate: func(w *StatusWrite) {
			w.Written.AddressID, w.Next.AddressID, w.ExternalName = "", "", ""
		}},
		"spec changed":      {mutate: func(w *StatusWrite) { w.Next.ObservedGeneration = 2 }},
		"instance changed":  {mutate: func(w *StatusWrite) { w.Next.InstanceID = "ins-00000002" }},
		"type changed":      {mutate: func(w *StatusWrite) { w.Next.AddressType = "EIP" }},
		"adoption recorded": {mutate: func(w *StatusWrite) { w.Next.Adopted = "Legacy" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := base
			w.Written, w.Next = *base.Written.DeepCopy(), *base.Next.DeepCopy()
			want := true
			if tc.mutate != nil {
				tc.mutate(&w)
				want = tc.want
			}
			if got := DeferStatus(w); got != want {
				t.Errorf("DeferStatus = %v, want %v", got, want)
			}
		})
	}
}

var errTest = errors.New("boom")

func TestLikelyAllocation(t *testing.T) {
	cases := []struct {
		name         string
		externalName string
		deleting     bool
		reason       string
		want         bool
	}{
		{name: "new binding", want: true},
		{name: "allocating", reason: string(xpv2.ReasonCreating), want: true},
		{name: "after a failed allocation", reason: networkingv1alpha1.AnycastReasonTaskFailed, want: true},
		{name: "address recorded", externalName: "eip-00000001", reason: string(xpv2.ReasonCreating)},
		{name: "being deleted", deleting: true},
		{name: "blocked (quota)", reason: networkingv1alpha1.AnycastReasonQuotaExceeded},
		{name: "blocked (node)", reason: networkingv1alpha1.AnycastReasonNodeNotFound},
		{name: "bound", externalName: "eip-00000001", reason: string(xpv2.ReasonAvailable)},
	}
	for _, tc := range cases {
		if got := LikelyAllocation(tc.externalName, tc.deleting, tc.reason); got != tc.want {
			t.Errorf("%s: LikelyAllocation = %v, want %v", tc.name, got, tc.want)
		}
	}
}
