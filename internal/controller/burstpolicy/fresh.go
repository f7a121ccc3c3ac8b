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

// freshPods remembers the pods this controller just wrote, until the cache
// has caught up with the write (the ReplicaSet controller's "expectations").
// A pass that still sees the version from before a write uses the written
// pod instead: it neither writes the same change again (a sure conflict)
// nor counts a burst pod as held local.
type freshPods struct {
	mu sync.Mutex
	m  map[types.UID]freshPod
}

type freshPod struct {
	// staleRV is the resourceVersion the write replaced.
	staleRV string
	pod     *corev1.Pod
	at      time.Time
}

// remember records that before (as cached) was replaced by after.
func (f *freshPods) remember(before, after *corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[types.UID]freshPod{}
	}
	f.m[before.UID] = freshPod{staleRV: before.ResourceVersion, pod: after.DeepCopy(), at: time.Now()}
}

// resolve replaces the cached pods that predate a write of ours by what the
// write produced, in place, and forgets writes the cache has caught up with.
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
		if pods[i].ResourceVersion == e.staleRV {
			pods[i] = *e.pod.DeepCopy()
			continue
		}
		delete(f.m, pods[i].UID)
	}
	now := time.Now()
	for uid, e := range f.m {
		if now.Sub(e.at) > freshTTL {
			delete(f.m, uid)
		}
	}
}
