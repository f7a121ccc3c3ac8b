package nodepatch

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

func versioned(uid types.UID, rv string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: uid, ResourceVersion: rv}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestLatest(t *testing.T) {
	cached := versioned("u1", "10", pending)
	patched := versioned("u1", "11")
	cases := map[string]struct {
		cached, patched *corev1.Node
		verdict         expect.Verdict
		want            *corev1.Node
	}{
		"nothing patched":               {cached: cached, verdict: expect.None, want: cached},
		"the cache predates the patch":  {cached: cached, patched: patched, verdict: expect.Behind, want: patched},
		"the cache shows the patch":     {cached: patched, patched: patched, verdict: expect.Current, want: patched},
		"someone changed it since":      {cached: versioned("u1", "12"), patched: patched, verdict: expect.Newer, want: versioned("u1", "12")},
		"another node of the same name": {cached: versioned("u2", "10", pending), patched: patched, verdict: expect.Behind, want: versioned("u2", "10", pending)},
		"no cached node":                {patched: patched, verdict: expect.Behind},
		"behind but nothing remembered": {cached: cached, verdict: expect.Behind, want: cached},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got := Latest(c.cached, c.patched, c.verdict)
			switch {
			case c.want == nil && got != nil:
				t.Fatalf("got %v, want nil", got)
			case c.want == nil:
			case got == nil || got.UID != c.want.UID || got.ResourceVersion != c.want.ResourceVersion || len(got.Spec.Taints) != len(c.want.Spec.Taints):
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if got != nil && got == c.patched && got != c.cached {
				t.Fatal("Latest returned the remembered node itself, not a copy")
			}
		})
	}
}

func TestWritten(t *testing.T) {
	w := NewWritten(time.Minute, 16, clock.RealClock{})
	cached := versioned("u1", "10", pending)
	if got := w.Latest(cached); got != cached {
		t.Fatalf("nothing recorded: got %v", got)
	}
	w.Record("10", versioned("u1", "11"))
	if got := w.Latest(cached); got.ResourceVersion != "11" || len(got.Spec.Taints) != 0 {
		t.Fatalf("cache behind the patch: got rv %s taints %v, want the patched node", got.ResourceVersion, got.Spec.Taints)
	}
	if got := w.Latest(versioned("u1", "11")); got.ResourceVersion != "11" {
		t.Fatalf("cache caught up: got rv %s", got.ResourceVersion)
	}
	newer := versioned("u1", "12", pending)
	if got := w.Latest(newer); got != newer {
		t.Fatalf("someone else's newer version: got %v", got)
	}
	// A patch that wrote nothing new is not recorded.
	w.Record("12", versioned("u1", "12"))
	if got := w.Latest(cached); got.ResourceVersion != "11" {
		t.Fatalf("after a no-op record: got rv %s", got.ResourceVersion)
	}
	if w.Latest(nil) != nil {
		t.Fatal("Latest(nil) != nil")
	}
}
