package burstpolicy_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const (
	localNode   = "local-1"
	virtualNode = "eklet-subnet-1"
)

var eksToleration = corev1.Toleration{Key: decide.TencentEKSTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// fixture creates a namespace of the test's own, named after base, and the
// two nodes (once). The namespace name is new on every run: envtest runs no
// namespace controller, so a namespace never goes away, and a second run
// (-count=2) would meet the first one's objects. The test's pods are
// deleted when it ends, so that none holds room on a node for another.
func fixture(t *testing.T, base string) (context.Context, string) {
	t.Helper()
	ctx := testenv.Context(t)
	ns := base + "-" + utilrand.String(5)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		// No kubelet confirms a bound pod's end: delete at once.
		if err := env.Client.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
			t.Errorf("deleting the pods of %s: %v", ns, err)
		}
	})
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: localNode}},
		{ObjectMeta: metav1.ObjectMeta{Name: virtualNode, Labels: map[string]string{corev1.LabelInstanceTypeStable: "eklet"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: decide.TencentEKSTaint, Effect: corev1.TaintEffectNoSchedule}}}},
	} {
		if err := env.Client.Create(ctx, n); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating node %s: %v", n.Name, err)
		}
	}
	return ctx, ns
}

func newReconciler(rec events.EventRecorder) *burstpolicy.Reconciler {
	return burstpolicy.WithWriter(&burstpolicy.Reconciler{Client: env.Client, Reader: env.Client, Recorder: rec, FloorHandoff: time.Minute})
}

// reconcilePolicy reconciles p until a pass queues no pod writes, running
// the queued writes after each pass as the background writer would (a pass
// with writes in flight holds its status back; the writer's wake-up brings
// the policy back once they land). It returns the last pass's result.
func reconcilePolicy(ctx context.Context, t *testing.T, r *burstpolicy.Reconciler, p *schedulingv1alpha1.BurstPolicy) reconcile.Result {
	t.Helper()
	var res reconcile.Result
	for pass := 0; ; pass++ {
		if pass == 10 {
			t.Fatalf("the policy still writes pods after %d passes", pass)
		}
		var err error
		res, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		if burstpolicy.RunQueuedWrites(ctx, r) == 0 {
			break
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatalf("getting policy: %v", err)
	}
	return res
}

// makePod creates a pending pod; created orders pods by their creation
// timestamp, which the API server sets with second precision, so the test
// creates them a second apart only where order matters.
func makePod(ctx context.Context, t *testing.T, ns, name string, labels map[string]string, mutate func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m")}}}}},
	}
	if mutate != nil {
		mutate(p)
	}
	if err := env.Client.Create(ctx, p); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	return p
}

// markUnschedulable writes the scheduler's PodScheduled=False condition.
func markUnschedulable(ctx context.Context, t *testing.T, p *corev1.Pod) {
	t.Helper()
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 Insufficient cpu.", LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Minute))}}
	if err := env.Client.Status().Update(ctx, p); err != nil {
		t.Fatalf("marking %s unschedulable: %v", p.Name, err)
	}
}

func bind(ctx context.Context, t *testing.T, p *corev1.Pod, node string) {
	t.Helper()
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}
	if err := env.Client.SubResource("binding").Create(ctx, p, b); err != nil {
		t.Fatalf("binding %s to %s: %v", p.Name, node, err)
	}
}

func getPod(ctx context.Context, t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		t.Fatalf("getting pod %s: %v", name, err)
	}
	return p
}

func tolerates(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.MatchToleration(&eksToleration) })
}

