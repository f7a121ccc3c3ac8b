package anycastipbinding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// annotationUpdater is the managed reconciler's CriticalAnnotationUpdater:
// it persists the binding's annotations (the address ID as external name,
// external-create-pending/succeeded/failed, the allocation task) with a
// merge patch of the annotations alone, retried like crossplane's
// RetryingCriticalAnnotationUpdater. Unlike that updater's full Update, the
// patch neither conflicts with a concurrent change of something else nor
// resets the status computed in the same pass, so the pass's one status
// write still carries it (the address ID and state right after the
// allocation) instead of needing another pass.
type annotationUpdater struct{ c client.Client }

// UpdateCriticalAnnotations implements managed.CriticalAnnotationUpdater.
func (u annotationUpdater) UpdateCriticalAnnotations(ctx context.Context, o client.Object) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": o.GetAnnotations()}})
	if err != nil {
		return fmt.Errorf("encoding the annotations of %s: %w", o.GetName(), err)
	}
	cp, ok := o.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copying %s", o.GetName())
	}
	err = retry.OnError(retry.DefaultRetry, func(err error) bool { return !errors.Is(err, context.Canceled) }, func() error {
		return u.c.Patch(ctx, cp, client.RawPatch(types.MergePatchType, patch))
	})
	if err != nil {
		return fmt.Errorf("persisting the annotations of %s: %w", o.GetName(), err)
	}
	o.SetAnnotations(cp.GetAnnotations())
	o.SetResourceVersion(cp.GetResourceVersion())
	return nil
}
