package burstpolicy_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	clocktesting "k8s.io/utils/clock/testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
)

func TestShouldGate(t *testing.T) {
	labels := map[string]string{"app": "web"}
	pendingPolicy := func(f func(*schedulingv1alpha1.BurstPolicy)) schedulingv1alpha1.BurstPolicy {
		p := schedulingv1alpha1.BurstPolicy{Spec: schedulingv1alpha1.BurstPolicySpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Trigger: schedulingv1alpha1.TriggerPending, LocalReplicas: 1,
		}}
		if f != nil {
			f(&p)
		}
		return p
	}
	pod := func(f func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Labels: labels}}
		if f != nil {
			f(p)
		}
		return p
	}
	// The cases below read the legacy annotations with the chart v1.0.0
	// table and every workload translated, unless they say otherwise.
	everyKind := func(*metav1.OwnerReference) bool { return true }
	chartV1 := burstpolicy.LegacyTranslation{Table: schedulingv1alpha1.SwitchTableLocalOverride, Translated: everyKind}
	seed := burstpolicy.LegacyTranslation{Table: schedulingv1alpha1.SwitchTableLocalOptIn, Translated: everyKind}
	cases := []struct {
		name     string
		pod      *corev1.Pod
		policies []schedulingv1alpha1.BurstPolicy
		defaults schedulingv1alpha1.ClusterBurstPolicySpec
		legacy   *burstpolicy.LegacyTranslation
		want     bool
	}{
		{name: "selected by a Pending policy", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}, want: true},
		{name: "no policy", pod: pod(nil)},
		{name: "trigger Unschedulable needs no gate", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Trigger = schedulingv1alpha1.TriggerUnschedulable
		})}},
		{name: "other labels", pod: pod(func(p *corev1.Pod) { p.Labels = map[string]string{"app": "db"} }), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}},
		{name: "already bound", pod: pod(func(p *corev1.Pod) { p.Spec.NodeName = "n" }), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}},
		{name: "already gated", pod: pod(func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingv1alpha1.SchedulingGateBurst}}
		}), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}},
		{name: "DaemonSet pod", pod: pod(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "u", Controller: ptr.To(true)}}
		}), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}},
		{name: "excluded namespace", pod: pod(func(p *corev1.Pod) { p.Namespace = "kube-system" }), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)}},
		{name: "switched off by the cluster default", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(nil)},
			defaults: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)}},
		{name: "switched on by the policy despite the default", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Enabled = ptr.To(true)
		})}, defaults: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)}, want: true},
		{name: "max burst zero", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.MaxBurstReplicas = ptr.To[int32](0)
		})}},
		{name: "legacy LOCAL_REPLICAS with the switch on", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}
		}), want: true},
		{name: "legacy LOCAL_REPLICAS with the switch off", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "false", "LOCAL_REPLICAS": "1"}
		})},
		{name: "legacy LOCAL_REPLICAS with neither switch set is not effective", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"LOCAL_REPLICAS": "1"}
		})},
		{name: "legacy LOCAL_REPLICAS with the global switch on", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"LOCAL_REPLICAS": "1"}
		}), defaults: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(true)}, want: true},
		{name: "legacy LOCAL_REPLICAS unparsable", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "many"}
		})},
		{name: "seed table: LOCAL_REPLICAS with neither switch set keeps its floor", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"LOCAL_REPLICAS": "1"}
		}), legacy: &seed, want: true},
		{name: "seed table: the workload's false does not opt out", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "false", "LOCAL_REPLICAS": "1"}
		}), legacy: &seed, want: true},
		{name: "seed table: global false and local false", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "false", "LOCAL_REPLICAS": "1"}
		}), defaults: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)}, legacy: &seed},
		{name: "the ClusterBurstPolicy's table wins over the manager's", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "false", "LOCAL_REPLICAS": "1"}
		}), defaults: schedulingv1alpha1.ClusterBurstPolicySpec{LegacySwitchTable: schedulingv1alpha1.SwitchTableLocalOverride}, legacy: &seed},
		{name: "legacy LOCAL_REPLICAS of a workload no translator handles: not gated", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "u", Controller: ptr.To(true)}}
		}), legacy: &burstpolicy.LegacyTranslation{Translated: func(c *metav1.OwnerReference) bool { return c == nil }}},
		{name: "legacy LOCAL_REPLICAS with the translators off: not gated", pod: pod(func(p *corev1.Pod) {
			p.Annotations = map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}
		}), legacy: &burstpolicy.LegacyTranslation{}},
		{name: "targetRef policy not resolved yet", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Selector = nil
			p.Spec.TargetRef = &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		})}},
		{name: "targetRef policy resolved", pod: pod(nil), policies: []schedulingv1alpha1.BurstPolicy{pendingPolicy(func(p *schedulingv1alpha1.BurstPolicy) {
			p.Spec.Selector = nil
			p.Spec.TargetRef = &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
			p.Status.Selector = "app=web"
		})}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			legacy := chartV1
			if tc.legacy != nil {
				legacy = *tc.legacy
			}
			if got := burstpolicy.ShouldGate(tc.pod, tc.policies, &tc.defaults, legacy); got != tc.want {
				t.Errorf("ShouldGate = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPodGaterHandle calls the webhook handler with a real admission request.
func TestPodGaterHandle(t *testing.T) {
	ctx, ns := fixture(t, "webhook")
	labels := map[string]string{"app": "gated"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "gated", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Trigger: schedulingv1alpha1.TriggerPending, LocalReplicas: 1},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	g := &burstpolicy.PodGater{Reader: env.Client}
	var raw []byte
	request := func(l map[string]string, gates ...corev1.PodSchedulingGate) admission.Request {
		var err error
		raw, err = json.Marshal(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{GenerateName: "gated-", Labels: l},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}, SchedulingGates: gates}})
		if err != nil {
			t.Fatal(err)
		}
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Namespace: ns,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw},
		}}
	}
	ours := corev1.PodSchedulingGate{Name: schedulingv1alpha1.SchedulingGateBurst}
	other := corev1.PodSchedulingGate{Name: "example.com/other"}
	for name, gates := range map[string][]corev1.PodSchedulingGate{"no gates yet": nil, "another gate": {other}} {
		resp := g.Handle(ctx, request(labels, gates...))
		if !resp.Allowed || len(resp.Patches) != 1 || !strings.Contains(resp.Patches[0].Path, "schedulingGates") {
			t.Fatalf("%s: response = %+v, want allowed with a schedulingGates patch", name, resp)
		}
		// Apply the patch as the API server would: the pod keeps its gates
		// and gains exactly ours.
		b, _ := json.Marshal(resp.Patches)
		p, err := jsonpatch.DecodePatch(b)
		if err != nil {
			t.Fatalf("%s: patch %s: %v", name, b, err)
		}
		patched, err := p.Apply(raw)
		if err != nil {
			t.Fatalf("%s: applying %s: %v", name, b, err)
		}
		var got corev1.Pod
		if err := json.Unmarshal(patched, &got); err != nil {
			t.Fatal(err)
		}
		if want := append(append([]corev1.PodSchedulingGate{}, gates...), ours); !slices.Equal(want, got.Spec.SchedulingGates) {
			t.Errorf("%s: gates after the patch = %v, want %v", name, got.Spec.SchedulingGates, want)
		}
	}
	resp := g.Handle(ctx, request(map[string]string{"app": "other"}))
	if !resp.Allowed || len(resp.Patches) != 0 {
		t.Fatalf("response for an ungoverned pod = %+v, want allowed without patches", resp)
	}
}

