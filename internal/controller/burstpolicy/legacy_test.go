package burstpolicy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
	"github.com/edgeplane/edgeplane/internal/testsupport/bptest"
)

// clusterDefault creates the ClusterBurstPolicy "default" for the test and
// deletes it when the test ends.
func clusterDefault(ctx context.Context, t *testing.T, spec schedulingv1alpha1.ClusterBurstPolicySpec) *schedulingv1alpha1.ClusterBurstPolicy {
	t.Helper()
	def := &schedulingv1alpha1.ClusterBurstPolicy{ObjectMeta: metav1.ObjectMeta{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, Spec: spec}
	if err := env.Client.Create(ctx, def); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), def) })
	return def
}

// translateWorkload runs the translator of kind on obj and returns the
// translated policy (nil when there is none).
func translateWorkload(ctx context.Context, t *testing.T, tr *translate.WorkloadTranslator, obj client.Object) *schedulingv1alpha1.BurstPolicy {
	t.Helper()
	if _, err := tr.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}); err != nil {
		t.Fatalf("translating %s: %v", obj.GetName(), err)
	}
	kind := tr.Kind
	if !tr.GVK.Empty() {
		kind = tr.GVK.Kind
	}
	bp := &schedulingv1alpha1.BurstPolicy{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: translate.PolicyName(kind, obj.GetName())}, bp)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

// TestTranslatedSwitchTables (issue 18 point 1): a workload's
// AUTO_SCALE_EKS=false does not opt it out under the documentation's table
// (the default, LocalOptIn); under chart v1.0.0's (LocalOverride, chosen on
// the ClusterBurstPolicy) it does. A BurstPolicy a person writes with
// enabled: false stays off under either.
func TestTranslatedSwitchTables(t *testing.T) {
	ctx, ns := fixture(t, "tables")
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"AUTO_SCALE_EKS": "false"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	bp := translateWorkload(ctx, t, &translate.WorkloadTranslator{Client: env.Client, Kind: "Deployment"}, deploy)
	if bp == nil || bp.Spec.Enabled == nil || *bp.Spec.Enabled {
		t.Fatalf("translated policy = %+v, want enabled false", bp)
	}
	native := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "native", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "native"}}, Enabled: ptr.To(false)},
	}
	if err := env.Client.Create(ctx, native); err != nil {
		t.Fatal(err)
	}
	markUnschedulable(ctx, t, makePod(ctx, t, ns, "web-0", labels, nil))
	markUnschedulable(ctx, t, makePod(ctx, t, ns, "native-0", map[string]string{"app": "native"}, nil))

	// Global switch unset, workload false: the documentation says 调度成功.
	r := newReconciler(nil)
	reconcilePolicy(ctx, t, r, bp)
	reconcilePolicy(ctx, t, r, native)
	if !tolerates(getPod(ctx, t, ns, "web-0")) {
		t.Errorf("under LocalOptIn, AUTO_SCALE_EKS=false with the global switch unset must not opt out; the pod did not burst")
	}
	if tolerates(getPod(ctx, t, ns, "native-0")) {
		t.Errorf("a hand-written policy with enabled: false burst")
	}

	// The ClusterBurstPolicy picks chart v1.0.0's table: the workload's
	// false now opts out.
	clusterDefault(ctx, t, schedulingv1alpha1.ClusterBurstPolicySpec{LegacySwitchTable: schedulingv1alpha1.SwitchTableLocalOverride})
	markUnschedulable(ctx, t, makePod(ctx, t, ns, "web-1", labels, nil))
	reconcilePolicy(ctx, t, r, bp)
	if tolerates(getPod(ctx, t, ns, "web-1")) {
		t.Errorf("under LocalOverride, AUTO_SCALE_EKS=false opts out; the pod burst")
	}
	if c := condition(bp, schedulingv1alpha1.TypeBursting); c.Reason != schedulingv1alpha1.ReasonBurstDisabled {
		t.Errorf("Bursting = %+v, want reason BurstDisabled", c)
	}

	// The status says which table is in force.
	d := &burstpolicy.DefaultsReconciler{Client: env.Client, LegacySwitchTable: schedulingv1alpha1.SwitchTableLocalOptIn}
	def := &schedulingv1alpha1.ClusterBurstPolicy{}
	if _, err := d.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: "default"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "default"}, def); err != nil {
		t.Fatal(err)
	}
	if def.Status.LegacySwitchTable != schedulingv1alpha1.SwitchTableLocalOverride {
		t.Errorf("status.legacySwitchTable = %q, want LocalOverride", def.Status.LegacySwitchTable)
	}
}

