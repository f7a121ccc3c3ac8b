package ingressdaemonset

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const (
	// platformNS is where the health checkers run when a test names no
	// namespace: DefaultHealthChecker's.
	platformNS   = DefaultHealthCheckNamespace
	detachKey    = "node-detacher.variant.run/detached"
	depDetachKey = "ingressdaemonsets.mumoshu.github.com/to-be-updated"
)

func createNode(t testing.TB, ctx context.Context, name string, labels map[string]string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
}

// markRolledOut plays the Deployment controller: every replica updated and ready.
func markRolledOut(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	n := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	if err := env.Client.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// observeMetadataChanges plays the Deployment controller for changes that
// do not touch pods: annotation changes move a Deployment's generation, and
// the controller observes them at once. Updating nodes are left alone:
// their pods are replaced until markRolledOut.
func observeMetadataChanges(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	var list appsv1.DeploymentList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		d := &list.Items[i]
		if d.Status.ObservedGeneration == 0 || d.Status.ObservedGeneration >= d.Generation || d.Labels[appsv1alpha1.LabelPhase] == "Updating" {
			continue
		}
		d.Status.ObservedGeneration = d.Generation
		if err := env.Client.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
}

func getDeployment(t *testing.T, ctx context.Context, ns, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		t.Fatalf("getting Deployment %s: %v", name, err)
	}
	return d
}

func phases(t *testing.T, ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) map[string]string {
	t.Helper()
	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), got); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range got.Status.Nodes {
		out[n.Node] = string(n.Phase)
	}
	return out
}

