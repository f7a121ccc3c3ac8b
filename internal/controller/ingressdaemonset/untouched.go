package ingressdaemonset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// untouchedTTL bounds how long a metadata-only write is remembered: the
// Deployment controller observes a generation within seconds; if it has
// not after this, the node counts as unknown again (against the budget).
const untouchedTTL = time.Minute

// untouchedPods is what a Deployment's status still describes after this
// process's own writes that left its spec as it was: the API server moves a
// Deployment's generation on every annotation change (the reattachment
// removes the detach annotations), and until the Deployment controller
// observes the new generation the status looks stale, so the node would
// count against the budget as possibly unavailable. Its pods were not
// touched: the status the Deployment controller wrote for observed
// describes the spec at generation as well.
type untouchedPods struct {
	// generation is the Deployment's generation after the write.
	generation int64
	// observed is the generation the Deployment controller had observed
	// when the write was made, whose spec the write kept.
	observed int64
}

func (r *Reconciler) untouchedWrites() *expect.Writes[types.NamespacedName, untouchedPods] {
	return r.untouched.Get(untouchedTTL, maxExpectations, r.Clock)
}

// wroteMetadata records the write that turned prev (the cached copy the
// pass started from) into live (the stored object the write returned), if
// it left the spec that the Deployment controller had observed as it was.
func (r *Reconciler) wroteMetadata(prev, live *appsv1.Deployment) {
	key := types.NamespacedName{Namespace: live.Namespace, Name: live.Name}
	if prev == nil || live.Generation == prev.Generation {
		return
	}
	if !DeploymentStatusCurrent(prev) || !equality.Semantic.DeepEqual(prev.Spec, live.Spec) {
		r.untouchedWrites().Forget(key)
		return
	}
	r.untouchedWrites().Record(key, untouchedPods{generation: live.Generation, observed: prev.Status.ObservedGeneration}, "")
}

// settled returns d, the cached copy of a Deployment, as the Deployment
// controller would report it had it observed this process's last
// metadata-only write: with the status it wrote for the spec that write
// kept, current. Anything else (the controller caught up, someone else
// wrote since, a restart forgot the write) returns d as it is.
func (r *Reconciler) settled(d *appsv1.Deployment) *appsv1.Deployment {
	key := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
	u, ok := r.untouchedWrites().Get(key)
	switch {
	case !ok:
		return d
	case d.Generation == u.generation && d.Status.ObservedGeneration == u.observed:
		d = d.DeepCopy()
		d.Status.ObservedGeneration = d.Generation
		return d
	case d.Generation >= u.generation:
		// The Deployment controller caught up, or another write followed.
		r.untouchedWrites().Forget(key)
	}
	return d
}
