package burstpolicy

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// freshPod is pod uid at version rv, with a number of tolerations for a
// write to change.
func freshPod(uid types.UID, rv string, tolerations int) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: uid, ResourceVersion: rv}}
	for range tolerations {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k"})
	}
	return p
}

func TestFreshPods(t *testing.T) {
	pod := func(rv string, tolerations int) corev1.Pod { return freshPod("u1", rv, tolerations) }
	f := (&Reconciler{}).freshPods()
	before, after := pod("1", 0), pod("2", 1)
	f.written(before.UID, f.expect(&before, &after), &after)

	if !f.isEcho("u1", "2") || f.isEcho("u1", "1") || f.isEcho("u2", "2") {
		t.Errorf("isEcho does not recognise exactly the written version")
	}
	stale := []*corev1.Pod{ptr.To(pod("1", 0))}
	f.resolve(stale)
	if stale[0].ResourceVersion != "2" || len(stale[0].Spec.Tolerations) != 1 {
		t.Errorf("a stale cached pod was not replaced by the written one: %+v", stale[0])
	}
	caughtUp := []*corev1.Pod{ptr.To(pod("3", 1))}
	f.resolve(caughtUp)
	if caughtUp[0].ResourceVersion != "3" {
		t.Errorf("a newer cached pod was replaced: %+v", caughtUp[0])
	}
	if left := f.w.Keys(); len(left) != 0 {
		t.Errorf("the write is still remembered after the cache caught up: %v", left)
	}
	again := []*corev1.Pod{ptr.To(pod("1", 0))}
	f.resolve(again)
	if again[0].ResourceVersion != "1" {
		t.Errorf("a forgotten write was applied: %+v", again[0])
	}

	// An expectation stands for a write in flight, whatever the cache holds;
	// a failed write is forgotten at once.
	e := f.expect(&before, &after)
	inFlight := []*corev1.Pod{ptr.To(pod("7", 0))}
	f.resolve(inFlight)
	if len(inFlight[0].Spec.Tolerations) != 1 {
		t.Errorf("a pod with a write in flight was not replaced by the expected one: %+v", inFlight[0])
	}
	f.failed(before.UID, e)
	failed := []*corev1.Pod{ptr.To(pod("1", 0))}
	f.resolve(failed)
	if left := f.w.Keys(); len(failed[0].Spec.Tolerations) != 0 || len(left) != 0 {
		t.Errorf("a failed write is still expected: %+v, %v", failed[0], left)
	}
	// Settling an expectation that a newer write replaced changes nothing.
	old := f.expect(&before, &after)
	newer := f.expect(&before, &after)
	f.failed(before.UID, old)
	if !f.w.Failed(before.UID, newer) { // the key still stands for the newer write
		t.Errorf("settling a replaced expectation forgot the newer one")
	}
}

// TestFreshPodsExpire: a write, landed or in flight, is remembered for
// freshTTL on the reconciler's clock, and at most maxFresh of them, the
// least recently used going first.
func TestFreshPodsExpire(t *testing.T) {
	pod := freshPod
	replaced := func(f freshPods, uid types.UID) bool {
		stale := []*corev1.Pod{ptr.To(pod(uid, "1", 0))}
		f.resolve(stale)
		return len(stale[0].Spec.Tolerations) == 1
	}
	for _, landed := range []bool{true, false} {
		clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		f := (&Reconciler{Clock: clk}).freshPods()
		before, after := pod("u1", "1", 0), pod("u1", "2", 1)
		if tk := f.expect(&before, &after); landed {
			f.written(before.UID, tk, &after)
		}
		clk.SetTime(clk.Now().Add(freshTTL))
		if !replaced(f, "u1") {
			t.Errorf("landed %v: the write was forgotten within freshTTL", landed)
		}
		clk.SetTime(clk.Now().Add(time.Second))
		if replaced(f, "u1") || f.isEcho("u1", "2") {
			t.Errorf("landed %v: the write outlived freshTTL on the reconciler's clock", landed)
		}
	}

	f := (&Reconciler{}).freshPods()
	for i := range maxFresh + 1 {
		uid := types.UID(fmt.Sprint("u", i))
		before, after := pod(uid, "1", 0), pod(uid, "2", 1)
		f.written(uid, f.expect(&before, &after), &after)
	}
	if replaced(f, "u0") {
		t.Errorf("the oldest write survived beyond maxFresh")
	}
	if !replaced(f, types.UID(fmt.Sprint("u", maxFresh))) {
		t.Errorf("the newest write is gone")
	}
}
