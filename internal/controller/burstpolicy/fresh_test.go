package burstpolicy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFreshPods(t *testing.T) {
	pod := func(rv string, tolerations int) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "u1", ResourceVersion: rv}}
		for range tolerations {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k"})
		}
		return p
	}
	var f freshPods
	before, after := pod("1", 0), pod("2", 1)
	f.remember(&before, &after)

	stale := []corev1.Pod{pod("1", 0)}
	f.resolve(stale)
	if stale[0].ResourceVersion != "2" || len(stale[0].Spec.Tolerations) != 1 {
		t.Errorf("a stale cached pod was not replaced by the written one: %+v", stale[0])
	}
	caughtUp := []corev1.Pod{pod("3", 1)}
	f.resolve(caughtUp)
	if caughtUp[0].ResourceVersion != "3" {
		t.Errorf("a newer cached pod was replaced: %+v", caughtUp[0])
	}
	if len(f.m) != 0 {
		t.Errorf("the write is still remembered after the cache caught up: %v", f.m)
	}
	again := []corev1.Pod{pod("1", 0)}
	f.resolve(again)
	if again[0].ResourceVersion != "1" {
		t.Errorf("a forgotten write was applied: %+v", again[0])
	}
}
