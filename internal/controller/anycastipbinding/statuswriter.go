package anycastipbinding

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
)

// noopStatusClient is the client the managed reconciler writes bindings
// with. It saves the API server writes that carry no information:
//
//   - A status update that would write exactly what this process wrote last
//     to the same resourceVersion is skipped. crossplane-runtime's managed
//     reconciler updates status at the end of every pass, changed or not;
//     while a binding waits for a cloud task most passes change nothing.
//   - A status update rejected as a conflict (the pass started from a cache
//     that had not yet seen this process's previous write) is not turned
//     into a failed pass and a backed-off retry: when the stored status is
//     still the one this process wrote last (nobody else changed it), the
//     computed status is written onto the stored version, or skipped when
//     it is the same. Anything else is returned as the conflict it is.
//   - The managed reconciler's external-create-pending Update, announced by
//     Observe (expectCreate) just before it asks for an allocation, becomes
//     a read: its purpose is to refuse to allocate from a stale copy of the
//     binding, which comparing the resourceVersion with the stored one does
//     as well; recording the pending time is unnecessary because allocation
//     is idempotent (the ClientToken comes from the binding's UID) and the
//     address is found again by its ownership tags after a crash. The
//     pending annotation is persisted with the succeeded one, in the one
//     write that records the address (annotationUpdater). Any other change
//     in that Update (a finalizer, the spec) makes it a real Update.
//   - A status update that only moves transitional progress on (Creating →
//     Binding, see decide.DeferStatus) within the progress window of the
//     last write is deferred: the pass's status is kept in memory and laid
//     over the binding the next pass reads (as long as the stored status is
//     still the one this process wrote last), so that pass starts from it —
//     the association task it must follow included — and its write carries
//     it. A new binding's first progress counts, its window starting when
//     its address is recorded (noteNeverWritten), so most new bindings are
//     written once, Ready. Errors, Ready and anything else are written at
//     once, and progress is written at the latest by the first pass after
//     the window.
//
// A skipped write leaves the object as it is, so someone else's change is
// never hidden.
type noopStatusClient struct {
	client.Client
	// reader reads the API server directly (not the cache); nil disables
	// the conflict retry and the pending-write check.
	reader client.Reader

	mu   sync.Mutex
	last map[string]lastStatus // by UID
	// latest is, per binding UID, the newest copy this process wrote or
	// read, and the versions of the binding it has seen before.
	latest map[string]*knownBinding
	// creates holds the UIDs whose next Update is the create-pending one,
	// with the read of the stored binding started for it (or nil).
	creates sync.Map
	// prefetched holds, per UID, the read started at the beginning of a
	// pass that will likely allocate (prefetch).
	prefetched sync.Map
	// progressWindow is how long transitional progress may go unwritten
	// (0: always written); unwritten holds, per UID, the status of the
	// last pass whose write was deferred.
	progressWindow time.Duration
	unwritten      map[string]*networkingv1alpha1.AnycastIPBindingStatus
	clock          clock.PassiveClock
}

// maxRememberedStatuses bounds noopStatusClient's memory.
const maxRememberedStatuses = 20000

type lastStatus struct {
	resourceVersion string
	// status is the status written (JSON), at the time at; or the empty
	// status of a new binding seen when its address was recorded.
	status string
	at     time.Time
}

func newNoopStatusClient(c client.Client) *noopStatusClient {
	return &noopStatusClient{Client: c, last: map[string]lastStatus{}, latest: map[string]*knownBinding{},
		unwritten: map[string]*networkingv1alpha1.AnycastIPBindingStatus{}, clock: clock.RealClock{}}
}

// deferProgress turns on deferred progress writes (see noopStatusClient).
func (c *noopStatusClient) deferProgress(window time.Duration) *noopStatusClient {
	c.progressWindow = window
	return c
}

// withReader turns on the reads that replace writes.
func (c *noopStatusClient) withReader(r client.Reader) *noopStatusClient {
	c.reader = r
	return c
}

// expectCreate records that the managed reconciler's next Update of uid
// is its create-pending one (Observe found nothing and asks for an
// allocation), with the read prefetch started in this pass, if any;
// forgetCreate withdraws both.
func (c *noopStatusClient) expectCreate(uid types.UID) {
	var r *liveRead
	if v, ok := c.prefetched.LoadAndDelete(uid); ok {
		r = v.(*liveRead)
	}
	c.creates.Store(uid, r)
}

