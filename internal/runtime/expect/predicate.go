package expect

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// NotEcho passes every event but the updates that are the echo of a write
// recorded in w (Echo), the object named by key: the pass that wrote has
// already acted on it. Someone else's write still passes.
func NotEcho[K comparable, V any](w *Writes[K, V], key func(client.Object) K) predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return true
		}
		return !w.Echo(key(e.ObjectNew), e.ObjectOld.GetResourceVersion(), e.ObjectNew.GetResourceVersion())
	}}
}
