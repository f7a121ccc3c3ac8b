package burstpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// EventReasonMarksReverted: no BurstPolicy governs the pod any more, and
// edgeplane removed its deletion cost and bookkeeping marks.
const EventReasonMarksReverted = "BurstMarksReverted"

// CleanupReconciler returns pods that no BurstPolicy governs any more (the
// policy was deleted, or no longer selects them) to plain behaviour: it
// removes the deletion cost edgeplane wrote and edgeplane's labels and
// annotations. It works from the pod side, so deleting a policy needs no
// finalizer: it also cleans up after a policy deleted while the manager was
// down. Tolerations stay (a pod's tolerations cannot be removed): a burst
// pod keeps running where it is until it is replaced, and its replacement
// is a plain pod.
type CleanupReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers r for pods with edgeplane's marks and for
// policy deletions.
func (r *CleanupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	marked := predicate.NewPredicateFuncs(func(o client.Object) bool { return hasMarks(o) })
	if err := ctrl.NewControllerManagedBy(mgr).Named("burst-cleanup").
		For(&corev1.Pod{}, builder.WithPredicates(marked)).
		Watches(&schedulingv1alpha1.BurstPolicy{}, handler.EnqueueRequestsFromMapFunc(r.markedPods), builder.WithPredicates(policyGoneOrMoved())).
		Watches(&schedulingv1alpha1.ClusterBurstPolicy{}, handler.EnqueueRequestsFromMapFunc(r.markedPods), builder.WithPredicates(clusterPolicyNarrowed())).
		Complete(r); err != nil {
		return fmt.Errorf("building the burst-cleanup controller: %w", err)
	}
	return nil
}

// Reconcile removes the pod's marks when no live policy selects it.
func (r *CleanupReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pod.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	marks := decide.RevertMarks(pod.Labels, pod.Annotations, false)
	if marks.Empty() {
		return ctrl.Result{}, nil
	}
	governed, err := r.governed(ctx, pod)
	if err != nil || governed {
		return ctrl.Result{}, err
	}
	before := pod.DeepCopy()
	removeMarks(pod, marks)
	if err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing the burst marks of pod %s: %w", req.NamespacedName, err))
	}
	log.FromContext(ctx).Info("Reverted the burst marks of a pod no BurstPolicy governs", "pod", req.NamespacedName, "removed", strings.Join(append(marks.Labels, marks.Annotations...), ","))
	if r.Recorder != nil {
		r.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, EventReasonMarksReverted, "Revert",
			"No BurstPolicy governs the pod any more: removed %s; its tolerations stay until the pod is replaced", strings.Join(append(marks.Labels, marks.Annotations...), ", "))
	}
	return ctrl.Result{}, nil
}

// governed reports whether a live policy of the pod's namespace selects it
// (or may: a policy whose selector is not known yet counts), or the
// ClusterBurstPolicy governs every pod (governs: AllPods; the
// ClusterWideReconciler then keeps, or adopts, the pod's marks).
func (r *CleanupReconciler) governed(ctx context.Context, pod *corev1.Pod) (bool, error) {
	policies, err := policiesFor(ctx, r.Client, pod, true)
	if err != nil {
		return false, err
	}
	for _, p := range policies {
		if p.DeletionTimestamp.IsZero() {
			return true, nil
		}
	}
	d := &schedulingv1alpha1.ClusterBurstPolicy{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, d); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("getting ClusterBurstPolicy %s: %w", schedulingv1alpha1.DefaultClusterBurstPolicyName, err)
	}
	return d.Spec.Governs == schedulingv1alpha1.GovernsAllPods && d.DeletionTimestamp.IsZero() &&
		!slices.Contains(restrictions(&d.Spec).ExcludedNamespaces, pod.Namespace), nil
}

// clusterPolicyNarrowed passes the ClusterBurstPolicy changes after which
// it may govern fewer pods: its deletion and spec changes.
func clusterPolicyNarrowed() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || !e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	}
}

// markedPods maps a policy to the pods of its namespace that carry marks
// (the ClusterBurstPolicy, which has none, to those of every namespace).
func (r *CleanupReconciler) markedPods(ctx context.Context, obj client.Object) []reconcile.Request {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "Listing pods for a removed BurstPolicy failed", "policy", client.ObjectKeyFromObject(obj))
		return nil
	}
	var out []reconcile.Request
	for i := range pods.Items {
		if hasMarks(&pods.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pods.Items[i])})
		}
	}
	return out
}

// policyGoneOrMoved passes policy deletions and selector changes: the
// events after which pods may be governed by no policy.
func policyGoneOrMoved() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*schedulingv1alpha1.BurstPolicy)
			n, ok2 := e.ObjectNew.(*schedulingv1alpha1.BurstPolicy)
			if !ok1 || !ok2 {
				return false
			}
			return o.Status.Selector != n.Status.Selector || o.Generation != n.Generation || !n.DeletionTimestamp.IsZero()
		},
	}
}

// hasMarks reports whether a pod carries any of edgeplane's burst marks.
func hasMarks(o client.Object) bool {
	return !decide.RevertMarks(o.GetLabels(), o.GetAnnotations(), false).Empty()
}

// removeMarks deletes the marks from the pod.
func removeMarks(p *corev1.Pod, m decide.Marks) {
	for _, k := range m.Labels {
		delete(p.Labels, k)
	}
	for _, k := range m.Annotations {
		delete(p.Annotations, k)
	}
}
