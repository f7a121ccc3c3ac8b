// Package providerconfig reconciles ProviderConfigs and ClusterProviderConfigs:
// it reports whether their credentials can be used (Ready), counts the managed
// resources that use them, and holds a config that is in use when it is deleted.
//
// crossplane-runtime's providerconfig reconciler does the last two for one usage
// kind; a ClusterProviderConfig here is used through two (namespaced usages from
// namespaced managed resources, cluster-scoped usages from cluster-scoped ones),
// so the counting is done here, with the same labels and the same contract.
package providerconfig

import (
	"context"
	"fmt"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// recheckInterval is how often the credentials Secret is looked at again.
// Secrets are read directly rather than watched, so that the manager does not
// cache every Secret of the cluster.
const recheckInterval = 5 * time.Minute

// Event reasons.
const (
	reasonInUse               = "InUse"
	reasonCredentialsReady    = "CredentialsReady"
	reasonCredentialsNotReady = "CredentialsNotReady"
)

// Configs get an in-use finalizer (update/patch) and status; usages are the
// records of which managed resource uses which config.
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=providerconfigs;clusterproviderconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=providerconfigs/status;clusterproviderconfigs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=providerconfigusages;clusterproviderconfigusages,verbs=get;list;watch;create;update;patch;delete
// Credentials Secrets are deliberately not in these markers: the manager may read
// Secrets only in the namespaces where provider configs keep them, through
// RoleBindings to the credentials-reader ClusterRole (config/rbac, chart value
// credentialNamespaces). Elsewhere the config reports SecretForbidden.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Setup registers the reconcilers of both config kinds.
func Setup(_ context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	kinds := []struct {
		name      string
		kind      string
		newConfig func() config
	}{
		{"providerconfig", cloudv1alpha1.ProviderConfigKind, func() config { return &cloudv1alpha1.ProviderConfig{} }},
		{"clusterproviderconfig", cloudv1alpha1.ClusterProviderConfigKind, func() config { return &cloudv1alpha1.ClusterProviderConfig{} }},
	}
	for _, k := range kinds {
		r := &Reconciler{
			client:    mgr.GetClient(),
			reader:    mgr.GetAPIReader(),
			recorder:  mgr.GetEventRecorder(k.name),
			newConfig: k.newConfig,
			kind:      k.kind,
			creds:     cfg.Credentials,
			tenancy:   cfg.Tenancy,
		}
		toConfig := handler.EnqueueRequestsFromMapFunc(usageToConfig(k.kind))
		b := ctrl.NewControllerManagedBy(mgr).Named(k.name).For(k.newConfig()).
			Watches(&cloudv1alpha1.ProviderConfigUsage{}, toConfig)
		if events := cfg.Credentials.Events(k.kind); events != nil {
			// The resource controllers report the cloud's refusals here.
			b = b.WatchesRawSource(source.Channel(events, &handler.EnqueueRequestForObject{}))
		}
		if k.kind == cloudv1alpha1.ClusterProviderConfigKind {
			b = b.Watches(&cloudv1alpha1.ClusterProviderConfigUsage{}, toConfig)
		}
		if err := b.Complete(r); err != nil {
			return fmt.Errorf("building the %s controller: %w", k.name, err)
		}
	}
	return nil
}

// usageToConfig maps a usage to the config of the given kind it records.
func usageToConfig(kind string) handler.MapFunc {
	return func(_ context.Context, o client.Object) []reconcile.Request {
		l := o.GetLabels()
		if l[xpv2.LabelKeyProviderKind] != kind || l[xpv2.LabelKeyProviderName] == "" {
			return nil
		}
		key := client.ObjectKey{Name: l[xpv2.LabelKeyProviderName]}
		if kind == cloudv1alpha1.ProviderConfigKind {
			key.Namespace = o.GetNamespace() // a ProviderConfig serves only its own namespace
		}
		return []reconcile.Request{{NamespacedName: key}}
	}
}

// Reconciler reconciles one of the two config kinds.
type Reconciler struct {
	client    client.Client
	reader    client.Reader // uncached, for Secrets
	recorder  events.EventRecorder
	newConfig func() config
	kind      string
	// creds holds the cloud's refusals of configs' credentials, reported
	// by the managed resources' controllers (nil: none reported).
	creds *credstatus.Board
	// tenancy judges ProviderConfigs (not ClusterProviderConfigs, which the
	// cluster admin owns).
	tenancy tenancy.Policy
}

// Reconcile counts the config's users, blocks its deletion while it has any,
// and reports whether its credentials can be used.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	obj := r.newConfig()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(config)
	v := viewOf(obj)
	gen := obj.GetGeneration()

	users, err := r.countUsers(ctx, obj, v.kind)
	if err != nil {
		return ctrl.Result{}, err
	}
	obj.SetUsers(users)

	if !obj.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, before, obj, users)
	}
	if controllerutil.AddFinalizer(obj, cloudv1alpha1.InUseFinalizer) {
		if err := r.client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer %s: %w", cloudv1alpha1.InUseFinalizer, err)
		}
		before = obj.DeepCopyObject().(config)
		obj.SetUsers(users)
	}

	if pc, ok := obj.(*cloudv1alpha1.ProviderConfig); ok {
		v.notAllowed = r.tenancy.Check(&pc.Spec)
	}
	var secret secretState
	if v.notAllowed == nil && v.source == cloudv1alpha1.CredentialsSecret && v.secret != nil {
		s := &corev1.Secret{}
		switch err := r.reader.Get(ctx, *v.secret, s); {
		case err == nil:
			secret.obj = s
		case apierrors.IsForbidden(err):
			secret.forbidden = true
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("reading credentials Secret %s: %w", v.secret, err)
		}
	}
	cond := readyCondition(v, secret)
	if rej, ok := r.creds.Rejected(credstatus.Ref{Kind: r.kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}); ok && cond.Status == corev1.ConditionTrue {
		cond = rejectedCondition(rej)
	}
	cond.LastTransitionTime = metav1.Now()
	cond.ObservedGeneration = gen
	obj.SetConditions(cond)
	// SetConditions keeps a condition that did not change as it was.
	for _, k := range kstatusConditions(cond) {
		k.LastTransitionTime, k.ObservedGeneration = cond.LastTransitionTime, gen
		obj.SetConditions(k)
	}
	v.status.ObservedGeneration = gen

	if prev := before.GetCondition(xpv2.TypeReady); prev.Status != cond.Status || prev.Reason != cond.Reason {
		if cond.Status == corev1.ConditionTrue {
			r.recorder.Eventf(obj, nil, corev1.EventTypeNormal, reasonCredentialsReady, "CheckCredentials", "%s", cond.Message)
		} else {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonCredentialsNotReady, "CheckCredentials", "%s", cond.Message)
		}
	}
	if err := r.patchStatus(ctx, before, obj); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: recheckInterval}, nil
}