// TestGatedPodsArePinned: the reconciler keeps the first replica local
// (ungated) and pins the others to virtual nodes; the API server accepts the
// node selector because the pods were gated.
func TestGatedPodsArePinned(t *testing.T) {
	ctx, ns := fixture(t, "pinned")
	labels := map[string]string{"app": "pinned"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "pinned", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Trigger: schedulingv1alpha1.TriggerPending, LocalReplicas: 1},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	gate := func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingv1alpha1.SchedulingGateBurst}}
	}
	makePod(ctx, t, ns, "pinned-0", labels, gate)
	time.Sleep(1100 * time.Millisecond) // the first replica is older than the rest
	makePod(ctx, t, ns, "pinned-1", labels, gate)
	makePod(ctx, t, ns, "pinned-2", labels, func(p *corev1.Pod) {
		gate(p)
		p.Spec.NodeSelector = map[string]string{corev1.LabelInstanceTypeStable: "m5.large"} // cannot be pinned
	})
	reconcilePolicy(ctx, t, newReconciler(nil), policy)

	local := getPod(ctx, t, ns, "pinned-0")
	if len(local.Spec.SchedulingGates) != 0 || tolerates(local) || len(local.Spec.NodeSelector) != 0 {
		t.Errorf("local replica: gates %v, tolerations %v, nodeSelector %v; want ungated and untouched", local.Spec.SchedulingGates, local.Spec.Tolerations, local.Spec.NodeSelector)
	}
	pinned := getPod(ctx, t, ns, "pinned-1")
	if len(pinned.Spec.SchedulingGates) != 0 || !tolerates(pinned) || pinned.Spec.NodeSelector[corev1.LabelInstanceTypeStable] != "eklet" {
		t.Errorf("burst replica: gates %v, tolerations %v, nodeSelector %v; want ungated, tolerating and pinned", pinned.Spec.SchedulingGates, pinned.Spec.Tolerations, pinned.Spec.NodeSelector)
	}
	conflicting := getPod(ctx, t, ns, "pinned-2")
	if len(conflicting.Spec.SchedulingGates) != 0 || !tolerates(conflicting) || conflicting.Spec.NodeSelector[corev1.LabelInstanceTypeStable] != "m5.large" {
		t.Errorf("burst replica with its own selector: gates %v, nodeSelector %v; want ungated, tolerating, selector kept", conflicting.Spec.SchedulingGates, conflicting.Spec.NodeSelector)
	}
}