// clusterWide runs the cluster-wide reconciler on the pods.
func clusterWide(ctx context.Context, t *testing.T, r *burstpolicy.ClusterWideReconciler, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		for range 3 { // a conflict requeues; the pod converges within a few passes
			res, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
			if err != nil {
				t.Fatalf("cluster-wide pass on %s: %v", p.Name, err)
			}
			if res.RequeueAfter == 0 {
				break
			}
		}
	}
}

// TestClusterWide (issue 18 point 2): with governs: AllPods, a pending pod
// no BurstPolicy selects bursts once unschedulable, without any
// annotation; restrictions refuse with their reason; pods a policy selects,
// pods with a floor, pods of excluded namespaces and pods not yet found
// unschedulable are left alone; the status counts the pods; going back to
// SelectedPods reverts the marks.
func TestClusterWide(t *testing.T) {
	ctx, ns := fixture(t, "clusterwide")
	def := clusterDefault(ctx, t, schedulingv1alpha1.ClusterBurstPolicySpec{Governs: schedulingv1alpha1.GovernsAllPods})
	selected := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "selected", Namespace: ns},
		Spec:       schedulingv1alpha1.BurstPolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "selected"}}, Enabled: ptr.To(false)},
	}
	if err := env.Client.Create(ctx, selected); err != nil {
		t.Fatal(err)
	}
	plain := makePod(ctx, t, ns, "plain", nil, nil)
	port := makePod(ctx, t, ns, "port", nil, func(p *corev1.Pod) { p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 61500}} })
	waiting := makePod(ctx, t, ns, "waiting", nil, nil)
	governed := makePod(ctx, t, ns, "governed", map[string]string{"app": "selected"}, nil)
	floor := makePod(ctx, t, ns, "floor", nil, func(p *corev1.Pod) { p.Annotations = map[string]string{"LOCAL_REPLICAS": "1"} })
	system := makePod(ctx, t, "kube-system", "clusterwide-"+ns, nil, nil)
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), system, client.GracePeriodSeconds(0)) })
	for _, p := range []*corev1.Pod{plain, port, governed, floor, system} {
		markUnschedulable(ctx, t, p)
	}
	untouched := map[string]*corev1.Pod{}
	for _, p := range []*corev1.Pod{waiting, governed, floor, system} {
		untouched[p.Name] = getPod(ctx, t, p.Namespace, p.Name)
	}

	rec := events.NewFakeRecorder(1000)
	r := &burstpolicy.ClusterWideReconciler{Client: env.Client, Reader: env.Client, Recorder: rec,
		Translated: func(c *metav1.OwnerReference) bool { return c == nil }} // bare pods are translated
	clusterWide(ctx, t, r, plain, port, waiting, governed, floor, system)

	got := getPod(ctx, t, ns, "plain")
	if !tolerates(got) || got.Labels[schedulingv1alpha1.LabelBurst] != "true" || got.Annotations[schedulingv1alpha1.AnnotationBurstPolicy] != schedulingv1alpha1.ClusterWideBurstMark {
		t.Errorf("the unannotated pod did not burst: tolerations %v labels %v annotations %v", got.Spec.Tolerations, got.Labels, got.Annotations)
	}
	if got := getPod(ctx, t, ns, "port"); tolerates(got) || got.Annotations[schedulingv1alpha1.AnnotationNotBurstable] != schedulingv1alpha1.NotBurstableReservedPort {
		t.Errorf("the restricted pod: tolerations %v annotations %v, want no burst and %s", got.Spec.Tolerations, got.Annotations, schedulingv1alpha1.NotBurstableReservedPort)
	}
	for name, before := range untouched {
		after := getPod(ctx, t, before.Namespace, name)
		if after.ResourceVersion != before.ResourceVersion {
			t.Errorf("pod %s was written (tolerations %v, annotations %v); it is not the cluster-wide mode's", name, after.Spec.Tolerations, after.Annotations)
		}
	}
	for _, reason := range []string{burstpolicy.EventReasonBurst, schedulingv1alpha1.NotBurstableReservedPort} {
		if !hasEvent(rec, reason) {
			t.Errorf("no %s Event", reason)
		}
	}

	// On the virtual node, the burst pod goes first on scale-in.
	bind(ctx, t, plain, virtualNode)
	clusterWide(ctx, t, r, plain)
	got = getPod(ctx, t, ns, "plain")
	if got.Annotations[schedulingv1alpha1.AnnotationPodDeletionCost] != decide.BurstDeletionCost || got.Annotations[schedulingv1alpha1.AnnotationDeletionCostSetBy] != schedulingv1alpha1.ClusterWideBurstMark {
		t.Errorf("bound burst pod annotations = %v, want the burst deletion cost", got.Annotations)
	}

	// kubectl get cbp counts them.
	d := &burstpolicy.DefaultsReconciler{Client: env.Client}
	status := func() *schedulingv1alpha1.ClusterBurstPolicy {
		t.Helper()
		if _, err := d.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(def)}); err != nil {
			t.Fatal(err)
		}
		out := &schedulingv1alpha1.ClusterBurstPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(def), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	st := status()
	if st.Status.BurstPods == nil || *st.Status.BurstPods != 1 || st.Status.NonBurstablePods == nil || *st.Status.NonBurstablePods != 1 {
		t.Errorf("status counts burst %v refused %v, want 1 and 1", ptr.Deref(st.Status.BurstPods, -1), ptr.Deref(st.Status.NonBurstablePods, -1))
	}
	if c := cbpCondition(st, schedulingv1alpha1.TypeBursting); c.Status != metav1.ConditionTrue || c.Reason != schedulingv1alpha1.ReasonPodsBurst {
		t.Errorf("Bursting = %+v, want True/PodsBurst", c)
	}

	// With the global switch off, only a pod whose own AUTO_SCALE_EKS is
	// true bursts (both tables' row 6).
	setSpec := func(f func(*schedulingv1alpha1.ClusterBurstPolicySpec)) {
		t.Helper()
		before := def.DeepCopy()
		f(&def.Spec)
		if err := env.Client.Patch(ctx, def, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	setSpec(func(s *schedulingv1alpha1.ClusterBurstPolicySpec) { s.Enabled = ptr.To(false) })
	off := makePod(ctx, t, ns, "off", nil, nil)
	optIn := makePod(ctx, t, ns, "opt-in", nil, func(p *corev1.Pod) { p.Annotations = map[string]string{"AUTO_SCALE_EKS": "true"} })
	markUnschedulable(ctx, t, off)
	markUnschedulable(ctx, t, optIn)
	clusterWide(ctx, t, r, off, optIn)
	if got := getPod(ctx, t, ns, "off"); tolerates(got) || len(got.Annotations) != 0 {
		t.Errorf("with the switch off the pod was written: tolerations %v annotations %v", got.Spec.Tolerations, got.Annotations)
	}
	if !tolerates(getPod(ctx, t, ns, "opt-in")) {
		t.Errorf("the pod with AUTO_SCALE_EKS=true did not burst with the global switch off")
	}

	// Back to SelectedPods: the cleanup reverts the cluster-wide mode's marks.
	setSpec(func(s *schedulingv1alpha1.ClusterBurstPolicySpec) { s.Governs = schedulingv1alpha1.GovernsSelectedPods })
	cleanup := &burstpolicy.CleanupReconciler{Client: env.Client}
	for _, p := range []*corev1.Pod{plain, port, optIn} {
		if _, err := cleanup.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err != nil {
			t.Fatal(err)
		}
		if m := marksOf(getPod(ctx, t, ns, p.Name)); !m.Empty() {
			t.Errorf("pod %s keeps %+v after governs went back to SelectedPods", p.Name, m)
		}
	}
	st = status()
	if st.Status.BurstPods != nil || cbpCondition(st, schedulingv1alpha1.TypeBursting).Reason != schedulingv1alpha1.ReasonSelectedPodsOnly {
		t.Errorf("status with SelectedPods = %+v, want no counts and Bursting SelectedPodsOnly", st.Status)
	}
}

func cbpCondition(p *schedulingv1alpha1.ClusterBurstPolicy, typ string) metav1.Condition {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return metav1.Condition{}
}

// gatedPods creates n gated pods with labels (the first a second older
// than the rest, so it is the first replica), as the webhook admits them.
func gatedPods(ctx context.Context, t *testing.T, ns, prefix string, n int, labels map[string]string, mutate func(*corev1.Pod)) {
	t.Helper()
	for i := range n {
		makePod(ctx, t, ns, fmt.Sprintf("%s-%d", prefix, i), labels, func(p *corev1.Pod) {
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: schedulingv1alpha1.SchedulingGateBurst}}
			if mutate != nil {
				mutate(p)
			}
		})
		if i == 0 {
			time.Sleep(1100 * time.Millisecond)
		}
	}
}

