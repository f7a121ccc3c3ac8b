package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}

type binding = networkingv1alpha1.AnycastIPBinding

const finalizer = "test.edgeplane.io/finalizer"

// world is one test's object and reconciler, driven pass by pass with a
// scripted external client.
type world struct {
	t     *testing.T
	ctx   context.Context
	key   client.ObjectKey
	cache *staleCache
	r     *Reconciler[*binding]
	ext   *script
	opts  Options[*binding]
}

// script is the external client: each method runs the test's function, if
// any, and counts its calls.
type script struct {
	observe func(ctx context.Context, b *binding) (managed.ExternalObservation, error)
	create  func(ctx context.Context, b *binding) error
	update  func(ctx context.Context, b *binding) error
	del     func(ctx context.Context, b *binding) error
	sync    func(ctx context.Context, b *binding) error
	poll    time.Duration
	// connectErr fails Connect.
	connectErr error

	creates, updates, deletes, syncs atomic.Int32
}

func (s *script) Connect(context.Context, *binding) (managed.TypedExternalClient[*binding], error) {
	if s.connectErr != nil {
		return nil, s.connectErr
	}
	return s, nil
}

func (s *script) Observe(ctx context.Context, b *binding) (managed.ExternalObservation, error) {
	if s.observe == nil {
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	return s.observe(ctx, b)
}

func (s *script) Create(ctx context.Context, b *binding) (managed.ExternalCreation, error) {
	s.creates.Add(1)
	if s.create == nil {
		return managed.ExternalCreation{}, nil
	}
	return managed.ExternalCreation{}, s.create(ctx, b)
}

func (s *script) Update(ctx context.Context, b *binding) (managed.ExternalUpdate, error) {
	s.updates.Add(1)
	if s.update == nil {
		return managed.ExternalUpdate{}, nil
	}
	return managed.ExternalUpdate{}, s.update(ctx, b)
}

func (s *script) Delete(ctx context.Context, b *binding) (managed.ExternalDelete, error) {
	s.deletes.Add(1)
	if s.del == nil {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, s.del(ctx, b)
}

func (s *script) Disconnect(context.Context) error { return nil }

func (s *script) SyncCluster(ctx context.Context, b *binding) error {
	s.syncs.Add(1)
	if s.sync == nil {
		return nil
	}
	return s.sync(ctx, b)
}

func (s *script) PollAfter() (time.Duration, bool) { return s.poll, s.poll > 0 }

// staleCache serves the copy it was given, like an informer cache that has
// not seen the latest writes.
type staleCache struct {
	client.Client
	mu    sync.Mutex
	stale *binding
}

func (s *staleCache) serve(b *binding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale = b.DeepCopy()
}

func (s *staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s.mu.Lock()
	stale := s.stale
	s.mu.Unlock()
	if b, ok := obj.(*binding); ok && stale != nil && key.Name == stale.Name {
		stale.DeepCopyInto(b)
		return nil
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

// newWorld creates a binding named after the test and a reconciler for it;
// edit adjusts the reconciler's options.
func newWorld(t *testing.T, edit func(*Options[*binding])) *world {
	t.Helper()
	w := &world{t: t, ctx: testenv.Context(t), cache: &staleCache{Client: env.Client}, ext: &script{}}
	// Created with the finalizer, as the translators create objects (a
	// test about adding it removes it).
	b := &binding{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", testName(t), worlds.Add(1)), Finalizers: []string{finalizer}},
		Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: "x"}}
	if err := env.Client.Create(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		l := &binding{}
		if env.Client.Get(ctx, client.ObjectKeyFromObject(b), l) == nil {
			l.Finalizers = nil
			_ = env.Client.Update(ctx, l)
			_ = env.Client.Delete(ctx, l)
		}
	})
	w.key = client.ObjectKeyFromObject(b)
	w.opts = Options[*binding]{
		Name: "test", New: func() *binding { return &binding{} },
		Client: w.cache, Reader: env.Client, Connector: w.ext, Finalizer: finalizer,
	}
	if edit != nil {
		edit(&w.opts)
	}
	w.r = New(w.opts)
	return w
}

// worlds numbers the worlds, so each has its own object.
var worlds atomic.Int32

func testName(t *testing.T) string {
	n := []byte{}
	for _, c := range []byte(t.Name()) {
		switch {
		case c >= 'A' && c <= 'Z':
			n = append(n, c+'a'-'A')
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			n = append(n, c)
		default:
			n = append(n, '-')
		}
	}
	if len(n) > 40 {
		n = n[len(n)-40:]
	}
	return string(n)
}

func (w *world) pass() reconcile.Result {
	w.t.Helper()
	res, err := w.r.Reconcile(w.ctx, reconcile.Request{NamespacedName: w.key})
	if err != nil {
		w.t.Fatalf("pass: %v", err)
	}
	return res
}

func (w *world) stored() *binding {
	w.t.Helper()
	b := &binding{}
	if err := env.Client.Get(w.ctx, w.key, b); err != nil {
		w.t.Fatal(err)
	}
	return b
}

// someone changes the binding's labels (another writer).
func (w *world) someone(label string) *binding {
	w.t.Helper()
	b := w.stored()
	b.Labels = map[string]string{"someone": label}
	if err := env.Client.Update(w.ctx, b); err != nil {
		w.t.Fatal(err)
	}
	return b
}

// state makes Observe report an existing, up-to-date cloud object and
// record state in status.
func state(s string) func(context.Context, *binding) (managed.ExternalObservation, error) {
	return func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		b.Status.State = s
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
}

// TestStatusWrittenOnlyWhenChanged: a pass writes status once, at its end,
// and only when it changed; a status computed on a version someone else
// wrote since is written onto it.
func TestStatusWrittenOnlyWhenChanged(t *testing.T) {
	w := newWorld(t, nil)
	w.ext.observe = state("CREATING")
	w.pass()
	first := w.stored()
	if first.Status.State != "CREATING" || first.GetCondition(xpv2.TypeSynced).Reason != xpv2.ReasonReconcileSuccess {
		t.Fatalf("first pass: %+v", first.Status)
	}
	if first.Status.ObservedGeneration != first.Generation {
		t.Errorf("observedGeneration %d, want %d", first.Status.ObservedGeneration, first.Generation)
	}
	w.pass()
	if got := w.stored().ResourceVersion; got != first.ResourceVersion {
		t.Errorf("an unchanged status was written again (%s -> %s)", first.ResourceVersion, got)
	}
	w.ext.observe = state("UNBIND")
	w.pass()
	if got := w.stored(); got.ResourceVersion == first.ResourceVersion || got.Status.State != "UNBIND" {
		t.Errorf("a changed status was not written: %+v", got.Status)
	}
	w.someone("1")
	w.ext.observe = state("BIND")
	w.pass()
	if got := w.stored(); got.Status.State != "BIND" || got.Labels["someone"] != "1" {
		t.Errorf("status on someone else's newer version: %+v, labels %v", got.Status, got.Labels)
	}
}

// TestCreateGuard: a create starts from the stored version only. From the
// current copy it costs no write before the create (the finalizer aside)
// and one after it (external name, create pending and succeeded); from a
// copy older than the stored one nothing is created.
func TestCreateGuard(t *testing.T) {
	w := newWorld(t, nil)
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{}, nil
	}
	// A copy the finalizer was already stored on: the create is guarded by
	// a read only.
	b := w.stored()
	b.Finalizers = []string{finalizer}
	if err := env.Client.Update(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	before := b.ResourceVersion
	w.ext.create = func(_ context.Context, b *binding) error {
		if l := w.stored(); l.ResourceVersion != before || meta.GetExternalCreatePending(l) != (time.Time{}) {
			t.Errorf("something was written before the create (resourceVersion %s -> %s)", before, l.ResourceVersion)
		}
		meta.SetExternalName(b, "eip-1")
		return nil
	}
	if res := w.pass(); !res.Requeue { //nolint:staticcheck // what the reconciler asks after a step
		t.Errorf("no requeue after a create: %+v", res)
	}
	got := w.stored()
	if w.ext.creates.Load() != 1 || meta.GetExternalName(got) != "eip-1" ||
		meta.GetExternalCreatePending(got).IsZero() || meta.GetExternalCreateSucceeded(got).IsZero() {
		t.Fatalf("after the create: %d creates, annotations %v", w.ext.creates.Load(), got.Annotations)
	}

	// A stale copy: someone wrote since the cache's copy.
	w2 := newWorld(t, nil)
	w2.ext.observe = w.ext.observe
	stale := w2.stored()
	w2.someone("1")
	w2.cache.serve(stale)
	w2.pass()
	if n := w2.ext.creates.Load(); n != 0 {
		t.Errorf("created %d times from a stale copy", n)
	}
	if s := w2.stored().GetCondition(xpv2.TypeSynced); s.Reason == xpv2.ReasonReconcileError {
		t.Errorf("a stale copy is an error: %s", s.Message)
	}
}

// spyReader signals each Get it answered.
type spyReader struct {
	client.Reader
	done chan struct{}
}

func (s *spyReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := s.Reader.Get(ctx, key, obj, opts...)
	s.done <- struct{}{}
	return err
}

// TestCreateGuardPrefetch: with PrefetchCreate the guard compares the copy
// with a read started as the pass began (so a write after that read, while
// the pass observes, is not seen); without it, with a read made just
// before the create (which sees it). A read started by an earlier pass is
// never used.
func TestCreateGuardPrefetch(t *testing.T) {
	for _, prefetch := range []bool{true, false} {
		name := map[bool]string{true: "prefetch", false: "no-prefetch"}[prefetch]
		t.Run(name, func(t *testing.T) {
			spy := &spyReader{Reader: env.Client, done: make(chan struct{}, 4)}
			w := newWorld(t, func(o *Options[*binding]) {
				o.Reader = spy
				if prefetch {
					o.PrefetchCreate = func(*binding) bool { return true }
				}
			})
			b := w.stored()
			b.Finalizers = []string{finalizer}
			if err := env.Client.Update(w.ctx, b); err != nil {
				t.Fatal(err)
			}
			w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
				if prefetch {
					<-spy.done // the pass's read has been answered
				}
				w.someone("during-the-pass")
				return managed.ExternalObservation{}, nil
			}
			w.pass()
			want := int32(0)
			if prefetch {
				want = 1
			}
			if n := w.ext.creates.Load(); n != want {
				t.Errorf("%d creates, want %d", n, want)
			}
		})
	}
	t.Run("earlier pass's read", func(t *testing.T) {
		spy := &spyReader{Reader: env.Client, done: make(chan struct{}, 4)}
		w := newWorld(t, func(o *Options[*binding]) {
			o.Reader = spy
			o.PrefetchCreate = func(*binding) bool { return true }
		})
		b := w.stored()
		b.Finalizers = []string{finalizer}
		if err := env.Client.Update(w.ctx, b); err != nil {
			t.Fatal(err)
		}
		stale := w.stored()
		w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
			<-spy.done
			return managed.ExternalObservation{}, errors.New("observe failed")
		}
		w.pass()
		w.someone("after-the-first-pass")
		w.cache.serve(stale)
		w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
			<-spy.done
			return managed.ExternalObservation{}, nil
		}
		w.pass()
		if n := w.ext.creates.Load(); n != 0 {
			t.Errorf("created %d times from a copy older than the stored one", n)
		}
	})
}

