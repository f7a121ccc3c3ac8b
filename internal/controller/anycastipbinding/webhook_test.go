package anycastipbinding

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
)

// TestNodeTainter checks the admission decision and the patch it returns.
func TestNodeTainter(t *testing.T) {
	sel, err := decide.ParseNodeSelector(DefaultNodeSelector)
	if err != nil {
		t.Fatal(err)
	}
	w := NodeTainter(sel)
	lbl := map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}
	cases := map[string]struct {
		op    admissionv1.Operation
		node  *corev1.Node
		patch bool
	}{
		"labelled node registers":    {op: admissionv1.Create, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: lbl}}, patch: true},
		"label added later":          {op: admissionv1.Update, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: lbl}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoExecute}}}}, patch: true},
		"unlabelled node":            {op: admissionv1.Create, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}},
		"bound node keeps untainted": {op: admissionv1.Update, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: lbl, Annotations: map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-1"}}}},
		"delete ignored":             {op: admissionv1.Delete, node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: lbl}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.node)
			resp := w.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: tc.op, Object: runtime.RawExtension{Raw: raw}}})
			if !resp.Allowed {
				t.Fatalf("denied: %+v", resp.Result)
			}
			if got := len(resp.Patches) > 0; got != tc.patch {
				t.Fatalf("patched = %v, want %v (%+v)", got, tc.patch, resp.Patches)
			}
			if tc.patch {
				// Apply the patch as the API server would: the node keeps its
				// own taints and gains exactly ours.
				b, _ := json.Marshal(resp.Patches)
				p, err := jsonpatch.DecodePatch(b)
				if err != nil {
					t.Fatalf("patch %s: %v", b, err)
				}
				patched, err := p.Apply(raw)
				if err != nil {
					t.Fatalf("applying %s: %v", b, err)
				}
				var got corev1.Node
				if err := json.Unmarshal(patched, &got); err != nil {
					t.Fatal(err)
				}
				want := append(append([]corev1.Taint{}, tc.node.Spec.Taints...), decide.Taint())
				if diff := cmp.Diff(want, got.Spec.Taints); diff != "" {
					t.Errorf("taints after the patch (-want +got):\n%s", diff)
				}
			}
		})
	}
}
