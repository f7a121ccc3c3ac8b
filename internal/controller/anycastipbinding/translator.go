package anycastipbinding

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Translator gives every node the selector picks an AnycastIPBinding named
// after the node, owned by it and marked as translated, and deletes it
// (which releases the address and cleans the node) when the node stops
// matching or goes away. A binding a person made for the node wins: the
// translator then deletes its own and leaves the person's alone.
type Translator struct {
	Client   client.Client
	Recorder events.EventRecorder
	Selector labels.Selector
	// Spec is the spec of translated bindings (without nodeName).
	Spec networkingv1alpha1.AnycastIPBindingSpec
	// MaxConcurrentReconciles of the translator (default 1).
	MaxConcurrentReconciles int
}

// TranslatorName is the translator controller's name.
const TranslatorName = ControllerName + "-translator"

// SetupWithManager registers the translator.
func (t *Translator) SetupWithManager(mgr ctrl.Manager) error {
	bindingToNode := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		b, ok := obj.(*networkingv1alpha1.AnycastIPBinding)
		if !ok {
			return nil
		}
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: b.Spec.NodeName}}}
		if b.Name != b.Spec.NodeName {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: b.Name}})
		}
		return reqs
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named(TranslatorName).
		For(&corev1.Node{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !labels.Equals(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
					(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
			},
		})).
		Watches(&networkingv1alpha1.AnycastIPBinding{}, bindingToNode, builder.WithPredicates(predicate.Funcs{
			// Creations and deletions matter (a person's binding appears, a
			// translated one finished deleting); spec edits do not.
			UpdateFunc: func(e event.UpdateEvent) bool {
				return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
			},
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(t.MaxConcurrentReconciles, 1)}).
		Complete(t); err != nil {
		return fmt.Errorf("building the %s controller: %w", TranslatorName, err)
	}
	return nil
}

// Reconcile translates one node (the request's name).
func (t *Translator) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := t.Client.Get(ctx, req.NamespacedName, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("reading node %s: %w", req.Name, err)
		}
		node = nil
	}
	want := node != nil && node.DeletionTimestamp == nil && t.Selector.Matches(labels.Set(node.Labels))
	if want {
		var list networkingv1alpha1.AnycastIPBindingList
		if err := t.Client.List(ctx, &list, client.MatchingFields{indexNodeName: node.Name}); err != nil {
			return reconcile.Result{}, fmt.Errorf("listing bindings of node %s: %w", node.Name, err)
		}
		for i := range list.Items {
			if !translator.IsTranslated(&list.Items[i]) {
				// A person's binding wins.
				want = false
				break
			}
		}
	}
	target := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}
	if !want {
		source := client.Object(node)
		if node == nil {
			source = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}
		}
		if _, err := translator.Delete(ctx, t.Client, t.Recorder, source, target); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, nil
	}
	if _, err := translator.Ensure(ctx, t.Client, t.Recorder, node, target, func(b *networkingv1alpha1.AnycastIPBinding) error {
		t.mutate(b, node.Name)
		return nil
	}); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, nil
}

// mutate sets the translated spec, keeping the immutable fields of a
// stored binding (a changed --anycastipbinding-address-type applies to new bindings).
func (t *Translator) mutate(b *networkingv1alpha1.AnycastIPBinding, nodeName string) {
	stored := b.ResourceVersion != ""
	spec := *t.Spec.DeepCopy()
	spec.NodeName = nodeName
	if !stored {
		// The binding controller's finalizer from the start: the reconciler
		// then need not write the new object once more to add it.
		controllerutil.AddFinalizer(b, networkingv1alpha1.AnycastIPBindingFinalizer)
	}
	if stored {
		spec.AddressType = b.Spec.AddressType
		spec.AddressID = b.Spec.AddressID
		spec.ManagementPolicies = b.Spec.ManagementPolicies
		if spec.AddressType != networkingv1alpha1.AddressTypeAnycastEIP {
			spec.AnycastZone = ""
		}
	}
	b.Spec = spec
}