func (c *noopStatusClient) forgetCreate(uid types.UID) {
	c.creates.Delete(uid)
	c.prefetched.Delete(uid)
}

// liveRead is a read of a binding from the API server.
type liveRead struct {
	done chan struct{}
	obj  *networkingv1alpha1.AnycastIPBinding
	err  error
}

// prefetch starts the read of the stored binding that the create-pending
// check of this pass compares b with, so that it runs while the pass
// records the provider config usage and Observe looks at the cloud rather
// than after them. It is started after b was read, so b's
// resourceVersion matching it still proves b was the stored version at a
// moment after the pass began and before the allocation. A pass starts by
// dropping any read left by an earlier one (dropPrefetch).
func (c *noopStatusClient) prefetch(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) {
	if c.reader == nil {
		return
	}
	r := &liveRead{done: make(chan struct{})}
	c.prefetched.Store(b.UID, r)
	key := client.ObjectKeyFromObject(b)
	go func() {
		defer close(r.done)
		live := &networkingv1alpha1.AnycastIPBinding{}
		r.err = c.reader.Get(ctx, key, live)
		r.obj = live
	}()
}

func (c *noopStatusClient) dropPrefetch(uid types.UID) { c.prefetched.Delete(uid) }

// knownBinding is the newest copy of a binding this process has, and the
// resourceVersions of the binding it has seen (newest last).
type knownBinding struct {
	obj *networkingv1alpha1.AnycastIPBinding
	rvs []string
}

// maxKnownVersions bounds knownBinding.rvs.
const maxKnownVersions = 16

// Get implements client.Reader with read-your-writes: when the cache serves
// a version of a binding older than one this process has written (a
// version it has seen before the newest it knows), the newest copy is
// returned instead, so a pass never starts from a copy older than this
// process's own last write — which would make its writes conflict, fail
// the pass and back it off. A version this process has never seen is
// someone else's newer write and is returned as the cache has it.
// (resourceVersions are only compared for equality.)
func (c *noopStatusClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	b, ok := obj.(*networkingv1alpha1.AnycastIPBinding)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reader != nil {
		c.readYourWritesLocked(b)
	}
	c.overlayUnwrittenLocked(b)
	return nil
}

// overlayUnwrittenLocked lays the deferred status of b's last pass over b
// when b's status is still the one this process wrote last (nobody else
// wrote it since); otherwise the deferred status is dropped.
func (c *noopStatusClient) overlayUnwrittenLocked(b *networkingv1alpha1.AnycastIPBinding) {
	uid := string(b.UID)
	u, ok := c.unwritten[uid]
	if !ok {
		return
	}
	prev, seen := c.last[uid]
	raw, err := json.Marshal(b.Status)
	if !seen || err != nil || string(raw) != prev.status {
		delete(c.unwritten, uid)
		return
	}
	u.DeepCopyInto(&b.Status)
}

// readYourWritesLocked replaces a copy of b older than this process's own
// last write with the newest copy (see Get).
func (c *noopStatusClient) readYourWritesLocked(b *networkingv1alpha1.AnycastIPBinding) {
	k := c.latest[string(b.UID)]
	switch {
	case k == nil:
		c.sawLocked(b)
	case k.obj.ResourceVersion == b.ResourceVersion:
	case slices.Contains(k.rvs, b.ResourceVersion):
		// The cache is behind this process's own writes.
		k.obj.DeepCopyInto(b)
	default:
		c.sawLocked(b)
	}
}

// saw records the copy of b just written or read from the API server.
func (c *noopStatusClient) saw(b *networkingv1alpha1.AnycastIPBinding) {
	if c.reader == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sawLocked(b)
}

func (c *noopStatusClient) sawLocked(b *networkingv1alpha1.AnycastIPBinding) {
	k := c.latest[string(b.UID)]
	if k == nil {
		if len(c.latest) >= maxRememberedStatuses {
			clear(c.latest)
		}
		k = &knownBinding{}
		c.latest[string(b.UID)] = k
	}
	if k.obj != nil && k.obj.ResourceVersion == b.ResourceVersion {
		return
	}
	k.obj = b.DeepCopy()
	k.rvs = append(k.rvs, b.ResourceVersion)
	if len(k.rvs) > maxKnownVersions {
		k.rvs = k.rvs[len(k.rvs)-maxKnownVersions:]
	}
}