// TestGateReconciler: a gated pod no policy governs is released at once, a
// governed one only after the timeout.
func TestGateReconciler(t *testing.T) {
	ctx, ns := fixture(t, "gate-safety")
	labels := map[string]string{"app": "gs"}
	gate := func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingv1alpha1.SchedulingGateBurst}}
	}
	orphan := makePod(ctx, t, ns, "orphan", map[string]string{"app": "none"}, gate)
	governed := makePod(ctx, t, ns, "governed", labels, gate)
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "gs", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Trigger: schedulingv1alpha1.TriggerPending},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Now())
	r := &burstpolicy.GateReconciler{Client: env.Client, Timeout: 30 * time.Second, Clock: clk}
	run := func(p *corev1.Pod) reconcile.Result {
		res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	run(orphan)
	if g := getPod(ctx, t, ns, "orphan").Spec.SchedulingGates; len(g) != 0 {
		t.Errorf("ungoverned pod still gated: %v", g)
	}
	if res := run(governed); res.RequeueAfter <= 0 {
		t.Errorf("governed pod within the timeout: result %+v, want a requeue", res)
	}
	if g := getPod(ctx, t, ns, "governed").Spec.SchedulingGates; len(g) != 1 {
		t.Errorf("governed pod released before the timeout: %v", g)
	}
	clk.Step(time.Minute)
	run(governed)
	if g := getPod(ctx, t, ns, "governed").Spec.SchedulingGates; len(g) != 0 {
		t.Errorf("governed pod still gated after the timeout: %v", g)
	}
}
