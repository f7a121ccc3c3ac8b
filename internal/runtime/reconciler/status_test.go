package reconciler

import (
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestStatusJSON: statuses compare as the API server stores them (only the
// status counts; sub-second times and nil against empty are equal), and a
// copy carrying another's status compares equal to it.
func TestStatusJSON(t *testing.T) {
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	binding := func(state string, when time.Time, mutate ...func(*networkingv1alpha1.AnycastIPBinding)) *networkingv1alpha1.AnycastIPBinding {
		b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1"}}
		b.Status.State = state
		b.SetConditions(xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionTrue, Reason: xpv2.ReasonAvailable, LastTransitionTime: metav1.NewTime(when)})
		for _, m := range mutate {
			m(b)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		a, b client.Object
		same bool
	}{
		{"same status", binding("BIND", at), binding("BIND", at), true},
		{"metadata does not count", binding("BIND", at), binding("BIND", at, func(b *networkingv1alpha1.AnycastIPBinding) {
			b.ResourceVersion, b.Labels = "2", map[string]string{"a": "b"}
			b.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate}}
		}), true},
		{"spec does not count", binding("BIND", at), binding("BIND", at, func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.NodeName = "n" }), true},
		{"sub-second times are equal", binding("BIND", at), binding("BIND", at.Add(300*time.Millisecond)), true},
		{"nil and empty conditions are equal", binding("", at, func(b *networkingv1alpha1.AnycastIPBinding) { b.Status.Conditions = nil }),
			binding("", at, func(b *networkingv1alpha1.AnycastIPBinding) { b.Status.Conditions = []xpv2.Condition{} }), true},
		{"another state", binding("BIND", at), binding("UNBIND", at), false},
		{"another condition time", binding("BIND", at), binding("BIND", at.Add(time.Second)), false},
		{"a kind without a status", &corev1.ConfigMap{}, &corev1.ConfigMap{Data: map[string]string{"a": "b"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := statusJSON(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := statusJSON(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if (a == b) != tc.same {
				t.Errorf("statusJSON equal = %v, want %v:\n%s\n%s", a == b, tc.same, a, b)
			}
		})
	}

	// A copy carrying another's status (a deferred status) compares equal to
	// it, keeps its own metadata and spec, and none of the status fields
	// the other status leaves out.
	from := binding("BIND", at)
	into := binding("UNBIND", at.Add(time.Hour), func(b *networkingv1alpha1.AnycastIPBinding) {
		b.Spec.NodeName, b.Status.PublicIP = "n", "198.19.0.1"
	})
	to, err := withStatusOf(into, from)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := statusJSON(from)
	b, _ := statusJSON(to)
	if a != b {
		t.Errorf("withStatusOf: %s, want %s", b, a)
	}
	if to.Spec.NodeName != "n" || to.ResourceVersion != "1" || into.Status.PublicIP != "198.19.0.1" || into.Status.State != "UNBIND" {
		t.Errorf("withStatusOf: spec %+v, metadata %+v, original status %+v: want the spec and metadata kept and the original untouched", to.Spec, to.ObjectMeta, into.Status)
	}
}

// BenchmarkStatusJSON encodes the status of a binding as the API server
// returns it, managed fields included.
func BenchmarkStatusJSON(b *testing.B) {
	obj := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1",
		Labels: map[string]string{"a": "b"}, Finalizers: []string{"f"}}}
	for range 4 {
		obj.ManagedFields = append(obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:crossplane.io/external-name":{}},"f:finalizers":{".":{},"v:\"f\"":{}}},"f:spec":{"f:nodeName":{}}}`)})
	}
	obj.Status.State = "BIND"
	obj.SetConditions(xpv2.Available(), xpv2.ReconcileSuccess())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := statusJSON(obj); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWithStatusOf lays a deferred status over a binding as the API
// server returns it, managed fields included (every pass that leaves
// progress unwritten does it once).
func BenchmarkWithStatusOf(b *testing.B) {
	obj := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", ResourceVersion: "1",
		Labels: map[string]string{"a": "b"}, Finalizers: []string{"f"}}}
	for range 4 {
		obj.ManagedFields = append(obj.ManagedFields, metav1.ManagedFieldsEntry{Manager: "manager", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{".":{},"f:crossplane.io/external-name":{}},"f:finalizers":{".":{},"v:\"f\"":{}}},"f:spec":{"f:nodeName":{}}}`)})
	}
	from := obj.DeepCopy()
	from.Status.State, from.Status.AddressID = "BINDING", "eip-12345678"
	from.SetConditions(xpv2.Creating(), xpv2.ReconcileSuccess())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := withStatusOf(obj, from); err != nil {
			b.Fatal(err)
		}
	}
}