// countingReader counts the Gets it answered.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestNoPrefetchWithoutConnection: a pass that cannot connect (a missing
// provider config) starts no read of the stored object, however often it
// is retried; once it connects, its create is guarded by one read.
func TestNoPrefetchWithoutConnection(t *testing.T) {
	reads := &countingReader{Reader: env.Client}
	w := newWorld(t, func(o *Options[*binding]) {
		o.Reader = reads
		o.PrefetchCreate = func(*binding) bool { return true }
	})
	w.ext.connectErr = errors.New("provider config not found")
	for range 3 {
		w.pass()
	}
	if n := reads.gets.Load(); n != 0 {
		t.Errorf("%d live reads in 3 passes that could not connect, want none", n)
	}
	w.ext.connectErr = nil
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{}, nil
	}
	w.pass()
	if n, c := reads.gets.Load(), w.ext.creates.Load(); n != 1 || c != 1 {
		t.Errorf("the connected pass made %d live reads and %d creates, want 1 and 1", n, c)
	}
}

// TestStatusConflicts: a status write that loses a race to a change of
// something else is written onto the stored version; one that loses it to
// someone else's status never overwrites it.
func TestStatusConflicts(t *testing.T) {
	w := newWorld(t, nil)
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		w.someone("labels")
		b.Status.State = "UNBIND"
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	if got := w.stored(); got.Status.State != "UNBIND" || got.Labels["someone"] != "labels" {
		t.Errorf("after a race with a label change: state %q, labels %v; want UNBIND and the labels", got.Status.State, got.Labels)
	}

	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		l := w.stored()
		l.Status.State = "BIND"
		if err := env.Client.Status().Update(w.ctx, l); err != nil {
			t.Fatal(err)
		}
		b.Status.State = "OFFLINING"
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	res := w.pass()
	if got := w.stored().Status.State; got != "BIND" {
		t.Errorf("status state %q, want someone else's BIND", got)
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > time.Second {
		t.Errorf("after losing to someone else's status: %+v, want a requeue within a second", res)
	}
}

// TestReadYourWrites: a pass served a cached copy older than this
// process's own last write starts from the copy it wrote (annotations that
// Observe changed, persisted in one patch, and status), and writes nothing
// more when nothing changes.
func TestReadYourWrites(t *testing.T) {
	w := newWorld(t, nil)
	before := w.stored()
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		meta.SetExternalName(b, "eip-2")
		meta.AddAnnotations(b, map[string]string{"test.edgeplane.io/attempt": "1"})
		b.Status.State = "UNBIND"
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	written := w.stored()
	if meta.GetExternalName(written) != "eip-2" || written.Annotations["test.edgeplane.io/attempt"] != "1" || written.Status.State != "UNBIND" {
		t.Fatalf("after the pass: annotations %v, status %+v", written.Annotations, written.Status)
	}
	w.cache.serve(before)
	var seen *binding
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		seen = b.DeepCopy()
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	if seen.ResourceVersion != written.ResourceVersion || meta.GetExternalName(seen) != "eip-2" || seen.Status.State != "UNBIND" {
		t.Errorf("the pass started from resourceVersion %s (external name %q, state %q), want its own write %s",
			seen.ResourceVersion, meta.GetExternalName(seen), seen.Status.State, written.ResourceVersion)
	}
	if len(written.ManagedFields) == 0 || seen.ManagedFields != nil {
		t.Errorf("the remembered write keeps managedFields (%d entries; the stored object has %d): nobody reads them", len(seen.ManagedFields), len(written.ManagedFields))
	}
	if got := w.stored().ResourceVersion; got != written.ResourceVersion {
		t.Errorf("a pass with nothing new wrote (%s -> %s)", written.ResourceVersion, got)
	}

	// Observe removing an annotation: persisted as a removal.
	w.cache.serve(written)
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		a := b.GetAnnotations()
		delete(a, meta.AnnotationKeyExternalName)
		b.SetAnnotations(a)
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	if got := w.stored(); meta.GetExternalName(got) != "" || got.Annotations["test.edgeplane.io/attempt"] != "1" {
		t.Errorf("after removing the external name: annotations %v", got.Annotations)
	}
}

// TestDeferredStatus: a status the kind defers is not written but laid
// over the next pass's copy; what the kind does not defer (Ready, an
// error) is written at once; a deferred status never covers someone
// else's, and is written once its window has passed.
func TestDeferredStatus(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	progress := func(written, next *binding, age time.Duration) bool {
		return age < time.Hour && next.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonCreating &&
			next.GetCondition(xpv2.TypeSynced).Status == "True"
	}
	create := func(w *world) {
		w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
			b.SetConditions(xpv2.Creating())
			b.Status.AddressID = meta.GetExternalName(b)
			return managed.ExternalObservation{ResourceExists: meta.GetExternalName(b) != "", ResourceUpToDate: true}, nil
		}
		w.ext.create = func(_ context.Context, b *binding) error {
			meta.SetExternalName(b, "eip-"+b.Name)
			b.Status.AddressID = meta.GetExternalName(b)
			return nil
		}
	}
	edit := func(o *Options[*binding]) { o.DeferStatus, o.Clock = progress, clk }

	w := newWorld(t, edit)
	create(w)
	w.pass()
	if l := w.stored(); len(l.Status.Conditions) != 0 || meta.GetExternalName(l) == "" {
		t.Fatalf("first progress written within the window: %+v, annotations %v", l.Status, l.Annotations)
	}
	if u, ok := w.r.Unwritten(w.key); !ok || u.Status.AddressID == "" {
		t.Errorf("no deferred status remembered: %v %+v", ok, u)
	}
	var seen *binding
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		seen = b.DeepCopy()
		b.SetConditions(xpv2.Available())
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	if r := seen.GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonCreating || seen.Status.AddressID == "" {
		t.Errorf("the next pass does not start from the deferred progress: Ready %s, address %q", r.Reason, seen.Status.AddressID)
	}
	if r := w.stored().GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonAvailable {
		t.Errorf("Ready was not written: %s", r.Reason)
	}

	// An error is written at once.
	failed := newWorld(t, edit)
	create(failed)
	failed.ext.create = func(context.Context, *binding) error { return errors.New("boom") }
	failed.pass()
	if s := failed.stored().GetCondition(xpv2.TypeSynced); s.Reason != xpv2.ReasonReconcileError {
		t.Errorf("a failed create was not written at once: Synced %s", s.Reason)
	}

	// Someone else's status after the address was recorded: the progress a
	// pass from the older copy defers is dropped at the next read.
	other := newWorld(t, edit)
	create(other)
	other.pass()
	old := other.stored()
	l := other.stored()
	l.Status.State = "SOMEONE"
	if err := env.Client.Status().Update(other.ctx, l); err != nil {
		t.Fatal(err)
	}
	other.cache.serve(old)
	other.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		b.SetConditions(xpv2.Creating())
		b.Status.PublicIP = "192.0.2.1"
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	other.pass()
	other.cache.serve(other.stored())
	other.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		seen = b.DeepCopy()
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	other.pass()
	if seen.Status.State != "SOMEONE" || seen.Status.PublicIP != "" {
		t.Errorf("deferred progress laid over someone else's status: %+v", seen.Status)
	}
	if other.stored().Status.State != "SOMEONE" {
		t.Errorf("someone else's status was overwritten")
	}

	// Past the window, the deferred progress is written.
	late := newWorld(t, edit)
	create(late)
	late.pass()
	clk.Step(2 * time.Hour)
	late.pass()
	if r := late.stored().GetCondition(xpv2.TypeReady); r.Reason != xpv2.ReasonCreating {
		t.Errorf("progress not written after its window: Ready %q", r.Reason)
	}
}