// assertFloor checks that of the gated pods prefix-0..n-1, the first is
// released as a local pod and the others are pinned to virtual nodes.
func assertFloor(ctx context.Context, t *testing.T, ns, prefix string, n int) {
	t.Helper()
	for i := range n {
		p := getPod(ctx, t, ns, fmt.Sprintf("%s-%d", prefix, i))
		if len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("%s is still gated", p.Name)
		}
		if burst := tolerates(p); burst != (i > 0) {
			t.Errorf("%s: burst = %v, want %v (LOCAL_REPLICAS 1 keeps the first replica local)", p.Name, burst, i > 0)
		}
	}
}

// TestTranslateEveryKind (issue 18 point 3): AUTO_SCALE_EKS/LOCAL_REPLICAS
// become a BurstPolicy on a ReplicaSet, a Job (a CronJob's too), a bare Pod
// and a kind with a scale subresource, each counting against its own floor;
// a ReplicaSet of a Deployment and a pod with a controller are translated
// through their controller instead.
func TestTranslateEveryKind(t *testing.T) {
	ctx, ns := fixture(t, "kinds")
	legacy := map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": "1"}
	template := func(labels map[string]string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: legacy},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
	}
	jobTemplate := func() corev1.PodTemplateSpec {
		tmpl := template(nil)
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		return tmpl
	}
	r := newReconciler(nil)
	ready := func(bp *schedulingv1alpha1.BurstPolicy, target string) {
		t.Helper()
		if c := condition(bp, schedulingv1alpha1.TypeReady); c.Status != metav1.ConditionTrue || bp.Status.Target != target {
			t.Errorf("policy %s: Ready %+v target %q, want True and %s", bp.Name, c, bp.Status.Target, target)
		}
	}

	t.Run("ReplicaSet", func(t *testing.T) {
		labels := map[string]string{"app": "rs"}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: ns},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: template(labels)}}
		if err := env.Client.Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
		bp := translateWorkload(ctx, t, &translate.WorkloadTranslator{Client: env.Client, Kind: "ReplicaSet"}, rs)
		if bp == nil || bp.Spec.TargetRef.Kind != "ReplicaSet" || bp.Spec.LocalReplicas != 1 || bp.Spec.Trigger != schedulingv1alpha1.TriggerPending {
			t.Fatalf("translated policy = %+v", bp)
		}
		gatedPods(ctx, t, ns, "rs", 3, labels, nil)
		reconcilePolicy(ctx, t, r, bp)
		ready(bp, "ReplicaSet/rs")
		assertFloor(ctx, t, ns, "rs", 3)

		// A Deployment's ReplicaSet is translated through the Deployment.
		owned := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "00000000-0000-0000-0000-000000000001", Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "owned"}}, Template: template(map[string]string{"app": "owned"})}}
		if err := env.Client.Create(ctx, owned); err != nil {
			t.Fatal(err)
		}
		if bp := translateWorkload(ctx, t, &translate.WorkloadTranslator{Client: env.Client, Kind: "ReplicaSet"}, owned); bp != nil {
			t.Errorf("a Deployment's ReplicaSet got its own policy %s", bp.Name)
		}
	})

	t.Run("Job of a CronJob", func(t *testing.T) {
		cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
			Spec: batchv1.CronJobSpec{Schedule: "0 0 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: jobTemplate()}}}}
		if err := env.Client.Create(ctx, cron); err != nil {
			t.Fatal(err)
		}
		// What the CronJob controller makes: a Job with its template, owned by it.
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "nightly-1", Namespace: ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cron.Name, UID: cron.UID, Controller: ptr.To(true)}}},
			Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Template: cron.Spec.JobTemplate.Spec.Template}}
		if err := env.Client.Create(ctx, job); err != nil {
			t.Fatal(err)
		}
		bp := translateWorkload(ctx, t, &translate.WorkloadTranslator{Client: env.Client, Kind: "Job"}, job)
		if bp == nil || bp.Spec.TargetRef.APIVersion != "batch/v1" || bp.Spec.TargetRef.Kind != "Job" {
			t.Fatalf("translated policy = %+v", bp)
		}
		// The API server generated the Job's selector and pod labels.
		gatedPods(ctx, t, ns, "nightly-1", 3, job.Spec.Template.Labels, nil)
		reconcilePolicy(ctx, t, r, bp)
		ready(bp, "Job/nightly-1")
		assertFloor(ctx, t, ns, "nightly-1", 3)
	})

	t.Run("bare Pod", func(t *testing.T) {
		pods := &translate.WorkloadTranslator{Client: env.Client, Kind: "Pod"}
		gatedPods(ctx, t, ns, "solo", 1, nil, func(p *corev1.Pod) { p.Annotations = map[string]string{"LOCAL_REPLICAS": "0"} })
		gatedPods(ctx, t, ns, "home", 1, nil, func(p *corev1.Pod) { p.Annotations = map[string]string{"LOCAL_REPLICAS": "1"} })
		for _, name := range []string{"solo-0", "home-0"} {
			bp := translateWorkload(ctx, t, pods, getPod(ctx, t, ns, name))
			if bp == nil || bp.Spec.TargetRef.Kind != "Pod" || bp.Spec.TargetRef.APIVersion != "v1" {
				t.Fatalf("translated policy of %s = %+v", name, bp)
			}
			reconcilePolicy(ctx, t, r, bp)
			ready(bp, "Pod/"+name)
			if bp.Status.PendingReplicas+bp.Status.LocalReplicas+bp.Status.BurstReplicas != 1 {
				t.Errorf("policy %s governs %+v, want exactly its pod", bp.Name, bp.Status)
			}
		}
		if p := getPod(ctx, t, ns, "solo-0"); !tolerates(p) || len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("the bare pod with LOCAL_REPLICAS 0 did not burst: gates %v", p.Spec.SchedulingGates)
		}
		if p := getPod(ctx, t, ns, "home-0"); tolerates(p) || len(p.Spec.SchedulingGates) != 0 {
			t.Errorf("the bare pod with LOCAL_REPLICAS 1 must be released locally: gates %v tolerations %v", p.Spec.SchedulingGates, p.Spec.Tolerations)
		}
		// A pod with a controller is translated through it.
		owned := makePod(ctx, t, ns, "owned-pod", nil, func(p *corev1.Pod) {
			p.Annotations = legacy
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "00000000-0000-0000-0000-000000000002", Controller: ptr.To(true)}}
		})
		if bp := translateWorkload(ctx, t, pods, owned); bp != nil {
			t.Errorf("a ReplicaSet's pod got its own policy %s", bp.Name)
		}
	})

	t.Run("kind with a scale subresource", func(t *testing.T) {
		gvk := widgetCRD(ctx, t)
		dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		var found []translate.ScaleWorkload
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			found, err = translate.DiscoverScaleWorkloads(ctx, dc)
			return err == nil && slices.ContainsFunc(found, func(w translate.ScaleWorkload) bool { return w.GroupVersionKind == gvk }), nil
		}); err != nil {
			t.Fatalf("discovery never listed %s among %v (last error %v)", gvk, found, err)
		}
		if slices.ContainsFunc(found, func(w translate.ScaleWorkload) bool { return w.Group == appsv1.GroupName }) {
			t.Errorf("discovery listed the apps kinds translated by type: %v", found)
		}

		labels := map[string]string{"app": "widget"}
		w, err := bptest.NewWidget(ns, "w", 3, legacy)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		// What its controller would report.
		if err := unstructured.SetNestedField(w.Object, "app=widget", "status", "selector"); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		kinds := translate.NewKinds()
		bp := translateWorkload(ctx, t, &translate.WorkloadTranslator{Client: env.Client, GVK: gvk, Kinds: kinds}, w)
		if bp == nil || bp.Spec.TargetRef.APIVersion != gvk.GroupVersion().String() || bp.Spec.TargetRef.Kind != gvk.Kind {
			t.Fatalf("translated policy = %+v", bp)
		}
		gatedPods(ctx, t, ns, "widget", 3, labels, nil)
		reconcilePolicy(ctx, t, r, bp)
		ready(bp, "Widget/w")
		assertFloor(ctx, t, ns, "widget", 3)
	})
}