func condition(p *schedulingv1alpha1.BurstPolicy, typ string) metav1.Condition {
	c := status.Get(p, typ)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

// TestSeedDeployment: 4 replicas, localReplicas 1, trigger Pending: the three
// newest pods burst, the oldest stays local; once bound, the virtual pods
// carry the lower deletion cost and the status counts them.
func TestSeedDeployment(t *testing.T) {
	ctx, ns := fixture(t, "seed")
	labels := map[string]string{"app": "nginx"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}}},
		},
	}
	if err := env.Client.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			TargetRef:     &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			LocalReplicas: 1,
			Trigger:       schedulingv1alpha1.TriggerPending,
		},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	podLabels := map[string]string{"app": "nginx", appsv1.DefaultDeploymentUniqueLabelKey: "rev1"}
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, makePod(ctx, t, ns, fmt.Sprintf("nginx-%d", i), podLabels, nil))
		if i == 0 {
			time.Sleep(1100 * time.Millisecond) // the first replica is older than the rest
		}
	}
	makePod(ctx, t, ns, "unrelated", map[string]string{"app": "other"}, nil)

	rec := events.NewFakeRecorder(1000)
	r := newReconciler(rec)
	reconcilePolicy(ctx, t, r, policy)

	if tolerates(getPod(ctx, t, ns, "nginx-0")) {
		t.Errorf("the first replica got the virtual-node toleration; it must stay local")
	}
	for _, name := range []string{"nginx-1", "nginx-2", "nginx-3"} {
		p := getPod(ctx, t, ns, name)
		if !tolerates(p) {
			t.Errorf("%s has no virtual-node toleration: %+v", name, p.Spec.Tolerations)
		}
		if p.Labels[schedulingv1alpha1.LabelBurst] != "true" || p.Annotations[schedulingv1alpha1.AnnotationBurstPolicy] != "nginx" {
			t.Errorf("%s lacks the burst marks: labels %v annotations %v", name, p.Labels, p.Annotations)
		}
	}
	if tolerates(getPod(ctx, t, ns, "unrelated")) {
		t.Errorf("a pod the policy does not govern was burst")
	}
	if got := condition(policy, schedulingv1alpha1.TypeBursting); got.Status != metav1.ConditionTrue || got.Reason != schedulingv1alpha1.ReasonPodsBurst {
		t.Errorf("Bursting = %+v, want True/PodsBurst", got)
	}
	if got := condition(policy, schedulingv1alpha1.TypeReady); got.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", got)
	}
	if policy.Status.Target != "Deployment/nginx" || policy.Status.PendingReplicas != 4 || policy.Status.ObservedGeneration != policy.Generation {
		t.Errorf("status = %+v", policy.Status)
	}

	bind(ctx, t, pods[0], localNode)
	for _, p := range pods[1:] {
		bind(ctx, t, p, virtualNode)
	}
	reconcilePolicy(ctx, t, r, policy)
	for _, name := range []string{"nginx-1", "nginx-2", "nginx-3"} {
		if got := getPod(ctx, t, ns, name).Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]; got != decide.BurstDeletionCost {
			t.Errorf("%s deletion cost = %q, want %s", name, got, decide.BurstDeletionCost)
		}
	}
	if _, ok := getPod(ctx, t, ns, "nginx-0").Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]; ok {
		t.Errorf("the local replica got a deletion cost")
	}
	want := schedulingv1alpha1.BurstPolicyStatus{LocalReplicas: 1, BurstReplicas: 3, PendingReplicas: 0}
	got := schedulingv1alpha1.BurstPolicyStatus{LocalReplicas: policy.Status.LocalReplicas, BurstReplicas: policy.Status.BurstReplicas, PendingReplicas: policy.Status.PendingReplicas}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if !hasEvent(rec, "Burst") {
		t.Errorf("no Burst event was emitted")
	}

	// Switching scale-in to Any takes the costs away again.
	policy.Spec.ScaleIn = schedulingv1alpha1.ScaleInAny
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	if got, ok := getPod(ctx, t, ns, "nginx-1").Annotations[schedulingv1alpha1.AnnotationPodDeletionCost]; ok {
		t.Errorf("deletion cost %q kept under scaleIn Any", got)
	}
}

