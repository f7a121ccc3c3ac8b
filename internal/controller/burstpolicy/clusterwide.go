package burstpolicy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
)

// ClusterWideReconciler is the ClusterBurstPolicy's governs: AllPods, the
// legacy chart with its global switch on: a pending pod that no BurstPolicy
// selects bursts, without any annotation, once the scheduler reports it
// unschedulable and no restriction refuses it. A refused pod carries the
// reason (annotation scheduling.edgeplane.io/not-burstable and a Warning
// Event); a burst pod the label scheduling.edgeplane.io/burst=true, the
// annotation scheduling.edgeplane.io/burst-policy: ClusterBurstPolicy/default
// and, on a virtual node, the lower pod-deletion-cost. It works per pod: with
// no floor, a pod's decision needs no other pod.
type ClusterWideReconciler struct {
	Client   client.Client
	Reader   client.Reader
	Recorder events.EventRecorder
	// LegacySwitchTable applies when the ClusterBurstPolicy names none.
	LegacySwitchTable schedulingv1alpha1.LegacySwitchTable
	// Translated reports whether the legacy annotations of a pod with this
	// controller become a BurstPolicy, which then keeps its LOCAL_REPLICAS
	// floor (see LegacyTranslation); nil: none does.
	Translated func(controller *metav1.OwnerReference) bool
}

// SetupWithManager registers r for pods that may be pending or carry marks,
// the ClusterBurstPolicy and BurstPolicy removals.
func (r *ClusterWideReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := ctrl.NewControllerManagedBy(mgr).Named("burst-clusterwide").
		For(&corev1.Pod{}, builder.WithPredicates(predicate.NewPredicateFuncs(clusterWideCandidate), podChanged())).
		Watches(&schedulingv1alpha1.ClusterBurstPolicy{}, handler.EnqueueRequestsFromMapFunc(r.candidates("")), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&schedulingv1alpha1.BurstPolicy{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.candidates(o.GetNamespace())(ctx, o)
		}), builder.WithPredicates(policyGoneOrMoved())).
		Complete(r); err != nil {
		return fmt.Errorf("building the burst-clusterwide controller: %w", err)
	}
	return nil
}

// clusterWideCandidate reports whether the cluster-wide mode may act on a
// pod: it is not bound yet, or it carries edgeplane's marks.
func clusterWideCandidate(o client.Object) bool {
	p, ok := o.(*corev1.Pod)
	return ok && (p.Spec.NodeName == "" || hasMarks(p))
}

// candidates maps an event to the candidate pods of namespace (all
// namespaces when empty).
func (r *ClusterWideReconciler) candidates(namespace string) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		pods := &corev1.PodList{}
		if err := r.Client.List(ctx, pods, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			log.FromContext(ctx).Error(err, "Listing pods for the cluster-wide burst mode failed")
			return nil
		}
		var out []reconcile.Request
		for i := range pods.Items {
			if p := &pods.Items[i]; p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && clusterWideCandidate(p) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
			}
		}
		return out
	}
}

// Reconcile applies decide.ClusterWide to one pod.
func (r *ClusterWideReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	defaults := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, defaults); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := &defaults.Spec
	if spec.Governs != schedulingv1alpha1.GovernsAllPods || !defaults.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the cleanup controller reverts what this mode wrote
	}
	pod := &corev1.Pod{}
	if err := r.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return ctrl.Result{}, nil
	}
	restr := restrictions(spec)
	if slices.Contains(restr.ExcludedNamespaces, pod.Namespace) {
		return ctrl.Result{}, nil // never touched
	}
	governing, err := policiesFor(ctx, r.Client, pod, false)
	if err != nil {
		return ctrl.Result{}, err
	}
	if slices.ContainsFunc(governing, func(p *schedulingv1alpha1.BurstPolicy) bool { return p.DeletionTimestamp.IsZero() }) {
		return ctrl.Result{}, nil // its policy governs it
	}

	in, err := r.ungoverned(ctx, pod, spec, restr)
	if err != nil {
		return ctrl.Result{}, err
	}
	step := decide.ClusterWide(in)
	if step.Skip {
		return ctrl.Result{}, nil
	}
	return r.apply(ctx, pod, spec, in, step)
}

// restrictions are the ClusterBurstPolicy's restrictions, with the defaults.
func restrictions(spec *schedulingv1alpha1.ClusterBurstPolicySpec) decide.Restrictions {
	restr := decide.Restrictions{ExcludedNamespaces: spec.ExcludedNamespaces, AllowFixedIP: spec.AllowFixedIP}
	if spec.ExcludedNamespaces == nil {
		restr.ExcludedNamespaces = decide.DefaultExcludedNamespaces
	}
	return restr
}

