package burstpolicy

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// freshTTL bounds how long a written pod (or a write in flight) is
// remembered; the cache catches up long before.
const freshTTL = 2 * time.Minute

// maxFresh bounds the pods remembered: far above what one manager writes
// within freshTTL. Beyond it the least recently used go first, which costs
// at most a patch that conflicts and is retried.
const maxFresh = 1 << 14

// freshPods remembers the pods this controller is writing or just wrote,
// by UID, until the cache has caught up with the write (the ReplicaSet
// controller's "expectations", on runtime/expect). A pass that still sees
// the version from before a write uses the written (or, while the write is
// in flight, the expected) pod instead: it neither writes the same change
// again (a sure conflict) nor counts a burst pod as held local.
type freshPods struct {
	w *expect.Writes[types.UID, *corev1.Pod]
}

// freshPods returns the pods this process wrote that the cache may not
// show yet.
func (r *Reconciler) freshPods() freshPods {
	return freshPods{r.fresh.Get(freshTTL, maxFresh, r.Clock)}
}

// expect records that a write replacing before (as cached) by after is in
// flight, and returns the ticket to settle it with written or failed.
func (f freshPods) expect(before, after *corev1.Pod) expect.Ticket {
	return f.w.InFlight(before.UID, after.DeepCopy(), before.ResourceVersion)
}

// written settles t: the API server returned after, which the store keeps
// (the caller no longer changes it).
func (f freshPods) written(uid types.UID, t expect.Ticket, after *corev1.Pod) {
	f.w.Landed(uid, t, after, after.ResourceVersion)
}

// failed forgets t: the write did not happen.
func (f freshPods) failed(uid types.UID, t expect.Ticket) { f.w.Failed(uid, t) }

// resolve replaces the cached pods that predate a write of ours (or whose
// write is still in flight) by what the write produced or will produce, in
// place, and forgets writes the cache has caught up with.
//
// The replacement is the remembered pod itself, as the listed pods are the
// cache's own: a pass reads its pods and every write starts from a deep
// copy. A deep copy per pass and per pod written was
// most of the manager's allocations while it ungated a wave of pods (a
// pass runs for every burst of their events), and the collections it
// caused slowed the pod webhook beside it.
func (f freshPods) resolve(pods []*corev1.Pod) {
	for i := range pods {
		if p, v := f.w.Observe(pods[i].UID, pods[i].ResourceVersion); v == expect.Behind {
			pods[i] = p
		}
	}
}

// isEcho reports whether pod is exactly what a write of ours produced: the
// pass that wrote it already planned with it, so its event needs no pass.
func (f freshPods) isEcho(uid types.UID, resourceVersion string) bool {
	_, v := f.w.Check(uid, resourceVersion)
	return v == expect.Current
}
