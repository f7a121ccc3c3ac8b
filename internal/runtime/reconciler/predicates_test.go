package reconciler

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestAnnotationsChanged(t *testing.T) {
	const failed, pending, succeeded = meta.AnnotationKeyExternalCreateFailed, meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateSucceeded
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		want          bool
	}{
		{"none", nil, nil, false},
		{"equal", map[string]string{"a": "1"}, map[string]string{"a": "1"}, false},
		{"nil and empty", nil, map[string]string{}, false},
		{"added", nil, map[string]string{"a": "1"}, true},
		{"changed", map[string]string{"a": "1"}, map[string]string{"a": "2"}, true},
		{"removed", map[string]string{"a": "1"}, map[string]string{}, true},
		{"external name set", nil, map[string]string{meta.AnnotationKeyExternalName: "eipalloc-1"}, true},
		{"pause", nil, map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}, true},
		{"create failed again", map[string]string{failed: "2026-01-01T00:00:00Z"}, map[string]string{failed: "2026-01-01T00:00:02Z"}, false},
		{"create recorded", nil, map[string]string{pending: "t", succeeded: "t"}, false},
		{"bookkeeping and a real change", map[string]string{failed: "t1"}, map[string]string{failed: "t2", "a": "1"}, true},
	} {
		if got := AnnotationsChanged(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: AnnotationsChanged(%v, %v) = %v, want %v", tc.name, tc.before, tc.after, got, tc.want)
		}
	}
}

// TestChanges: the reconciler's own writes (status, create bookkeeping)
// bring no pass; a spec, annotation, label or deletion change does.
func TestChanges(t *testing.T) {
	base := func() *networkingv1alpha1.PodElasticIP {
		return &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: 1,
			Annotations: map[string]string{meta.AnnotationKeyExternalName: "eipalloc-1"}, Labels: map[string]string{"l": "1"}}}
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		mutate func(*networkingv1alpha1.PodElasticIP)
		want   bool
	}{
		{"status", func(p *networkingv1alpha1.PodElasticIP) { p.Status.AllocationID = "eipalloc-1" }, false},
		{"create failed", func(p *networkingv1alpha1.PodElasticIP) { meta.SetExternalCreateFailed(p, now.Time) }, false},
		{"spec", func(p *networkingv1alpha1.PodElasticIP) { p.Generation = 2 }, true},
		{"external name", func(p *networkingv1alpha1.PodElasticIP) { meta.SetExternalName(p, "eipalloc-2") }, true},
		{"label", func(p *networkingv1alpha1.PodElasticIP) { p.Labels["l"] = "2" }, true},
		{"deletion", func(p *networkingv1alpha1.PodElasticIP) { p.DeletionTimestamp = &now }, true},
	} {
		before, after := base(), base()
		tc.mutate(after)
		if got := Changes().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after}); got != tc.want {
			t.Errorf("%s: Changes passes the update = %v, want %v", tc.name, got, tc.want)
		}
	}
}
