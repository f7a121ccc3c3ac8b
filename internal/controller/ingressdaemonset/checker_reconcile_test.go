package ingressdaemonset

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

func createNamespace(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// degraded returns ids's Degraded condition as stored.
func degraded(t *testing.T, ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) *metav1.Condition {
	t.Helper()
	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), got); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, appsv1alpha1.TypeDegraded)
	if c == nil {
		t.Fatal("no Degraded condition")
	}
	return c
}

// drain returns the events rec holds with reason.
func drain(rec *events.FakeRecorder, reason string) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			if _, rest, _ := strings.Cut(e, " "); strings.HasPrefix(rest, reason+" ") {
				out = append(out, e)
			}
		default:
			return out
		}
	}
}

var tenantTolerations = []corev1.Toleration{
	{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ingress", Effect: corev1.TaintEffectNoSchedule},
	{Operator: corev1.TolerationOpExists},
}

// TestTenantCannotChooseTheHealthChecker: an IngressDaemonSet's author can
// set neither the health checker's image, pull policy, ServiceAccount nor
// resources (admission refuses each), and gets the platform's health
// checker, in the platform's namespace, tolerating only what the platform
// allows of the template's tolerations; nothing of it lands in the
// tenant's namespace.
func TestTenantCannotChooseTheHealthChecker(t *testing.T) {
	ctx := testenv.Context(t)
	ns, platform := "tenant-hc", "platform-hc"
	createNamespace(t, ctx, platform)
	ids := oneNodeIDS(t, ctx, ns, "thc-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.HealthCheckNodePorts = []int32{10083}
		ids.Spec.Template.Spec.Tolerations = tenantTolerations
	})
	for field, set := range map[string]func(*appsv1alpha1.HealthChecker){
		"image":              func(h *appsv1alpha1.HealthChecker) { h.Image = "attacker/shell:1" },
		"imagePullPolicy":    func(h *appsv1alpha1.HealthChecker) { h.ImagePullPolicy = corev1.PullAlways },
		"serviceAccountName": func(h *appsv1alpha1.HealthChecker) { h.ServiceAccountName = "admin" },
		"resources": func(h *appsv1alpha1.HealthChecker) {
			h.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
		},
	} {
		changed := &appsv1alpha1.IngressDaemonSet{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), changed); err != nil {
			t.Fatal(err)
		}
		set(&changed.Spec.HealthChecker)
		if err := env.Client.Update(ctx, changed); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.healthChecker."+field) {
			t.Errorf("setting spec.healthChecker.%s: err %v, want it refused at admission", field, err)
		}
	}

	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Client: env.Client, Recorder: rec, HealthChecker: HealthChecker{Image: "platform/edgeplane:1", Namespace: platform,
		ServiceAccount: "platform-hc", AllowedTolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	reconcile()
	ds := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platform, Name: naming.HealthCheckerName(ns, "ing", 10083)}, ds); err != nil {
		t.Fatalf("the platform's health checker: %v", err)
	}
	pod := ds.Spec.Template.Spec
	if c := pod.Containers[0]; c.Image != "platform/edgeplane:1" || pod.ServiceAccountName != "platform-hc" || !pod.HostNetwork {
		t.Errorf("health checker runs %s as %s (host network %v), want the platform's image and ServiceAccount", c.Image, pod.ServiceAccountName, pod.HostNetwork)
	}
	if diff := cmp.Diff(tenantTolerations[:1], pod.Tolerations); diff != "" {
		t.Errorf("health checker tolerations (-want +got):\n%s", diff)
	}
	var dss appsv1.DaemonSetList
	var rbs rbacv1.RoleBindingList
	var sas corev1.ServiceAccountList
	for _, l := range []client.ObjectList{&dss, &rbs, &sas} {
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(dss.Items)+len(rbs.Items)+len(sas.Items) != 0 {
		t.Errorf("the tenant's namespace got %d DaemonSets, %d RoleBindings and %d ServiceAccounts; want none", len(dss.Items), len(rbs.Items), len(sas.Items))
	}
	c := degraded(t, ctx, ids)
	if c.Status != metav1.ConditionTrue || c.Reason != appsv1alpha1.ReasonHealthCheckerTolerationsNotAllowed || !strings.Contains(c.Message, "does not tolerate *") {
		t.Errorf("Degraded = %+v, want True, %s, naming the dropped toleration", c, appsv1alpha1.ReasonHealthCheckerTolerationsNotAllowed)
	}
	if got := drain(rec, appsv1alpha1.EventHealthCheckerTolerationsNotAllowed); len(got) != 1 || !strings.HasPrefix(got[0], "Warning ") {
		t.Errorf("events %q, want one Warning %s", got, appsv1alpha1.EventHealthCheckerTolerationsNotAllowed)
	}
	reconcile()
	if got := drain(rec, appsv1alpha1.EventHealthCheckerTolerationsNotAllowed); len(got) != 0 {
		t.Errorf("a second pass with nothing new recorded %q", got)
	}
}

