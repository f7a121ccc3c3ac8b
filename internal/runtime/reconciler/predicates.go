package reconciler

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Changes passes the events of a kind's own objects that a pass must
// follow: creation, deletion, a changed spec (generation), annotations
// (the external name, the pause annotation) or labels, and the start of a
// deletion — not the status the reconciler itself writes, which would
// only bring the object back for a pass with nothing new to do.
func Changes() predicate.Predicate {
	return predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
			return (e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
		}})
}
