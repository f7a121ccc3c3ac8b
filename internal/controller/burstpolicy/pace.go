package burstpolicy

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// DefaultPodPassInterval is the least time between the starts of two
// passes of one policy that its pods' events bring.
//
// A pass reads every pod the policy governs, so a wave of new pods, each
// event bringing a pass as soon as the last one ended, cost O(pods) per
// event: with 200 pods created beside 2,000 governed ones, one worker
// passed over and over for the whole wave (running slices of 20–90 ms
// that held one of the manager's CPUs), beside the pod webhook admitting
// the same pods. A pod event within the interval of the last pass's start
// brings one pass at its end, for all the events meanwhile. A decision
// waits at most this long more; the first event after a quiet spell brings
// a pass at once.
const DefaultPodPassInterval = 100 * time.Millisecond

// passDelay is how long a pass brought at now waits: until interval after
// the start of the last pass (last; zero: none), not at all past it.
func passDelay(last, now time.Time, interval time.Duration) time.Duration {
	if last.IsZero() || interval <= 0 {
		return 0
	}
	return min(interval, max(0, last.Add(interval).Sub(now))) // never more, should the clock step back
}

// passPacer remembers when each policy's last pass started.
type passPacer struct {
	interval time.Duration
	now      func() time.Time
	mu       sync.Mutex
	last     map[types.NamespacedName]time.Time
}

func newPassPacer(interval time.Duration, now func() time.Time) *passPacer {
	return &passPacer{interval: interval, now: now, last: map[types.NamespacedName]time.Time{}}
}

// started records that a pass of key starts now.
func (p *passPacer) started(key types.NamespacedName) {
	if p == nil || p.interval <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[key] = p.now()
}

// forget drops key (its policy is gone).
func (p *passPacer) forget(key types.NamespacedName) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.last, key)
}

// delay is how long a pass of key brought now waits.
func (p *passPacer) delay(key types.NamespacedName) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return passDelay(p.last[key], p.now(), p.interval)
}

// pacedPolicies maps a pod's events to the policies that may govern it
// (toPolicies) and adds each policy's request after its pacer's delay: an
// event handler of its own, as IngressDaemonSet's deploymentEvents, so the
// queue is used as it is.
type pacedPolicies struct {
	toPolicies handler.MapFunc
	p          *passPacer
}

var _ handler.EventHandler = pacedPolicies{}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// add adds the requests of objs' policies, each once.
func (h pacedPolicies) add(ctx context.Context, q queue, objs ...client.Object) {
	seen := map[reconcile.Request]bool{}
	for _, obj := range objs {
		for _, req := range h.toPolicies(ctx, obj) {
			if !seen[req] {
				seen[req] = true
				q.AddAfter(req, h.p.delay(req.NamespacedName)) // 0: at once
			}
		}
	}
}

func (h pacedPolicies) Create(ctx context.Context, e event.CreateEvent, q queue) {
	h.add(ctx, q, e.Object)
}

// Update maps the old pod and the new one: a pod that stops matching a
// policy's selector still brings a pass of that policy.
func (h pacedPolicies) Update(ctx context.Context, e event.UpdateEvent, q queue) {
	h.add(ctx, q, e.ObjectOld, e.ObjectNew)
}

func (h pacedPolicies) Delete(ctx context.Context, e event.DeleteEvent, q queue) {
	h.add(ctx, q, e.Object)
}

func (h pacedPolicies) Generic(ctx context.Context, e event.GenericEvent, q queue) {
	h.add(ctx, q, e.Object)
}
