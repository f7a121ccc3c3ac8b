// Package readywatch counts, from an informer, the objects of one kind that
// have converged, so that a benchmark waits for convergence without polling
// the API server whose throughput it measures (a list of every object every
// 50 ms is a load of its own on a 2-core machine).
package readywatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Watch counts the objects for which done holds, by namespace/name.
type Watch struct {
	mu     sync.Mutex
	done   map[string]bool
	change chan struct{}
	stop   context.CancelFunc
}

// Start watches the objects of obj's kind (within opts' namespaces and
// selectors) and returns once the informer has synced. done decides
// whether an object has converged.
func Start(cfg *rest.Config, scheme *runtime.Scheme, obj client.Object, opts cache.Options, done func(client.Object) bool) (*Watch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	opts.Scheme = scheme
	ca, err := cache.New(cfg, opts)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building the cache: %w", err)
	}
	inf, err := ca.GetInformer(ctx, obj)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("getting the informer: %w", err)
	}
	w := &Watch{done: map[string]bool{}, change: make(chan struct{}, 1), stop: cancel}
	note := func(o any, gone bool) {
		if d, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		co, ok := o.(client.Object)
		if !ok {
			return
		}
		key := co.GetNamespace() + "/" + co.GetName()
		w.mu.Lock()
		if gone {
			delete(w.done, key)
		} else {
			w.done[key] = done(co)
		}
		w.mu.Unlock()
		select {
		case w.change <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { note(o, false) },
		UpdateFunc: func(_, o any) { note(o, false) },
		DeleteFunc: func(o any) { note(o, true) },
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("adding the handler: %w", err)
	}
	go func() { _ = ca.Start(ctx) }()
	if !ca.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the informer did not sync")
	}
	return w, nil
}

// Count returns how many objects have converged.
func (w *Watch) Count() int {
	n, _ := w.Counts()
	return n
}

// Counts returns how many objects have converged, and how many exist.
func (w *Watch) Counts() (converged, all int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.done {
		if d {
			converged++
		}
	}
	return converged, len(w.done)
}

// Wait returns how many objects have converged once n have, or at
// deadline.
func (w *Watch) Wait(n int, deadline time.Time) int {
	for {
		got := w.Count()
		if got >= n || !time.Now().Before(deadline) {
			return got
		}
		select {
		case <-w.change:
		case <-time.After(time.Until(deadline)):
		}
	}
}

// Stop ends the watch.
func (w *Watch) Stop() { w.stop() }