// TestRollout drives a detach-mode IngressDaemonSet through creation, a
// rollout node by node, node joins and leaves, and deletion.
func TestRollout(t *testing.T) {
	ctx := testenv.Context(t)
	ns := "rollout"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	edge := map[string]string{"role": "edge"}
	for _, n := range []string{"n1", "n2", "n3"} {
		createNode(t, ctx, n, edge)
	}
	createNode(t, ctx, "n4", nil)

	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing", "team": "edge"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
			ReplicasPerNode:      2,
			NodeSelector:         edge,
			HealthCheckNodePorts: []int32{10080},
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxUnavailableNodes:        ptr.To[int32](1),
				AnnotateNodeToDetach:       &appsv1alpha1.DetachAnnotation{Key: detachKey, Value: "true", GracePeriodSeconds: 10},
				AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, GracePeriodSeconds: 5},
			}},
		},
	}
	if err := env.Client.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC))
	createNamespace(t, ctx, platformNS)
	r := &Reconciler{Client: env.Client, HealthChecker: HealthChecker{Image: "example.com/edgeplane:test"}, Clock: clk}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		observeMetadataChanges(t, ctx, ns)
		return res
	}

	// Creation: one Deployment per matching node, the health DaemonSet and its RBAC.
	reconcile()
	for _, n := range []string{"n1", "n2", "n3"} {
		d := getDeployment(t, ctx, ns, "ing-"+n)
		if *d.Spec.Replicas != 2 {
			t.Errorf("%s replicas = %d, want 2", d.Name, *d.Spec.Replicas)
		}
		wantLabels := map[string]string{"app": "ing", "team": "edge", appsv1alpha1.LabelIngressDaemonSet: "ing", appsv1alpha1.LabelNode: n}
		if diff := cmp.Diff(wantLabels, d.Spec.Template.Labels); diff != "" {
			t.Errorf("%s pod labels (-want +got):\n%s", d.Name, diff)
		}
		terms := d.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		wantTerms := []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n}}}}}
		if diff := cmp.Diff(wantTerms, terms); diff != "" {
			t.Errorf("%s node pinning (-want +got):\n%s", d.Name, diff)
		}
		if got := d.Spec.Strategy.RollingUpdate.MaxUnavailable.String(); got != "100%" {
			t.Errorf("%s maxUnavailable = %s, want 100%% in detach mode", d.Name, got)
		}
		if ref := metav1.GetControllerOf(d); ref == nil || ref.Name != "ing" || ref.Kind != "IngressDaemonSet" {
			t.Errorf("%s controller = %v", d.Name, ref)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ing-n4"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("unlabelled node n4 got a Deployment (err %v)", err)
	}
	ds := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: naming.HealthCheckerName(ns, "ing", 10080)}, ds); err != nil {
		t.Fatalf("health DaemonSet: %v", err)
	}
	pod := ds.Spec.Template.Spec
	c := pod.Containers[0]
	if !pod.HostNetwork || pod.ServiceAccountName != DefaultHealthCheckServiceAccount || c.Image != "example.com/edgeplane:test" ||
		c.Ports[0].HostPort != 10080 || !cmp.Equal(pod.NodeSelector, edge) {
		t.Errorf("health DaemonSet pod spec unexpected: %+v", pod)
	}
	wantArgs := []string{"--bind-address=$(HOST_IP)", "--port=10080", "--namespace=" + ns, "--ingress-daemonset=ing", "--node=$(NODE_NAME)"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("health checker args (-want +got):\n%s", diff)
	}
	if mem := c.Resources.Requests[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("32Mi")) != 0 {
		t.Errorf("health checker memory request = %s, want 32Mi", mem.String())
	}

	// All ready: Ready True.
	for _, n := range []string{"n1", "n2", "n3"} {
		markRolledOut(t, ctx, ns, "ing-"+n)
	}
	reconcile()
	got := &appsv1alpha1.IngressDaemonSet{}
	_ = env.Client.Get(ctx, req.NamespacedName, got)
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v, want True; status %+v", c, got.Status)
	}
	if got.Status.DesiredNodes != 3 || got.Status.ReadyNodes != 3 || got.Status.UpdatedNodes != 3 || got.Status.ObservedGeneration != got.Generation {
		t.Fatalf("status counts wrong: %+v", got.Status)
	}
	rev1 := got.Status.UpdateRevision

	// A template change: n1 detaches first, nothing else moves.
	got.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if diff := cmp.Diff(map[string]string{"n1": "Detaching", "n2": "Ready", "n3": "Ready"}, phases(t, ctx, ids)); diff != "" {
		t.Fatalf("phases after the change (-want +got):\n%s", diff)
	}
	d1 := getDeployment(t, ctx, ns, "ing-n1")
	if d1.Spec.Template.Spec.Containers[0].Image != "nginx:1" {
		t.Fatal("n1's pods were touched before the grace period")
	}
	if _, ok := d1.Annotations[depDetachKey]; !ok {
		t.Errorf("Deployment detach annotation missing: %v", d1.Annotations)
	}
	node := &corev1.Node{}
	_ = env.Client.Get(ctx, client.ObjectKey{Name: "n1"}, node)
	if node.Annotations[detachKey] != "true" {
		t.Errorf("node n1 not annotated: %v", node.Annotations)
	}

	// Within the grace period nothing moves, and the pass asks to come back.
	clk.Step(4 * time.Second)
	if res := reconcile(); res.RequeueAfter != 6*time.Second {
		t.Errorf("RequeueAfter = %v, want 6s", res.RequeueAfter)
	}
	if img := getDeployment(t, ctx, ns, "ing-n1").Spec.Template.Spec.Containers[0].Image; img != "nginx:1" {
		t.Fatal("n1 updated within the grace period")
	}

	// A manager restart is a new Reconciler: the phase lives on the Deployment.
	r = &Reconciler{Client: env.Client, HealthChecker: HealthChecker{Image: "example.com/edgeplane:test"}, Clock: clk}
	clk.Step(6 * time.Second)
	reconcile()
	d1 = getDeployment(t, ctx, ns, "ing-n1")
	if d1.Spec.Template.Spec.Containers[0].Image != "nginx:2" || d1.Labels[appsv1alpha1.LabelPhase] != "Updating" {
		t.Fatalf("n1 not updating after the grace period: phase %q image %q", d1.Labels[appsv1alpha1.LabelPhase], d1.Spec.Template.Spec.Containers[0].Image)
	}
	// Until n1's pods are ready, n2 waits.
	reconcile()
	if diff := cmp.Diff(map[string]string{"n1": "Updating", "n2": "Ready", "n3": "Ready"}, phases(t, ctx, ids)); diff != "" {
		t.Fatalf("phases while n1 updates (-want +got):\n%s", diff)
	}
	markRolledOut(t, ctx, ns, "ing-n1")
	reconcile()
	_ = env.Client.Get(ctx, client.ObjectKey{Name: "n1"}, node)
	if _, ok := node.Annotations[detachKey]; ok {
		t.Error("node n1 still annotated after reattaching")
	}
	if _, ok := getDeployment(t, ctx, ns, "ing-n1").Annotations[depDetachKey]; ok {
		t.Error("Deployment detach annotation left after reattaching")
	}
	reconcile() // n1 Ready
	reconcile() // n2 starts
	if diff := cmp.Diff(map[string]string{"n1": "Ready", "n2": "Detaching", "n3": "Ready"}, phases(t, ctx, ids)); diff != "" {
		_ = env.Client.Get(ctx, req.NamespacedName, got)
		for _, n := range []string{"n1", "n2", "n3"} {
			d := getDeployment(t, ctx, ns, "ing-"+n)
			t.Logf("%s gen %d status %+v", n, d.Generation, d.Status)
		}
		t.Fatalf("phases after n1 (-want +got):\n%s", diff)
	}

	// Node joins (label added) and leaves (label removed) mid-rollout.
	_ = env.Client.Get(ctx, client.ObjectKey{Name: "n4"}, node)
	node.Labels = edge
	if err := env.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	_ = env.Client.Get(ctx, client.ObjectKey{Name: "n2"}, node)
	node.Labels = nil
	if err := env.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if d := getDeployment(t, ctx, ns, "ing-n4"); d.Spec.Template.Spec.Containers[0].Image != "nginx:2" {
		t.Errorf("new node n4 not created at the update revision")
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ing-n2"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment of unlabelled node n2 not deleted: %v", err)
	}
	_ = env.Client.Get(ctx, client.ObjectKey{Name: "n2"}, node)
	if _, ok := node.Annotations[detachKey]; ok {
		t.Error("node n2 left annotated after it stopped matching mid-detach")
	}

	// Finish: n3 and n4.
	markRolledOut(t, ctx, ns, "ing-n4")
	for i := 0; i < 10; i++ {
		clk.Step(11 * time.Second)
		reconcile()
		for _, n := range []string{"n3", "n4"} {
			if getDeployment(t, ctx, ns, "ing-"+n).Labels[appsv1alpha1.LabelPhase] == "Updating" {
				markRolledOut(t, ctx, ns, "ing-"+n)
			}
		}
	}
	_ = env.Client.Get(ctx, req.NamespacedName, got)
	if got.Status.UpdatedNodes != 3 || got.Status.AvailableNodes != 3 || got.Status.UpdateRevision == rev1 {
		t.Fatalf("rollout did not complete: %+v", got.Status)
	}
	for _, ct := range []string{appsv1alpha1.TypeReady, appsv1alpha1.TypeProgressing, appsv1alpha1.TypeDegraded} {
		want := map[string]metav1.ConditionStatus{appsv1alpha1.TypeReady: "True", appsv1alpha1.TypeProgressing: "False", appsv1alpha1.TypeDegraded: "False"}[ct]
		if c := meta.FindStatusCondition(got.Status.Conditions, ct); c == nil || c.Status != want {
			t.Errorf("%s = %+v, want %s", ct, c, want)
		}
	}

	// Port change: the old DaemonSet goes, a new one comes.
	got.Spec.HealthCheckNodePorts = []int32{10081}
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: naming.HealthCheckerName(ns, "ing", 10080)}, &appsv1.DaemonSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("DaemonSet of the removed port still there: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: naming.HealthCheckerName(ns, "ing", 10081)}, &appsv1.DaemonSet{}); err != nil {
		t.Errorf("DaemonSet of the new port: %v", err)
	}

	// Deletion releases the finalizer.
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if err := env.Client.Get(ctx, req.NamespacedName, got); !apierrors.IsNotFound(err) {
		t.Fatalf("IngressDaemonSet not deleted: %v", err)
	}
}