// widgetCRD installs bptest's Widget kind; it is removed when the test ends.
func widgetCRD(ctx context.Context, t *testing.T) schema.GroupVersionKind {
	t.Helper()
	uninstall, err := bptest.InstallWidgetCRD(ctx, env.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := uninstall(context.Background()); err != nil {
			t.Errorf("removing the Widget CRD: %v", err)
		}
	})
	return bptest.WidgetGVK
}

// TestSchedulerNameRewrite (issue 18 point 4): the webhook moves a new pod
// naming tke-scheduler to the default scheduler and records the old name;
// the reporter puts the Event on the pod once it exists.
func TestSchedulerNameRewrite(t *testing.T) {
	ctx, ns := fixture(t, "tke-scheduler")
	request := func(schedulerName string, annotations map[string]string) (admission.Request, []byte) {
		raw, err := json.Marshal(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: annotations},
			Spec:       corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Namespace: ns,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw},
		}}, raw
	}
	apply := func(resp admission.Response, raw []byte) corev1.Pod {
		t.Helper()
		b, _ := json.Marshal(resp.Patches)
		p, err := jsonpatch.DecodePatch(b)
		if err != nil {
			t.Fatalf("patch %s: %v", b, err)
		}
		patched, err := p.Apply(raw)
		if err != nil {
			t.Fatalf("applying %s: %v", b, err)
		}
		var pod corev1.Pod
		if err := json.Unmarshal(patched, &pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	g := &burstpolicy.PodGater{Reader: env.Client, RewriteTKEScheduler: true}
	for name, ann := range map[string]map[string]string{"no annotations": nil, "annotations": {"team": "a"}} {
		req, raw := request("tke-scheduler", ann)
		resp := g.Handle(ctx, req)
		if !resp.Allowed || len(resp.Patches) == 0 {
			t.Fatalf("%s: response %+v, want allowed with patches", name, resp)
		}
		pod := apply(resp, raw)
		if pod.Spec.SchedulerName != corev1.DefaultSchedulerName || pod.Annotations[schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom] != "tke-scheduler" {
			t.Errorf("%s: schedulerName %q annotations %v, want %s and the old name recorded", name, pod.Spec.SchedulerName, pod.Annotations, corev1.DefaultSchedulerName)
		}
		if ann["team"] != "" && pod.Annotations["team"] != "a" {
			t.Errorf("%s: the pod lost its annotations: %v", name, pod.Annotations)
		}
	}
	for name, gater := range map[string]*burstpolicy.PodGater{
		"flag off":          {Reader: env.Client},
		"another scheduler": g,
	} {
		schedulerName := "tke-scheduler"
		if gater == g {
			schedulerName = "my-scheduler"
		}
		req, _ := request(schedulerName, nil)
		if resp := gater.Handle(ctx, req); !resp.Allowed || len(resp.Patches) != 0 {
			t.Errorf("%s: response %+v, want allowed without patches", name, resp)
		}
	}

	pod := makePod(ctx, t, ns, "moved", nil, func(p *corev1.Pod) {
		p.Annotations = map[string]string{schedulingv1alpha1.AnnotationSchedulerNameRewrittenFrom: "tke-scheduler"}
	})
	rec := events.NewFakeRecorder(10)
	rep := &burstpolicy.SchedulerNameReporter{Client: env.Client, Recorder: rec}
	if _, err := rep.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pod)}); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(rec, schedulingv1alpha1.EventReasonSchedulerNameRewritten) {
		t.Errorf("no %s Event", schedulingv1alpha1.EventReasonSchedulerNameRewritten)
	}
}
