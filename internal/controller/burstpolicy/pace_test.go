package burstpolicy

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
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

// recordingQueue records the delay of each request added.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	after map[reconcile.Request]time.Duration
}

func (q *recordingQueue) AddAfter(r reconcile.Request, d time.Duration) {
	if _, dup := q.after[r]; dup {
		q.after[r] = -1 // added twice
		return
	}
	q.after[r] = d
}

// TestPacedPolicies: a pod event adds each policy of the old and the new
// pod once; a policy whose pass started within the interval waits for the
// rest of it, others are added at once, and a forgotten one at once again.
func TestPacedPolicies(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPassPacer(100*time.Millisecond, func() time.Time { return now })
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	// A pod's policies are named in its "policies" label, "+"-separated.
	h := pacedPolicies{p: p, toPolicies: func(_ context.Context, obj client.Object) []reconcile.Request {
		var out []reconcile.Request
		for _, name := range strings.Split(obj.GetLabels()["policies"], "+") {
			out = append(out, req(name))
		}
		return out
	}}
	pod := func(policies string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"policies": policies}}}
	}
	p.started(req("busy").NamespacedName)
	now = now.Add(40 * time.Millisecond)

	q := &recordingQueue{after: map[reconcile.Request]time.Duration{}}
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: pod("busy+left"), ObjectNew: pod("busy+idle")}, q)
	want := map[reconcile.Request]time.Duration{req("busy"): 60 * time.Millisecond, req("left"): 0, req("idle"): 0}
	if !maps.Equal(q.after, want) {
		t.Errorf("update added %v, want %v", q.after, want)
	}

	p.forget(req("busy").NamespacedName)
	q = &recordingQueue{after: map[reconcile.Request]time.Duration{}}
	h.Create(context.Background(), event.CreateEvent{Object: pod("busy")}, q)
	if d, ok := q.after[req("busy")]; !ok || d != 0 {
		t.Errorf("a forgotten policy's request waits %v (added: %v), want 0", d, ok)
	}
}