// TestDeletion: a deleting object's cloud object is deleted, then the
// cluster side synced, then the finalizer released, and no status is
// written after it; other finalizers go first; an object whose policies
// leave out Delete is released without a call.
func TestDeletion(t *testing.T) {
	w := newWorld(t, nil)
	b := w.stored()
	b.Finalizers = []string{finalizer, "someone.example.com/first"}
	if err := env.Client.Update(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	exists := true
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{ResourceExists: exists, ResourceUpToDate: true}, nil
	}
	w.ext.del = func(context.Context, *binding) error { exists = false; return nil }
	w.pass()
	if n := w.ext.deletes.Load(); n != 0 {
		t.Fatalf("deleted %d times while another finalizer was there", n)
	}
	b = w.stored()
	b.Finalizers = []string{finalizer}
	if err := env.Client.Update(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	w.pass()
	if n := w.ext.deletes.Load(); n != 1 {
		t.Fatalf("%d deletes, want 1", n)
	}
	syncs := w.ext.syncs.Load()
	w.pass()
	if w.ext.syncs.Load() != syncs+1 {
		t.Errorf("the cluster side was not synced before release")
	}
	if err := env.Client.Get(w.ctx, w.key, &binding{}); err == nil {
		t.Errorf("the object is still there after its cloud object went")
	}

	orphan := newWorld(t, nil)
	b = orphan.stored()
	b.Finalizers = []string{finalizer}
	b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	if err := env.Client.Update(orphan.ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(orphan.ctx, b); err != nil {
		t.Fatal(err)
	}
	orphan.pass()
	if orphan.ext.deletes.Load() != 0 {
		t.Errorf("an object whose policies leave out Delete deleted its cloud object")
	}
	if err := env.Client.Get(orphan.ctx, orphan.key, &binding{}); err == nil {
		t.Errorf("an object whose policies leave out Delete was not released")
	}
}

// TestFailures: each failing step is a Warning Event with crossplane's
// reason and Synced=False saying what failed, and a rate-limited requeue;
// the kind's cluster sync still runs after a failed step.
func TestFailures(t *testing.T) {
	cases := []struct {
		name, reason, synced string
		set                  func(*script)
	}{
		{"observe", reasonCannotObserve, "observe failed: boom", func(s *script) {
			s.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, errors.New("boom")
			}
		}},
		{"create", reasonCannotCreate, "create failed: boom", func(s *script) {
			s.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, nil
			}
			s.create = func(context.Context, *binding) error { return errors.New("boom") }
		}},
		{"update", reasonCannotUpdate, "update failed: boom", func(s *script) {
			s.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{ResourceExists: true}, nil
			}
			s.update = func(context.Context, *binding) error { return errors.New("boom") }
		}},
		{"cluster sync", reasonCannotSyncCluster, "cannot sync cluster objects: boom", func(s *script) {
			s.sync = func(context.Context, *binding) error { return errors.New("boom") }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			w := newWorld(t, func(o *Options[*binding]) { o.Recorder = rec })
			c.set(w.ext)
			res := w.pass()
			if !res.Requeue || res.RequeueAfter != 0 { //nolint:staticcheck // the rate-limited requeue
				t.Errorf("result %+v, want a rate-limited requeue", res)
			}
			s := w.stored().GetCondition(xpv2.TypeSynced)
			if s.Status != "False" || s.Message != c.synced {
				t.Errorf("Synced %s %q, want False %q", s.Status, s.Message, c.synced)
			}
			select {
			case e := <-rec.Events:
				if e != "Warning "+c.reason+" boom" {
					t.Errorf("Event %q, want a Warning %s", e, c.reason)
				}
			default:
				t.Errorf("no Event")
			}
			if c.name == "create" || c.name == "update" {
				if n := w.ext.syncs.Load(); n != 1 {
					t.Errorf("cluster synced %d times after a failed %s, want 1", n, c.name)
				}
			}
		})
	}
}