// reconcileDelete holds the config while managed resources use it; the usage
// watch brings the config back here when the last one goes.
func (r *Reconciler) reconcileDelete(ctx context.Context, before, obj config, users int64) (ctrl.Result, error) {
	if users > 0 {
		cond := terminatingCondition(users)
		cond.LastTransitionTime = metav1.Now()
		if prev := before.GetCondition(cloudv1alpha1.TypeTerminating); prev.Status != corev1.ConditionTrue {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonInUse, "Delete", "%s", cond.Message)
		}
		obj.SetConditions(cond)
		return ctrl.Result{}, r.patchStatus(ctx, before, obj)
	}
	if controllerutil.RemoveFinalizer(obj, cloudv1alpha1.InUseFinalizer) {
		if err := r.client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer %s: %w", cloudv1alpha1.InUseFinalizer, err))
		}
		log.FromContext(ctx).Info("Released config that is no longer in use")
	}
	return ctrl.Result{}, nil
}

// countUsers counts the usages that record this config. A usage without a
// controller reference is stale (e.g. stripped by a backup restore) and is
// deleted: its managed resource recreates it on its next connect.
func (r *Reconciler) countUsers(ctx context.Context, obj config, kind string) (int64, error) {
	labels := client.MatchingLabels{xpv2.LabelKeyProviderName: obj.GetName(), xpv2.LabelKeyProviderKind: kind}
	opts := []client.ListOption{labels}
	if obj.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(obj.GetNamespace()))
	}
	var usages []client.Object
	pcus := &cloudv1alpha1.ProviderConfigUsageList{}
	if err := r.client.List(ctx, pcus, opts...); err != nil {
		return 0, fmt.Errorf("listing ProviderConfigUsages: %w", err)
	}
	for i := range pcus.Items {
		usages = append(usages, &pcus.Items[i])
	}
	if kind == cloudv1alpha1.ClusterProviderConfigKind {
		cpcus := &cloudv1alpha1.ClusterProviderConfigUsageList{}
		if err := r.client.List(ctx, cpcus, labels); err != nil {
			return 0, fmt.Errorf("listing ClusterProviderConfigUsages: %w", err)
		}
		for i := range cpcus.Items {
			usages = append(usages, &cpcus.Items[i])
		}
	}
	var users int64
	for _, u := range usages {
		if metav1.GetControllerOf(u) != nil {
			users++
			continue
		}
		if err := r.client.Delete(ctx, u); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("deleting stale usage %s: %w", client.ObjectKeyFromObject(u), err)
		}
	}
	return users, nil
}

// patchStatus writes the status once, and only when it changed. A conflict
// means a newer version exists; its own event requeues this config.
func (r *Reconciler) patchStatus(ctx context.Context, before, obj config) error {
	if equality.Semantic.DeepEqual(viewOf(before).status, viewOf(obj).status) {
		return nil
	}
	if err := r.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching status: %w", err)
	}
	return nil
}
