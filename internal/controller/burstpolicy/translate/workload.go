package translate

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Event reasons on the workload.
const (
	// ReasonInvalidLegacyAnnotation: AUTO_SCALE_EKS or LOCAL_REPLICAS could not be parsed.
	ReasonInvalidLegacyAnnotation = "InvalidLegacyAnnotation"
)

// Workloads' legacy annotations are read (never written); the BurstPolicies
// translated from them are written and removed here.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.edgeplane.io,resources=burstpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// workload describes one kind of workload whose legacy annotations the
// translator reads.
type workload struct {
	gvk schema.GroupVersionKind
	// newObject returns an empty object to read into.
	newObject func() client.Object
	// annotations returns the annotations to translate: the pod template's,
	// or a bare pod's own.
	annotations func(client.Object) map[string]string
}

// builtinWorkloads are the kinds translated through their typed objects. A
// CronJob is translated through the Jobs it creates (each inherits the
// annotations), each Job counting against its own floor, as the legacy
// controller counted each workload.
var builtinWorkloads = map[string]workload{
	"Deployment": {gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"),
		newObject:   func() client.Object { return &appsv1.Deployment{} },
		annotations: func(o client.Object) map[string]string { return o.(*appsv1.Deployment).Spec.Template.Annotations }},
	"StatefulSet": {gvk: appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		newObject:   func() client.Object { return &appsv1.StatefulSet{} },
		annotations: func(o client.Object) map[string]string { return o.(*appsv1.StatefulSet).Spec.Template.Annotations }},
	"ReplicaSet": {gvk: appsv1.SchemeGroupVersion.WithKind("ReplicaSet"),
		newObject:   func() client.Object { return &appsv1.ReplicaSet{} },
		annotations: func(o client.Object) map[string]string { return o.(*appsv1.ReplicaSet).Spec.Template.Annotations }},
	"Job": {gvk: batchv1.SchemeGroupVersion.WithKind("Job"),
		newObject:   func() client.Object { return &batchv1.Job{} },
		annotations: func(o client.Object) map[string]string { return o.(*batchv1.Job).Spec.Template.Annotations }},
	"Pod": {gvk: corev1.SchemeGroupVersion.WithKind("Pod"),
		newObject:   func() client.Object { return &corev1.Pod{} },
		annotations: func(o client.Object) map[string]string { return o.GetAnnotations() }},
}

// builtinOrder is the order the built-in translators are registered in.
var builtinOrder = []string{"Deployment", "StatefulSet", "ReplicaSet", "Job", "Pod"}

// unstructuredWorkload describes a kind found through its scale
// subresource; its pod template is spec.template, by convention.
func unstructuredWorkload(gvk schema.GroupVersionKind) workload {
	return workload{
		gvk: gvk,
		newObject: func() client.Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		},
		annotations: func(o client.Object) map[string]string {
			ann, _, _ := unstructured.NestedStringMap(o.(*unstructured.Unstructured).Object, "spec", "template", "metadata", "annotations")
			return ann
		},
	}
}

// WorkloadTranslator translates one workload kind's legacy annotations.
type WorkloadTranslator struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Kind is Deployment, StatefulSet, ReplicaSet, Job or Pod; ignored when
	// GVK is set.
	Kind string
	// GVK is a kind found through its scale subresource, read as
	// unstructured through Reader.
	GVK schema.GroupVersionKind
	// Reader reads the workloads; nil means Client.
	Reader client.Reader
	// Kinds are the translated kinds: a ReplicaSet or pod whose controller
	// is one of them is translated through its controller. Nil: only the
	// built-in kinds.
	Kinds *Kinds
}

func (t *WorkloadTranslator) workload() workload {
	if !t.GVK.Empty() {
		return unstructuredWorkload(t.GVK)
	}
	return builtinWorkloads[t.Kind]
}

func (t *WorkloadTranslator) reader() client.Reader {
	if t.Reader != nil {
		return t.Reader
	}
	return t.Client
}