// TestDegradedModeBudgetAndPartition checks maxDegradedNodes, the per-node
// strategy, partition and pause against a real API server.
func TestDegradedModeBudgetAndPartition(t *testing.T) {
	ctx := testenv.Context(t)
	ns := "degraded"
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"pool": "degraded"}
	nodes := []string{"d1", "d2", "d3", "d4", "d5"}
	for _, n := range nodes {
		createNode(t, ctx, n, sel)
	}
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "web"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}},
			},
			ReplicasPerNode: 3,
			NodeSelector:    sel,
			UpdateStrategy: appsv1alpha1.UpdateStrategy{RollingUpdate: &appsv1alpha1.RollingUpdate{
				MaxDegradedNodes:          ptr.To[int32](2),
				MaxUnavailablePodsPerNode: ptr.To(intstr.FromInt32(2)),
				MaxSurgedPodsPerNode:      ptr.To(intstr.FromInt32(1)),
				Partition:                 ptr.To[int32](1),
			}},
		},
	}
	if err := env.Client.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		observeMetadataChanges(t, ctx, ns)
	}
	reconcile()
	for _, n := range nodes {
		d := getDeployment(t, ctx, ns, naming.DeploymentName("web", n))
		s := d.Spec.Strategy.RollingUpdate
		if s.MaxUnavailable.IntValue() != 2 || s.MaxSurge.IntValue() != 1 {
			t.Errorf("%s strategy = %v/%v, want 2/1", d.Name, s.MaxUnavailable, s.MaxSurge)
		}
		markRolledOut(t, ctx, ns, d.Name)
	}
	reconcile()

	got := &appsv1alpha1.IngressDaemonSet{}
	_ = env.Client.Get(ctx, req.NamespacedName, got)
	got.Spec.Template.Spec.Containers[0].Image = "web:2"
	got.Spec.UpdateStrategy.RollingUpdate.Paused = true
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if diff := cmp.Diff(map[string]string{"d1": "Ready", "d2": "Ready", "d3": "Ready", "d4": "Ready", "d5": "Ready"}, phases(t, ctx, ids)); diff != "" {
		t.Fatalf("paused rollout moved (-want +got):\n%s", diff)
	}
	_ = env.Client.Get(ctx, req.NamespacedName, got)
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeProgressing); c == nil || c.Reason != appsv1alpha1.ReasonRolloutPaused {
		t.Errorf("Progressing = %+v, want reason RolloutPaused", c)
	}

	got.Spec.UpdateStrategy.RollingUpdate.Paused = false
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	maxBusy := 0
	for i := 0; i < 30; i++ {
		reconcile()
		busy := 0
		for _, n := range nodes {
			d := getDeployment(t, ctx, ns, naming.DeploymentName("web", n))
			if p := d.Labels[appsv1alpha1.LabelPhase]; p != "" {
				busy++
			}
			if d.Labels[appsv1alpha1.LabelPhase] == "Updating" {
				markRolledOut(t, ctx, ns, d.Name)
			}
		}
		maxBusy = max(maxBusy, busy)
	}
	if maxBusy != 2 {
		t.Errorf("at most %d nodes were in the rollout at once, want exactly maxDegradedNodes = 2", maxBusy)
	}
	_ = env.Client.Get(ctx, req.NamespacedName, got)
	if got.Status.UpdatedNodes != 4 {
		t.Fatalf("updated nodes = %d, want 4 (partition 1 of 5)", got.Status.UpdatedNodes)
	}
	if img := getDeployment(t, ctx, ns, "web-d5").Spec.Template.Spec.Containers[0].Image; img != "web:1" {
		t.Errorf("partitioned node d5 runs %s, want web:1", img)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeProgressing); c == nil || c.Reason != appsv1alpha1.ReasonPartitioned {
		t.Errorf("Progressing = %+v, want reason Partitioned", c)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, want True with a partition", c)
	}
}

