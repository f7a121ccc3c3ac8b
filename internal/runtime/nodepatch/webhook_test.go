package nodepatch

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TestDecodeMarksMatchesTheDecoder checks that the webhook's partial decode
// gives Taint and Ops what decoding the whole node with the admission
// Decoder gave them: the same name, labels, annotations and taints (nil
// and empty alike), and so the same patch for every want.
func TestDecodeMarksMatchesTheDecoder(t *testing.T) {
	taint := corev1.Taint{Key: "example.com/no-ip", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	added := metav1.Unix(1700000000, 0)
	for name, raw := range map[string]string{
		"bare":             `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`,
		"empty maps":       `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{},"annotations":{}},"spec":{"taints":[]}}`,
		"null fields":      `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":null,"annotations":null},"spec":{"taints":null},"status":null}`,
		"case differs":     `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","Labels":{"a":"b"}},"spec":{"Taints":[{"key":"x","effect":"NoSchedule"}]}}`,
		"kubelet-like":     mustJSON(t, kubeletNode(nil)),
		"tainted":          mustJSON(t, kubeletNode([]corev1.Taint{{Key: "other", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}, taint})),
		"other taints":     mustJSON(t, kubeletNode([]corev1.Taint{{Key: "other", Value: "v", Effect: corev1.TaintEffectNoSchedule}})),
		"unknown and more": `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"a/b~c":"1"},"future":{"x":[1,2]}},"spec":{"unschedulable":true,"taints":[{"key":"k","value":"v","effect":"PreferNoSchedule"}],"new":1},"status":{"images":[{"names":["a"]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			full := &corev1.Node{}
			if err := admission.NewDecoder(clientgoscheme.Scheme).DecodeRaw(rawExt(raw), full); err != nil {
				t.Fatal(err)
			}
			slim, err := decodeMarks([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			want := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: full.Name, Labels: full.Labels, Annotations: full.Annotations},
				Spec: corev1.NodeSpec{Taints: full.Spec.Taints}}
			if d := cmp.Diff(want, slim); d != "" {
				t.Fatalf("marks differ from the decoder's (-decoder +marks):\n%s", d)
			}
			v := "true"
			for _, w := range []Want{{Taint: taint, Tainted: true}, {Taint: taint}, {Labels: map[string]*string{"a/b~c": &v, "kubernetes.io/os": nil}}} {
				if d := cmp.Diff(Ops(full, w), Ops(slim, w)); d != "" {
					t.Fatalf("ops differ (-decoder +marks):\n%s", d)
				}
			}
		})
	}
	if _, err := decodeMarks(nil); err == nil {
		t.Fatal("no content decoded without an error")
	}
	if _, err := decodeMarks([]byte(`{"metadata":{"labels":{"a":1}}}`)); err == nil {
		t.Fatal("a label that is not a string decoded without an error")
	}
}

func kubeletNode(taints []corev1.Taint) *corev1.Node {
	return &corev1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/os": "linux", "want": "true"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0"}},
		Spec: corev1.NodeSpec{PodCIDR: "10.0.0.0/24", Taints: taints},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}},
			Images: []corev1.ContainerImage{{Names: []string{"img:1"}, SizeBytes: 1}}},
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func rawExt(s string) runtime.RawExtension { return runtime.RawExtension{Raw: []byte(s)} }
