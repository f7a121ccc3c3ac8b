package anycastipbinding

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
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

// staleCache serves the copy of a binding it was given, like an informer
// cache that has not seen the latest writes.
type staleCache struct {
	client.Client
	stale *networkingv1alpha1.AnycastIPBinding
}

func (s *staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if b, ok := obj.(*networkingv1alpha1.AnycastIPBinding); ok && s.stale != nil && key.Name == s.stale.Name {
		s.stale.DeepCopyInto(b)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// TestBindingClientWrites: the create-pending Update becomes a
// resourceVersion check (a conflict on a stale copy, a real Update when
// anything else changed), a status update conflicting only with this
// process's own last write is applied to the stored version, someone
// else's status change is never overwritten, and reads of a binding whose
// cached copy is older than this process's last write come from the API
// server.
func TestBindingClientWrites(t *testing.T) {
	ctx := testenv.Context(t)
	cache := &staleCache{Client: env.Client}
	c := newNoopStatusClient(cache).withReader(env.Client)
	b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "binding-client-writes"}, Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"}}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, b) })
	live := func() *networkingv1alpha1.AnycastIPBinding {
		t.Helper()
		l := &networkingv1alpha1.AnycastIPBinding{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), l); err != nil {
			t.Fatal(err)
		}
		return l
	}

	// The create-pending Update on the current version writes nothing.
	rv := b.ResourceVersion
	c.expectCreate(b.UID)
	meta.SetExternalCreatePending(b, time.Now())
	if err := c.Update(ctx, b); err != nil {
		t.Fatalf("create-pending update: %v", err)
	}
	if l := live(); l.ResourceVersion != rv || meta.GetExternalCreatePending(l) != (time.Time{}) {
		t.Errorf("the create-pending update was written (resourceVersion %s -> %s)", rv, l.ResourceVersion)
	}
	// On a stale copy it is a conflict.
	stale := b.DeepCopy()
	b.Labels = map[string]string{"someone": "else"}
	if err := env.Client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	c.expectCreate(stale.UID)
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("create-pending update of a stale copy: got %v, want a conflict", err)
	}
	// With another change it is a real Update.
	c.expectCreate(b.UID)
	b.Finalizers = []string{"example.com/test"}
	if err := c.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if l := live(); len(l.Finalizers) != 1 {
		t.Errorf("an Update carrying a finalizer was not written: %v", l.Finalizers)
	}
	b.Finalizers = nil
	if err := env.Client.Update(ctx, b); err != nil {
		t.Fatal(err)
	}

	// A status update on a copy older than this process's own last status
	// write is applied to the stored version.
	b.Status.State = "CREATING"
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	old := b.DeepCopy()
	old.SetResourceVersion(rv)
	old.Status.State = "UNBIND"
	if err := c.Status().Update(ctx, old); err != nil {
		t.Fatalf("status update after this process's own write: %v", err)
	}
	if got := live().Status.State; got != "UNBIND" {
		t.Errorf("status state %q, want UNBIND", got)
	}
	// Someone else's status change is not overwritten.
	l := live()
	l.Status.State = "BIND"
	if err := env.Client.Status().Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	old.SetResourceVersion(rv)
	old.Status.State = "OFFLINING"
	if err := c.Status().Update(ctx, old); !apierrors.IsConflict(err) {
		t.Errorf("status update over someone else's: got %v, want a conflict", err)
	}
	if got := live().Status.State; got != "BIND" {
		t.Errorf("status state %q, want someone else's BIND", got)
	}

	// Read-your-writes: the cache still serves an old copy.
	cache.stale = old.DeepCopy()
	cache.stale.SetResourceVersion(rv)
	c.saw(live())
	got := &networkingv1alpha1.AnycastIPBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if want := live().ResourceVersion; got.ResourceVersion != want {
		t.Errorf("read resourceVersion %s, want the stored %s", got.ResourceVersion, want)
	}
}