// TestEvents: Warnings are always recorded; the reconciler's Normal Events
// only when the kind asks for them (each is an API write).
func TestEvents(t *testing.T) {
	for _, normal := range []bool{false, true} {
		rec := events.NewFakeRecorder(10)
		w := newWorld(t, func(o *Options[*binding]) { o.Recorder, o.NormalEvents = rec, normal })
		w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
			return managed.ExternalObservation{}, nil
		}
		w.pass()
		var got []string
		for len(rec.Events) > 0 {
			got = append(got, <-rec.Events)
		}
		want := 0
		if normal {
			want = 1
		}
		if len(got) != want {
			t.Errorf("NormalEvents=%v: Events %q, want %d", normal, got, want)
		}
		if normal && len(got) == 1 && got[0] != "Normal "+reasonCreated+" Successfully requested creation of external resource" {
			t.Errorf("Event %q", got[0])
		}
		w2 := newWorld(t, func(o *Options[*binding]) { o.Recorder, o.NormalEvents = rec, normal })
		w2.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
			return managed.ExternalObservation{}, errors.New("boom")
		}
		w2.pass()
		if len(rec.Events) != 1 {
			t.Errorf("NormalEvents=%v: the Warning was not recorded", normal)
		}
		<-rec.Events
	}
}

// countingTracker counts usage records.
type countingTracker struct{ n atomic.Int32 }

