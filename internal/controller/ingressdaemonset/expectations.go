package ingressdaemonset

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// expectationTimeout bounds how long a pass waits for the cache to show a
// write of its own; after it, the cache is trusted again (someone else may
// have changed the object meanwhile).
const expectationTimeout = 10 * time.Second

// maxExpectations bounds the writes remembered: far above the per-node
// Deployments one manager writes within expectationTimeout, so only a
// met expectation or the timeout drops one in practice.
const maxExpectations = 1 << 16

// expectations remember what this process last wrote into each per-node
// Deployment's rollout state (phase, detach start, revision), so that a pass
// never plans from a cache that does not show those writes yet: a stale
// cache could make a node look idle and start one node too many. A
// restarted manager starts without expectations and with a freshly listed
// cache, so nothing is lost. The cache shows a write when the Deployment's
// rollout state is the one written, whatever its resourceVersion; a
// deletion, when the Deployment is not cached.
type expectations struct {
	w *expect.Writes[types.NamespacedName, expectation]
}

// expectations returns this process's writes the cache may not show yet.
func (r *Reconciler) expectations() expectations {
	return expectations{r.expect.Get(expectationTimeout, maxExpectations, r.Clock)}
}

type expectation struct {
	// owner is the IngressDaemonSet that wrote it.
	owner                     string
	exists                    bool
	phase, detachAt, revision string
}

func rolloutState(d *appsv1.Deployment) expectation {
	return expectation{
		exists:   true,
		phase:    d.Labels[appsv1alpha1.LabelPhase],
		detachAt: d.Labels[appsv1alpha1.LabelDetachStartedAt],
		revision: d.Annotations[appsv1alpha1.AnnotationRevision],
	}
}

// wrote records that owner created or updated d with its current rollout state.
func (e expectations) wrote(owner string, d *appsv1.Deployment) {
	x := rolloutState(d)
	x.owner = owner
	e.w.Record(types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, x, "")
}

// deleted records that owner deleted the Deployment key.
func (e expectations) deleted(owner string, key types.NamespacedName) {
	e.w.Record(key, expectation{owner: owner}, "")
}

// satisfied reports whether the cached Deployments of the IngressDaemonSet
// ns/owner (by name; missing when not cached) show every write this process
// made to them. Expectations that are met are dropped; timed-out ones have
// expired.
func (e expectations) satisfied(ns, owner string, cached map[string]*appsv1.Deployment) bool {
	ok := true
	for _, key := range e.w.Keys() {
		want, found := e.w.Get(key)
		if !found || key.Namespace != ns || want.owner != owner {
			continue
		}
		var got expectation
		if d := cached[key.Name]; d != nil {
			got = rolloutState(d)
		}
		got.owner = want.owner
		if got == want {
			e.w.Forget(key)
			continue
		}
		ok = false
	}
	return ok
}