// TestCreatePendingPrefetch: the create-pending check compares the copy
// with a read started earlier in the pass (prefetch): the current copy
// allocates with nothing written, a stale one is a conflict, and a read
// left by an earlier pass is never used.
func TestCreatePendingPrefetch(t *testing.T) {
	ctx := testenv.Context(t)
	c := newNoopStatusClient(env.Client).withReader(env.Client)
	b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: "create-pending-prefetch"}, Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"}}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, b) })
	someoneUpdates := func(v string) {
		t.Helper()
		l := &networkingv1alpha1.AnycastIPBinding{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), l); err != nil {
			t.Fatal(err)
		}
		l.Labels = map[string]string{"someone": v}
		if err := env.Client.Update(ctx, l); err != nil {
			t.Fatal(err)
		}
	}

	rv := b.ResourceVersion
	c.prefetch(ctx, b)
	c.expectCreate(b.UID)
	meta.SetExternalCreatePending(b, time.Now())
	if err := c.Update(ctx, b); err != nil {
		t.Fatalf("create-pending update: %v", err)
	}
	if b.ResourceVersion != rv {
		t.Errorf("the create-pending update was written (resourceVersion %s -> %s)", rv, b.ResourceVersion)
	}

	// The copy is stale when the pass starts.
	stale := b.DeepCopy()
	someoneUpdates("1")
	c.prefetch(ctx, stale)
	c.expectCreate(stale.UID)
	if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Errorf("create-pending update of a stale copy: got %v, want a conflict", err)
	}

	// The check uses the read the pass started, not a read of its own: a
	// write after that read is not seen (the copy was the stored version
	// when the pass began, which is what the check proves).
	cur := &networkingv1alpha1.AnycastIPBinding{}
	read := func() {
		t.Helper()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), cur); err != nil {
			t.Fatal(err)
		}
		c.prefetch(ctx, cur)
		v, ok := c.prefetched.Load(cur.UID)
		if !ok {
			t.Fatal("prefetch started no read")
		}
		<-v.(*liveRead).done // read before the newer write
	}
	read()
	someoneUpdates("2")
	c.expectCreate(cur.UID)
	if err := c.Update(ctx, cur); err != nil {
		t.Errorf("create-pending update checked against the pass's own read: %v, want no conflict", err)
	}

	// A read an earlier pass left behind is dropped when the next starts.
	read()
	c.dropPrefetch(cur.UID)
	someoneUpdates("3")
	c.expectCreate(cur.UID)
	if err := c.Update(ctx, cur); !apierrors.IsConflict(err) {
		t.Errorf("create-pending update after a newer write, with an earlier pass's read left: got %v, want a conflict", err)
	}
}

// TestForgetRecordsItsPatch: forget's annotation patch goes through the
// managed reconciler's client, so a later read served a cached copy from
// before the patch gets the patched one (read-your-writes).
func TestForgetRecordsItsPatch(t *testing.T) {
	ctx := testenv.Context(t)
	cache := &staleCache{Client: env.Client}
	c := newNoopStatusClient(cache).withReader(env.Client)
	b := &networkingv1alpha1.AnycastIPBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "forget-records-patch", Annotations: map[string]string{meta.AnnotationKeyExternalName: "eip-00000001"}},
		Spec:       networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(ctx, b) })
	cur := &networkingv1alpha1.AnycastIPBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), cur); err != nil {
		t.Fatal(err)
	}
	before := cur.DeepCopy()
	e := &external{c: &Connector{kube: env.Client, writes: c}}
	if _, err := e.forget(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if cur.ResourceVersion == before.ResourceVersion || meta.GetExternalName(cur) != "" {
		t.Fatalf("forget did not patch: resourceVersion %s, external name %q", cur.ResourceVersion, meta.GetExternalName(cur))
	}

	cache.stale = before
	got := &networkingv1alpha1.AnycastIPBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != cur.ResourceVersion || meta.GetExternalName(got) != "" || got.GetAnnotations()[AnnotationAttempt] != "1" {
		t.Errorf("read after forget: resourceVersion %s, external name %q, attempt %q; want the patched %s, none, 1",
			got.ResourceVersion, meta.GetExternalName(got), got.GetAnnotations()[AnnotationAttempt], cur.ResourceVersion)
	}
}