// rolloutFixture is an IngressDaemonSet "lb" (two replicas of lb:1 per
// node) in a namespace of its own, rolled out on nodes labelled
// pool=<namespace>, whose passes a test runs by hand at the fixture's clock.
type rolloutFixture struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	nodes []string
	clock *clocktesting.FakeClock
	r     *Reconciler
	req   ctrl.Request
}

func newRolloutFixture(t *testing.T, ns string, nodes []string, ru appsv1alpha1.RollingUpdate) *rolloutFixture {
	t.Helper()
	ctx := testenv.Context(t)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{"pool": ns}
	for _, n := range nodes {
		createNode(t, ctx, n, sel)
	}
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "lb", Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lb"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "lb"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "lb", Image: "lb:1"}}},
			},
			ReplicasPerNode: 2,
			NodeSelector:    sel,
			UpdateStrategy:  appsv1alpha1.UpdateStrategy{RollingUpdate: &ru},
		},
	}
	if err := env.Client.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	f := &rolloutFixture{t: t, ctx: ctx, ns: ns, nodes: nodes, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)),
		req: ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}}
	f.r = &Reconciler{Client: env.Client, Clock: f.clock}
	f.reconcile()
	for _, n := range nodes {
		markRolledOut(t, ctx, ns, f.deployment(n))
	}
	f.reconcile()
	return f
}

// reconcile runs one pass.
func (f *rolloutFixture) reconcile() {
	f.t.Helper()
	if _, err := f.r.Reconcile(f.ctx, f.req); err != nil {
		f.t.Fatalf("Reconcile: %v", err)
	}
}

// deployment is the name of node's Deployment.
func (f *rolloutFixture) deployment(node string) string { return naming.DeploymentName("lb", node) }

