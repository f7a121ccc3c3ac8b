package anycastipbinding

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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

// nodes is the shared node translator (translator.Nodes) this one is.
func (t *Translator) nodes() *translator.Nodes[*networkingv1alpha1.AnycastIPBinding] {
	return &translator.Nodes[*networkingv1alpha1.AnycastIPBinding]{
		Name: TranslatorName, Client: t.Client, Recorder: t.Recorder, Selector: t.Selector,
		New:    func() *networkingv1alpha1.AnycastIPBinding { return &networkingv1alpha1.AnycastIPBinding{} },
		NodeOf: func(b *networkingv1alpha1.AnycastIPBinding) string { return b.Spec.NodeName },
		ForNode: func(ctx context.Context, node string) ([]*networkingv1alpha1.AnycastIPBinding, error) {
			var list networkingv1alpha1.AnycastIPBindingList
			if err := t.Client.List(ctx, &list, client.MatchingFields{indexNodeName: node}); err != nil {
				return nil, err
			}
			out := make([]*networkingv1alpha1.AnycastIPBinding, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out, nil
		},
		Mutate:                  func(b *networkingv1alpha1.AnycastIPBinding, node *corev1.Node, _ bool) { t.mutate(b, node.Name) },
		MaxConcurrentReconciles: t.MaxConcurrentReconciles,
	}
}

// SetupWithManager registers the translator.
func (t *Translator) SetupWithManager(mgr ctrl.Manager) error { return t.nodes().SetupWithManager(mgr) }

// Reconcile translates one node (the request's name).
func (t *Translator) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	return t.nodes().Reconcile(ctx, req)
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
