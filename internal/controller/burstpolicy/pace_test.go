package burstpolicy

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestPassDelay(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const interval = 100 * time.Millisecond
	for name, tc := range map[string]struct {
		last, now time.Time
		interval  time.Duration
		want      time.Duration
	}{
		"no pass yet":                   {now: t0, interval: interval},
		"within the interval":           {last: t0, now: t0.Add(30 * time.Millisecond), interval: interval, want: 70 * time.Millisecond},
		"at the start of the last pass": {last: t0, now: t0, interval: interval, want: interval},
		"past the interval":             {last: t0, now: t0.Add(time.Second), interval: interval},
		"no pacing":                     {last: t0, now: t0, interval: 0},
		"the clock stepped back":        {last: t0, now: t0.Add(-time.Hour), interval: interval, want: interval},
	} {
		if got := passDelay(tc.last, tc.now, tc.interval); got != tc.want {
			t.Errorf("%s: passDelay = %v, want %v", name, got, tc.want)
		}
	}
}

// recordingQueue records how requests were added.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []reconcile.Request
	after map[reconcile.Request]time.Duration
}

func (q *recordingQueue) Add(r reconcile.Request) { q.added = append(q.added, r) }
func (q *recordingQueue) AddAfter(r reconcile.Request, d time.Duration) {
	q.after[r] = d
}

// TestPacedQueue: a request of a policy whose pass started within the
// interval waits for the rest of it; others are added at once.
func TestPacedQueue(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPassPacer(100*time.Millisecond, func() time.Time { return now })
	busy, idle := types.NamespacedName{Namespace: "ns", Name: "busy"}, types.NamespacedName{Namespace: "ns", Name: "idle"}
	p.started(busy)
	now = now.Add(40 * time.Millisecond)
	rq := &recordingQueue{after: map[reconcile.Request]time.Duration{}}
	q := pacedQueue{rq, p}
	q.Add(reconcile.Request{NamespacedName: busy})
	q.Add(reconcile.Request{NamespacedName: idle})
	if d := rq.after[reconcile.Request{NamespacedName: busy}]; d != 60*time.Millisecond {
		t.Errorf("the busy policy's request waits %v, want 60ms", d)
	}
	if len(rq.added) != 1 || rq.added[0].NamespacedName != idle {
		t.Errorf("added at once: %v, want only the idle policy", rq.added)
	}
	p.forget(busy)
	q.Add(reconcile.Request{NamespacedName: busy})
	if len(rq.added) != 2 {
		t.Errorf("a forgotten policy's request was not added at once")
	}
}
