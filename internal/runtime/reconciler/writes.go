package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/status"
)

// scope reads the object and starts its pass; nil when it is gone.
//
// Read-your-writes: when the cache serves a version older than one this
// process wrote, the pass starts from the copy it wrote instead, so it
// neither repeats a step nor writes from stale data (which would
// conflict and back the object off). A status whose write an earlier pass
// deferred is laid over the copy while the stored status is still the one
// this process wrote.
func (r *Reconciler[T]) scope(ctx context.Context, key types.NamespacedName) (*pass[T], error) {
	obj := r.o.New()
	if err := r.o.Client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.writes.Forget(key)
			return nil, nil
		}
		return nil, fmt.Errorf("getting %s: %w", key, err)
	}
	m, verdict := r.writes.Check(key, obj.GetResourceVersion())
	if m != nil && m.obj.GetUID() != obj.GetUID() {
		m = nil
	}
	if m != nil && verdict == expect.Behind {
		obj = copyOf(m.obj)
	}
	stored, err := statusJSON(obj)
	if err != nil {
		return nil, err
	}
	p := &pass[T]{r: r, key: key, storedStatus: stored, storedVersion: obj.GetResourceVersion(),
		log: log.FromContext(ctx).WithValues("controller", r.o.Name, "object", key)}
	if m != nil && m.deferred && stored == m.written {
		if obj, err = withStatusOf(obj, m.unwritten); err != nil {
			return nil, err
		}
	}
	p.obj = obj
	if r.o.PrefetchCreate != nil && r.o.Reader != nil && r.o.PrefetchCreate(obj) {
		p.prefetch = r.startRead(ctx, key)
	}
	return p, nil
}

// finish writes the pass's status, once, if it changed (or leaves it to a
// later pass when the kind defers it), and returns res.
func (p *pass[T]) finish(ctx context.Context, res reconcile.Result) (reconcile.Result, error) {
	if p.skipStatus {
		return res, nil
	}
	r := p.r
	next, err := statusJSON(p.obj)
	if err != nil {
		return res, err
	}
	m := r.memoOf(p.key, p.obj)
	if next == p.storedStatus {
		if m != nil && m.deferred {
			r.update(p.key, func(m *memo[T]) { m.deferred, m.unwritten = false, *new(T) })
		}
		return res, nil
	}
	if r.o.DeferStatus != nil && m != nil && m.written != "" && m.written == p.storedStatus {
		written, err := withStatusJSON(p.obj, m.written)
		if err == nil && r.o.DeferStatus(written, p.obj, r.o.Clock.Since(m.writtenAt)) {
			unwritten := copyOf(p.obj)
			r.update(p.key, func(m *memo[T]) { m.deferred, m.unwritten = true, unwritten })
			return res, nil
		}
	}
	before := p.obj.GetResourceVersion()
	err = r.o.Client.Status().Update(ctx, p.obj)
	if apierrors.IsConflict(err) {
		var done bool
		if done, err = p.retryConflict(ctx, next); done || err != nil {
			return mergeConflict(res, err)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return res, nil
	case err != nil:
		return res, fmt.Errorf("writing the status of %s: %w", p.key, err)
	}
	at := r.o.Clock.Now()
	if m != nil && m.written == next {
		at = m.writtenAt
	}
	r.record(p.key, p.obj, before, func(m *memo[T]) {
		m.written, m.writtenAt, m.deferred, m.unwritten = next, at, false, *new(T)
	})
	return res, nil
}

// retryConflict handles a status write that lost an optimistic-lock race:
// when the stored object differs from the pass's copy only in what the
// status does not depend on (its status is still the one the pass started
// from, and its generation the same), the status is written onto the stored
// version; otherwise the next pass recomputes it from the newer object.
// done reports that nothing more is to be written.
func (p *pass[T]) retryConflict(ctx context.Context, next string) (done bool, err error) {
	r := p.r
	if r.o.Reader == nil {
		return true, nil
	}
	live := r.o.New()
	if err := r.o.Reader.Get(ctx, p.key, live); err != nil || live.GetUID() != p.obj.GetUID() {
		return true, nil
	}
	stored, err := statusJSON(live)
	if err != nil || stored != p.storedStatus || live.GetGeneration() != p.obj.GetGeneration() {
		return true, nil
	}
	if stored == next {
		r.record(p.key, live, "", func(*memo[T]) {})
		return true, nil
	}
	p.obj.SetResourceVersion(live.GetResourceVersion())
	return false, r.o.Client.Status().Update(ctx, p.obj)
}

// mergeConflict turns a lost race into a short requeue (the newer version
// also triggers a watch event; the requeue covers a missed one).
func mergeConflict(res reconcile.Result, err error) (reconcile.Result, error) {
	if err != nil && !apierrors.IsConflict(err) {
		return res, err
	}
	if res.RequeueAfter == 0 || res.RequeueAfter > status.ConflictRequeueAfter {
		res.RequeueAfter = status.ConflictRequeueAfter
	}
	return res, nil
}

// persistAnnotations writes the annotations the pass changed since before
// (a merge patch of those keys alone: it neither conflicts with someone
// else's change of something else nor touches the status the pass is
// computing). Records of a cloud object just created are retried.
func (p *pass[T]) persistAnnotations(ctx context.Context, before map[string]string, critical bool) error {
	after := p.obj.GetAnnotations()
	diff := map[string]any{}
	for k, v := range after {
		if old, ok := before[k]; !ok || old != v {
			diff[k] = v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			diff[k] = nil
		}
	}
	if len(diff) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": diff}})
	if err != nil {
		return fmt.Errorf("encoding the annotations of %s: %w", p.key, err)
	}
	carry := func(stored T) { p.obj.SetAnnotations(stored.GetAnnotations()) }
	if err := p.patchMeta(ctx, client.RawPatch(types.MergePatchType, patch), critical, carry); err != nil {
		return fmt.Errorf("recording the annotations of %s: %w", p.key, err)
	}
	return nil
}

// ensureFinalizer stores the reconciler's finalizer if the object lacks it,
// with an optimistic lock: success also proves the pass's copy current.
func (p *pass[T]) ensureFinalizer(ctx context.Context) error {
	if p.r.o.Finalizer == "" || meta.FinalizerExists(p.obj, p.r.o.Finalizer) {
		return nil
	}
	fin := append(slices.Clone(p.obj.GetFinalizers()), p.r.o.Finalizer)
	if err := p.patchFinalizers(ctx, fin); err != nil {
		return err
	}
	p.current = true
	return nil
}

// release removes the finalizer: the object is free to go. No status is
// written after it.
func (p *pass[T]) release(ctx context.Context) reconcile.Result {
	p.skipStatus = true
	if p.r.o.Finalizer == "" || !meta.FinalizerExists(p.obj, p.r.o.Finalizer) {
		return reconcile.Result{}
	}
	fin := slices.DeleteFunc(slices.Clone(p.obj.GetFinalizers()), func(f string) bool { return f == p.r.o.Finalizer })
	if err := p.patchFinalizers(ctx, fin); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}
		}
		p.skipStatus = false
		return p.fail(reasonCannotUpdateMR, "cannot remove finalizer", err)
	}
	p.r.writes.Forget(p.key)
	return reconcile.Result{}
}

