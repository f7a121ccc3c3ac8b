package floatippool

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestPoolChanges: a pool's own status write does not bring it back, every
// change its reconcile must follow does.
func TestPoolChanges(t *testing.T) {
	base := func() *networkingv1alpha1.FloatIPPool {
		return &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1, ResourceVersion: "1",
				Finalizers: []string{networkingv1alpha1.FloatIPPoolFinalizer}},
			Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.0.0.1~10.0.0.9"}},
		}
	}
	now := metav1.Now()
	cases := []struct {
		name   string
		change func(p *networkingv1alpha1.FloatIPPool)
		want   bool
	}{
		{"status only", func(p *networkingv1alpha1.FloatIPPool) { p.Status.Allocated = 3; p.ResourceVersion = "2" }, false},
		{"spec (generation)", func(p *networkingv1alpha1.FloatIPPool) { p.Generation = 2 }, true},
		{"finalizer removed", func(p *networkingv1alpha1.FloatIPPool) { p.Finalizers = nil }, true},
		{"label", func(p *networkingv1alpha1.FloatIPPool) { p.Labels = map[string]string{"a": "b"} }, true},
		{"annotation", func(p *networkingv1alpha1.FloatIPPool) { p.Annotations = map[string]string{"a": "b"} }, true},
		{"deletion started", func(p *networkingv1alpha1.FloatIPPool) { p.DeletionTimestamp = &now }, true},
	}
	pred := poolChanges()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, cur := base(), base()
			tc.change(cur)
			if got := pred.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}); got != tc.want {
				t.Fatalf("update passed = %v, want %v", got, tc.want)
			}
		})
	}
	// A finalizer added (the reconcile's first write) is followed.
	old, cur := base(), base()
	old.Finalizers = nil
	if !pred.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: cur}) {
		t.Fatal("adding the finalizer was not followed")
	}
	if !pred.Create(event.CreateEvent{Object: base()}) || !pred.Delete(event.DeleteEvent{Object: base()}) {
		t.Fatal("create and delete must be followed")
	}
}