// SetupWorkloads registers the translators of the built-in kinds and of the
// kinds with a scale subresource the API server serves (and the manager may
// watch), and returns the set of translated kinds.
func SetupWorkloads(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) (*Kinds, error) {
	kinds := NewKinds()
	scaled, err := setupScaleWorkloads(ctx, mgr, cfg, kinds)
	if err != nil {
		return nil, err
	}
	for _, name := range builtinOrder {
		w := builtinWorkloads[name]
		t := &WorkloadTranslator{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy-translator"), Kind: name, Kinds: kinds}
		kinds.add(w.gvk.GroupKind())
		preds := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})
		if name == "Pod" {
			// Pods change all the time; only bare pods with the
			// annotations (now or before) matter.
			preds = barePodWithLegacyAnnotations()
		}
		if err := ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(name)+"-burst-translator").
			For(w.newObject(), builder.WithPredicates(preds)).
			Owns(&schedulingv1alpha1.BurstPolicy{}).
			Complete(t); err != nil {
			return nil, fmt.Errorf("building the %s burst translator: %w", name, err)
		}
	}
	for _, s := range scaled {
		kinds.add(s.GroupKind())
	}
	return kinds, nil
}

// barePodWithLegacyAnnotations passes events of pods without a controller
// that carry (or, on update, carried) a legacy annotation.
func barePodWithLegacyAnnotations() predicate.Predicate {
	bare := func(o client.Object) bool {
		return metav1.GetControllerOfNoCopy(o) == nil && HasLegacyAnnotations(o.GetAnnotations())
	}
	return predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return bare(e.Object) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return bare(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return bare(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return (bare(e.ObjectOld) || bare(e.ObjectNew)) && !equalLegacy(e.ObjectOld, e.ObjectNew)
		},
	}
}

// equalLegacy reports whether two versions of an object carry the same
// legacy annotations and controller.
func equalLegacy(a, b client.Object) bool {
	for _, k := range []string{AnnotationAutoScaleEKS, AnnotationLocalReplicas} {
		va, oka := a.GetAnnotations()[k]
		vb, okb := b.GetAnnotations()[k]
		if va != vb || oka != okb {
			return false
		}
	}
	return (metav1.GetControllerOfNoCopy(a) == nil) == (metav1.GetControllerOfNoCopy(b) == nil) && a.GetDeletionTimestamp().Equal(b.GetDeletionTimestamp())
}

// Reconcile ensures the translated BurstPolicy while the workload carries a
// legacy annotation and is not translated through its controller, and
// deletes it otherwise.
func (t *WorkloadTranslator) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	w := t.workload()
	obj := w.newObject()
	policy := &schedulingv1alpha1.BurstPolicy{}
	policy.Namespace, policy.Name = req.Namespace, PolicyName(w.gvk.Kind, req.Name)
	if err := t.reader().Get(ctx, req.NamespacedName, obj); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("getting %s %s: %w", w.gvk.Kind, req.NamespacedName, err)
		}
		obj.SetNamespace(req.Namespace)
		obj.SetName(req.Name)
		_, err := translator.Delete(ctx, t.Client, nil, obj, policy)
		return ctrl.Result{}, err
	}
	ann := w.annotations(obj)
	if !HasLegacyAnnotations(ann) || !obj.GetDeletionTimestamp().IsZero() || translatedThroughController(w.gvk, obj, t.Kinds) {
		_, err := translator.Delete(ctx, t.Client, t.Recorder, obj, policy)
		return ctrl.Result{}, err
	}
	spec, problems := PolicySpec(w.gvk.GroupVersion().String(), w.gvk.Kind, req.Name, ann)
	res, err := translator.Ensure(ctx, t.Client, t.Recorder, obj, policy, func(p *schedulingv1alpha1.BurstPolicy) error {
		p.Spec = spec
		return nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if res == translator.ResultNotCached {
		return translator.Requeue(res), nil
	}
	if len(problems) > 0 && res != translator.ResultUnchanged && t.Recorder != nil {
		t.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReasonInvalidLegacyAnnotation, "Translate", "%s", strings.Join(problems, "; "))
	}
	return ctrl.Result{}, nil
}

// translatedThroughController reports whether obj's annotations are
// translated through its controller instead: a pod with any controller (the
// controller's kind is translated, or no kind of it is), a ReplicaSet whose
// controller's kind is translated (a Deployment's).
func translatedThroughController(gvk schema.GroupVersionKind, obj client.Object, kinds *Kinds) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	switch gvk.GroupKind() {
	case podGroupKind:
		return true
	case replicaSetGroupKind:
		return kinds.translated(ref)
	}
	return false
}
