package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

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
	// Only now may the usage go, and the provider config (and its
	// credentials) with it: a failed write above is retried with them.
	// A failure here is left to the provider config reconciler, which
	// releases the usage of an object that is gone.
	if rel, ok := p.r.o.Usage.(UsageReleaser); ok {
		if err := rel.Release(ctx, p.obj); err != nil {
			p.log.Info("Cannot release the provider config usage", "error", err.Error())
		}
	}
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
	// The watch event of this write is its echo (OwnWrites).
	r.own.Record(p.key, struct{}{}, cp.GetResourceVersion(), before)
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

// groupResource names obj's kind for an error (its lower-case plural, as
// the API server would).
func groupResource(obj client.Object, c client.Client) schema.GroupResource {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return schema.GroupResource{}
	}
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
}
