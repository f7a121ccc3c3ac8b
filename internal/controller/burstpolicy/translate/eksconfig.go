package translate

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// The legacy eks-config ConfigMap, in kube-system only (a single-object cache);
// the ClusterBurstPolicy it translates into is written and removed here.
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.edgeplane.io,resources=clusterburstpolicies,verbs=get;list;watch;create;update;patch;delete

// EKSConfigTranslator translates the eks-config ConfigMap's AUTO_SCALE_EKS
// into the ClusterBurstPolicy "default" (see ClusterPolicySpec).
type EKSConfigTranslator struct {
	// Client writes ClusterBurstPolicies.
	Client client.Client
	// ConfigMaps reads the eks-config ConfigMap (a cache of that one object).
	ConfigMaps client.Reader
	Recorder   events.EventRecorder
	// Namespace of eks-config.
	Namespace string
}

// SetupEKSConfig registers the eks-config translator. It watches only the
// one ConfigMap, through a cache of its own, so the manager caches no other
// ConfigMap for it.
func SetupEKSConfig(mgr ctrl.Manager, namespace string) error {
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", EKSConfigName)},
		},
	})
	if err != nil {
		return fmt.Errorf("creating the eks-config cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the eks-config cache: %w", err)
	}
	t := &EKSConfigTranslator{Client: mgr.GetClient(), ConfigMaps: c, Recorder: mgr.GetEventRecorder("burstpolicy-translator"), Namespace: namespace}
	if err := ctrl.NewControllerManagedBy(mgr).Named("eksconfig-burst-translator").
		WatchesRawSource(source.Kind(c, &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})).
		Watches(&schedulingv1alpha1.ClusterBurstPolicy{}, handler.EnqueueRequestsFromMapFunc(translator.MapToSource("ConfigMap"))).
		Complete(t); err != nil {
		return fmt.Errorf("building the eks-config translator: %w", err)
	}
	return nil
}

// Reconcile ensures the ClusterBurstPolicy "default" while eks-config
// exists, and deletes it (when it is ours) once it is gone. A ConfigMap
// without AUTO_SCALE_EKS is the global switch unset, which the legacy chart
// read as on.
func (t *EKSConfigTranslator) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	if req.Namespace != t.Namespace || req.Name != EKSConfigName {
		return ctrl.Result{}, nil
	}
	target := &schedulingv1alpha1.ClusterBurstPolicy{}
	target.Name = schedulingv1alpha1.DefaultClusterBurstPolicyName
	cm := &corev1.ConfigMap{}
	if err := t.ConfigMaps.Get(ctx, req.NamespacedName, cm); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("getting ConfigMap %s: %w", req.NamespacedName, err)
		}
		cm.Namespace, cm.Name = req.Namespace, req.Name
		_, err := translator.Delete(ctx, t.Client, nil, cm, target)
		return ctrl.Result{}, err
	}
	if !cm.DeletionTimestamp.IsZero() {
		_, err := translator.Delete(ctx, t.Client, t.Recorder, cm, target)
		return ctrl.Result{}, err
	}
	spec, err := ClusterPolicySpec(cm.Data)
	if err != nil {
		if t.Recorder != nil {
			t.Recorder.Eventf(cm, nil, corev1.EventTypeWarning, ReasonInvalidLegacyAnnotation, "Translate", "%v; the cluster default is left unchanged", err)
		}
		return ctrl.Result{}, nil
	}
	res, err := translator.Ensure(ctx, t.Client, t.Recorder, cm, target, func(d *schedulingv1alpha1.ClusterBurstPolicy) error {
		d.Spec.Enabled = spec.Enabled
		d.Spec.Governs = spec.Governs
		return nil
	})
	return translator.Requeue(res), err
}
