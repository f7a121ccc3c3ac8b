package nodeelasticip

import (
	"context"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// TranslatorName is the node translator's name.
const TranslatorName = ControllerName + "-translator"

func providerConfigRef(name string) xpv2.ProviderConfigReference {
	if name == "" {
		name = cloudv1alpha1.DefaultProviderConfigName
	}
	return xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: name}
}

// newTranslator gives every node the selector picks a NodeElasticIP named
// after it (internal/translator's node translator), with the translated
// spec.
func newTranslator(mgr ctrl.Manager, ts translated, workers int) *translator.Nodes[*networkingv1alpha1.NodeElasticIP] {
	c := mgr.GetClient()
	return &translator.Nodes[*networkingv1alpha1.NodeElasticIP]{
		Name: TranslatorName, Client: c, Recorder: mgr.GetEventRecorder(TranslatorName), Selector: ts.selector,
		New:    func() *networkingv1alpha1.NodeElasticIP { return &networkingv1alpha1.NodeElasticIP{} },
		NodeOf: func(n *networkingv1alpha1.NodeElasticIP) string { return n.Spec.NodeName },
		ForNode: func(ctx context.Context, node string) ([]*networkingv1alpha1.NodeElasticIP, error) {
			var list networkingv1alpha1.NodeElasticIPList
			if err := c.List(ctx, &list, client.MatchingFields{indexNodeName: node}); err != nil {
				return nil, err
			}
			out := make([]*networkingv1alpha1.NodeElasticIP, 0, len(list.Items))
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			return out, nil
		},
		Mutate:                  func(n *networkingv1alpha1.NodeElasticIP, node *corev1.Node, stored bool) { mutate(n, node, stored, ts) },
		MaxConcurrentReconciles: workers,
	}
}

// mutate sets the translated spec, keeping a stored object's immutable
// allocation (a changed --nodeelasticip-pool-filter applies to new nodes:
// moving a node's address is a person's decision) and its management
// policies.
func mutate(n *networkingv1alpha1.NodeElasticIP, node *corev1.Node, stored bool, ts translated) {
	spec := *ts.spec.DeepCopy()
	spec.NodeName = node.Name
	if stored {
		spec.Allocation = n.Spec.Allocation
		spec.ManagementPolicies = n.Spec.ManagementPolicies
		if spec.Allocation.Mode != networkingv1alpha1.NodeElasticIPModeAuto && spec.ReleasePolicy == networkingv1alpha1.NodeElasticIPReleaseDelete {
			spec.ReleasePolicy = ""
		}
	} else {
		// The reconciler's finalizer from the start: it need not write the
		// new object once more to add it.
		controllerutil.AddFinalizer(n, networkingv1alpha1.NodeElasticIPFinalizer)
	}
	n.Spec = spec
}
