package nodepatch

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Changed passes the node events that matter to a controller keeping
// marks on nodes: creation, deletion, and changes of labels, annotations,
// taints, providerID or the deletion timestamp — not the status
// heartbeats, which are most node updates.
var Changed = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return false
		}
		return !labels.Equals(o.Labels, n.Labels) || !labels.Equals(o.Annotations, n.Annotations) ||
			!slices.EqualFunc(o.Spec.Taints, n.Spec.Taints, func(a, b corev1.Taint) bool {
				return a.Key == b.Key && a.Value == b.Value && a.Effect == b.Effect
			}) ||
			o.Spec.ProviderID != n.Spec.ProviderID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
	},
}