func (c *countingTracker) Track(context.Context, resource.ModernManaged) error {
	c.n.Add(1)
	return nil
}

// TestUsage: the usage is recorded before any change, not again while it
// was recorded recently, and again once that has expired on the
// reconciler's clock; a failed record stops the pass before the cloud.
func TestUsage(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	tr := &countingTracker{}
	w := newWorld(t, func(o *Options[*binding]) { o.Usage, o.UsageTTL, o.Clock = tr, time.Minute, clk })
	w.pass()
	w.pass()
	if n := tr.n.Load(); n != 1 {
		t.Errorf("%d usage records within the TTL, want 1", n)
	}
	clk.Step(2 * time.Minute)
	w.pass()
	if n := tr.n.Load(); n != 2 {
		t.Errorf("%d usage records after the TTL, want 2", n)
	}

	w2 := newWorld(t, func(o *Options[*binding]) { o.Usage = failingTracker{} })
	w2.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{}, nil
	}
	w2.pass()
	if n := w2.ext.creates.Load(); n != 0 {
		t.Errorf("created %d times without a recorded usage", n)
	}
	if s := w2.stored().GetCondition(xpv2.TypeSynced); s.Message != "connect failed: cannot track provider config usage: no" {
		t.Errorf("Synced %q", s.Message)
	}
}

