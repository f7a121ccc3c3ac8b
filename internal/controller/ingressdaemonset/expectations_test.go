package ingressdaemonset

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

func dep(name, phase string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{}, Annotations: map[string]string{appsv1alpha1.AnnotationRevision: "r1"}}}
	if phase != "" {
		d.Labels[appsv1alpha1.LabelPhase] = phase
	}
	return d
}

func TestExpectations(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		write   func(expectations)
		cached  map[string]*appsv1.Deployment
		now     time.Time
		want    bool
		wantLen int
	}{
		"nothing expected": {write: func(expectations) {}, cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: true},
		"cache shows the write": {
			write:  func(e expectations) { e.wrote("ids", dep("a", "Detaching")) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "Detaching")}, now: t0, want: true,
		},
		"cache behind": {
			write:  func(e expectations) { e.wrote("ids", dep("a", "Detaching")) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0.Add(time.Second), want: false, wantLen: 1,
		},
		"created but not cached yet": {
			write:  func(e expectations) { e.wrote("ids", dep("b", "")) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: false, wantLen: 1,
		},
		"deleted but still cached": {
			write:  func(e expectations) { e.deleted("ids", types.NamespacedName{Namespace: "ns", Name: "a"}) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: false, wantLen: 1,
		},
		"deleted and gone": {
			write:  func(e expectations) { e.deleted("ids", types.NamespacedName{Namespace: "ns", Name: "a"}) },
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true,
		},
		"timed out": {
			write:  func(e expectations) { e.wrote("ids", dep("a", "Detaching")) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0.Add(expectationTimeout + time.Second), want: true,
		},
		"other IngressDaemonSet ignored": {
			write:  func(e expectations) { e.wrote("other", dep("x", "Detaching")) },
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true, wantLen: 1,
		},
		"other namespace ignored": {
			write: func(e expectations) {
				d := dep("a", "Detaching")
				d.Namespace = "other"
				e.wrote("ids", d)
			},
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true, wantLen: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(t0)
			e := (&Reconciler{Clock: clk}).expectations()
			tc.write(e)
			clk.SetTime(tc.now)
			if got := e.satisfied("ns", "ids", tc.cached); got != tc.want {
				t.Fatalf("satisfied = %v, want %v", got, tc.want)
			}
			if left := e.w.Keys(); len(left) != tc.wantLen {
				t.Fatalf("%d expectations left, want %d", len(left), tc.wantLen)
			}
		})
	}
}

// TestExpectationsBounded: at most maxExpectations writes are remembered,
// the least recently used going first, so a flood of writes the cache
// never shows cannot grow the store without bound.
func TestExpectationsBounded(t *testing.T) {
	e := (&Reconciler{Clock: clocktesting.NewFakePassiveClock(time.Unix(0, 0))}).expectations()
	for i := range maxExpectations + 1 {
		e.wrote("ids", dep(fmt.Sprint("d", i), "Detaching"))
	}
	cached := map[string]*appsv1.Deployment{"d0": dep("d0", "")} // behind the first write
	for i := 1; i <= maxExpectations; i++ {
		cached[fmt.Sprint("d", i)] = dep(fmt.Sprint("d", i), "Detaching")
	}
	if !e.satisfied("ns", "ids", cached) {
		t.Error("the oldest write is still expected beyond maxExpectations")
	}
	delete(cached, fmt.Sprint("d", maxExpectations))
	e.wrote("ids", dep(fmt.Sprint("d", maxExpectations), "Detaching"))
	if e.satisfied("ns", "ids", cached) {
		t.Error("a write after the flood is not expected")
	}
}