// TestStoredHealthCheckerFieldsAreIgnored: an IngressDaemonSet stored before
// admission refused spec.healthChecker's fields still updates (the rule
// ratchets: it holds only for a changed healthChecker), and gets the
// platform's health checker, with Degraded and a Warning Event naming what
// was ignored.
func TestStoredHealthCheckerFieldsAreIgnored(t *testing.T) {
	ctx := testenv.Context(t)
	ns, platform := "stored-hc", "platform-stored"
	createNamespace(t, ctx, platform)
	ids := newOneNodeIDS(t, ctx, ns, "shc-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.HealthCheckNodePorts = []int32{10084}
		ids.Spec.HealthChecker = appsv1alpha1.HealthChecker{Image: "attacker/shell:1", ServiceAccountName: "admin",
			Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}}}
	})
	env.CreateBypassingRules(t, ids, "deprecated: the health checker")

	changed := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), changed); err != nil {
		t.Fatal(err)
	}
	changed.Spec.ReplicasPerNode = 2
	if err := env.Client.Update(ctx, changed); err != nil {
		t.Errorf("updating another field of a stored object: %v", err)
	}

	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Client: env.Client, Recorder: rec, HealthChecker: HealthChecker{Image: "platform/edgeplane:1", Namespace: platform, ServiceAccount: "platform-hc"}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	ds := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platform, Name: naming.HealthCheckerName(ns, "ing", 10084)}, ds); err != nil {
		t.Fatalf("the platform's health checker: %v", err)
	}
	pod := ds.Spec.Template.Spec
	if c := pod.Containers[0]; c.Image != "platform/edgeplane:1" || pod.ServiceAccountName != "platform-hc" ||
		!c.Resources.Requests.Cpu().Equal(resource.MustParse("10m")) {
		t.Errorf("health checker runs %s as %s with %v, want the platform's image, ServiceAccount and resources", c.Image, pod.ServiceAccountName, c.Resources)
	}
	c := degraded(t, ctx, ids)
	if c.Status != metav1.ConditionTrue || c.Reason != appsv1alpha1.ReasonHealthCheckerFieldsIgnored ||
		!strings.Contains(c.Message, "spec.healthChecker.image, spec.healthChecker.serviceAccountName, spec.healthChecker.resources ignored") {
		t.Errorf("Degraded = %+v, want True, %s, naming the fields", c, appsv1alpha1.ReasonHealthCheckerFieldsIgnored)
	}
	if got := drain(rec, appsv1alpha1.EventHealthCheckerFieldsIgnored); len(got) != 1 || !strings.HasPrefix(got[0], "Warning ") {
		t.Errorf("events %q, want one Warning %s", got, appsv1alpha1.EventHealthCheckerFieldsIgnored)
	}
}