// TestSwitchedOff: the cluster default is off and the policy says nothing, so
// nothing bursts and the pods say why.
func TestSwitchedOff(t *testing.T) {
	ctx, ns := fixture(t, "switched-off")
	def := &schedulingv1alpha1.ClusterBurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(false)}}
	if err := env.Client.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), def) })

	labels := map[string]string{"app": "off"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "off", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	p := makePod(ctx, t, ns, "off-0", labels, nil)
	markUnschedulable(ctx, t, p)

	rec := events.NewFakeRecorder(1000)
	r := newReconciler(rec)
	reconcilePolicy(ctx, t, r, policy)
	got := getPod(ctx, t, ns, "off-0")
	if tolerates(got) {
		t.Fatalf("pod burst although bursting is off")
	}
	if got.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != schedulingv1alpha1.NotBurstableDisabled {
		t.Errorf("pod annotations = %v, want %s=%s", got.Annotations, schedulingv1alpha1.AnnotationNotBurstable, schedulingv1alpha1.NotBurstableDisabled)
	}
	if c := condition(policy, schedulingv1alpha1.TypeBursting); c.Status != metav1.ConditionFalse || c.Reason != schedulingv1alpha1.ReasonBurstDisabled {
		t.Errorf("Bursting = %+v, want False/BurstDisabled", c)
	}
	if c := condition(policy, schedulingv1alpha1.TypeLocalCapacityShort); c.Status != metav1.ConditionTrue {
		t.Errorf("LocalCapacityShort = %+v, want True", c)
	}
	if !hasEvent(rec, schedulingv1alpha1.NotBurstableDisabled) {
		t.Errorf("no %s event on the pod", schedulingv1alpha1.NotBurstableDisabled)
	}

	// The policy's own switch wins over the cluster default.
	policy.Spec.Enabled = ptr.To(true)
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, r, policy)
	got = getPod(ctx, t, ns, "off-0")
	if !tolerates(got) {
		t.Errorf("pod did not burst with enabled: true")
	}
	if _, ok := got.Annotations[schedulingv1alpha1.AnnotationNotBurstable]; ok {
		t.Errorf("the not-burstable mark stayed after the burst")
	}
}

// TestRestrictions: every restriction keeps its pod local with its reason in
// the status and an Event; a plain pod bursts.
func TestRestrictions(t *testing.T) {
	ctx, ns := fixture(t, "restrictions")
	labels := map[string]string{"app": "r"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: labels}},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-local-pv"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{localNode}}}}}}},
		},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pv.Name, StorageClassName: ptr.To(""),
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	for _, o := range []client.Object{pv, pvc} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}

	cases := map[string]struct {
		mutate func(*corev1.Pod)
		want   string
	}{
		"plain": {},
		"daemonset": {mutate: func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "0000", Controller: ptr.To(true)}}
		}, want: schedulingv1alpha1.NotBurstableDaemonSetPod},
		"port": {mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 61500}}
		}, want: schedulingv1alpha1.NotBurstableReservedPort},
		"hostport": {mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 65534}}
		}, want: schedulingv1alpha1.NotBurstableReservedPort},
		"probe": {mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(62000)}}}
		}, want: schedulingv1alpha1.NotBurstableReservedProbePort},
		"sysctl": {mutate: func(p *corev1.Pod) {
			p.Spec.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: decide.SysctlLocalPortRange, Value: "32768 65000"}}}
		}, want: schedulingv1alpha1.NotBurstableLocalPortRange},
		"volume": {mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "fc", VolumeSource: corev1.VolumeSource{FC: &corev1.FCVolumeSource{TargetWWNs: []string{"500a0982991b8dc5"}, Lun: ptr.To[int32](2)}}}}
		}, want: schedulingv1alpha1.NotBurstableUnsupportedVolume},
		"pv": {mutate: func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}, want: schedulingv1alpha1.NotBurstableUnsupportedPersistentVolume},
		"fixedip": {mutate: func(p *corev1.Pod) {
			p.Annotations = map[string]string{decide.AnnotationVPCIPClaimDeletePolicy: "Never"}
		}, want: schedulingv1alpha1.NotBurstableFixedIP},
		"gpu": {mutate: func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
			p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
		}, want: schedulingv1alpha1.NotBurstableGPUWithoutType},
	}
	for name, tc := range cases {
		markUnschedulable(ctx, t, makePod(ctx, t, ns, name, labels, tc.mutate))
	}
	rec := events.NewFakeRecorder(1000)
	r := newReconciler(rec)
	reconcilePolicy(ctx, t, r, policy)

	gotReasons := map[string]string{}
	for _, nb := range policy.Status.NonBurstablePods {
		gotReasons[nb.Name] = nb.Reason
		if nb.Message == "" {
			t.Errorf("%s: empty message", nb.Name)
		}
	}
	wantReasons := map[string]string{}
	for name, tc := range cases {
		if tc.want != "" {
			wantReasons[name] = tc.want
		}
		p := getPod(ctx, t, ns, name)
		if burst := tolerates(p); burst != (tc.want == "") {
			t.Errorf("%s: burst = %v, want %v", name, burst, tc.want == "")
		}
		if tc.want != "" && p.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != tc.want {
			t.Errorf("%s: pod annotation %q, want %q", name, p.Annotations[schedulingv1alpha1.AnnotationNotBurstable], tc.want)
		}
	}
	if diff := cmp.Diff(wantReasons, gotReasons); diff != "" {
		t.Errorf("nonBurstablePods (-want +got):\n%s", diff)
	}
	for _, reason := range wantReasons {
		if !hasEvent(rec, reason) {
			t.Errorf("no %s event", reason)
		}
	}
	// A second pass writes nothing new and emits no new events.
	drainAll(rec)
	reconcilePolicy(ctx, t, r, policy)
	if evs := drainAll(rec); len(evs) != 0 {
		t.Errorf("second pass emitted %d events: %v", len(evs), evs)
	}
}

