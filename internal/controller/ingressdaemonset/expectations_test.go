package ingressdaemonset

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
		write   func(*expectations)
		cached  map[string]*appsv1.Deployment
		now     time.Time
		want    bool
		wantLen int
	}{
		"nothing expected": {write: func(*expectations) {}, cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: true},
		"cache shows the write": {
			write:  func(e *expectations) { e.wrote("ids", dep("a", "Detaching"), t0) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "Detaching")}, now: t0, want: true,
		},
		"cache behind": {
			write:  func(e *expectations) { e.wrote("ids", dep("a", "Detaching"), t0) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0.Add(time.Second), want: false, wantLen: 1,
		},
		"created but not cached yet": {
			write:  func(e *expectations) { e.wrote("ids", dep("b", ""), t0) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: false, wantLen: 1,
		},
		"deleted but still cached": {
			write:  func(e *expectations) { e.deleted("ids", types.NamespacedName{Namespace: "ns", Name: "a"}, t0) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0, want: false, wantLen: 1,
		},
		"deleted and gone": {
			write:  func(e *expectations) { e.deleted("ids", types.NamespacedName{Namespace: "ns", Name: "a"}, t0) },
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true,
		},
		"timed out": {
			write:  func(e *expectations) { e.wrote("ids", dep("a", "Detaching"), t0) },
			cached: map[string]*appsv1.Deployment{"a": dep("a", "")}, now: t0.Add(expectationTimeout + time.Second), want: true,
		},
		"other IngressDaemonSet ignored": {
			write:  func(e *expectations) { e.wrote("other", dep("x", "Detaching"), t0) },
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true, wantLen: 1,
		},
		"other namespace ignored": {
			write: func(e *expectations) {
				d := dep("a", "Detaching")
				d.Namespace = "other"
				e.wrote("ids", d, t0)
			},
			cached: map[string]*appsv1.Deployment{}, now: t0, want: true, wantLen: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &expectations{}
			tc.write(e)
			if got := e.satisfied("ns", "ids", tc.cached, tc.now); got != tc.want {
				t.Fatalf("satisfied = %v, want %v", got, tc.want)
			}
			if len(e.m) != tc.wantLen {
				t.Fatalf("%d expectations left, want %d", len(e.m), tc.wantLen)
			}
		})
	}
}