// ungoverned gathers what decide.ClusterWide needs about the pod.
func (r *ClusterWideReconciler) ungoverned(ctx context.Context, pod *corev1.Pod, spec *schedulingv1alpha1.ClusterBurstPolicySpec, restr decide.Restrictions) (decide.UngovernedPod, error) {
	in := decide.UngovernedPod{
		Burst:         len(decide.MissingTolerations(pod.Spec.Tolerations, decide.VirtualNodeTolerations(spec.VirtualNodes))) == 0,
		Gated:         hasGate(pod),
		Unschedulable: !unschedulableSince(pod).IsZero(),
		Marked:        pod.Labels[schedulingv1alpha1.LabelBurst] != "" || pod.Annotations[schedulingv1alpha1.AnnotationBurstPolicy] != "",
	}
	if v, ok := pod.Annotations[translate.AnnotationLocalReplicas]; ok && r.Translated != nil && r.Translated(metav1.GetControllerOfNoCopy(pod)) {
		_, err := decide.ParseLocalReplicas(v)
		in.Floor = err == nil
	}
	// The pod's own AUTO_SCALE_EKS (copied from its template) is the local
	// switch; an unparsable one counts as unset, as the translator reads it.
	local, _ := decide.ParseSwitch(pod.Annotations[translate.AnnotationAutoScaleEKS])
	in.Switch = decide.DecideSwitch(effectiveTable(spec, r.LegacySwitchTable), spec.Enabled, local)
	if pod.Spec.NodeName != "" {
		in.Placement = decide.Local
		node := &corev1.Node{}
		switch err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); {
		case err == nil:
			if decide.IsVirtualNode(node.Labels, decide.VirtualNodeSelector(spec.VirtualNodes)) {
				in.Placement = decide.Virtual
			}
		case !apierrors.IsNotFound(err):
			return in, fmt.Errorf("getting node %s: %w", pod.Spec.NodeName, err)
		}
		return in, nil
	}
	if !in.Burst && !in.Gated && in.Unschedulable && in.Switch.Burst {
		claims := map[string]decide.Claim{}
		if err := loadClaims(ctx, r.Reader, pod, claims); err != nil {
			return in, err
		}
		in.Refusal = decide.MayBurst(pod, restr, claims)
	}
	return in, nil
}

// apply writes the step to the pod in one patch, with its Events.
func (r *ClusterWideReconciler) apply(ctx context.Context, pod *corev1.Pod, spec *schedulingv1alpha1.ClusterBurstPolicySpec, in decide.UngovernedPod, step decide.ClusterWideStep) (ctrl.Result, error) {
	q := pod.DeepCopy()
	var ev *podEvent
	if step.Burst {
		q.Spec.Tolerations = append(q.Spec.Tolerations, decide.MissingTolerations(q.Spec.Tolerations, decide.VirtualNodeTolerations(spec.VirtualNodes))...)
		step.MarkBurst = true
		ev = &podEvent{corev1.EventTypeNormal, EventReasonBurst, "Added the virtual-node tolerations: the scheduler found no room on local nodes and the ClusterBurstPolicy default governs every pod (governs: AllPods)"}
	}
	if step.MarkBurst {
		setLabel(q, schedulingv1alpha1.LabelBurst, "true")
		setAnnotation(q, schedulingv1alpha1.AnnotationBurstPolicy, schedulingv1alpha1.ClusterWideBurstMark)
		cur, has := q.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]
		_, ours := q.Annotations[schedulingv1alpha1.AnnotationDeletionCostSetBy] // a policy's cost, adopted
		switch want, write, remove := decide.DeletionCost(in.Placement, schedulingv1alpha1.ScaleInBurstFirst, cur, has, ours); {
		case write:
			setAnnotation(q, schedulingv1alpha1.AnnotationPodDeletionCost, want)
			setAnnotation(q, schedulingv1alpha1.AnnotationDeletionCostSetBy, schedulingv1alpha1.ClusterWideBurstMark)
		case remove:
			delete(q.Annotations, schedulingv1alpha1.AnnotationPodDeletionCost)
			delete(q.Annotations, schedulingv1alpha1.AnnotationDeletionCostSetBy)
		case has && ours:
			setAnnotation(q, schedulingv1alpha1.AnnotationDeletionCostSetBy, schedulingv1alpha1.ClusterWideBurstMark)
		}
	}
	current, marked := q.Annotations[schedulingv1alpha1.AnnotationNotBurstable]
	switch {
	case step.NotBurstable != "" && current != step.NotBurstable:
		setAnnotation(q, schedulingv1alpha1.AnnotationNotBurstable, step.NotBurstable)
		ev = &podEvent{corev1.EventTypeWarning, step.NotBurstable, fmt.Sprintf("May not burst to virtual nodes (ClusterBurstPolicy default, governs: AllPods): %s", in.Refusal.Message)}
	case step.NotBurstable == "" && marked:
		delete(q.Annotations, schedulingv1alpha1.AnnotationNotBurstable)
	}
	if equalPodMarks(pod, q) {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Patch(ctx, q, client.MergeFromWithOptions(pod, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("patching pod %s: %w", client.ObjectKeyFromObject(pod), err))
	}
	if ev != nil && r.Recorder != nil {
		r.Recorder.Eventf(q, nil, ev.eventType, ev.reason, actionBurst, "%s", ev.note)
	}
	return ctrl.Result{}, nil
}

// equalPodMarks reports whether the step changed nothing the patch writes.
func equalPodMarks(a, b *corev1.Pod) bool {
	return len(a.Spec.Tolerations) == len(b.Spec.Tolerations) && maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations)
}

// clusterWideMarked passes pod events that change what the
// ClusterBurstPolicy's status counts.
func clusterWideMarked() predicate.Predicate {
	counted := func(o client.Object) bool {
		a := o.GetAnnotations()
		return a[schedulingv1alpha1.AnnotationBurstPolicy] == schedulingv1alpha1.ClusterWideBurstMark || a[schedulingv1alpha1.AnnotationNotBurstable] != ""
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return counted(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return counted(e.Object) },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if !counted(e.ObjectOld) && !counted(e.ObjectNew) {
				return false
			}
			o, ok1 := e.ObjectOld.(*corev1.Pod)
			n, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return true
			}
			return counted(o) != counted(n) || o.Spec.NodeName != n.Spec.NodeName || o.Status.Phase != n.Status.Phase ||
				!o.DeletionTimestamp.Equal(n.DeletionTimestamp) || o.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != n.Annotations[schedulingv1alpha1.AnnotationNotBurstable]
		},
	}
}