// TestFirstProgressDeferred: a new binding's first progress, once the
// annotation patch has recorded its address, is not written within the
// window but laid over the next read; Ready is written at once; a reconcile
// error and a status someone else wrote in between are never deferred.
func TestFirstProgressDeferred(t *testing.T) {
	ctx := testenv.Context(t)
	c := newNoopStatusClient(env.Client).withReader(env.Client).deferProgress(time.Hour)
	progress := func(b *networkingv1alpha1.AnycastIPBinding, ready xpv2.Condition, synced xpv2.Condition) {
		b.Status.AddressID, b.Status.State = meta.GetExternalName(b), "CREATING"
		b.Status.ObservedGeneration = b.Generation
		b.Status.SetConditions(ready, synced)
		b.Status.SetConditions(status.ManagedKstatus(ready, false)...)
	}
	newBinding := func(name string) *networkingv1alpha1.AnycastIPBinding {
		t.Helper()
		b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"}}
		if err := env.Client.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, b) })
		// The managed reconciler records the address with a patch through
		// this client (annotationUpdater).
		if err := (annotationUpdater{c: c}).UpdateCriticalAnnotations(ctx, withExternalName(b, "eip-"+name)); err != nil {
			t.Fatal(err)
		}
		return b
	}
	stored := func(b *networkingv1alpha1.AnycastIPBinding) *networkingv1alpha1.AnycastIPBinding {
		t.Helper()
		l := &networkingv1alpha1.AnycastIPBinding{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), l); err != nil {
			t.Fatal(err)
		}
		return l
	}

	b := newBinding("first-progress")
	progress(b, xpv2.Creating(), xpv2.ReconcileSuccess())
	if err := c.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	if l := stored(b); len(l.Status.Conditions) != 0 {
		t.Errorf("first progress written within the window: %+v", l.Status)
	}
	got := &networkingv1alpha1.AnycastIPBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
		t.Fatal(err)
	}
	if r := got.GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonCreating || got.Status.AddressID != meta.GetExternalName(b) {
		t.Errorf("the next read does not carry the deferred progress: Ready %s, address %q", r.Reason, got.Status.AddressID)
	}
	progress(got, xpv2.Available(), xpv2.ReconcileSuccess())
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if r := stored(b).GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonAvailable {
		t.Errorf("Ready was not written: %s", r.Reason)
	}

	failed := newBinding("first-progress-error")
	progress(failed, xpv2.Creating(), xpv2.ReconcileError(errors.New("boom")))
	if err := c.Status().Update(ctx, failed); err != nil {
		t.Fatal(err)
	}
	if s := stored(failed).GetCondition(xpv2.TypeSynced); s.Reason != xpv2.ReasonReconcileError {
		t.Errorf("a reconcile error was not written at once: Synced %s", s.Reason)
	}

	// Someone else wrote the status after the address was recorded: the
	// progress deferred from the older copy is dropped at the next read,
	// which shows the stored status.
	other := newBinding("first-progress-other")
	l := stored(other)
	l.Status.State = "SOMEONE"
	if err := env.Client.Status().Update(ctx, l); err != nil {
		t.Fatal(err)
	}
	progress(other, xpv2.Creating(), xpv2.ReconcileSuccess())
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	got = &networkingv1alpha1.AnycastIPBinding{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(other), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.State != "SOMEONE" || len(got.Status.Conditions) != 0 {
		t.Errorf("deferred progress laid over someone else's status: %+v", got.Status)
	}
	if stored(other).Status.State != "SOMEONE" {
		t.Errorf("someone else's status was overwritten")
	}
}

func withExternalName(b *networkingv1alpha1.AnycastIPBinding, name string) *networkingv1alpha1.AnycastIPBinding {
	meta.SetExternalName(b, name)
	return b
}