// TestTargetNotFound: a policy naming a missing workload is not Ready.
func TestTargetNotFound(t *testing.T) {
	ctx, ns := fixture(t, "missing")
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{TargetRef: &schedulingv1alpha1.TargetReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "ghost"}},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, newReconciler(nil), policy)
	if c := condition(policy, schedulingv1alpha1.TypeReady); c.Status != metav1.ConditionFalse || c.Reason != schedulingv1alpha1.ReasonTargetNotFound {
		t.Errorf("Ready = %+v, want False/TargetNotFound", c)
	}
	if policy.Status.Target != "Deployment/ghost" {
		t.Errorf("target = %q", policy.Status.Target)
	}

	policy.Spec.TargetRef = &schedulingv1alpha1.TargetReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w"}
	if err := env.Client.Update(ctx, policy); err != nil {
		t.Fatal(err)
	}
	reconcilePolicy(ctx, t, newReconciler(nil), policy)
	if c := condition(policy, schedulingv1alpha1.TypeReady); c.Status != metav1.ConditionFalse || c.Reason != schedulingv1alpha1.ReasonTargetUnsupported {
		t.Errorf("Ready = %+v, want False/TargetUnsupported", c)
	}
}

// TestDefaultsReady: the ClusterBurstPolicy reports Ready.
func TestDefaultsReady(t *testing.T) {
	ctx := testenv.Context(t)
	def := &schedulingv1alpha1.ClusterBurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if err := env.Client.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), def) })
	r := &burstpolicy.DefaultsReconciler{Client: env.Client}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(def)}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(def), def); err != nil {
		t.Fatal(err)
	}
	if !status.IsReady(def) {
		t.Errorf("ClusterBurstPolicy not Ready: %+v", def.Status)
	}
}

// TestWorkloadTranslator: the legacy annotations become an owned BurstPolicy,
// which goes when the annotations go.
func TestWorkloadTranslator(t *testing.T) {
	ctx, ns := fixture(t, "legacy")
	labels := map[string]string{"app": "legacy"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	tr := &translate.WorkloadTranslator{Client: env.Client, Kind: "Deployment"}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(deploy)}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	bp := &schedulingv1alpha1.BurstPolicy{}
	key := client.ObjectKey{Namespace: ns, Name: translate.PolicyName("Deployment", deploy.Name)}
	if err := env.Client.Get(ctx, key, bp); err != nil {
		t.Fatalf("translated BurstPolicy: %v", err)
	}
	if bp.Spec.LocalReplicas != 1 || bp.Spec.Enabled == nil || !*bp.Spec.Enabled || bp.Spec.Trigger != schedulingv1alpha1.TriggerPending {
		t.Errorf("translated spec = %+v", bp.Spec)
	}
	if ref := metav1.GetControllerOf(bp); ref == nil || ref.Kind != "Deployment" || ref.Name != deploy.Name {
		t.Errorf("owner = %+v, want the Deployment", ref)
	}

	// A translated policy with neither switch set ignores LOCAL_REPLICAS
	// (legacy table row 8); a hand-made one would not.
	deploy.Spec.Template.Annotations = map[string]string{"LOCAL_REPLICAS": "1"}
	if err := env.Client.Update(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, key, bp); err != nil {
		t.Fatal(err)
	}
	if bp.Spec.Enabled != nil {
		t.Errorf("enabled = %v, want unset", *bp.Spec.Enabled)
	}
	podLabels := map[string]string{"app": "legacy", appsv1.DefaultDeploymentUniqueLabelKey: "h"}
	for i := range 2 {
		markUnschedulable(ctx, t, makePod(ctx, t, ns, fmt.Sprintf("legacy-%d", i), podLabels, nil))
	}
	// The documentation's table (the default) keeps the floor: one of the
	// two stays local, one bursts.
	seedTable := newReconciler(nil)
	reconcilePolicy(ctx, t, seedTable, bp)
	burst := 0
	for i := range 2 {
		if tolerates(getPod(ctx, t, ns, fmt.Sprintf("legacy-%d", i))) {
			burst++
		}
	}
	if burst != 1 {
		t.Errorf("%d of 2 pods burst under the LocalOptIn table; LOCAL_REPLICAS 1 keeps one local", burst)
	}
	// The chart v1.0.0 table ignores the floor with neither switch set.
	chartV1 := newReconciler(nil)
	chartV1.LegacySwitchTable = schedulingv1alpha1.SwitchTableLocalOverride
	reconcilePolicy(ctx, t, chartV1, bp)
	for i := range 2 {
		if !tolerates(getPod(ctx, t, ns, fmt.Sprintf("legacy-%d", i))) {
			t.Errorf("legacy-%d did not burst: with neither switch set the legacy floor is not applied", i)
		}
	}

	deploy.Spec.Template.Annotations = nil
	if err := env.Client.Update(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, key, bp); !apierrors.IsNotFound(err) {
		t.Errorf("translated policy still there after the annotations went: %v", err)
	}
}

