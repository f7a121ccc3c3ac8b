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
// cache shows its pod neither terminating nor gone, for at most
// evictionTTL on the reconciler's clock, and is forgotten once it is not.
func TestEvictionsInFlight(t *testing.T) {
	policy := types.NamespacedName{Namespace: "ns", Name: "p"}
	running := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", UID: "u1"}}
	terminating := *running.DeepCopy()
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	other := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", UID: "u2"}}
	cases := map[string]struct {
		record         *types.NamespacedName
		pods           []corev1.Pod
		after          time.Duration
		want           bool
		wantRemembered bool
	}{
		"nothing evicted":             {pods: []corev1.Pod{running}},
		"the pod still runs":          {record: &policy, pods: []corev1.Pod{running, other}, want: true, wantRemembered: true},
		"just before the TTL":         {record: &policy, pods: []corev1.Pod{running}, after: evictionTTL - time.Second, want: true, wantRemembered: true},
		"the pod terminates":          {record: &policy, pods: []corev1.Pod{terminating}},
		"the pod is gone":             {record: &policy, pods: []corev1.Pod{other}},
		"the TTL passed on the clock": {record: &policy, pods: []corev1.Pod{running}, after: evictionTTL + time.Second},
		"another policy's eviction":   {record: &types.NamespacedName{Namespace: "ns", Name: "q"}, pods: []corev1.Pod{running}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			e := (&Reconciler{Clock: clk}).evictions()
			if tc.record != nil {
				e.record(*tc.record, running.UID)
			}
			clk.SetTime(clk.Now().Add(tc.after))
			if got := e.inFlight(policy, tc.pods); got != tc.want {
				t.Errorf("inFlight = %v, want %v", got, tc.want)
			}
			if _, ok := e.w.Get(policy); ok != tc.wantRemembered {
				t.Errorf("remembered = %v, want %v", ok, tc.wantRemembered)
			}
		})
	}
}