// inRollout lists the nodes whose Deployment carries a phase.
func (f *rolloutFixture) inRollout() []string {
	f.t.Helper()
	var out []string
	for _, n := range f.nodes {
		if getDeployment(f.t, f.ctx, f.ns, f.deployment(n)).Labels[appsv1alpha1.LabelPhase] != "" {
			out = append(out, n)
		}
	}
	return out
}

// get reads the IngressDaemonSet.
func (f *rolloutFixture) get() *appsv1alpha1.IngressDaemonSet {
	f.t.Helper()
	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(f.ctx, f.req.NamespacedName, got); err != nil {
		f.t.Fatal(err)
	}
	return got
}

// update changes the IngressDaemonSet's spec with mutate.
func (f *rolloutFixture) update(mutate func(*appsv1alpha1.IngressDaemonSet)) {
	f.t.Helper()
	got := f.get()
	mutate(got)
	if err := env.Client.Update(f.ctx, got); err != nil {
		f.t.Fatal(err)
	}
}

// markUpdatingRolledOut plays the Deployment controller for every node in
// the Updating phase.
func (f *rolloutFixture) markUpdatingRolledOut() {
	f.t.Helper()
	for _, n := range f.nodes {
		if name := f.deployment(n); getDeployment(f.t, f.ctx, f.ns, name).Labels[appsv1alpha1.LabelPhase] == "Updating" {
			markRolledOut(f.t, f.ctx, f.ns, name)
		}
	}
}

// rollOutOneAtATime plays 40 rounds of the Deployment controller observing
// the pass's writes, a pass, and the Deployment controller rolling out the
// nodes in the Updating phase, 2 s apart, and fails as soon as more than one
// node is in the rollout (budget 1). With beforeObserved, each round also
// passes once more before the Deployment controller observes its writes.
func (f *rolloutFixture) rollOutOneAtATime(beforeObserved bool) {
	f.t.Helper()
	for round := 0; round < 40; round++ {
		observeMetadataChanges(f.t, f.ctx, f.ns)
		f.reconcile()
		if busy := f.inRollout(); len(busy) > 1 {
			f.t.Fatalf("round %d: %v in the rollout at once, budget 1", round, busy)
		}
		f.markUpdatingRolledOut()
		f.clock.Step(2 * time.Second)
		if !beforeObserved {
			continue
		}
		f.reconcile()
		if busy := f.inRollout(); len(busy) > 1 {
			f.t.Fatalf("round %d, before the Deployment controller observed: %v in the rollout at once, budget 1", round, busy)
		}
	}
}

// TestBudgetWhileDeploymentStatusIsStale switches a rolled-out
// IngressDaemonSet from degraded to detach mode together with a template
// change. The new per-node strategy is written to every node's Deployment in
// the first pass (it is not a rollout), which moves their generations; until
// the Deployment controller observes them, their status describes the old
// spec. A pass in that window must not take those nodes for unavailable ones
// (which start without budget): at most maxUnavailableNodes node may be in
// the rollout, whether or not the Deployment controller has caught up.
func TestBudgetWhileDeploymentStatusIsStale(t *testing.T) {
	f := newRolloutFixture(t, "stale-status", []string{"s1", "s2", "s3", "s4"}, appsv1alpha1.RollingUpdate{
		MaxDegradedNodes:           ptr.To[int32](2),
		AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, Value: "true", GracePeriodSeconds: 3},
	})
	ctx, ns, nodes := f.ctx, f.ns, f.nodes
	f.update(func(got *appsv1alpha1.IngressDaemonSet) {
		got.Spec.Template.Spec.Containers[0].Image = "lb:2"
		ru := got.Spec.UpdateStrategy.RollingUpdate
		ru.MaxDegradedNodes = nil
		ru.MaxUnavailableNodes = ptr.To[int32](1)
		ru.AnnotateNodeToDetach = &appsv1alpha1.DetachAnnotation{Key: detachKey, Value: "true", GracePeriodSeconds: 3}
	})
	// The first pass starts s1 and gives every Deployment the detach-mode
	// strategy; the second runs before the Deployment controller has
	// observed any of that.
	f.reconcile()
	if diff := cmp.Diff([]string{"s1"}, f.inRollout()); diff != "" {
		t.Fatalf("nodes in the rollout after the first pass (-want +got):\n%s", diff)
	}
	for _, n := range nodes[1:] {
		if d := getDeployment(t, ctx, ns, f.deployment(n)); d.Status.ObservedGeneration >= d.Generation {
			t.Fatalf("%s: the first pass did not move the generation (%d, observed %d); the test needs it to", d.Name, d.Generation, d.Status.ObservedGeneration)
		}
	}
	f.reconcile()
	if diff := cmp.Diff([]string{"s1"}, f.inRollout()); diff != "" {
		t.Fatalf("nodes in the rollout while the Deployment controller lags (-want +got):\n%s", diff)
	}

	// The whole rollout, with a pass before and after the Deployment
	// controller observes each round's writes: never more than one node.
	f.rollOutOneAtATime(true)
	got := f.get()
	for _, n := range nodes {
		if img := getDeployment(t, ctx, ns, f.deployment(n)).Spec.Template.Spec.Containers[0].Image; img != "lb:2" {
			t.Errorf("node %s runs %s after the rollout, want lb:2", n, img)
		}
	}
	if len(f.inRollout()) != 0 || got.Status.UpdatedNodes != int32(len(nodes)) {
		t.Errorf("rollout did not complete: in the rollout %v, status %+v", f.inRollout(), got.Status)
	}
}

