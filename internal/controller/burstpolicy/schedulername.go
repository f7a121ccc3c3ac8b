package burstpolicy

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// SchedulerNameReporter emits the SchedulerNameRewritten Event on a pod the
// pod webhook moved off tke-scheduler, once the pod exists: at admission it
// has no UID, and a pod of a workload not even a name, so the Event could
// not be found with the pod. It reports pods that are still pending when it
// first sees them (after a restart too, which may repeat an Event for a pod
// still waiting for the scheduler), never bound ones.
type SchedulerNameReporter struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers r for new pods with the rewrite annotation.
func (r *SchedulerNameReporter) SetupWithManager(mgr ctrl.Manager) error {
	rewritten := func(o client.Object) bool {
		p, ok := o.(*corev1.Pod)
		return ok && p.Spec.NodeName == "" && p.Annotations[schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom] != ""
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("burst-schedulername").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e event.CreateEvent) bool { return rewritten(e.Object) },
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		})).
		Complete(r); err != nil {
		return fmt.Errorf("building the burst-schedulername controller: %w", err)
	}
	return nil
}

// Reconcile emits the Event.
func (r *SchedulerNameReporter) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	from := pod.Annotations[schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom]
	if from == "" || r.Recorder == nil {
		return ctrl.Result{}, nil
	}
	r.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, schedulingv1alpha1.EventReasonSchedulerNameRewritten, "Admit",
		"schedulerName %s was replaced by %s: edgeplane bursts pods with the stock kube-scheduler, and no %s runs once the TKE resilience chart is gone (manager flag --burstpolicy-rewrite-tke-scheduler)",
		from, pod.Spec.SchedulerName, from)
	return ctrl.Result{}, nil
}
