package floatippool

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// refusedPods remembers the pods this replica's filter refused for want of
// a free IP, so that the next change its FloatIP informer sees that frees
// one nudges exactly those pods (refusalNudger).
//
// The release's own nudge (nudgeWaitingPods) lists unscheduled pods from
// the cache right after its write, and misses two pods kube-scheduler then
// parks until its five-minute flush, because a FloatIP change is no event
// it watches: one the cache does not show yet, and one whose filter read
// the FloatIPs before the informer had the release and answered after the
// nudge reached the scheduler (an update of a pod still queued is no new
// attempt). Here the nudge follows the informer: the refusal is recorded
// with the count of frees seen before the filter read the FloatIPs, and a
// free the filter may have missed makes the pod due at once.
type refusedPods struct {
	mu    sync.Mutex
	frees uint64       // frees the informer reported
	pods  []refusedPod // waiting for a free, oldest refusal first, one per UID
	due   []refusedPod // to nudge now
	wake  chan struct{}
}

// refusedPod is a pod the filter refused for want of a free IP.
type refusedPod struct {
	uid types.UID
	key types.NamespacedName
}

// maxRefused bounds the pods remembered (and those due): beyond it the
// oldest refusal is forgotten, and that pod waits for the release's nudge
// or the scheduler's own retry, as before.
const maxRefused = 1024

func newRefusedPods() *refusedPods { return &refusedPods{wake: make(chan struct{}, 1)} }

// seen returns the frees reported so far; the filter calls it before it
// reads any FloatIP. Nil-safe, as are the other methods.
func (r *refusedPods) seen() uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frees
}

// filtered records the filter's outcome for pod: refused for want of an
// IP, it waits for the next free (or is due at once when a free came after
// seen); let through, it is forgotten.
func (r *refusedPods) filtered(pod *corev1.Pod, res FilterResult, seen uint64) {
	if r == nil || pod == nil || pod.UID == "" {
		return
	}
	p := refusedPod{uid: pod.UID, key: types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods = without(r.pods, p.uid)
	if !refusedForIP(res) {
		return
	}
	if r.frees != seen {
		// The FloatIPs read may predate that free: its nudge may have
		// come and gone.
		r.due = bounded(append(without(r.due, p.uid), p))
		r.signal()
		return
	}
	r.pods = bounded(append(r.pods, p))
}

// forget drops the pod with uid (bound).
func (r *refusedPods) forget(uid types.UID) {
	if r == nil || uid == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pods = without(r.pods, uid)
}

// freed is called by the FloatIP informer after a change that frees an IP
// for the pods of namespace ("": any namespace): up to maxNudges of the
// oldest such refusals become due.
func (r *refusedPods) freed(namespace string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frees++
	due, keep := splitDue(r.pods, namespace, maxNudges)
	r.pods = keep
	if len(due) > 0 {
		for _, p := range due {
			r.due = append(without(r.due, p.uid), p)
		}
		r.due = bounded(r.due)
		r.signal()
	}
}

// take returns the pods due and forgets them: a pod refused again after
// its nudge is recorded anew.
func (r *refusedPods) take() []types.NamespacedName {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]types.NamespacedName, 0, len(r.due))
	for _, p := range r.due {
		out = append(out, p.key)
	}
	r.due = nil
	return out
}

func (r *refusedPods) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// splitDue returns, in order, up to limit of pods that may use an IP freed
// for namespace ("": any), and the others.
func splitDue(pods []refusedPod, namespace string, limit int) (due, keep []refusedPod) {
	for _, p := range pods {
		if len(due) < limit && (namespace == "" || p.key.Namespace == namespace) {
			due = append(due, p)
			continue
		}
		keep = append(keep, p)
	}
	return due, keep
}

func without(pods []refusedPod, uid types.UID) []refusedPod {
	for i := range pods {
		if pods[i].uid == uid {
			return append(pods[:i:i], pods[i+1:]...)
		}
	}
	return pods
}

// bounded drops the oldest entries beyond maxRefused.
func bounded(pods []refusedPod) []refusedPod {
	if n := len(pods) - maxRefused; n > 0 {
		return append([]refusedPod(nil), pods[n:]...)
	}
	return pods
}

// refusedForIP reports whether the filter refused the pod on every node for
// want of a free IP (or because its workload or sharing pool holds every IP
// it may), which a FloatIP freed later can change.
func refusedForIP(res FilterResult) bool {
	if len(res.Passed) > 0 {
		return false
	}
	if res.capacity {
		return true
	}
	for _, why := range res.Failed {
		if why == msgNoIPLeft {
			return true
		}
	}
	return false
}

// freedBy reports whether a FloatIP update frees an IP for pods the filter
// refused, and for which namespace's pods ("": any): the IP went back to
// its workload's or pool's reservation key. (A deletion frees it for any
// pod; claims and holder changes free nothing.)
func freedBy(old, cur *networkingv1alpha1.FloatIP) (namespace string, freed bool) {
	if old == nil || cur == nil || old.Spec.Key == cur.Spec.Key {
		return "", false
	}
	k, err := ipam.ParseKey(cur.Spec.Key)
	if err != nil || !k.IsReservation() {
		return "", false
	}
	return k.Namespace, true
}

// refusalNudger nudges the pods refusedPods marks due. Every replica runs
// one: each nudges the pods its own filter refused, when its own informer
// shows the free.
type refusalNudger struct {
	pods   *refusedPods
	client client.Client
	clock  clock.PassiveClock
}

// NeedLeaderElection is false: every replica's extender refuses pods.
func (n *refusalNudger) NeedLeaderElection() bool { return false }

// Start nudges due pods until ctx ends.
func (n *refusalNudger) Start(ctx context.Context) error {
	clk := n.clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.pods.wake:
		}
		nudgePods(ctx, n.client, clk.Now(), n.pods.take())
	}
}
