package reconciler

import (
	"maps"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// Changes passes the events of a kind's own objects that a pass must
// follow: creation, deletion, a changed spec (generation), annotations
// (the external name, the pause annotation) or labels, and the start of a
// deletion — not the status the reconciler itself writes, nor its
// external-create bookkeeping annotations, which would only bring the
// object back for a pass with nothing new to do. A failed create writes
// external-create-failed each time; following that write would retry the
// cloud at once, around the work queue's backoff.
func Changes() predicate.Predicate {
	return predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
		predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld != nil && e.ObjectNew != nil && AnnotationsChanged(e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations())
		}},
		predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})
}

// bookkeeping are the annotations the reconciler writes about its own
// create steps (crossplane's external-create-*).
var bookkeeping = []string{
	meta.AnnotationKeyExternalCreatePending,
	meta.AnnotationKeyExternalCreateSucceeded,
	meta.AnnotationKeyExternalCreateFailed,
}

// AnnotationsChanged reports whether before and after differ in an annotation
// other than the reconciler's create bookkeeping.
func AnnotationsChanged(before, after map[string]string) bool {
	strip := func(m map[string]string) map[string]string {
		m = maps.Clone(m)
		for _, k := range bookkeeping {
			delete(m, k)
		}
		return m
	}
	return !maps.Equal(strip(before), strip(after))
}

// OwnWrites drops the update events that are the echo of this reconciler's
// own metadata writes (the annotations recording a create, a finalizer):
// the event's old and new versions are exactly the ones the write went
// from and to, so nothing but that write changed, and the pass that wrote
// it has already chosen when the object is looked at next. Any other
// update (someone else's write, one that landed on top of someone else's,
// a watch that skipped versions) passes (expect.NotEcho).
func (r *Reconciler[T]) OwnWrites() predicate.Predicate {
	return expect.NotEcho(r.own, client.ObjectKeyFromObject)
}
