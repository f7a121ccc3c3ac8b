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
	f.written(before.UID, f.expect(&before, &after), &after)

	if !f.isEcho("u1", "2") || f.isEcho("u1", "1") || f.isEcho("u2", "2") {
		t.Errorf("isEcho does not recognise exactly the written version")
	}
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

	// An expectation stands for a write in flight, whatever the cache holds;
	// a failed write is forgotten at once.
	e := f.expect(&before, &after)
	inFlight := []corev1.Pod{pod("7", 0)}
	f.resolve(inFlight)
	if len(inFlight[0].Spec.Tolerations) != 1 {
		t.Errorf("a pod with a write in flight was not replaced by the expected one: %+v", inFlight[0])
	}
	f.failed(before.UID, e)
	failed := []corev1.Pod{pod("1", 0)}
	f.resolve(failed)
	if len(failed[0].Spec.Tolerations) != 0 || len(f.m) != 0 {
		t.Errorf("a failed write is still expected: %+v, %v", failed[0], f.m)
	}
	// Settling an expectation that a newer write replaced changes nothing.
	old := f.expect(&before, &after)
	newer := f.expect(&before, &after)
	f.failed(before.UID, old)
	if f.m[before.UID] != newer {
		t.Errorf("settling a replaced expectation forgot the newer one")
	}
}
