package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WatchFirstNodeVersion starts watching the node named name, which must not
// exist yet, and returns a function that waits up to timeout for its first
// version: the node as the API server stored it at its creation, which is
// what admission (a webhook or a policy) made of the request. Call it
// before the node is created.
func (c *Cluster) WatchFirstNodeVersion(ctx context.Context, name string) (wait func(timeout time.Duration) (*corev1.Node, error), err error) {
	wc, err := client.NewWithWatch(c.restConfig, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("watching node %s: %w", name, err)
	}
	w, err := wc.Watch(ctx, &corev1.NodeList{}, client.MatchingFields{"metadata.name": name})
	if err != nil {
		return nil, fmt.Errorf("watching node %s: %w", name, err)
	}
	first := make(chan *corev1.Node, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type == watch.Added {
				first <- n
				return
			}
		}
	}()
	return func(timeout time.Duration) (*corev1.Node, error) {
		select {
		case n := <-first:
			return n, nil
		case <-time.After(timeout):
			w.Stop()
			return nil, fmt.Errorf("node %s: no first version within %v", name, timeout)
		}
	}, nil
}
