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
// Secrets, and add or remove its finalizer on them, only in the namespaces
// where provider configs keep them, through RoleBindings to the
// credentials-reader ClusterRole (config/rbac, chart value
// credentialNamespaces). Elsewhere the config reports SecretForbidden.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// A usage being deleted is let go once its managed resource is gone: its
// metadata is read.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=podelasticips;anycastipbindings;nodeelasticips,verbs=get
// The config's finalizer on its credentials Secret (patch) is granted, like
// reading it, per namespace by the credentials-reader ClusterRole.

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
// holds its credentials Secret while it has any, and reports whether its
// credentials can be used.
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
	obj.SetUsers(users.count)

	deleting := !obj.GetDeletionTimestamp().IsZero()
	if !deleting && controllerutil.AddFinalizer(obj, cloudv1alpha1.InUseFinalizer) {
		if err := r.client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer %s: %w", cloudv1alpha1.InUseFinalizer, err)
		}
		before = obj.DeepCopyObject().(config)
		obj.SetUsers(users.count)
	}

	if pc, ok := obj.(*cloudv1alpha1.ProviderConfig); ok {
		v.notAllowed = r.tenancy.Check(&pc.Spec)
	}
	secret, err := r.readSecret(ctx, v)
	if err != nil {
		return ctrl.Result{}, err
	}
	// The Secret is held while resources use the config; any other Secret
	// the config held is let go first.
	prot := wantProtection(v, secret, users.count > 0)
	if err := r.releaseUnwanted(ctx, obj, prot); err != nil {
		return ctrl.Result{}, err
	}
	grew := recordWanted(obj, prot)

	if deleting {
		return r.reconcileDelete(ctx, before, obj, users, prot, grew)
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
	if err := r.writeStatusThenHold(ctx, before, obj, prot, grew); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: recheckInterval}, nil
}

// readSecret reads the config's credentials Secret, unless the config
// breaks the tenant rules (it is never used, so its Secret is not read) or
// takes no credentials from a Secret.
func (r *Reconciler) readSecret(ctx context.Context, v view) (secretState, error) {
	var secret secretState
	if v.notAllowed != nil || v.source != cloudv1alpha1.CredentialsSecret || v.secret == nil {
		return secret, nil
	}
	s := &corev1.Secret{}
	switch err := r.reader.Get(ctx, *v.secret, s); {
	case err == nil:
		secret.obj = s
	case apierrors.IsForbidden(err):
		secret.forbidden = true
	case !apierrors.IsNotFound(err):
		return secret, fmt.Errorf("reading credentials Secret %s: %w", v.secret, err)
	}
	return secret, nil
}

// writeStatusThenHold writes the status and then, once the Secret to hold
// is recorded in the stored status, adds the config's finalizer to it.
func (r *Reconciler) writeStatusThenHold(ctx context.Context, before, obj config, prot protection, grew bool) error {
	written, err := r.patchStatus(ctx, before, obj)
	if err != nil {
		return err
	}
	if grew && !written {
		// Another version of the config came first; its event brings it
		// back here. A Secret the stored status does not record is never
		// held.
		return nil
	}
	return r.holdWanted(ctx, obj, prot)
}

// finishingRecheck is how soon a deleted config whose users are being
// deleted too is looked at again, in case a resource's own release of its
// usage failed once the resource was gone (no event would bring the
// config back).
const finishingRecheck = 30 * time.Second

// reconcileDelete holds the config, and its credentials Secret, while
// managed resources use it; the usage watch brings the config back here
// when the last one goes, and then the Secret (already let go by
// releaseUnwanted: nothing is wanted without users) and the config go.
func (r *Reconciler) reconcileDelete(ctx context.Context, before, obj config, users userCount, prot protection, grew bool) (ctrl.Result, error) {
	if users.count > 0 {
		cond := terminatingCondition(users.count)
		cond.LastTransitionTime = metav1.Now()
		if prev := before.GetCondition(cloudv1alpha1.TypeTerminating); prev.Status != corev1.ConditionTrue {
			r.recorder.Eventf(obj, nil, corev1.EventTypeWarning, reasonInUse, "Delete", "%s", cond.Message)
		}
		obj.SetConditions(cond)
		if err := r.writeStatusThenHold(ctx, before, obj, prot, grew); err != nil {
			return ctrl.Result{}, err
		}
		if users.finishing {
			return ctrl.Result{RequeueAfter: finishingRecheck}, nil
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.RemoveFinalizer(obj, cloudv1alpha1.InUseFinalizer) {
		if err := r.client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("removing finalizer %s: %w", cloudv1alpha1.InUseFinalizer, err))
		}
		log.FromContext(ctx).Info("Released config that is no longer in use")
	}
	return ctrl.Result{}, nil
}

// patchStatus writes the status once, and only when it changed; it reports
// whether the stored status is now obj's. A conflict means a newer version
// exists; its own event requeues this config.
func (r *Reconciler) patchStatus(ctx context.Context, before, obj config) (bool, error) {
	if equality.Semantic.DeepEqual(viewOf(before).status, viewOf(obj).status) {
		return true, nil
	}
	if err := r.client.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("patching status: %w", err)
	}
	return true, nil
}
