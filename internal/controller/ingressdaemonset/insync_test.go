package ingressdaemonset

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/naming"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// TestInSync: a Deployment found in sync is known to be until it, or the
// IngressDaemonSet's spec, changes version, or either is another object
// under the same name.
func TestInSync(t *testing.T) {
	ids := testIDS(nil)
	dep := func(uid, rv string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "ing-w1", UID: types.UID(uid), ResourceVersion: rv}}
	}
	cases := map[string]struct {
		ids  func(*appsv1alpha1.IngressDaemonSet)
		d    *appsv1.Deployment
		want bool
	}{
		"same versions":                          {d: dep("d1", "10"), want: true},
		"the Deployment changed":                 {d: dep("d1", "11")},
		"the Deployment was recreated":           {d: dep("d2", "10")},
		"the spec changed":                       {ids: func(i *appsv1alpha1.IngressDaemonSet) { i.Generation = 2 }, d: dep("d1", "10")},
		"the IngressDaemonSet was recreated":     {ids: func(i *appsv1alpha1.IngressDaemonSet) { i.UID = "uid-2" }, d: dep("d1", "10")},
		"another Deployment":                     {d: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "edge", Name: "ing-w2", UID: "d1", ResourceVersion: "10"}}},
		"a Deployment without a version":         {d: dep("d1", "")},
		"an IngressDaemonSet without generation": {ids: func(i *appsv1alpha1.IngressDaemonSet) { i.Generation = 0 }, d: dep("d1", "10")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var s inSync
			s.remember(ids, dep("d1", "10"))
			now := ids.DeepCopy()
			if tc.ids != nil {
				tc.ids(now)
			}
			if got := s.known(now, tc.d); got != tc.want {
				t.Errorf("known = %v, want %v", got, tc.want)
			}
		})
	}
	var s inSync
	s.remember(ids, dep("d1", ""))
	if s.known(ids, dep("d1", "")) {
		t.Error("a Deployment without a version was remembered")
	}
}

// TestHandEditAfterQuietPasses: a pass that finds a node's Deployment in
// sync remembers it, and a hand edit after that (a new version) is still
// undone by the next pass.
func TestHandEditAfterQuietPasses(t *testing.T) {
	ctx := testenv.Context(t)
	ns := "quiet-edit"
	ids := oneNodeIDS(t, ctx, ns, "qe-1", func(ids *appsv1alpha1.IngressDaemonSet) { ids.Spec.ReplicasPerNode = 2 })
	r := &Reconciler{Client: env.Client}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	reconcile() // creates the Deployment
	reconcile() // finds it in sync
	name := naming.DeploymentName("ing", "qe-1")
	d := getDeployment(t, ctx, ns, name)
	cur := &appsv1alpha1.IngressDaemonSet{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ids), cur); err != nil {
		t.Fatal(err)
	}
	if !r.synced.known(cur, d) {
		t.Fatal("a pass that found the Deployment in sync did not remember it")
	}
	d.Spec.Replicas = ptr.To[int32](5)
	if err := env.Client.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	reconcile()
	if n := *getDeployment(t, ctx, ns, name).Spec.Replicas; n != 2 {
		t.Errorf("replicas after a pass = %d, want 2 back", n)
	}
}

var quietPassRuns int

// BenchmarkQuietPass50Nodes: one pass over an IngressDaemonSet of 50 nodes
// that are all up to date (a pass of a rollout does this for every node
// outside it).
func BenchmarkQuietPass50Nodes(b *testing.B) {
	ctx := b.Context()
	quietPassRuns++ // -count runs it again on the same API server
	ns := fmt.Sprintf("quiet-pass-%d", quietPassRuns)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		createNode(b, ctx, fmt.Sprintf("%s-%02d", ns, i), map[string]string{ns: "yes"})
	}
	ids := &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: ns},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ing"}},
			NodeSelector:    map[string]string{ns: "yes"},
			ReplicasPerNode: 2,
			Template: appsv1alpha1.PodTemplate{
				Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ing"}},
				Spec:     corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}},
			},
		},
	}
	if err := env.Client.Create(ctx, ids); err != nil {
		b.Fatal(err)
	}
	r := &Reconciler{Client: env.Client}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(ids)}
	for range 2 { // creates the Deployments, then finds them in sync
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
