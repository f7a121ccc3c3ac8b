package anycastipbinding

import (
	"context"
	"encoding/json"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// noopStatusClient skips status updates of AnycastIPBindings that would
// write exactly what this process wrote last to the same resourceVersion.
// crossplane-runtime's managed reconciler updates status at the end of
// every pass, changed or not; while a binding waits for a cloud task most
// passes change nothing, and those writes were a large share of the API
// server's load when many nodes join at once. A skipped write leaves the
// object as it is, so a conflict or someone else's change is never hidden:
// any other resourceVersion is written as usual.
type noopStatusClient struct {
	client.Client
	mu   sync.Mutex
	last map[string]lastStatus // by UID
}

// maxRememberedStatuses bounds noopStatusClient's memory.
const maxRememberedStatuses = 20000

type lastStatus struct {
	resourceVersion string
	status          string
}

func newNoopStatusClient(c client.Client) *noopStatusClient {
	return &noopStatusClient{Client: c, last: map[string]lastStatus{}}
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
		return nil
	}
	if err := w.SubResourceWriter.Update(ctx, obj, opts...); err != nil {
		return err
	}
	w.c.mu.Lock()
	if len(w.c.last) >= maxRememberedStatuses {
		// Deleted bindings' entries are never looked up again; forgetting
		// everything now and then bounds the memory at the cost of one
		// write per binding.
		clear(w.c.last)
	}
	w.c.last[uid] = lastStatus{resourceVersion: b.ResourceVersion, status: string(raw)}
	w.c.mu.Unlock()
	return nil
}