// setReady plays the Deployment controller for a change that leaves ready
// replicas of the Deployment: it observes the latest spec and reports
// ready of its spec.replicas replicas ready.
func setReady(t *testing.T, ctx context.Context, ns, name string, ready int32) {
	t.Helper()
	d := getDeployment(t, ctx, ns, name)
	n := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: ready, AvailableReplicas: ready}
	if err := env.Client.Status().Update(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetWhileReplicasScaleUp raises replicasPerNode together with a
// template change in detach mode. Once the Deployment controller has
// observed the new replica count, every node has fewer ready replicas than
// it wants (the new replica is starting) but still serves on the others: it
// is partly ready, not down, and must not start without budget. Here the new
// replicas never become ready on the old template, so the nodes stay partly
// ready until they are updated: the rollout must still finish, one node at
// a time.
func TestBudgetWhileReplicasScaleUp(t *testing.T) {
	f := newRolloutFixture(t, "scale-up", []string{"u1", "u2", "u3", "u4"}, appsv1alpha1.RollingUpdate{
		MaxUnavailableNodes:        ptr.To[int32](1),
		AnnotateDeploymentToDetach: &appsv1alpha1.DetachAnnotation{Key: depDetachKey, Value: "true", GracePeriodSeconds: 3},
	})
	ctx, ns, nodes := f.ctx, f.ns, f.nodes
	f.update(func(got *appsv1alpha1.IngressDaemonSet) {
		got.Spec.Template.Spec.Containers[0].Image = "lb:2"
		got.Spec.ReplicasPerNode = 3
	})
	// The first pass starts u1 and writes 3 replicas to every Deployment.
	f.reconcile()
	if diff := cmp.Diff([]string{"u1"}, f.inRollout()); diff != "" {
		t.Fatalf("nodes in the rollout after the first pass (-want +got):\n%s", diff)
	}
	// The Deployment controller observes the new count: 2 of 3 replicas
	// ready everywhere.
	for _, n := range nodes {
		d := getDeployment(t, ctx, ns, f.deployment(n))
		if *d.Spec.Replicas != 3 {
			t.Fatalf("%s replicas = %d, want 3 after the first pass", d.Name, *d.Spec.Replicas)
		}
		setReady(t, ctx, ns, d.Name, 2)
	}
	f.reconcile()
	if diff := cmp.Diff([]string{"u1"}, f.inRollout()); diff != "" {
		t.Fatalf("nodes in the rollout while every node is partly ready (-want +got):\n%s", diff)
	}
	for _, n := range f.get().Status.Nodes {
		if n.Node != "u1" && (n.Phase != appsv1alpha1.NodePhaseReady || n.Replicas != 3 || n.Ready != 2) {
			t.Errorf("node status %+v, want Ready with 2 of 3 replicas ready", n)
		}
	}

	// The whole rollout: partly ready nodes stay so until updated, and
	// never more than one node is in the rollout.
	f.rollOutOneAtATime(false)
	f.reconcile()
	got := f.get()
	for _, n := range nodes {
		d := getDeployment(t, ctx, ns, f.deployment(n))
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "lb:2" || d.Status.ReadyReplicas != 3 {
			t.Errorf("node %s runs %s with %d replicas ready after the rollout, want lb:2 with 3", n, img, d.Status.ReadyReplicas)
		}
	}
	if len(f.inRollout()) != 0 || got.Status.UpdatedNodes != int32(len(nodes)) || got.Status.AvailableNodes != int32(len(nodes)) {
		t.Errorf("rollout did not complete: in the rollout %v, status %+v", f.inRollout(), got.Status)
	}
}

// TestDownNodeUpdatedFirst: with a template change, an outdated node that
// serves nothing (no replica ready) starts at once without budget, the
// new template may be what brings it back; a partly ready one (still
// serving) and an available one wait for the budget.
func TestDownNodeUpdatedFirst(t *testing.T) {
	f := newRolloutFixture(t, "down-first", []string{"v1", "v2", "v3"}, appsv1alpha1.RollingUpdate{MaxUnavailableNodes: ptr.To[int32](1)})
	ctx, ns := f.ctx, f.ns
	reconcile := func() {
		t.Helper()
		f.reconcile()
		observeMetadataChanges(t, ctx, ns)
	}
	observeMetadataChanges(t, ctx, ns)
	ids := f.get()
	setReady(t, ctx, ns, f.deployment("v2"), 0)
	setReady(t, ctx, ns, f.deployment("v3"), 1)

	f.update(func(got *appsv1alpha1.IngressDaemonSet) { got.Spec.Template.Spec.Containers[0].Image = "lb:2" })
	reconcile()
	reconcile()
	if diff := cmp.Diff(map[string]string{"v1": "Ready", "v2": "Updating", "v3": "Ready"}, phases(t, ctx, ids)); diff != "" {
		t.Fatalf("phases (-want +got):\n%s", diff)
	}
	// v2 back: v3 (partly ready, counted already) is next, then v1.
	markRolledOut(t, ctx, ns, f.deployment("v2"))
	reconcile()
	if diff := cmp.Diff(map[string]string{"v1": "Ready", "v2": "Reattaching", "v3": "Detaching"}, phases(t, ctx, ids)); diff != "" {
		t.Fatalf("phases after v2 (-want +got):\n%s", diff)
	}
}

// TestSelectorMismatch: a selector that does not select the template creates nothing.
func TestSelectorMismatch(t *testing.T) {
	ctx := testenv.Context(t)
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "mismatch", Namespace: "default"},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "b"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
		t.Fatal(err)
	}
	got := &appsv1alpha1.IngressDaemonSet{}
	_ = env.Client.Get(ctx, client.ObjectKeyFromObject(ids), got)
	if c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeReady); c == nil || c.Reason != appsv1alpha1.ReasonSelectorMismatch {
		t.Fatalf("Ready = %+v, want reason SelectorMismatch", c)
	}
}