// Patch implements client.Writer, recording the version written.
func (c *noopStatusClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	if b, ok := obj.(*networkingv1alpha1.AnycastIPBinding); ok {
		c.saw(b)
		c.noteNeverWritten(b)
	}
	return nil
}

// noteNeverWritten remembers, for deferred progress, the empty status of a
// new binding as returned by a patch of its metadata (the one that records
// its address): the pass's first progress may then be deferred like any
// later one (decide.DeferStatus), its window counted from now.
func (c *noopStatusClient) noteNeverWritten(b *networkingv1alpha1.AnycastIPBinding) {
	if c.progressWindow <= 0 || !decide.NeverWritten(b.Status) {
		return
	}
	raw, err := json.Marshal(b.Status)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.last[string(b.UID)]; !seen {
		c.rememberLocked(string(b.UID), lastStatus{resourceVersion: b.ResourceVersion, status: string(raw), at: c.clock.Now()})
	}
}

// Update implements client.Writer (see noopStatusClient).
func (c *noopStatusClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	b, ok := obj.(*networkingv1alpha1.AnycastIPBinding)
	if !ok || len(opts) > 0 || c.reader == nil {
		return c.Client.Update(ctx, obj, opts...)
	}
	v, pending := c.creates.LoadAndDelete(b.UID)
	if !pending {
		if err := c.Client.Update(ctx, obj, opts...); err != nil {
			return err
		}
		c.saw(b)
		return nil
	}
	live := &networkingv1alpha1.AnycastIPBinding{}
	if r, _ := v.(*liveRead); r != nil {
		select {
		case <-r.done:
		case <-ctx.Done():
			return fmt.Errorf("reading AnycastIPBinding %s before allocating: %w", b.Name, ctx.Err())
		}
		if r.err != nil {
			return fmt.Errorf("reading AnycastIPBinding %s before allocating: %w", b.Name, r.err)
		}
		live = r.obj
	} else if err := c.reader.Get(ctx, client.ObjectKeyFromObject(b), live); err != nil {
		return fmt.Errorf("reading AnycastIPBinding %s before allocating: %w", b.Name, err)
	}
	if live.ResourceVersion != b.ResourceVersion || live.UID != b.UID {
		return apierrors.NewConflict(networkingv1alpha1.GroupVersion.WithResource("anycastipbindings").GroupResource(), b.Name,
			fmt.Errorf("the binding changed (resourceVersion %s, read %s)", live.ResourceVersion, b.ResourceVersion))
	}
	if !onlyCreatePendingDiffers(live, b) {
		if err := c.Client.Update(ctx, obj, opts...); err != nil {
			return err
		}
		c.saw(b)
		return nil
	}
	c.saw(live)
	return nil
}

// onlyCreatePendingDiffers reports whether want differs from the stored
// binding in nothing an Update would write but the create-pending
// annotation.
func onlyCreatePendingDiffers(stored, want *networkingv1alpha1.AnycastIPBinding) bool {
	sa, wa := maps.Clone(stored.GetAnnotations()), maps.Clone(want.GetAnnotations())
	delete(sa, meta.AnnotationKeyExternalCreatePending)
	delete(wa, meta.AnnotationKeyExternalCreatePending)
	return maps.Equal(sa, wa) &&
		maps.Equal(stored.GetLabels(), want.GetLabels()) &&
		equality.Semantic.DeepEqual(stored.GetFinalizers(), want.GetFinalizers()) &&
		equality.Semantic.DeepEqual(stored.GetOwnerReferences(), want.GetOwnerReferences()) &&
		equality.Semantic.DeepEqual(stored.Spec, want.Spec)
}

