// Package informerstore reads objects straight from the store of a
// controller-runtime cache's informer: pointers to the cached objects, to
// be read only, with no copy.
//
// A List through the cached client copies every listed object's struct into
// the new list even with client.UnsafeDisableDeepCopy (about 1 KiB a Pod,
// 0.9 KiB a Node). A reader that lists often, such as a BurstPolicy pass
// reading every pod its policy governs on each burst of pod events, or the
// float-IP scheduler extender reading the nodes it is asked about on every
// scheduling attempt, spent most of its allocations on those copies, and
// the collections they caused slowed the webhooks served beside it.
package informerstore

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Store is a read-only view of one kind's informer store. A nil Store, or
// one whose informer has not synced yet, answers nothing (ok false): the
// caller then reads through its client.
type Store[T client.Object] struct {
	indexer toolscache.Indexer
	synced  func() bool
}

// New returns a Store over indexer that answers once synced reports true
// (nil: at once).
func New[T client.Object](indexer toolscache.Indexer, synced func() bool) *Store[T] {
	return &Store[T]{indexer: indexer, synced: synced}
}

// indexedInformer is what the informer of a cluster-wide or one-namespace
// controller-runtime cache is (client-go's SharedIndexInformer). A cache of
// several namespaces has one store per namespace and is not.
type indexedInformer interface {
	HasSynced() bool
	GetIndexer() toolscache.Indexer
}

// For returns the Store of obj's informer in informers; nil when the cache
// has no single store for it (the caller reads through its client).
func For[T client.Object](ctx context.Context, informers cache.Informers, obj T) (*Store[T], error) {
	inf, err := informers.GetInformer(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("getting the informer of %T: %w", obj, err)
	}
	withStore, ok := inf.(indexedInformer)
	if !ok {
		return nil, nil
	}
	return New[T](withStore.GetIndexer(), withStore.HasSynced), nil
}

// Synced reports whether the store answers: it exists and its informer
// has synced.
func (s *Store[T]) Synced() bool {
	return s != nil && s.indexer != nil && (s.synced == nil || s.synced())
}

// Get returns the object of key ("name", or "namespace/name") and whether
// the store holds it; ok false: the store cannot answer.
func (s *Store[T]) Get(key string) (obj T, found, ok bool) {
	if !s.Synced() {
		return obj, false, false
	}
	o, exists, err := s.indexer.GetByKey(key)
	if err != nil {
		return obj, false, false
	}
	obj, isT := o.(T)
	return obj, exists && isT, true
}

// List returns the objects of namespace ("": every namespace) that sel
// selects (nil: all); ok false: the store cannot answer.
func (s *Store[T]) List(namespace string, sel labels.Selector) (out []T, ok bool) {
	if !s.Synced() {
		return nil, false
	}
	var objs []any
	if namespace == "" {
		objs = s.indexer.List()
	} else {
		var err error
		if objs, err = s.indexer.ByIndex(toolscache.NamespaceIndex, namespace); err != nil {
			return nil, false // no namespace index
		}
	}
	out = make([]T, 0, len(objs))
	for _, o := range objs {
		if obj, isT := o.(T); isT && (sel == nil || sel.Matches(labels.Set(obj.GetLabels()))) {
			out = append(out, obj)
		}
	}
	return out, true
}

// Lazy is a Store found on first use, for a reconciler built as a literal
// whose cache is a field set after construction.
type Lazy[T client.Object] struct {
	mu    sync.Mutex
	found bool
	store *Store[T]
}

// Get returns For(ctx, informers, obj), found on the first call that
// succeeds; later calls return the same whatever they pass. A nil
// informers gives a nil Store.
func (l *Lazy[T]) Get(ctx context.Context, informers cache.Informers, obj T) (*Store[T], error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.found || informers == nil {
		return l.store, nil
	}
	store, err := For(ctx, informers, obj)
	if err != nil {
		return nil, err // not remembered: the next pass tries again
	}
	l.store, l.found = store, true
	return store, nil
}
