package floatippool

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// filteredPods remembers, by UID, the pods the scheduler sent to the
// filter, so that the bind that follows (which names only the pod) reads
// none: in a wave of new pods the manager's informer lags the scheduler's,
// and the bind of a pod its cache did not show yet cost a GET of the pod.
// The copy is the pod the scheduler decided on; the binding itself carries
// the UID as a precondition, so a pod deleted since is never bound.
type filteredPods struct {
	once sync.Once
	lru  *cache.LRUExpireCache
}

// filteredTTL bounds how long a filtered pod waits for its bind (the
// scheduler binds right after its scheduling cycle; a pod filtered but
// never bound, as no node fit, is simply forgotten).
const filteredTTL = time.Minute

// maxFiltered bounds the pods remembered: far above the pods between
// filter and bind at once. Beyond it the least recently filtered go first,
// whose bind then reads the pod as before.
const maxFiltered = 4096

func (f *filteredPods) get(clk clock.PassiveClock) *cache.LRUExpireCache {
	f.once.Do(func() { f.lru = cache.NewLRUExpireCacheWithClock(maxFiltered, clk) })
	return f.lru
}

// remember keeps what a bind reads of pod (see slimPod).
func (f *filteredPods) remember(clk clock.PassiveClock, pod *corev1.Pod) {
	if pod == nil || pod.UID == "" {
		return
	}
	f.get(clk).Add(pod.UID, slimPod(pod), filteredTTL)
}

// take returns (and forgets) the filtered copy of the pod with uid.
func (f *filteredPods) take(clk clock.PassiveClock, uid types.UID) (*corev1.Pod, bool) {
	if uid == "" {
		return nil, false
	}
	lru := f.get(clk)
	v, ok := lru.Get(uid)
	if !ok {
		return nil, false
	}
	lru.Remove(uid)
	pod, ok := v.(*corev1.Pod)
	return pod, ok
}

// slimPod copies what allocation reads of a pod: its identity, labels,
// annotations and owners (the request and the key) and each container's
// name and resources (the float-IP extended resource).
func slimPod(pod *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
			Labels: pod.Labels, Annotations: pod.Annotations, OwnerReferences: pod.OwnerReferences,
		},
	}
	slim := func(cs []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Resources: c.Resources}
		}
		return out
	}
	out.Spec.InitContainers = slim(pod.Spec.InitContainers)
	out.Spec.Containers = slim(pod.Spec.Containers)
	return out
}