type failingTracker struct{}

func (failingTracker) Track(context.Context, resource.ModernManaged) error { return errors.New("no") }

// TestFinalizer: the first pass that reaches the cloud stores the
// finalizer (keeping what Observe recorded in the same pass); one that
// cannot connect does not, so an object that never reached its account is
// not held by it.
func TestFinalizer(t *testing.T) {
	w := newWorld(t, nil)
	b := w.stored()
	b.Finalizers = nil
	if err := env.Client.Update(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		meta.SetExternalName(b, "eip-found")
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.pass()
	if got := w.stored(); !meta.FinalizerExists(got, finalizer) || meta.GetExternalName(got) != "eip-found" {
		t.Errorf("after the first pass: finalizers %v, annotations %v", got.Finalizers, got.Annotations)
	}

	w2 := newWorld(t, nil)
	b = w2.stored()
	b.Finalizers = nil
	if err := env.Client.Update(w2.ctx, b); err != nil {
		t.Fatal(err)
	}
	w2.ext.connectErr = errors.New("no account")
	w2.pass()
	got := w2.stored()
	if len(got.Finalizers) != 0 {
		t.Errorf("a pass that could not connect stored finalizers %v", got.Finalizers)
	}
	if s := got.GetCondition(xpv2.TypeSynced); s.Message != "connect failed: no account" {
		t.Errorf("Synced %q", s.Message)
	}
}

// TestPoll: an object in sync is polled after the interval the external
// client chose, or the default.
func TestPoll(t *testing.T) {
	w := newWorld(t, func(o *Options[*binding]) { o.PollInterval = 5 * time.Minute })
	if res := w.pass(); res.RequeueAfter != 5*time.Minute {
		t.Errorf("default poll: %+v", res)
	}
	w.ext.poll = time.Second
	if res := w.pass(); res.RequeueAfter != time.Second || res.Priority != nil {
		t.Errorf("chosen poll: %+v", res)
	}

	// With a progress priority, a poll sooner than the default (a step in
	// flight) carries it; the default poll does not.
	p := newWorld(t, func(o *Options[*binding]) { o.PollInterval, o.ProgressPriority = 5*time.Minute, 10 })
	p.ext.poll = time.Second
	if res := p.pass(); res.Priority == nil || *res.Priority != 10 {
		t.Errorf("a short poll without the progress priority: %+v", res)
	}
	p.ext.poll = 0
	if res := p.pass(); res.Priority != nil {
		t.Errorf("the default poll with a priority: %+v", res)
	}
}

// TestDeletionWaitsForTheChosenPoll: a deletion step that waits for a cloud
// task is taken again after the interval the external client chose (with
// the progress priority), not after the work queue's backoff; without a
// chosen interval it is a rate-limited requeue, as before.
func TestDeletionWaitsForTheChosenPoll(t *testing.T) {
	w := newWorld(t, func(o *Options[*binding]) { o.ProgressPriority = 10 })
	b := w.stored()
	b.Finalizers = []string{finalizer}
	if err := env.Client.Update(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(w.ctx, b); err != nil {
		t.Fatal(err)
	}
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	w.ext.del = func(context.Context, *binding) error { return nil }
	if res := w.pass(); !res.Requeue || res.RequeueAfter != 0 { //nolint:staticcheck // the reconciler's rate-limited requeue
		t.Errorf("a deletion step without a chosen poll: %+v, want a rate-limited requeue", res)
	}
	w.ext.poll = 300 * time.Millisecond
	res := w.pass()
	if res.RequeueAfter != 300*time.Millisecond || res.Priority == nil || *res.Priority != 10 {
		t.Errorf("a deletion step waiting for a task: %+v, want RequeueAfter 300ms at priority 10", res)
	}
	if n := w.ext.deletes.Load(); n != 2 {
		t.Errorf("%d delete steps, want 2", n)
	}
}

// TestPollAfterCreate: with PollAfterCreate, the pass after a create comes
// after the interval the external client chose in it (at the progress
// priority); without a chosen interval, or without the option, at once
// (the rate-limited requeue).
func TestPollAfterCreate(t *testing.T) {
	absent := func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	cases := map[string]struct {
		option       bool
		poll         time.Duration
		wantAfter    time.Duration
		wantPriority bool
	}{
		"the chosen poll":               {option: true, poll: 300 * time.Millisecond, wantAfter: 300 * time.Millisecond, wantPriority: true},
		"no poll chosen":                {option: true},
		"the option off":                {poll: 300 * time.Millisecond},
		"neither the option nor a poll": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, func(o *Options[*binding]) { o.ProgressPriority, o.PollAfterCreate = 10, tc.option })
			w.ext.observe = absent
			w.ext.poll = tc.poll
			res := w.pass()
			if n := w.ext.creates.Load(); n != 1 {
				t.Fatalf("%d creates, want 1", n)
			}
			if tc.wantAfter == 0 {
				if !res.Requeue || res.RequeueAfter != 0 { //nolint:staticcheck // the reconciler's rate-limited requeue
					t.Errorf("%+v, want a rate-limited requeue", res)
				}
				return
			}
			if res.RequeueAfter != tc.wantAfter || (res.Priority != nil && *res.Priority == 10) != tc.wantPriority {
				t.Errorf("%+v, want RequeueAfter %s at priority 10", res, tc.wantAfter)
			}
		})
	}
}