// patchFinalizers replaces the finalizer list, with an optimistic lock on
// the pass's copy.
func (p *pass[T]) patchFinalizers(ctx context.Context, fin []string) error {
	if fin == nil {
		fin = []string{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": fin, "resourceVersion": p.obj.GetResourceVersion()}})
	if err != nil {
		return fmt.Errorf("encoding the finalizers of %s: %w", p.key, err)
	}
	carry := func(stored T) { p.obj.SetFinalizers(stored.GetFinalizers()) }
	if err := p.patchMeta(ctx, client.RawPatch(types.MergePatchType, patch), false, carry); err != nil {
		return fmt.Errorf("writing the finalizers of %s: %w", p.key, err)
	}
	return nil
}

// patchMeta applies a patch of the object's metadata to a copy, and
// carries back the new resourceVersion and, through carry, what the patch
// wrote: the pass keeps everything else it has changed in memory
// (annotations not recorded yet, the status it computes).
func (p *pass[T]) patchMeta(ctx context.Context, patch client.Patch, retried bool, carry func(stored T)) error {
	r := p.r
	cp := copyOf(p.obj)
	do := func() error { return r.o.Client.Patch(ctx, cp, patch) }
	var err error
	if retried {
		err = retry.OnError(retry.DefaultRetry, func(err error) bool {
			return !errors.Is(err, context.Canceled) && !apierrors.IsNotFound(err)
		}, do)
	} else {
		err = do()
	}
	if err != nil {
		return err
	}
	before := p.obj.GetResourceVersion()
	carry(cp)
	p.obj.SetResourceVersion(cp.GetResourceVersion())
	stored, err := statusJSON(cp)
	if err != nil {
		return err
	}
	p.storedStatus, p.storedVersion = stored, cp.GetResourceVersion()
	r.record(p.key, cp, before, func(m *memo[T]) {
		if m.written == "" {
			// The stored status counts as written now: a new object's
			// first progress may be deferred like any later one.
			m.written, m.writtenAt = stored, r.o.Clock.Now()
		}
	})
	return nil
}

// guardCreate makes sure the pass's copy is the stored version before a
// cloud object is created from it (crossplane writes an
// external-create-pending annotation for this; a read proves the same,
// because the create is idempotent: the kinds find their cloud objects by
// ownership tags, so a crash mid-create loses nothing).
func (p *pass[T]) guardCreate(ctx context.Context) error {
	if p.current || p.r.o.Reader == nil {
		return nil
	}
	var live T
	if rd := p.prefetch; rd != nil {
		select {
		case <-rd.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if rd.err != nil {
			return rd.err
		}
		live = rd.obj
	} else {
		live = p.r.o.New()
		if err := p.r.o.Reader.Get(ctx, p.key, live); err != nil {
			return err
		}
	}
	if live.GetResourceVersion() != p.storedVersion || live.GetUID() != p.obj.GetUID() {
		return apierrors.NewConflict(groupResource(p.obj, p.r.o.Client), p.key.Name,
			fmt.Errorf("the object changed (resourceVersion %s, the pass read %s)", live.GetResourceVersion(), p.storedVersion))
	}
	return nil
}

// liveRead is a read of the stored object running beside the pass.
type liveRead[T Object] struct {
	done chan struct{}
	obj  T
	err  error
}

func (r *Reconciler[T]) startRead(ctx context.Context, key types.NamespacedName) *liveRead[T] {
	rd := &liveRead[T]{done: make(chan struct{}), obj: r.o.New()}
	go func() {
		defer close(rd.done)
		rd.err = r.o.Reader.Get(ctx, key, rd.obj)
	}()
	return rd
}

// trackUsage starts recording the object's provider config usage (unless
// it was recorded recently); waitUsage collects the result. The pass
// observes meanwhile, and waits for it before any change.
func (p *pass[T]) trackUsage(ctx context.Context) {
	r := p.r
	if r.o.Usage == nil {
		return
	}
	key := string(p.obj.GetUID())
	if ref := p.obj.GetProviderConfigReference(); ref != nil {
		key += "|" + ref.Kind + "/" + ref.Name
	}
	if _, ok := r.usages.Get(key); ok {
		return
	}
	cp := copyOf(p.obj)
	// The usage names its resource by the object's kind, which a typed
	// client leaves empty.
	if gvk, err := apiutil.GVKForObject(cp, r.o.Client.Scheme()); err == nil {
		cp.GetObjectKind().SetGroupVersionKind(gvk)
	}
	ch := make(chan error, 1)
	p.usage = ch
	go func() {
		err := r.o.Usage.Track(ctx, cp)
		// A usage this process created moments ago may not be in the
		// cache yet: the tracker then fails to create it again, which
		// means it exists.
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
		if err == nil {
			r.usages.Record(key, struct{}{}, "")
		}
		ch <- err
	}()
}

func (p *pass[T]) waitUsage(ctx context.Context) error {
	if p.usage == nil {
		return nil
	}
	select {
	case err := <-p.usage:
		p.usage = nil
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// memoOf returns what is remembered of obj (nil: nothing, or of another
// object of the same name).
func (r *Reconciler[T]) memoOf(key types.NamespacedName, obj T) *memo[T] {
	m, ok := r.writes.Get(key)
	if !ok || m.obj.GetUID() != obj.GetUID() {
		return nil
	}
	return m
}

// record remembers obj as the newest copy of key, superseding version, and
// lets edit change what else is remembered.
func (r *Reconciler[T]) record(key types.NamespacedName, obj T, supersedes string, edit func(*memo[T])) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := &memo[T]{}
	if m := r.memoOf(key, obj); m != nil {
		*next = *m
	}
	next.obj = copyOf(obj)
	edit(next)
	r.writes.Record(key, next, obj.GetResourceVersion(), supersedes)
}

// update changes what is remembered of key without a new version.
func (r *Reconciler[T]) update(key types.NamespacedName, edit func(*memo[T])) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.writes.Get(key)
	if !ok {
		return
	}
	next := *m
	edit(&next)
	r.writes.Record(key, &next, m.obj.GetResourceVersion())
}

func copyOf[T Object](obj T) T {
	return obj.DeepCopyObject().(T) //nolint:forcetypeassert // DeepCopyObject returns the same type
}

// statusJSON is obj's status as the API server would store it (JSON of
// its unstructured form: sub-second times and empty fields compare equal).
func statusJSON(obj client.Object) (string, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", fmt.Errorf("converting %s to compare its status: %w", obj.GetName(), err)
	}
	raw, err := json.Marshal(u["status"])
	if err != nil {
		return "", fmt.Errorf("encoding the status of %s: %w", obj.GetName(), err)
	}
	return string(raw), nil
}

// withStatusOf returns a copy of obj carrying from's status.
func withStatusOf[T Object](obj, from T) (T, error) {
	raw, err := statusJSON(from)
	if err != nil {
		return obj, err
	}
	return withStatusJSON(obj, raw)
}

// withStatusJSON returns a copy of obj carrying the status raw (JSON).
func withStatusJSON[T Object](obj T, raw string) (T, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return obj, err
	}
	var st any
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return obj, err
	}
	u["status"] = st
	// Into an empty object: decoding into a copy would keep status fields
	// the new status leaves out.
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T) //nolint:forcetypeassert // T is a pointer to its element type
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, out); err != nil {
		return obj, err
	}
	return out, nil
}

// groupResource names obj's kind for an error (its lower-case plural, as
// the API server would).
func groupResource(obj client.Object, c client.Client) schema.GroupResource {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return schema.GroupResource{}
	}
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}

// Unwritten returns the status a pass left unwritten for key (the kind
// deferred it), as an object carrying it.
func (r *Reconciler[T]) Unwritten(key types.NamespacedName) (T, bool) {
	m, ok := r.writes.Get(key)
	if !ok || !m.deferred {
		var zero T
		return zero, false
	}
	return copyOf(m.unwritten), true
}
