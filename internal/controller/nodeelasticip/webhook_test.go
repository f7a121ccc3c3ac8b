package nodeelasticip_test

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
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// TestNodeTainter checks the admission decision and the patch it returns:
// a node selected as it registers, or as it is labelled, gains exactly the
// taint; one that matched before (it may have its address already) or has
// its address is left alone.
func TestNodeTainter(t *testing.T) {
	sel, err := translator.ParseNodeSelector(nodeelasticip.DefaultOptions().NodeSelector)
	if err != nil {
		t.Fatal(err)
	}
	key := networkingv1alpha1.DefaultNodeElasticIPTaintKey
	w := nodeelasticip.NewNodeTainter(sel, key)
	lbl := map[string]string{networkingv1alpha1.LabelWantElasticIP: "true"}
	other := corev1.Taint{Key: "x", Effect: corev1.TaintEffectNoExecute}
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	cases := map[string]struct {
		op        admissionv1.Operation
		old, node *corev1.Node
		patch     bool
	}{
		"selected node registers": {op: admissionv1.Create, node: node(lbl), patch: true},
		"labelled later":          {op: admissionv1.Update, old: node(nil, other), node: node(lbl, other), patch: true},
		"matched before":          {op: admissionv1.Update, old: node(lbl), node: node(lbl)},
		"unselected node":         {op: admissionv1.Create, node: node(nil)},
		"has its address": {op: admissionv1.Create, node: node(map[string]string{networkingv1alpha1.LabelWantElasticIP: "true",
			networkingv1alpha1.LabelNodeElasticIP: "203.0.113.7"})},
		"delete ignored": {op: admissionv1.Delete, node: node(lbl)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.node)
			req := admissionv1.AdmissionRequest{Operation: tc.op, Object: runtime.RawExtension{Raw: raw}}
			if tc.old != nil {
				oldRaw, _ := json.Marshal(tc.old)
				req.OldObject = runtime.RawExtension{Raw: oldRaw}
			}
			resp := w.Handle(context.Background(), admission.Request{AdmissionRequest: req})
			if !resp.Allowed {
				t.Fatalf("denied: %+v", resp.Result)
			}
			if got := len(resp.Patches) > 0; got != tc.patch {
				t.Fatalf("patched = %v, want %v (%+v)", got, tc.patch, resp.Patches)
			}
			if !tc.patch {
				return
			}
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
			want := append(append([]corev1.Taint{}, tc.node.Spec.Taints...), decide.Taint(key))
			if diff := cmp.Diff(want, got.Spec.Taints); diff != "" {
				t.Errorf("taints after the patch (-want +got):\n%s", diff)
			}
		})
	}
}