// TestOwnWrites: the watch event of the reconciler's own annotation write
// is dropped; someone else's write, and one that spans it, pass.
func TestOwnWrites(t *testing.T) {
	w := newWorld(t, nil)
	// A first pass writes the status, so the second writes the
	// annotation alone.
	w.pass()
	w.ext.observe = func(_ context.Context, b *binding) (managed.ExternalObservation, error) {
		meta.SetExternalName(b, "recorded")
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	before := w.stored()
	w.pass()
	after := w.stored()
	if meta.GetExternalName(after) != "recorded" {
		t.Fatalf("the pass did not record the annotation: %v", after.Annotations)
	}
	pred := w.r.OwnWrites()
	update := func(old, updated *binding) bool {
		return pred.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: updated})
	}
	if update(before, after) {
		t.Error("the echo of the pass's own annotation write passes")
	}
	other := w.someone("x")
	if !update(after, other) {
		t.Error("someone else's write after the pass's is dropped")
	}
	if !update(before, other) {
		t.Error("an event spanning the pass's write and someone else's is dropped")
	}
}

// TestSyncBesideCreateRecord: with SyncBesideCreateRecord a create pass
// syncs the cluster while the created cloud object is being recorded — on
// a copy carrying what Create found, so the record's write never races
// with the kind — and still fails the pass when either write fails.
func TestSyncBesideCreateRecord(t *testing.T) {
	cases := []struct {
		name         string
		recordFails  bool
		syncErr      error
		synced       corev1.ConditionStatus
		wantExternal string
	}{
		{name: "both land", synced: corev1.ConditionTrue, wantExternal: "eip-1"},
		{name: "the sync fails", syncErr: errors.New("boom"), synced: corev1.ConditionFalse, wantExternal: "eip-1"},
		{name: "the record fails", recordFails: true, synced: corev1.ConditionFalse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, func(o *Options[*binding]) { o.SyncBesideCreateRecord = true })
			w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
				return managed.ExternalObservation{}, nil
			}
			w.ext.create = func(_ context.Context, b *binding) error {
				meta.SetExternalName(b, "eip-1")
				if c.recordFails {
					// The object goes away under the pass: its record
					// cannot be written.
					gone := w.stored()
					gone.Finalizers = nil
					if err := env.Client.Update(w.ctx, gone); err != nil {
						t.Fatal(err)
					}
					if err := env.Client.Delete(w.ctx, gone); err != nil {
						t.Fatal(err)
					}
				}
				return nil
			}
			var seen *binding
			w.ext.sync = func(_ context.Context, b *binding) error {
				seen = b
				return c.syncErr
			}
			w.pass()
			if w.ext.syncs.Load() != 1 || seen == nil || meta.GetExternalName(seen) != "eip-1" {
				t.Fatalf("synced %d times, with external name %q; want once, with what Create found", w.ext.syncs.Load(), meta.GetExternalName(seen))
			}
			if c.recordFails {
				return
			}
			got := w.stored()
			if meta.GetExternalName(got) != c.wantExternal {
				t.Errorf("external name %q, want %q", meta.GetExternalName(got), c.wantExternal)
			}
			if s := got.GetCondition(xpv2.TypeSynced); s.Status != c.synced {
				t.Errorf("Synced %s %q, want %s", s.Status, s.Message, c.synced)
			}
		})
	}
}