// TestEKSConfigTranslator: eks-config's AUTO_SCALE_EKS becomes the cluster
// default; a hand-made default is left alone.
func TestEKSConfigTranslator(t *testing.T) {
	ctx, ns := fixture(t, "eks-system")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: translate.EKSConfigName, Namespace: ns}, Data: map[string]string{"AUTO_SCALE_EKS": `"false"`}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(1000)
	tr := &translate.EKSConfigTranslator{Client: env.Client, ConfigMaps: env.Client, Recorder: rec, Namespace: ns}
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cm)}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	def := &schedulingv1alpha1.ClusterBurstPolicy{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
		t.Fatalf("translated default: %v", err)
	}
	if def.Spec.Enabled == nil || *def.Spec.Enabled || def.Spec.Governs != schedulingv1alpha1.GovernsSelectedPods {
		t.Errorf("spec = %+v, want enabled false, governs SelectedPods", def.Spec)
	}

	// Without the key the global switch is unset, which the legacy chart
	// read as on: every pod is governed.
	delete(cm.Data, "AUTO_SCALE_EKS")
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
		t.Fatalf("translated default after the key's removal: %v", err)
	}
	if def.Spec.Enabled != nil || def.Spec.Governs != schedulingv1alpha1.GovernsAllPods {
		t.Errorf("spec without the key = %+v, want enabled unset, governs AllPods", def.Spec)
	}
	cm.Data = map[string]string{"AUTO_SCALE_EKS": "true"}
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
		t.Fatal(err)
	}
	if def.Spec.Enabled == nil || !*def.Spec.Enabled || def.Spec.Governs != schedulingv1alpha1.GovernsAllPods {
		t.Errorf("spec with the switch on = %+v, want enabled true, governs AllPods", def.Spec)
	}

	// The ConfigMap gone, the translated default goes.
	if err := env.Client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, def); !apierrors.IsNotFound(err) {
		t.Fatalf("translated default survived the ConfigMap's removal: %v", err)
	}
	cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: translate.EKSConfigName, Namespace: ns}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	mine := &schedulingv1alpha1.ClusterBurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: schedulingv1alpha1.ClusterBurstPolicySpec{Enabled: ptr.To(true)}}
	if err := env.Client.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), mine) })
	cm.Data = map[string]string{"AUTO_SCALE_EKS": "false"}
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, mine); err != nil {
		t.Fatal(err)
	}
	if mine.Spec.Enabled == nil || !*mine.Spec.Enabled {
		t.Errorf("a hand-made default was changed: %+v", mine.Spec)
	}
	if !hasEvent(rec, "TranslationConflict") {
		t.Errorf("no TranslationConflict event")
	}
}

// seen keeps the events drained from each recorder, so hasEvent can be
// asked several times.
var seen = map[*events.FakeRecorder][]string{}

func hasEvent(rec *events.FakeRecorder, reason string) bool {
	seen[rec] = append(seen[rec], drainAll(rec)...)
	for _, e := range seen[rec] {
		if strings.Contains(e, " "+reason+" ") {
			return true
		}
	}
	return false
}

func drainAll(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
