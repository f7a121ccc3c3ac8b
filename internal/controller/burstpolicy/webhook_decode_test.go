package burstpolicy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
)

// TestDecodeGateFieldsMatchesTheDecoder checks that the webhook's partial
// decode gives the decision and the patch what decoding the whole pod with
// the admission Decoder gave them: the same fields (nil and empty alike),
// the same ShouldGate answer and the same patch operations.
func TestDecodeGateFieldsMatchesTheDecoder(t *testing.T) {
	policies := []schedulingv1alpha1.BurstPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "sel", Namespace: "ns"}, Spec: schedulingv1alpha1.BurstPolicySpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Trigger: schedulingv1alpha1.TriggerPending}},
		{ObjectMeta: metav1.ObjectMeta{Name: "byname", Namespace: "ns"}, Spec: schedulingv1alpha1.BurstPolicySpec{
			TargetRef: &schedulingv1alpha1.TargetReference{APIVersion: "v1", Kind: "Pod", Name: "solo"}, Trigger: schedulingv1alpha1.TriggerPending}},
	}
	legacy := LegacyTranslation{Translated: func(*metav1.OwnerReference) bool { return true }}
	rs := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "u1", Controller: ptr.To(true)}
	ds := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "u2", Controller: ptr.To(true)}
	pod := func(mut func(*corev1.Pod)) string {
		p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web-1-abc", Namespace: "ns", Labels: map[string]string{"app": "web"}, OwnerReferences: []metav1.OwnerReference{rs}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
				SchedulerName: corev1.DefaultSchedulerName}}
		mut(p)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, raw := range map[string]string{
		"governed":     pod(func(*corev1.Pod) {}),
		"no namespace": pod(func(p *corev1.Pod) { p.Namespace = "" }),
		"ungoverned":   pod(func(p *corev1.Pod) { p.Labels = map[string]string{"app": "other"} }),
		"by name":      pod(func(p *corev1.Pod) { p.Name, p.Labels = "solo", nil }),
		"bound":        pod(func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
		"gated already": pod(func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingv1alpha1.SchedulingGateBurst}}
		}),
		"other gate":  pod(func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "other"}} }),
		"daemonset":   pod(func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ds} }),
		"excluded ns": pod(func(p *corev1.Pod) { p.Namespace = "kube-system" }),
		"legacy annotation": pod(func(p *corev1.Pod) {
			p.Labels, p.Annotations = nil, map[string]string{translate.AnnotationLocalReplicas: "2"}
		}),
		"tke-scheduler": pod(func(p *corev1.Pod) {
			p.Spec.SchedulerName = translate.LegacySchedulerName
			p.Annotations = map[string]string{"a/b~c": "x"}
		}),
		"empty gates":  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","labels":{"app":"web"},"annotations":{}},"spec":{"schedulingGates":[],"schedulerName":"tke-scheduler","containers":[]}}`,
		"null fields":  `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","labels":null,"annotations":null,"ownerReferences":null},"spec":{"schedulingGates":null},"status":null}`,
		"case differs": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns","Labels":{"app":"web"}},"spec":{"NodeName":"n1"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			full := &corev1.Pod{}
			if err := admission.NewDecoder(clientgoscheme.Scheme).DecodeRaw(runtime.RawExtension{Raw: []byte(raw)}, full); err != nil {
				t.Fatal(err)
			}
			slim, err := decodeGateFields([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: full.Name, Namespace: full.Namespace, Labels: full.Labels, Annotations: full.Annotations, OwnerReferences: full.OwnerReferences},
				Spec:       corev1.PodSpec{NodeName: full.Spec.NodeName, SchedulerName: full.Spec.SchedulerName, SchedulingGates: full.Spec.SchedulingGates},
			}
			if d := cmp.Diff(want, slim); d != "" {
				t.Fatalf("fields differ from the decoder's (-decoder +partial):\n%s", d)
			}
			for _, p := range []*corev1.Pod{full, slim} {
				if p.Namespace == "" {
					p.Namespace = "ns"
				}
			}
			defaults := &schedulingv1alpha1.ClusterBurstPolicySpec{}
			if a, b := ShouldGate(full, policies, defaults, legacy), ShouldGate(slim, policies, defaults, legacy); a != b {
				t.Fatalf("ShouldGate: %v with the decoder, %v with the partial decode", a, b)
			}
			if d := cmp.Diff(gateOp(full), gateOp(slim)); d != "" {
				t.Fatalf("gate op differs:\n%s", d)
			}
			if d := cmp.Diff(rewriteSchedulerName(full), rewriteSchedulerName(slim)); d != "" {
				t.Fatalf("scheduler name ops differ:\n%s", d)
			}
		})
	}
	if _, err := decodeGateFields(nil); err == nil {
		t.Fatal("no content decoded without an error")
	}
}
