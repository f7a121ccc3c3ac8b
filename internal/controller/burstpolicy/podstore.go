package burstpolicy

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podStore reads the governed pods straight from the pod informer's store,
// as pointers to the cache's own objects.
//
// A List through the cached client, even with UnsafeDisableDeepCopy, copies
// every listed pod's struct (about 1 KiB) into a new PodList. A pass lists
// every pod of its policy's selector, and a pass runs for every burst of
// their events: while 200 new pods of a policy that already governed 2,000
// were ungated, those copies were half of the manager's allocations, and
// its collections and long passes slowed the pod webhook beside it.
type podStore struct {
	once    sync.Once
	indexer toolscache.Indexer // nil: list through the client
	err     error
}

// init finds the pod informer's store in informers (nil: none, the client
// lists).
func (s *podStore) init(ctx context.Context, informers cache.Informers) {
	s.once.Do(func() {
		if informers == nil {
			return
		}
		inf, err := informers.GetInformer(ctx, &corev1.Pod{})
		if err != nil {
			s.err = fmt.Errorf("getting the pod informer: %w", err)
			return
		}
		// A cache of several namespaces has no one store: the client lists.
		if withStore, ok := inf.(interface{ GetIndexer() toolscache.Indexer }); ok {
			s.indexer = withStore.GetIndexer()
		}
	})
}

// list returns the pods of namespace that sel selects. They are the
// cache's own objects, or the client's list's: read only.
func (s *podStore) list(ctx context.Context, c client.Reader, namespace string, sel labels.Selector) ([]*corev1.Pod, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.indexer == nil {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
		out := make([]*corev1.Pod, len(pods.Items))
		for i := range pods.Items {
			out[i] = &pods.Items[i]
		}
		return out, nil
	}
	objs, err := s.indexer.ByIndex(toolscache.NamespaceIndex, namespace)
	if err != nil {
		return nil, fmt.Errorf("listing pods of namespace %s from the cache: %w", namespace, err)
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && (sel == nil || sel.Matches(labels.Set(p.Labels))) {
			out = append(out, p)
		}
	}
	return out, nil
}
