package burstpolicy

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// TestEvictionsInFlight: a policy's last eviction is in flight while the
// cache shows its pod neither terminating nor gone, or does not show its
// replacement yet (fewer other live pods than were live at the eviction),
// for at most evictionTTL on the reconciler's clock, and is forgotten once
// it is not.
func TestEvictionsInFlight(t *testing.T) {
	policy := types.NamespacedName{Namespace: "ns", Name: "p"}
	running := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1"}}
	terminating := *running.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	other := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "u2"}}
	replacement := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c", UID: "u3"}}
	cases := map[string]struct {
		record *types.NamespacedName
		// live is how many pods were live at the eviction (0: 1, the
		// evicted pod alone).
		live           int
		pods           []corev1.Pod
		after          time.Duration
		want           bool
		wantRemembered bool
	}{
		"nothing evicted":                          {pods: []corev1.Pod{running}},
		"the pod still runs":                       {record: &policy, pods: []corev1.Pod{running, other}, want: true, wantRemembered: true},
		"just before the TTL":                      {record: &policy, pods: []corev1.Pod{running}, after: evictionTTL - time.Second, want: true, wantRemembered: true},
		"the pod terminates, its replacement seen": {record: &policy, pods: []corev1.Pod{terminating, replacement}},
		"the pod is gone":                          {record: &policy, pods: []corev1.Pod{other}},
		"the TTL passed on the clock":              {record: &policy, pods: []corev1.Pod{running}, after: evictionTTL + time.Second},
		"another policy's eviction":                {record: &types.NamespacedName{Namespace: "ns", Name: "q"}, pods: []corev1.Pod{running}},
		// The evicted pod can leave the cache before its replacement
		// enters it: the floor then only looks short.
		"gone, the replacement not seen yet":        {record: &policy, live: 2, pods: []corev1.Pod{other}, want: true, wantRemembered: true},
		"terminating, the replacement not seen yet": {record: &policy, live: 2, pods: []corev1.Pod{terminating, other}, want: true, wantRemembered: true},
		"gone, the replacement seen":                {record: &policy, live: 2, pods: []corev1.Pod{other, replacement}},
		"the replacement never comes (scaled down)": {record: &policy, live: 2, pods: []corev1.Pod{other}, after: evictionTTL + time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := (&Reconciler{Clock: clk}).evictions()
			if tc.record != nil {
				e.record(*tc.record, running.UID, max(tc.live, 1))
			}
			clk.SetTime(clk.Now().Add(tc.after))
			if got := e.inFlight(policy, podPointers(tc.pods)); got != tc.want {
				t.Errorf("inFlight = %v, want %v", got, tc.want)
			}
			if _, ok := e.w.Get(policy); ok != tc.wantRemembered {
				t.Errorf("remembered = %v, want %v", ok, tc.wantRemembered)
			}
		})
	}
}

// podPointers points into pods.
func podPointers(pods []corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i := range pods {
		out[i] = &pods[i]
	}
	return out
}
