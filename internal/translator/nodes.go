package translator

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Nodes translates labelled nodes into objects of a cluster-scoped kind T:
// every node Selector picks gets one named after it, owned by it and
// marked as translated, and loses it (the object's finalizer releases its
// cloud side) when the node stops matching or goes away. An object a
// person made for the node wins: the translator then deletes its own and
// leaves the person's alone.
type Nodes[T client.Object] struct {
	// Name names the controller.
	Name     string
	Client   client.Client
	Recorder events.EventRecorder
	Selector labels.Selector
	// New returns an empty T.
	New func() T
	// NodeOf is the node a T is for.
	NodeOf func(T) string
	// ForNode lists the Ts of a node (through an index of the cache).
	ForNode func(ctx context.Context, node string) ([]T, error)
	// Mutate sets the translated state on obj for node; stored says obj
	// exists already (its immutable fields must stay).
	Mutate func(obj T, node *corev1.Node, stored bool)
	// MaxConcurrentReconciles (default 1).
	MaxConcurrentReconciles int
}

// SetupWithManager registers the translator: nodes whose labels change or
// that are deleted, and Ts that appear or start being deleted (a person's
// object, a translated one finishing its deletion), mapped to their node.
func (t *Nodes[T]) SetupWithManager(mgr ctrl.Manager) error {
	toNode := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		o, ok := obj.(T)
		if !ok {
			return nil
		}
		reqs := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: t.NodeOf(o)}}}
		if o.GetName() != t.NodeOf(o) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: o.GetName()}})
		}
		return reqs
	})
	deletionStarted := func(e event.UpdateEvent) bool {
		return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
	}
	err := ctrl.NewControllerManagedBy(mgr).Named(t.Name).
		For(&corev1.Node{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return !labels.Equals(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) || deletionStarted(e)
		}})).
		Watches(t.New(), toNode, builder.WithPredicates(predicate.Funcs{UpdateFunc: deletionStarted})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(t.MaxConcurrentReconciles, 1)}).
		Complete(t)
	if err != nil {
		return fmt.Errorf("building the %s controller: %w", t.Name, err)
	}
	return nil
}

// Reconcile translates one node (the request's name).
func (t *Nodes[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	node := &corev1.Node{}
	if err := t.Client.Get(ctx, req.NamespacedName, node); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("reading node %s: %w", req.Name, err)
		}
		node = nil
	}
	want := node != nil && node.DeletionTimestamp == nil && t.Selector.Matches(labels.Set(node.Labels))
	if want {
		objs, err := t.ForNode(ctx, node.Name)
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("listing the objects of node %s: %w", node.Name, err)
		}
		for _, o := range objs {
			if !IsTranslated(o) {
				// A person's object wins.
				want = false
				break
			}
		}
	}
	target := t.New()
	target.SetName(req.Name)
	if !want {
		source := client.Object(node)
		if node == nil {
			source = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: req.Name}}
		}
		_, err := Delete(ctx, t.Client, t.Recorder, source, target)
		return reconcile.Result{}, err
	}
	res, err := Ensure(ctx, t.Client, t.Recorder, node, target, func(o T) error {
		t.Mutate(o, node, o.GetResourceVersion() != "")
		return nil
	})
	return Requeue(res), err
}

// ParseNodeSelector parses a node translator's selector flag. An empty
// selector, or one that selects every node, is refused: it would give
// every node of the cluster an object (and a cloud address).
func ParseNodeSelector(s string) (labels.Selector, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("the node selector must not be empty")
	}
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parsing node selector %q: %w", s, err)
	}
	if sel.Empty() {
		return nil, fmt.Errorf("the node selector %q selects every node", s)
	}
	return sel, nil
}
