package ingressdaemonset

import (
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// expectationTimeout bounds how long a pass waits for the cache to show a
// write of its own; after it, the cache is trusted again (someone else may
// have changed the object meanwhile).
const expectationTimeout = 10 * time.Second

// expectations remember what this process last wrote into each per-node
// Deployment's rollout state (phase, detach start, revision), so that a pass
// never plans from a cache that does not show those writes yet: a stale
// cache could make a node look idle and start one node too many. A
// restarted manager starts without expectations and with a freshly listed
// cache, so nothing is lost.
type expectations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]expectation
}

type expectation struct {
	// owner is the IngressDaemonSet that wrote it.
	owner                     string
	exists                    bool
	phase, detachAt, revision string
	at                        time.Time
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
func (e *expectations) wrote(owner string, d *appsv1.Deployment, now time.Time) {
	e.set(owner, types.NamespacedName{Namespace: d.Namespace, Name: d.Name}, rolloutState(d), now)
}

// deleted records that owner deleted the Deployment key.
func (e *expectations) deleted(owner string, key types.NamespacedName, now time.Time) {
	e.set(owner, key, expectation{}, now)
}

func (e *expectations) set(owner string, key types.NamespacedName, x expectation, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[types.NamespacedName]expectation{}
	}
	x.owner, x.at = owner, now
	e.m[key] = x
}

// satisfied reports whether the cached Deployments of the IngressDaemonSet
// ns/owner (by name; missing when not cached) show every write this process
// made to them. Expectations that are met or timed out are dropped.
func (e *expectations) satisfied(ns, owner string, cached map[string]*appsv1.Deployment, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	ok := true
	for key, want := range e.m {
		if key.Namespace != ns || want.owner != owner {
			continue
		}
		d := cached[key.Name]
		var got expectation
		if d != nil {
			got = rolloutState(d)
		}
		got.owner, got.at = want.owner, want.at
		if got == want || now.Sub(want.at) > expectationTimeout {
			delete(e.m, key)
			continue
		}
		ok = false
	}
	return ok
}
