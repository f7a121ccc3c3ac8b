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

// paced wraps an event handler so that the passes it brings are paced by
// p: each request it adds waits for p.delay.
func paced(next handler.EventHandler, p *passPacer) handler.EventHandler {
	return &pacedHandler{next: next, p: p}
}

type pacedHandler struct {
	next handler.EventHandler
	p    *passPacer
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

func (h *pacedHandler) Create(ctx context.Context, e event.TypedCreateEvent[client.Object], q queue) {
	h.next.Create(ctx, e, pacedQueue{q, h.p})
}

func (h *pacedHandler) Update(ctx context.Context, e event.TypedUpdateEvent[client.Object], q queue) {
	h.next.Update(ctx, e, pacedQueue{q, h.p})
}

func (h *pacedHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[client.Object], q queue) {
	h.next.Delete(ctx, e, pacedQueue{q, h.p})
}

func (h *pacedHandler) Generic(ctx context.Context, e event.TypedGenericEvent[client.Object], q queue) {
	h.next.Generic(ctx, e, pacedQueue{q, h.p})
}

// pacedQueue adds a request after its policy's delay. It is not a
// priority queue, so the handler adds through Add.
type pacedQueue struct {
	queue
	p *passPacer
}

func (q pacedQueue) Add(req reconcile.Request) {
	if d := q.p.delay(req.NamespacedName); d > 0 {
		q.queue.AddAfter(req, d)
		return
	}
	q.queue.Add(req)
}
