package podelasticip

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// ReasonInvalidAnnotation is the Warning Event on a pod whose legacy
// annotations cannot be used.
const ReasonInvalidAnnotation = "InvalidAnnotation"

// ReasonHandMade is the Event on a pod whose translated PodElasticIP was
// removed because a person made one for the pod.
const ReasonHandMade = "HandMadePodElasticIP"

// Translator turns aws-pod-eip-controller's pod annotations into a
// PodElasticIP named after the pod and owned by it: changing the
// annotations updates it (a changed allocation, which is immutable, deletes
// it and creates it again, as the legacy controller re-allocated), removing
// them or the pod deletes it. A PodElasticIP a person made for the pod wins.
type Translator struct {
	Client   client.Client
	Recorder events.EventRecorder
}

func setupTranslator(mgr ctrl.Manager) error {
	t := &Translator{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("podelasticip-translator")}
	if err := ctrl.NewControllerManagedBy(mgr).Named("podelasticip-translator").
		For(&corev1.Pod{}, builder.WithPredicates(annotatedPods())).
		Watches(&networkingv1alpha1.PodElasticIP{}, handler.EnqueueRequestsFromMapFunc(translator.MapToSource("Pod"))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 8}).
		Complete(t); err != nil {
		return fmt.Errorf("building the podelasticip translator: %w", err)
	}
	return nil
}

// annotatedPods passes events of pods that carry (or carried) the type
// annotation.
func annotatedPods() predicate.Predicate {
	has := func(o client.Object) bool { _, ok := o.GetAnnotations()[translate.Type]; return ok }
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return has(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return has(e.ObjectOld) || has(e.ObjectNew)
		},
		DeleteFunc:  func(e event.DeleteEvent) bool { return has(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return has(e.Object) },
	}
}

// Reconcile translates one pod.
func (t *Translator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	target := &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
	pod := &corev1.Pod{}
	if err := t.Client.Get(ctx, req.NamespacedName, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("getting pod %s: %w", req.NamespacedName, err)
		}
		stub := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name}}
		_, err := translator.Delete(ctx, t.Client, nil, stub, target)
		return ctrl.Result{}, err
	}
	d := translate.Parse(pod.Annotations)
	if !d.Present {
		_, err := translator.Delete(ctx, t.Client, t.Recorder, pod, target)
		return ctrl.Result{}, err
	}

	// A PodElasticIP a person made for this pod wins.
	var list networkingv1alpha1.PodElasticIPList
	if err := t.Client.List(ctx, &list, client.InNamespace(pod.Namespace), client.MatchingFields{indexPodName: pod.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing PodElasticIPs of pod %s: %w", req.NamespacedName, err)
	}
	for _, p := range list.Items {
		if !translator.IsTranslated(&p) {
			res, err := translator.Delete(ctx, t.Client, nil, pod, target)
			if res == translator.ResultDeleted {
				t.Recorder.Eventf(pod, &p, corev1.EventTypeNormal, ReasonHandMade, "Translate",
					"Deleted the translated PodElasticIP: PodElasticIP %s was made for this pod by hand", p.Name)
			}
			return ctrl.Result{}, err
		}
	}

	// The allocation is immutable: a changed one means a new PodElasticIP.
	existing := &networkingv1alpha1.PodElasticIP{}
	if err := t.Client.Get(ctx, client.ObjectKeyFromObject(target), existing); err == nil {
		if from, ok := translator.TranslatedFrom(existing); ok && from == "Pod/"+pod.Namespace+"/"+pod.Name &&
			existing.DeletionTimestamp == nil && existing.Spec.Allocation != d.Allocation {
			if _, err := translator.Delete(ctx, t.Client, t.Recorder, pod, existing); err != nil {
				return ctrl.Result{}, err
			}
			return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
		}
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting PodElasticIP %s: %w", req.NamespacedName, err)
	}

	res, err := translator.Ensure(ctx, t.Client, t.Recorder, pod, target, func(p *networkingv1alpha1.PodElasticIP) error {
		if p.ResourceVersion == "" {
			// The reconciler's finalizer from the start: it then need not
			// write the new object once more to add it.
			controllerutil.AddFinalizer(p, networkingv1alpha1.PodElasticIPFinalizer)
		}
		p.Spec.PodName = pod.Name
		p.Spec.Allocation = d.Allocation
		anns := p.GetAnnotations()
		if anns == nil {
			anns = map[string]string{}
		}
		if d.Invalid != "" {
			anns[networkingv1alpha1.AnnotationPodElasticIPInvalid] = d.Invalid
		} else {
			delete(anns, networkingv1alpha1.AnnotationPodElasticIPInvalid)
		}
		p.SetAnnotations(anns)
		return nil
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	switch res {
	case translator.ResultNotCached:
		return translator.Requeue(res), nil
	case translator.ResultTerminating:
		// The previous PodElasticIP is still releasing its address.
		return ctrl.Result{RequeueAfter: 2 * time.Second}, nil
	case translator.ResultCreated, translator.ResultUpdated:
		if d.Invalid != "" {
			t.Recorder.Eventf(pod, target, corev1.EventTypeWarning, ReasonInvalidAnnotation, "Translate", "%s", d.Invalid)
		}
	}
	return ctrl.Result{}, nil
}
