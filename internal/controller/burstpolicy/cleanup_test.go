package burstpolicy_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// marksOf returns of edgeplane's marks a pod still carries.
func marksOf(p *corev1.Pod) decide.Marks { return decide.RevertMarks(p.Labels, p.Annotations, false) }

// TestRevertOnSwitchOffAndDelete: switching a policy off removes the
// deletion costs and burst marks it wrote (the not-burstable reason of a
// pending pod stays); deleting it removes whatever is left from the pod
// side, without a finalizer, while a pod another policy governs keeps its
// marks. Tolerations stay.
func TestRevertOnSwitchOffAndDelete(t *testing.T) {
	ctx, ns := fixture(t, "revert")
	labels := map[string]string{"app": "rv"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "rv", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Enabled: ptr.To(true), Trigger: schedulingv1alpha1.TriggerPending, LocalReplicas: 1},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p0 := makePod(ctx, t, ns, "rv-0", labels, nil)
	p1 := makePod(ctx, t, ns, "rv-1", labels, nil)
	rec := events.NewFakeRecorder(1000)
	r := newReconciler(rec)
	reconcilePolicy(ctx, t, r, policy)
	bind(ctx, t, p0, localNode)
	bind(ctx, t, p1, virtualNode)
	reconcilePolicy(ctx, t, r, policy)
	if got := getPod(ctx, t, ns, "rv-1"); got.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost] != decide.BurstDeletionCost || !tolerates(got) {
		t.Fatalf("the burst pod was not set up: %v", got.Annotations)
	}

	// Switched off: costs and burst marks go, a pending pod says why.
	pending := makePod(ctx, t, ns, "rv-2", labels, nil)
	markUnschedulable(ctx, t, pending)
	policy.Spec.Enabled = ptr.To(false)
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	burst := getPod(ctx, t, ns, "rv-1")
	if m := marksOf(burst); !m.Empty() {
		t.Errorf("switched off, the burst pod keeps %+v", m)
	}
	if !tolerates(burst) {
		t.Errorf("the tolerations of a running burst pod were touched")
	}
	if got := getPod(ctx, t, ns, "rv-2").Annotations[schedulingv1alpha1.AnnotationNotBurstable]; got != schedulingv1alpha1.NotBurstableDisabled {
		t.Errorf("switched off, the pending pod's reason = %q, want %s", got, schedulingv1alpha1.NotBurstableDisabled)
	}

	// Switched on again, then deleted: the pod-side cleanup reverts the
	// rest, except where another policy governs the pod.
	policy.Spec.Enabled = ptr.To(true)
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	if got := getPod(ctx, t, ns, "rv-1").Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]; got != decide.BurstDeletionCost {
		t.Fatalf("switched on again, the burst pod's cost = %q", got)
	}
	other := makePod(ctx, t, ns, "other-0", map[string]string{"app": "other"}, func(p *corev1.Pod) {
		p.Annotations = map[string]string{schedulingv1alpha1.AnnotationNotBurstable: schedulingv1alpha1.NotBurstableDisabled}
	})
	otherPolicy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}},
	}
	if err := env.Client.Create(ctx, otherPolicy); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	if got := getPod(ctx, t, ns, "rv-1"); got.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost] != decide.BurstDeletionCost {
		t.Fatalf("the cost went away before the cleanup ran: %v", got.Annotations)
	}
	c := &burstpolicy.CleanupReconciler{Client: env.Client, Recorder: rec}
	for _, name := range []string{"rv-0", "rv-1", "rv-2", "other-0"} {
		if _, err := c.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}); err != nil {
			t.Fatalf("cleanup of %s: %v", name, err)
		}
	}
	for _, name := range []string{"rv-0", "rv-1", "rv-2"} {
		if m := marksOf(getPod(ctx, t, ns, name)); !m.Empty() {
			t.Errorf("%s keeps %+v after its policy was deleted", name, m)
		}
	}
	if !tolerates(getPod(ctx, t, ns, "rv-1")) {
		t.Errorf("the tolerations of a running burst pod were touched")
	}
	if m := marksOf(getPod(ctx, t, ns, other.Name)); m.Empty() {
		t.Errorf("a pod another policy governs lost its marks")
	}
	if !hasEvent(rec, burstpolicy.EventReasonMarksReverted) {
		t.Errorf("no %s event", burstpolicy.EventReasonMarksReverted)
	}
}
