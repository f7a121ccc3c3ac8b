package translate

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Event reasons on the workload.
const (
	// ReasonInvalidLegacyAnnotation: AUTO_SCALE_EKS or LOCAL_REPLICAS could not be parsed.
	ReasonInvalidLegacyAnnotation = "InvalidLegacyAnnotation"
)

// Workloads' legacy annotations are read (never written); the BurstPolicies
// translated from them are written and removed here.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.edgeplane.io,resources=burstpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// WorkloadTranslator translates one workload kind's legacy annotations.
type WorkloadTranslator struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Kind is Deployment or StatefulSet.
	Kind string
}

// SetupWorkloads registers the Deployment and StatefulSet translators.
func SetupWorkloads(mgr ctrl.Manager) error {
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		t := &WorkloadTranslator{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy-translator"), Kind: kind}
		obj, _ := t.newObject()
		if err := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(kind)+"-burst-translator").
			For(obj, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
			Owns(&schedulingv1alpha1.BurstPolicy{}).
			Complete(t); err != nil {
			return fmt.Errorf("building the %s burst translator: %w", kind, err)
		}
	}
	return nil
}

func (t *WorkloadTranslator) newObject() (client.Object, func() map[string]string) {
	switch t.Kind {
	case "StatefulSet":
		o := &appsv1.StatefulSet{}
		return o, func() map[string]string { return o.Spec.Template.Annotations }
	default:
		o := &appsv1.Deployment{}
		return o, func() map[string]string { return o.Spec.Template.Annotations }
	}
}

// Reconcile ensures the translated BurstPolicy while the workload's pod
// template carries a legacy annotation, and deletes it otherwise.
func (t *WorkloadTranslator) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	obj, annotations := t.newObject()
	policy := &schedulingv1alpha1.BurstPolicy{}
	policy.Namespace, policy.Name = req.Namespace, PolicyName(t.Kind, req.Name)
	if err := t.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("getting %s %s: %w", t.Kind, req.NamespacedName, err)
		}
		obj.SetNamespace(req.Namespace)
		obj.SetName(req.Name)
		_, err := translator.Delete(ctx, t.Client, nil, obj, policy)
		return ctrl.Result{}, err
	}
	ann := annotations()
	if !HasLegacyAnnotations(ann) || !obj.GetDeletionTimestamp().IsZero() {
		_, err := translator.Delete(ctx, t.Client, t.Recorder, obj, policy)
		return ctrl.Result{}, err
	}
	spec, problems := PolicySpec(appsv1.SchemeGroupVersion.String(), t.Kind, req.Name, ann)
	res, err := translator.Ensure(ctx, t.Client, t.Recorder, obj, policy, func(p *schedulingv1alpha1.BurstPolicy) error {
		p.Spec = spec
		return nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(problems) > 0 && res != translator.ResultUnchanged && t.Recorder != nil {
		t.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReasonInvalidLegacyAnnotation, "Translate", "%s", strings.Join(problems, "; "))
	}
	return ctrl.Result{}, nil
}
