package cloudtask

import (
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

const uid = types.UID("0f8d9a2c-6b1e-4c3d-9e7f-123456789abc")

func TestClientToken(t *testing.T) {
	cases := []struct {
		prefix  string
		attempt int
		want    string
	}{
		{"peip", 0, "peip-" + string(uid)},
		{"peip", 2, "peip-" + string(uid) + "-2"},
		// AnycastIPBinding's tokens, as it has always made them.
		{"aipb", 0, "aipb-" + string(uid)},
		{"aipb", 1, "aipb-" + string(uid) + "-1"},
	}
	for _, tc := range cases {
		if got := ClientToken(tc.prefix, uid, tc.attempt); got != tc.want {
			t.Errorf("ClientToken(%s, %d) = %s, want %s", tc.prefix, tc.attempt, got, tc.want)
		}
	}
	long := ClientToken(strings.Repeat("x", 40), uid, 123)
	if len(long) != maxToken || !strings.HasSuffix(long, string(uid)+"-123") {
		t.Errorf("an over-long token %q (%d) must keep its last 64 characters", long, len(long))
	}
}

func TestAllocationLifecycle(t *testing.T) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uid, Annotations: map[string]string{"keep": "me"}}}
	if _, ok := AllocationTask(obj); ok || Attempt(obj) != 0 || Token("peip", obj) != "peip-"+string(uid) {
		t.Fatalf("a new object: task ok %v, attempt %d, token %s", ok, Attempt(obj), Token("peip", obj))
	}
	meta.SetExternalName(obj, "eip-0a1b2c3d")
	meta.SetExternalCreateSucceeded(obj, time.Now())
	RecordAllocation(obj, 1300000042)
	if task, ok := AllocationTask(obj); !ok || task != 1300000042 {
		t.Fatalf("AllocationTask = %d, %v", task, ok)
	}

	Forget(obj, "extra")
	anns := obj.GetAnnotations()
	if meta.GetExternalName(obj) != "" || anns[meta.AnnotationKeyExternalCreateSucceeded] != "" || anns[AnnotationAllocateTask] != "" {
		t.Fatalf("Forget left %v", anns)
	}
	if anns["keep"] != "me" || Attempt(obj) != 1 || Token("peip", obj) != "peip-"+string(uid)+"-1" {
		t.Fatalf("after Forget: annotations %v, token %s", anns, Token("peip", obj))
	}
	// A task recorded for an earlier attempt is not this attempt's.
	obj.Annotations[AnnotationAllocateTask] = "0/1300000042"
	if _, ok := AllocationTask(obj); ok {
		t.Fatal("an earlier attempt's task counts as the current one's")
	}
	for _, bad := range []string{"", "1", "x/1", "1/x", "1/-2"} {
		obj.Annotations[AnnotationAllocateTask] = bad
		if _, ok := AllocationTask(obj); ok {
			t.Errorf("AllocationTask(%q) ok", bad)
		}
	}
	obj.Annotations[AnnotationAttempt] = "-3"
	if Attempt(obj) != 0 {
		t.Errorf("a negative attempt reads as %d", Attempt(obj))
	}
}

func TestOverdue(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		start time.Time
		now   time.Duration
		want  bool
	}{
		{start, 2 * time.Second, false}, // a whole-second start is its second's end
		{start, 3 * time.Second, true},
		{start.Add(time.Millisecond), 1999 * time.Millisecond, false},
		{start.Add(time.Millisecond), 2001 * time.Millisecond, true},
	}
	for _, tc := range cases {
		if got := Overdue(tc.start, start.Add(tc.now), time.Second); got != tc.want {
			t.Errorf("Overdue(%s, +%s) = %v, want %v", tc.start, tc.now, got, tc.want)
		}
	}
}