// Status implements client.StatusClient.
func (c *noopStatusClient) Status() client.SubResourceWriter {
	return &noopStatusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type noopStatusWriter struct {
	client.SubResourceWriter
	c *noopStatusClient
}

func (w *noopStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	b, ok := obj.(*networkingv1alpha1.AnycastIPBinding)
	if !ok || len(opts) > 0 {
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	raw, err := json.Marshal(b.Status)
	if err != nil {
		return w.SubResourceWriter.Update(ctx, obj, opts...)
	}
	uid := string(b.UID)
	w.c.mu.Lock()
	prev, seen := w.c.last[uid]
	w.c.mu.Unlock()
	if seen && prev.resourceVersion == b.ResourceVersion && prev.status == string(raw) {
		w.c.forgetUnwritten(uid)
		return nil
	}
	if seen && prev.resourceVersion == b.ResourceVersion && w.c.deferrable(prev, b) {
		w.c.mu.Lock()
		w.c.unwritten[uid] = b.Status.DeepCopy()
		w.c.mu.Unlock()
		return nil
	}
	if seen && prev.status == string(raw) && w.c.reader != nil {
		// The same status on another resourceVersion: most often a cache
		// that has not seen this process's last write yet. Reading is
		// cheaper than a write that would conflict.
		live := &networkingv1alpha1.AnycastIPBinding{}
		if err := w.c.reader.Get(ctx, client.ObjectKeyFromObject(b), live); err == nil && live.UID == b.UID {
			if stored, err := json.Marshal(live.Status); err == nil && string(stored) == prev.status {
				b.SetResourceVersion(live.ResourceVersion)
				prev.resourceVersion = live.ResourceVersion
				w.c.remember(uid, prev)
				w.c.forgetUnwritten(uid)
				w.c.saw(live)
				return nil
			}
		}
	}
	err = w.SubResourceWriter.Update(ctx, obj, opts...)
	if apierrors.IsConflict(err) && seen && w.c.reader != nil {
		err = w.retryConflict(ctx, b, prev, string(raw), err)
	}
	if err != nil {
		return err
	}
	at := w.c.clock.Now()
	if seen && prev.status == string(raw) {
		// Nothing new was written: the stored status is as old as before.
		at = prev.at
	}
	w.c.remember(uid, lastStatus{resourceVersion: b.ResourceVersion, status: string(raw), at: at})
	w.c.forgetUnwritten(uid)
	w.c.saw(b)
	return nil
}

// deferrable reports whether the write of b's status, the last one written
// being prev, may be left to a later pass (decide.DeferStatus).
func (c *noopStatusClient) deferrable(prev lastStatus, b *networkingv1alpha1.AnycastIPBinding) bool {
	if c.progressWindow <= 0 {
		return false
	}
	var written networkingv1alpha1.AnycastIPBindingStatus
	if err := json.Unmarshal([]byte(prev.status), &written); err != nil {
		return false
	}
	return decide.DeferStatus(decide.StatusWrite{
		Written: written, Next: b.Status, ExternalName: meta.GetExternalName(b), Age: c.clock.Now().Sub(prev.at), Window: c.progressWindow,
	})
}

// retryConflict handles a conflicting status update of b whose previous
// write by this process was prev: when the stored status is still prev,
// want is written onto the stored version (or skipped if it is the same).
func (w *noopStatusWriter) retryConflict(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding, prev lastStatus, want string, conflict error) error {
	live := &networkingv1alpha1.AnycastIPBinding{}
	if err := w.c.reader.Get(ctx, client.ObjectKeyFromObject(b), live); err != nil || live.UID != b.UID {
		return conflict
	}
	stored, err := json.Marshal(live.Status)
	if err != nil || string(stored) != prev.status {
		return conflict
	}
	if want == prev.status {
		b.SetResourceVersion(live.ResourceVersion)
		return nil
	}
	status := b.Status
	b.SetResourceVersion(live.ResourceVersion)
	if err := w.SubResourceWriter.Update(ctx, b); err != nil {
		return err
	}
	b.Status = status
	return nil
}

func (c *noopStatusClient) remember(uid string, l lastStatus) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rememberLocked(uid, l)
}

func (c *noopStatusClient) rememberLocked(uid string, l lastStatus) {
	if len(c.last) >= maxRememberedStatuses {
		// Deleted bindings' entries are never looked up again; forgetting
		// everything now and then bounds the memory at the cost of one
		// write per binding (and drops deferred progress, which the next
		// pass then recomputes and writes).
		clear(c.last)
		clear(c.unwritten)
	}
	c.last[uid] = l
}

func (c *noopStatusClient) forgetUnwritten(uid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.unwritten, uid)
}