// TestHealthCheckersFollowTheirIngressDaemonSet: without owner references
// (they cannot cross namespaces) the platform's health checkers still go
// with their port and their IngressDaemonSet: on a port's removal, through
// the finalizer, and when the IngressDaemonSet went without it; one an
// earlier IngressDaemonSet of the same name left is replaced, and one that
// is not a health checker is never touched.
func TestHealthCheckersFollowTheirIngressDaemonSet(t *testing.T) {
	ctx := testenv.Context(t)
	ns, platform := "follow-hc", "platform-follow"
	createNamespace(t, ctx, platform)
	ids := oneNodeIDS(t, ctx, ns, "fhc-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.HealthCheckNodePorts = []int32{10085, 10086}
	})
	r := &Reconciler{Client: env.Client, HealthChecker: HealthChecker{Namespace: platform}}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	exists := func(port int32) bool {
		t.Helper()
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: platform, Name: naming.HealthCheckerName(ns, "ing", port)}, &appsv1.DaemonSet{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	// Not a health checker, in the platform's namespace with a clashing name.
	foreign := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: naming.HealthCheckerName(ns, "ing", 10087), Namespace: platform},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if !exists(10085) || !exists(10086) {
		t.Fatal("a health checker per port was not created")
	}

	// A port removed: its health checker goes.
	got := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	got.Spec.HealthCheckNodePorts = []int32{10086, 10087}
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err == nil || !strings.Contains(err.Error(), "not this IngressDaemonSet's health checker") {
		t.Errorf("a pass over a clashing DaemonSet: err %v, want it refused", err)
	}
	if exists(10085) || !exists(10086) {
		t.Errorf("after the port's removal: 10085 exists %v, 10086 exists %v", exists(10085), exists(10086))
	}
	left := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), left); err != nil || left.UID != foreign.UID || left.Spec.Template.Spec.Containers[0].Image != "x" {
		t.Errorf("the DaemonSet that is no health checker was touched: %v", err)
	}
	if c := degraded(t, ctx, ids); c.Reason != appsv1alpha1.ReasonApplyFailed {
		t.Errorf("Degraded = %+v, want %s", c, appsv1alpha1.ReasonApplyFailed)
	}
	if err := env.Client.Delete(ctx, foreign); err != nil {
		t.Fatal(err)
	}

	// One an earlier IngressDaemonSet of the same name left is replaced.
	stale := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platform, Name: naming.HealthCheckerName(ns, "ing", 10086)}, stale); err != nil {
		t.Fatal(err)
	}
	stale.Labels[appsv1alpha1.LabelIngressDaemonSetUID] = "an-earlier-uid"
	stale.Spec.Template.Labels[appsv1alpha1.LabelIngressDaemonSetUID] = "an-earlier-uid"
	if err := env.Client.Update(ctx, stale); err != nil {
		t.Fatal(err)
	}
	reconcile()
	replaced := &appsv1.DaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stale), replaced); err != nil {
		t.Fatal(err)
	}
	if replaced.UID == stale.UID || replaced.Labels[appsv1alpha1.LabelIngressDaemonSetUID] != string(got.UID) {
		t.Errorf("the earlier object's health checker was kept (uid %s, label %s)", replaced.UID, replaced.Labels[appsv1alpha1.LabelIngressDaemonSetUID])
	}
	if !exists(10087) {
		t.Error("the new port's health checker was not created once the clash was gone")
	}

	// Deletion: the finalizer deletes them before it goes.
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if exists(10086) || exists(10087) {
		t.Error("health checkers left after their IngressDaemonSet's deletion")
	}
	if err := env.Client.Get(ctx, req.NamespacedName, got); !apierrors.IsNotFound(err) {
		t.Fatalf("IngressDaemonSet not deleted: %v", err)
	}

	// Gone without its finalizer having run: a pass for the name removes
	// what it left.
	orphan, _ := healthDaemonSet(got, 10088, r.HealthChecker)
	if err := env.Client.Create(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if exists(10088) {
		t.Error("the health checker of an IngressDaemonSet that is gone was kept")
	}
}

// TestEarlierVersionsHealthCheckersAreRemoved: the health-checker
// DaemonSets an earlier version created in the IngressDaemonSet's namespace
// (with the author's image and ServiceAccount, holding the host ports) are
// deleted, with an Event; a DaemonSet the IngressDaemonSet does not control
// is left alone.
func TestEarlierVersionsHealthCheckersAreRemoved(t *testing.T) {
	ctx := testenv.Context(t)
	ns, platform := "legacy-hc", "platform-legacy"
	createNamespace(t, ctx, platform)
	ids := oneNodeIDS(t, ctx, ns, "lhc-1", func(ids *appsv1alpha1.IngressDaemonSet) {
		ids.Spec.HealthCheckNodePorts = []int32{10089}
	})
	labels := map[string]string{appsv1alpha1.LabelIngressDaemonSet: "ing", appsv1alpha1.LabelHealthCheckPort: "10089"}
	legacy := func(name string, owners []metav1.OwnerReference) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owners},
			Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{HostNetwork: true, ServiceAccountName: "admin", Containers: []corev1.Container{{Name: "healthcheck", Image: "attacker/shell:1"}}}}}}
	}
	earlier := legacy("ing-10089", []metav1.OwnerReference{*metav1.NewControllerRef(ids, appsv1alpha1.GroupVersion.WithKind("IngressDaemonSet"))})
	someoneElses := legacy("not-ours", nil)
	for _, ds := range []*appsv1.DaemonSet{earlier, someoneElses} {
		if err := env.Client.Create(ctx, ds); err != nil {
			t.Fatal(err)
		}
	}
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{Client: env.Client, Recorder: rec, HealthChecker: HealthChecker{Namespace: platform}}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(earlier), &appsv1.DaemonSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("the earlier version's health checker: %v, want it deleted", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(someoneElses), &appsv1.DaemonSet{}); err != nil {
		t.Errorf("a DaemonSet the IngressDaemonSet does not control: %v, want it kept", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: platform, Name: naming.HealthCheckerName(ns, "ing", 10089)}, &appsv1.DaemonSet{}); err != nil {
		t.Errorf("the platform's health checker: %v", err)
	}
	if got := drain(rec, appsv1alpha1.EventLegacyHealthCheckerRemoved); len(got) != 1 || !strings.HasPrefix(got[0], "Normal ") {
		t.Errorf("events %q, want one %s", got, appsv1alpha1.EventLegacyHealthCheckerRemoved)
	}
}
