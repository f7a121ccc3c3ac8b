package burstpolicy

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// effectiveTable is the legacy switch table in force: the
// ClusterBurstPolicy's, else fallback (the manager's flag), else LocalOptIn.
func effectiveTable(defaults *schedulingv1alpha1.ClusterBurstPolicySpec, fallback schedulingv1alpha1.LegacySwitchTable) schedulingv1alpha1.LegacySwitchTable {
	switch {
	case defaults != nil && defaults.LegacySwitchTable != "":
		return defaults.LegacySwitchTable
	case fallback != "":
		return fallback
	}
	return schedulingv1alpha1.SwitchTableLocalOptIn
}

// policyTable is the switch table a policy follows: a policy translated
// from the legacy annotations follows the legacy table in force; one a
// person wrote always follows LocalOverride, so its enabled: false opts out.
func policyTable(p *schedulingv1alpha1.BurstPolicy, defaults *schedulingv1alpha1.ClusterBurstPolicySpec, fallback schedulingv1alpha1.LegacySwitchTable) schedulingv1alpha1.LegacySwitchTable {
	if translator.IsTranslated(p) {
		return effectiveTable(defaults, fallback)
	}
	return schedulingv1alpha1.SwitchTableLocalOverride
}

// DefaultsReconciler reports the ClusterBurstPolicy's status: Ready, the
// switch table in effect, and with governs: AllPods the pods that mode
// burst or refused (Bursting). BurstPolicies read the object on every pass;
// ClusterWideReconciler does the bursting.
type DefaultsReconciler struct {
	Client client.Client
	// LegacySwitchTable applies when the ClusterBurstPolicy names none.
	LegacySwitchTable schedulingv1alpha1.LegacySwitchTable
}

// SetupWithManager registers r for the ClusterBurstPolicy and the pod
// changes its counts follow.
func (r *DefaultsReconciler) SetupWithManager(mgr ctrl.Manager) error {
	toDefault := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}}}
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named("clusterburstpolicy").
		For(&schedulingv1alpha1.ClusterBurstPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, toDefault, builder.WithPredicates(clusterWideMarked())).
		Complete(r); err != nil {
		return fmt.Errorf("building the clusterburstpolicy controller: %w", err)
	}
	return nil
}

// Reconcile sets the status.
func (r *DefaultsReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	d := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := d.DeepCopy()
	d.Status.LegacySwitchTable = effectiveTable(&d.Spec, r.LegacySwitchTable)
	off := d.Spec.Enabled != nil && !*d.Spec.Enabled
	msg := "bursting is on unless a BurstPolicy switches it off"
	if off {
		msg = "bursting is off unless a BurstPolicy switches it on"
	}
	if d.Spec.Governs == schedulingv1alpha1.GovernsAllPods {
		msg += "; every pod no BurstPolicy selects is governed too (governs: AllPods)"
	}
	status.SetReady(d, metav1.ConditionTrue, schedulingv1alpha1.ReasonAccepted, msg)

	if d.Spec.Governs != schedulingv1alpha1.GovernsAllPods {
		d.Status.BurstPods, d.Status.NonBurstablePods = nil, nil
		status.Set(d, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonSelectedPodsOnly,
			Message: "only pods a BurstPolicy selects burst; each BurstPolicy reports its own"})
	} else {
		burst, refused, err := r.countClusterWide(ctx, &d.Spec)
		if err != nil {
			return ctrl.Result{}, err
		}
		d.Status.BurstPods, d.Status.NonBurstablePods = &burst, &refused
		switch {
		case burst > 0:
			status.Set(d, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonPodsBurst,
				Message: fmt.Sprintf("%d pods no BurstPolicy selects are on or bound for virtual nodes (label %s=true)", burst, schedulingv1alpha1.LabelBurst)})
		case off:
			status.Set(d, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonBurstDisabled,
				Message: "enabled is false: only pods whose AUTO_SCALE_EKS switches bursting on burst"})
		default:
			status.Set(d, metav1.Condition{Type: schedulingv1alpha1.TypeBursting, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonNoBurstNeeded,
				Message: "no pod outside the BurstPolicies is on or bound for virtual nodes"})
		}
	}
	status.ObserveGeneration(d)
	return status.Patch(ctx, r.Client, before, d)
}

// countClusterWide counts the live pods the cluster-wide mode burst, and
// the pending ones it found unschedulable and refused (marked not-burstable
// and governed by no BurstPolicy), from the cache.
func (r *DefaultsReconciler) countClusterWide(ctx context.Context, spec *schedulingv1alpha1.ClusterBurstPolicySpec) (burst, refused int32, err error) {
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, fmt.Errorf("listing pods: %w", err)
	}
	policies := &schedulingv1alpha1.BurstPolicyList{}
	if err := r.Client.List(ctx, policies, client.UnsafeDisableDeepCopy); err != nil {
		return 0, 0, fmt.Errorf("listing BurstPolicies: %w", err)
	}
	byNamespace := map[string][]podMatcher{}
	for i := range policies.Items {
		p := &policies.Items[i]
		if m, known := policyPods(p); known && p.DeletionTimestamp.IsZero() {
			byNamespace[p.Namespace] = append(byNamespace[p.Namespace], m)
		}
	}
	excluded := restrictions(spec).ExcludedNamespaces
	for i := range pods.Items {
		p := &pods.Items[i]
		if !p.DeletionTimestamp.IsZero() || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		switch {
		case p.Annotations[schedulingv1alpha1.AnnotationBurstPolicy] == schedulingv1alpha1.ClusterWideBurstMark:
			burst++
		case p.Spec.NodeName == "" && p.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != "" && !slices.Contains(excluded, p.Namespace) &&
			!slices.ContainsFunc(byNamespace[p.Namespace], func(m podMatcher) bool { return m.matches(p) }):
			refused++
		}
	}
	return burst, refused, nil
}
