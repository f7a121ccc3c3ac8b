package anycastipbinding

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testenv"
)

// TestNoopStatusClient: an unchanged status is not written again; a changed
// one, or one based on another resourceVersion, is.
func TestNoopStatusClient(t *testing.T) {
	ctx := testenv.Context(t)
	c := newNoopStatusClient(env.Client)
	b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "noop-status"}, Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"}}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, b) })
	b.Status.State = "CREATING"
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	rv := b.ResourceVersion
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.ResourceVersion != rv {
		t.Errorf("an unchanged status was written again (%s -> %s)", rv, b.ResourceVersion)
	}
	b.Status.State = "UNBIND"
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b.ResourceVersion == rv {
		t.Errorf("a changed status was not written")
	}
	// Someone else writes; the same status on the new version is written.
	b.Annotations = map[string]string{"x": "y"}
	if err := env.Client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	rv = b.ResourceVersion
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	// (The API server keeps the resourceVersion of a write that changes
	// nothing, so look at what the client recorded as written.)
	if got := c.last[string(b.UID)].resourceVersion; got != rv {
		t.Errorf("a status on a newer resourceVersion was skipped: recorded %s, want %s", got, rv)
	}
}
