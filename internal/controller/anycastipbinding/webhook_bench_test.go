package anycastipbinding

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/testsupport/admissionbench"
)

// BenchmarkNodeWebhook is the node webhook's cost per request (the whole
// HTTP handler, as the API server calls it) on a kubelet-sized node: a
// labelled node's creation (patched with the taint) and an update of a
// node that carries the taint already (allowed unchanged), the two
// requests test/bench/webhooks makes.
func BenchmarkNodeWebhook(b *testing.B) {
	sel := labels.SelectorFromSet(labels.Set{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"})
	h := &webhook.Admission{Handler: NodeTainter(sel, admission.NewDecoder(clientgoscheme.Scheme))}
	gvr := metav1.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvk := metav1.GroupVersionKind{Version: "v1", Kind: "Node"}
	node := admissionbench.Node("node-1", map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"})
	tainted := node.DeepCopy()
	tainted.Spec.Taints = []corev1.Taint{decide.Taint()}
	updated := tainted.DeepCopy()
	updated.Labels["bench.edgeplane.io/updated"] = "true"
	for _, c := range []struct {
		name    string
		body    []byte
		patched bool
	}{
		{"create", admissionbench.Review(b, admissionv1.Create, gvr, gvk, "", node.Name, node, nil), true},
		{"update", admissionbench.Review(b, admissionv1.Update, gvr, gvk, "", node.Name, updated, tainted), false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if r := admissionbench.Serve(b, h, c.body); !r.Allowed || (len(r.Patch) > 0) != c.patched {
				b.Fatalf("unexpected answer: allowed %v, patch %s", r.Allowed, r.Patch)
			}
			admissionbench.Bench(b, h, c.body)
		})
	}
}
