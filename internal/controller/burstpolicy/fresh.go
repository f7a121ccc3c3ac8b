package burstpolicy

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// freshTTL bounds how long a written pod is remembered; the cache catches up
// long before.
const freshTTL = 2 * time.Minute

// freshPods remembers the pods this controller is writing or just wrote,
// until the cache has caught up with the write (the ReplicaSet controller's
// "expectations"). A pass that still sees the version from before a write
// uses the written (or, while the write is in flight, the expected) pod
// instead: it neither writes the same change again (a sure conflict) nor
// counts a burst pod as held local.
type freshPods struct {
	mu sync.Mutex
	m  map[types.UID]*freshPod
}

type freshPod struct {
	// staleRV is the resourceVersion the write replaces.
	staleRV string
	pod     *corev1.Pod
	at      time.Time
	// inFlight: the write has not returned yet; pod is what it will write.
	inFlight bool
}

// expect records that a write replacing before (as cached) by after is in
// flight, and returns the entry to settle with written or failed.
func (f *freshPods) expect(before, after *corev1.Pod) *freshPod {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.UID]*freshPod{}
	}
	e := &freshPod{staleRV: before.ResourceVersion, pod: after.DeepCopy(), at: time.Now(), inFlight: true}
	f.m[before.UID] = e
	return e
}

// written settles e: the API server returned after.
func (f *freshPods) written(uid types.UID, e *freshPod, after *corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[uid] == e {
		e.pod, e.inFlight, e.at = after.DeepCopy(), false, time.Now()
	}
}

// failed forgets e: the write did not happen.
func (f *freshPods) failed(uid types.UID, e *freshPod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[uid] == e {
		delete(f.m, uid)
	}
}

// resolve replaces the cached pods that predate a write of ours (or whose
// write is still in flight) by what the write produced or will produce, in
// place, and forgets writes the cache has caught up with.
func (f *freshPods) resolve(pods []corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.m) == 0 {
		return
	}
	for i := range pods {
		e, ok := f.m[pods[i].UID]
		if !ok {
			continue
		}
		if e.inFlight || pods[i].ResourceVersion == e.staleRV {
			pods[i] = *e.pod.DeepCopy()
			continue
		}
		delete(f.m, pods[i].UID)
	}
	now := time.Now()
	for uid, e := range f.m {
		if !e.inFlight && now.Sub(e.at) > freshTTL {
			delete(f.m, uid)
		}
	}
}

// isEcho reports whether pod is exactly what a write of ours produced: the
// pass that wrote it already planned with it, so its event needs no pass.
func (f *freshPods) isEcho(uid types.UID, resourceVersion string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.m[uid]
	return ok && !e.inFlight && e.pod.ResourceVersion == resourceVersion
}
