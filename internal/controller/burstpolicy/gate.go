package burstpolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
)

// EventReasonGateReleased: the burst-decision gate was removed without a
// decision (no policy governs the pod any more, or the decision took longer
// than the gate timeout), so the pod is scheduled as a local pod.
const EventReasonGateReleased = "BurstGateReleased"

// GateReconciler is the safety net of the pod gate: a gated pod that no
// policy governs, or that is still gated after Timeout, is released so that
// no pod waits for a decision forever.
type GateReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Timeout  time.Duration
	// Clock is the time the timeout is measured at; nil means the real
	// clock.
	Clock clock.PassiveClock
}

// SetupWithManager registers r for gated pods.
func (r *GateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	gated := predicate.NewPredicateFuncs(func(o client.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && hasGate(p)
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("burst-gate").
		For(&corev1.Pod{}, builder.WithPredicates(gated)).
		Complete(r); err != nil {
		return fmt.Errorf("building the burst-gate controller: %w", err)
	}
	return nil
}

// Reconcile releases the pod's gate when no policy governs it or it timed out.
func (r *GateReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !hasGate(pod) || !pod.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	now := time.Now()
	if r.Clock != nil {
		now = r.Clock.Now()
	}
	why := ""
	governed, err := r.governed(ctx, pod)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case !governed:
		why = "no BurstPolicy governs the pod any more"
	default:
		left := pod.CreationTimestamp.Add(r.Timeout).Sub(now)
		if left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		why = fmt.Sprintf("no burst decision within %s", r.Timeout)
	}
	before := pod.DeepCopy()
	removeGate(pod)
	if err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, fmt.Errorf("removing the burst gate of pod %s: %w", req.NamespacedName, err)
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(pod, nil, corev1.EventTypeWarning, EventReasonGateReleased, actionBurst, "Released the burst-decision gate: %s; the pod is scheduled as a local pod", why)
	}
	return ctrl.Result{}, nil
}

// governed reports whether a live policy with trigger Pending selects the
// pod, or the pod carries the legacy LOCAL_REPLICAS annotation (its policy
// is being translated; the timeout still applies).
func (r *GateReconciler) governed(ctx context.Context, pod *corev1.Pod) (bool, error) {
	if _, ok := pod.Annotations[translate.AnnotationLocalReplicas]; ok {
		return true, nil
	}
	list := &schedulingv1alpha1.BurstPolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		return false, fmt.Errorf("listing BurstPolicies: %w", err)
	}
	for i := range list.Items {
		p := &list.Items[i]
		if !p.DeletionTimestamp.IsZero() || p.Spec.Trigger != schedulingv1alpha1.TriggerPending {
			continue
		}
		if m, known := policyPods(p); known && m.matches(pod) {
			return true, nil
		}
	}
	return false, nil
}
