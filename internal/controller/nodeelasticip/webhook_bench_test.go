package nodeelasticip

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/testsupport/admissionbench"
)

// BenchmarkNodeWebhook is the node webhook's cost per request (the whole
// HTTP handler, as the API server calls it) on a kubelet-sized node: a
// labelled node's creation (patched with the taint) and an update of a
// node that was selected already (allowed unchanged), the two requests
// test/bench/webhooks makes.
func BenchmarkNodeWebhook(b *testing.B) {
	sel := labels.SelectorFromSet(labels.Set{networkingv1alpha1.LabelWantElasticIP: "true"})
	h := &webhook.Admission{Handler: NewNodeTainter(sel, networkingv1alpha1.DefaultNodeElasticIPTaintKey)}
	admissionbench.NodeTainter(b, h, networkingv1alpha1.LabelWantElasticIP, decide.Taint(networkingv1alpha1.DefaultNodeElasticIPTaintKey))
}
