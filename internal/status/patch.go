package status

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ConflictRequeueAfter is how soon Patch asks for another pass after losing
// an optimistic-lock race. The newer version also triggers a watch event;
// the requeue covers a missed one.
const ConflictRequeueAfter = time.Second

// Patch writes after's status through the status subresource, once, and only
// if it differs from before's (the object as read at the start of the
// pass, typically a DeepCopy). It uses a merge patch with an optimistic lock
// on before's resourceVersion, so a status computed from a stale read is
// never written over a newer one.
//
// A conflict is not an error: Patch returns a short RequeueAfter and a nil
// error, so the next pass recomputes status from the fresh object without an
// error log or event. An object deleted in the meantime is not an error
// either. On success after holds the stored object.
func Patch(ctx context.Context, c client.Client, before, after Object) (reconcile.Result, error) {
	changed, err := statusChanged(before, after)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !changed {
		return reconcile.Result{}, nil
	}
	patch := client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(ctx, after, patch); err != nil {
		switch {
		case apierrors.IsConflict(err):
			log.FromContext(ctx).V(1).Info("Status patch lost an optimistic-lock race; requeueing",
				"object", client.ObjectKeyFromObject(after))
			return reconcile.Result{RequeueAfter: ConflictRequeueAfter}, nil
		case apierrors.IsNotFound(err):
			return reconcile.Result{}, nil
		default:
			return reconcile.Result{}, fmt.Errorf("patching status of %s: %w", client.ObjectKeyFromObject(after), err)
		}
	}
	return reconcile.Result{}, nil
}

// statusChanged compares the serialised status of two objects, so that
// differences the API server would not store (sub-second times) do not cause
// a write.
func statusChanged(before, after Object) (bool, error) {
	b, err := statusOf(before)
	if err != nil {
		return false, err
	}
	a, err := statusOf(after)
	if err != nil {
		return false, err
	}
	return !reflect.DeepEqual(b, a), nil
}

func statusOf(obj Object) (any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %s to compare status: %w", client.ObjectKeyFromObject(obj), err)
	}
	return u["status"], nil
}