// releasingTracker records usages and their releases.
type releasingTracker struct {
	trackErr error
	released []string
}

func (r *releasingTracker) Track(context.Context, resource.ModernManaged) error { return r.trackErr }

func (r *releasingTracker) Release(_ context.Context, mg metav1.Object) error {
	r.released = append(r.released, string(mg.GetUID()))
	return nil
}

// namespaceTerminating is the API server's refusal of a create in a
// namespace being deleted.
func namespaceTerminating() error {
	err := apierrors.NewForbidden(schema.GroupResource{Group: "cloud.edgeplane.io", Resource: "providerconfigusages"}, "u",
		errors.New("unable to create new content in namespace tenant because it is being terminated"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type: corev1.NamespaceTerminatingCause, Message: "namespace tenant is being terminated", Field: "metadata.namespace"})
	return err
}

// TestUsageInTerminatingNamespace: an object being deleted whose usage
// cannot be recorded because its namespace is being deleted still lets go
// of its cloud object and its finalizer; an object that is not being
// deleted makes no change without a recorded usage.
func TestUsageInTerminatingNamespace(t *testing.T) {
	tr := &releasingTracker{trackErr: namespaceTerminating()}
	w := newWorld(t, func(o *Options[*binding]) { o.Usage = tr })
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{}, nil
	}
	w.pass()
	if n := w.ext.creates.Load(); n != 0 {
		t.Errorf("created %d times without a recorded usage", n)
	}
	if err := env.Client.Delete(w.ctx, w.stored()); err != nil {
		t.Fatal(err)
	}
	w.pass()
	if err := env.Client.Get(w.ctx, w.key, &binding{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted object is still held: %v; Synced %q", err, w.stored().GetCondition(xpv2.TypeSynced).Message)
	}
}

// TestUsageReleasedAfterFinalizer: the object's usage is released once its
// own finalizer is gone, never before (its config and credentials are
// needed until then).
func TestUsageReleasedAfterFinalizer(t *testing.T) {
	tr := &releasingTracker{}
	w := newWorld(t, func(o *Options[*binding]) { o.Usage = tr })
	uid := string(w.stored().UID)
	deletes := 0
	w.ext.observe = func(context.Context, *binding) (managed.ExternalObservation, error) {
		return managed.ExternalObservation{ResourceExists: deletes == 0, ResourceUpToDate: true}, nil
	}
	w.ext.del = func(context.Context, *binding) error {
		if len(tr.released) > 0 {
			t.Error("the usage was released before the cloud object was deleted")
		}
		deletes++
		return nil
	}
	w.pass()
	if err := env.Client.Delete(w.ctx, w.stored()); err != nil {
		t.Fatal(err)
	}
	w.pass()
	if len(tr.released) != 0 {
		t.Fatalf("released %v while the finalizer is held", tr.released)
	}
	w.pass()
	if err := env.Client.Get(w.ctx, w.key, &binding{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the object is still there: %v", err)
	}
	if !slices.Equal(tr.released, []string{uid}) {
		t.Errorf("released %v, want exactly the object's usage %s", tr.released, uid)
	}
}
