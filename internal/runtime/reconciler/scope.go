package reconciler

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
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
	return p, nil
}

// startPrefetch starts the read that guards a create when the kind asks
// for it (PrefetchCreate). It runs once the pass has connected, not as the
// pass starts: a pass that cannot connect fails at once and retries on the
// work queue's backoff, and each retry's read would be thrown away.
func (p *pass[T]) startPrefetch(ctx context.Context) {
	r := p.r
	if r.o.PrefetchCreate != nil && r.o.Reader != nil && r.o.PrefetchCreate(p.obj) {
		p.prefetch = r.startRead(ctx, p.key)
	}
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
	// Like the cache's copies (internal/manager), the memo keeps no
	// managedFields: nobody reads them, and a written object has them all.
	next.obj.SetManagedFields(nil)
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
