package burstpolicy

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
)

// DefaultsReconciler reports the ClusterBurstPolicy as Ready: it has no
// other side; BurstPolicies read it on every pass.
type DefaultsReconciler struct {
	Client client.Client
}

// Reconcile sets Ready and observedGeneration.
func (r *DefaultsReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	d := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := d.DeepCopy()
	msg := "bursting is on unless a BurstPolicy switches it off"
	if d.Spec.Enabled != nil && !*d.Spec.Enabled {
		msg = "bursting is off unless a BurstPolicy switches it on"
	}
	status.SetReady(d, metav1.ConditionTrue, schedulingv1alpha1.ReasonAccepted, msg)
	status.ObserveGeneration(d)
	return status.Patch(ctx, r.Client, before, d)
}
