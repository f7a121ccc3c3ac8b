package nodepatch_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { testenv.Main(m, &env) }

var pending = corev1.Taint{Key: "example.com/pending", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// TestApplyFromStaleCopies drives Apply with copies of a node older than
// the stored one, as an informer serves them right after a write: the
// patch never duplicates a taint, never removes a mark whose value changed
// meanwhile, and never drops someone else's label.
func TestApplyFromStaleCopies(t *testing.T) {
	ctx := testenv.Context(t)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "nodepatch-stale", Labels: map[string]string{"keep": "1"}}}
	if err := env.Client.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, n) })
	// The stored node: admission gave it node.kubernetes.io/not-ready, so
	// a taint is appended to its list.
	stale := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(n), stale); err != nil {
		t.Fatal(err)
	}
	if len(stale.Spec.Taints) == 0 {
		t.Fatal("want the node created with a taint (node.kubernetes.io/not-ready), so appending is exercised")
	}

	// Taint from the copy; then again from the same (now stale) copy: the
	// stored node already has the taint, the appended duplicate is refused
	// and Apply reads the node and finds nothing to do.
	taint := func(*corev1.Node) nodepatch.Want {
		return nodepatch.Want{Taint: pending, Tainted: true, Labels: map[string]*string{"ip": ptr.To("203.0.113.7")}}
	}
	changed, got, err := nodepatch.Apply(ctx, env.Client, env.Client, stale, taint)
	if err != nil || !changed || !nodepatch.HasTaint(got, pending) {
		t.Fatalf("first taint: changed %v, err %v, taints %v", changed, err, got.Spec.Taints)
	}
	withTaint := got.DeepCopy()
	if _, _, err := nodepatch.Apply(ctx, env.Client, env.Client, stale, taint); err != nil {
		t.Fatalf("taint from a stale copy: %v", err)
	}
	stored := &corev1.Node{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(n), stored); err != nil {
		t.Fatal(err)
	}
	ours := 0
	for _, tt := range stored.Spec.Taints {
		if tt.MatchTaint(&pending) {
			ours++
		}
	}
	if ours != 1 {
		t.Fatalf("taints after a second Apply from a stale copy: %v, want %s exactly once", stored.Spec.Taints, pending.Key)
	}

	// Someone changes the label the controller owns; the controller's rule
	// "remove the label if it names my address", computed from the copy
	// that shows the old value, is judged again on the stored node: the
	// new value stays, and so does someone else's label; the taint goes.
	stored.Labels["ip"] = "198.51.100.1"
	stored.Labels["theirs"] = "x"
	if err := env.Client.Update(ctx, stored); err != nil {
		t.Fatal(err)
	}
	clean := func(n *corev1.Node) nodepatch.Want {
		w := nodepatch.Want{Taint: pending}
		if n.Labels["ip"] == "203.0.113.7" {
			w.Labels = map[string]*string{"ip": nil}
		}
		return w
	}
	changed, got, err = nodepatch.Apply(ctx, env.Client, env.Client, withTaint, clean)
	if err != nil || !changed {
		t.Fatalf("clean from a stale copy: changed %v, err %v", changed, err)
	}
	if nodepatch.HasTaint(got, pending) || got.Labels["ip"] != "198.51.100.1" || got.Labels["theirs"] != "x" || got.Labels["keep"] != "1" {
		t.Fatalf("after cleaning: taints %v, labels %v; want no taint, the new ip label, theirs and keep kept", got.Spec.Taints, got.Labels)
	}
}