// oneNodeIDS creates the namespace ns, a node selected by ns=yes and an
// IngressDaemonSet "ing" of one nginx:1 container on it, as mutate changes it.
func oneNodeIDS(t *testing.T, ctx context.Context, ns, node string, mutate func(*appsv1alpha1.IngressDaemonSet)) *appsv1alpha1.IngressDaemonSet {
	t.Helper()
	ids := newOneNodeIDS(t, ctx, ns, node, mutate)
	if err := env.Client.Create(ctx, ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// newOneNodeIDS is oneNodeIDS without creating the IngressDaemonSet.
func newOneNodeIDS(t *testing.T, ctx context.Context, ns, node string, mutate func(*appsv1alpha1.IngressDaemonSet)) *appsv1alpha1.IngressDaemonSet {
	t.Helper()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createNode(t, ctx, node, map[string]string{ns: "yes"})
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			NodeSelector: map[string]string{ns: "yes"},
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
		},
	}
	mutate(ids)
	return ids
}

// TestHandEditsAreReverted: the generated objects are server-side applied,
// so a hand edit to a field the controller owns (a Deployment's image and
// replicas, a DaemonSet's image) is undone by the next pass, while a field
// another manager set (an extra label) stays; a pass with nothing to undo
// writes nothing.
func TestHandEditsAreReverted(t *testing.T) {
	ctx := testenv.Context(t)
	ns := "hand-edit"
	ids := oneNodeIDS(t, ctx, ns, "he-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.ReplicasPerNode = 2
		ids.Spec.HealthCheckNodePorts = []int32{10082}
	})
	createNamespace(t, ctx, platformNS)
	r := &Reconciler{Client: env.Client, HealthChecker: HealthChecker{Image: "hc:1"}}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	reconcile()
	depName, dsName := naming.DeploymentName("ing", "he-1"), naming.HealthCheckerName(ns, "ing", 10082)

	d := getDeployment(t, ctx, ns, depName)
	d.Spec.Template.Spec.Containers[0].Image = "hand:1"
	d.Spec.Replicas = ptr.To[int32](5)
	d.Labels["team"] = "edge"
	if err := env.Client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	ds := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: dsName}, ds); err != nil {
		t.Fatal(err)
	}
	ds.Spec.Template.Spec.Containers[0].Image = "hand-hc:1"
	ds.Labels["team"] = "edge"
	if err := env.Client.Update(ctx, ds); err != nil {
		t.Fatal(err)
	}

	reconcile()
	d = getDeployment(t, ctx, ns, depName)
	if img, n := d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas; img != "nginx:1" || n != 2 {
		t.Errorf("Deployment after a pass: image %s, replicas %d; want nginx:1 and 2 back", img, n)
	}
	if d.Labels["team"] != "edge" {
		t.Errorf("Deployment label team = %q, want the other manager's edge kept", d.Labels["team"])
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: dsName}, ds); err != nil {
		t.Fatal(err)
	}
	if img := ds.Spec.Template.Spec.Containers[0].Image; img != "hc:1" {
		t.Errorf("DaemonSet image after a pass = %s, want hc:1 back", img)
	}
	if ds.Labels["team"] != "edge" {
		t.Errorf("DaemonSet label team = %q, want the other manager's edge kept", ds.Labels["team"])
	}

	reconcile()
	again := getDeployment(t, ctx, ns, depName)
	againDS := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: dsName}, againDS); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != d.ResourceVersion || againDS.ResourceVersion != ds.ResourceVersion {
		t.Error("a pass with nothing to undo wrote the Deployment or the DaemonSet")
	}
}

// TestFieldsOfEarlierVersionsAreAdopted: a Deployment an earlier version
// created (with create and update, not apply) is handed to the apply field
// manager at its first write, so an env var removed from the template is
// removed from the Deployment instead of being kept by the earlier writer.
func TestFieldsOfEarlierVersionsAreAdopted(t *testing.T) {
	ctx := testenv.Context(t)
	ns := "adopt-earlier"
	ids := oneNodeIDS(t, ctx, ns, "ae-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "KEEP", Value: "1"}, {Name: "DROP", Value: "1"}}
	})
	// What an earlier version created: the same object, by create.
	old := newDeployment(ids, "ae-1", Revision(ids.Spec.Template))
	if err := env.Client.Create(ctx, old); err != nil {
		t.Fatal(err)
	}
	markRolledOut(t, ctx, ns, old.Name)

	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), got); err != nil {
		t.Fatal(err)
	}
	got.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "KEEP", Value: "1"}}
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: env.Client}
	var env0 []corev1.EnvVar
	for range 5 {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
		d := getDeployment(t, ctx, ns, old.Name)
		if d.Annotations[appsv1alpha1.AnnotationRevision] == Revision(got.Spec.Template) {
			env0 = d.Spec.Template.Spec.Containers[0].Env
			break
		}
		markRolledOut(t, ctx, ns, old.Name)
	}
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "KEEP", Value: "1"}}, env0); diff != "" {
		t.Errorf("env of the updated Deployment (-want +got):\n%s", diff)
	}
}

// nodeListRecorder records the names of the nodes each List of nodes
// returned.
type nodeListRecorder struct {
	client.Client
	listed [][]string
}

func (r *nodeListRecorder) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	if nodes, ok := list.(*corev1.NodeList); ok {
		var names []string
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
		r.listed = append(r.listed, names)
	}
	return nil
}

// TestObserveReadsOnlyMatchingNodes: a pass reads only the nodes its
// selectors match, not a copy of every node of the cluster (TestRollout
// covers a node that stops matching).
func TestObserveReadsOnlyMatchingNodes(t *testing.T) {
	ctx := testenv.Context(t)
	createNode(t, ctx, "observe-edge-a", map[string]string{"observe-role": "edge", "observe-zone": "a"})
	createNode(t, ctx, "observe-edge-b", map[string]string{"observe-role": "edge", "observe-zone": "b"})
	createNode(t, ctx, "observe-core", map[string]string{"observe-role": "core", "observe-zone": "a"})
	ids := testIDS(func(i *appsv1alpha1.IngressDaemonSet) {
		i.Namespace = "default"
		i.Name = "observe"
		i.Spec.NodeSelector = map[string]string{"observe-role": "edge"}
		i.Spec.Template.Spec.NodeSelector = map[string]string{"observe-zone": "a"}
	})
	rec := &nodeListRecorder{Client: env.Client}
	r := &Reconciler{Client: rec}
	s, err := r.observe(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"observe-edge-a"}, s.matching); diff != "" {
		t.Errorf("matching nodes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"observe-edge-a"}}, rec.listed); diff != "" {
		t.Errorf("nodes read (-want +got):\n%s", diff)
	}
}
