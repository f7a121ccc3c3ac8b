package nodepatch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var pending = corev1.Taint{Key: "example.com/pending", Value: "true", Effect: corev1.TaintEffectNoSchedule}

func node(labels, annotations map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels, Annotations: annotations}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestOps(t *testing.T) {
	other := corev1.Taint{Key: "other", Effect: corev1.TaintEffectNoExecute}
	cases := map[string]struct {
		node *corev1.Node
		want Want
		ops  []Op
		safe bool
	}{
		"nothing wanted": {node: node(nil, nil), want: Want{}, ops: nil},
		"taint a node without taints": {node: node(nil, nil), want: Want{Taint: pending, Tainted: true},
			ops: []Op{{Op: "add", Path: "/spec/taints", Value: []corev1.Taint{pending}}}},
		"taint appended after others": {node: node(nil, nil, other), want: Want{Taint: pending, Tainted: true},
			ops: []Op{{Op: "add", Path: "/spec/taints/-", Value: pending}}, safe: true},
		"already tainted (any value)": {node: node(nil, nil, corev1.Taint{Key: pending.Key, Value: "x", Effect: pending.Effect}),
			want: Want{Taint: pending, Tainted: true}, ops: nil},
		"another effect is not ours": {node: node(nil, nil, corev1.Taint{Key: pending.Key, Effect: corev1.TaintEffectNoExecute}),
			want: Want{Taint: pending, Tainted: false}, ops: nil},
		"untaint, guarded, from the end": {node: node(nil, nil, pending, other), want: Want{Taint: pending},
			ops: []Op{{Op: "test", Path: "/spec/taints/0", Value: pending}, {Op: "remove", Path: "/spec/taints/0"}}, safe: true},
		"no taint key leaves taints alone": {node: node(nil, nil, pending), want: Want{Tainted: false}, ops: nil},
		"label and annotation set": {
			node: node(map[string]string{"a": "1", "ip": "old"}, map[string]string{"x": "y"}),
			want: Want{Labels: map[string]*string{"ip": ptr.To("203.0.113.7")}, Annotations: map[string]*string{"id/x": ptr.To("eipalloc-1")}},
			ops: []Op{{Op: "add", Path: "/metadata/labels/ip", Value: "203.0.113.7"},
				{Op: "add", Path: "/metadata/annotations/id~1x", Value: "eipalloc-1"}}, safe: true},
		"annotations map created first": {node: node(map[string]string{}, nil),
			want: Want{Annotations: map[string]*string{"k": ptr.To("v")}},
			ops:  []Op{{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}}, {Op: "add", Path: "/metadata/annotations/k", Value: "v"}}},
		"label removed, guarded by its value": {node: node(map[string]string{"ip": "203.0.113.7"}, nil),
			want: Want{Labels: map[string]*string{"ip": nil, "absent": nil}},
			ops:  []Op{{Op: "test", Path: "/metadata/labels/ip", Value: "203.0.113.7"}, {Op: "remove", Path: "/metadata/labels/ip"}}, safe: true},
		"in place": {node: node(map[string]string{"ip": "203.0.113.7"}, nil, pending),
			want: Want{Taint: pending, Tainted: true, Labels: map[string]*string{"ip": ptr.To("203.0.113.7")}}, ops: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Ops(tc.node, tc.want)
			if diff := cmp.Diff(tc.ops, got); diff != "" {
				t.Fatalf("ops (-want +got):\n%s", diff)
			}
			if s := SafeOnStale(got); s != tc.safe {
				t.Errorf("SafeOnStale = %v, want %v", s, tc.safe)
			}
		})
	}
}

func TestSafeOnStale(t *testing.T) {
	cases := map[string]struct {
		ops  []Op
		want bool
	}{
		"empty":                  {nil, false},
		"unguarded remove":       {[]Op{{Op: "remove", Path: "/metadata/labels/a"}}, false},
		"guard of another path":  {[]Op{{Op: "test", Path: "/metadata/labels/b"}, {Op: "remove", Path: "/metadata/labels/a"}}, false},
		"replace":                {[]Op{{Op: "replace", Path: "/metadata/labels/a", Value: "v"}}, false},
		"whole label map":        {[]Op{{Op: "add", Path: "/metadata/labels", Value: map[string]string{}}}, false},
		"whole taint list":       {[]Op{{Op: "add", Path: "/spec/taints", Value: []corev1.Taint{pending}}}, false},
		"taint at an index":      {[]Op{{Op: "add", Path: "/spec/taints/0", Value: pending}}, false},
		"one annotation":         {[]Op{{Op: "add", Path: "/metadata/annotations/a", Value: "v"}}, true},
		"appended taint":         {[]Op{{Op: "add", Path: "/spec/taints/-", Value: pending}}, true},
		"guarded taint removal":  {[]Op{{Op: "test", Path: "/spec/taints/1", Value: pending}, {Op: "remove", Path: "/spec/taints/1"}}, true},
		"spec field is not ours": {[]Op{{Op: "add", Path: "/spec/unschedulable", Value: true}}, false},
	}
	for name, tc := range cases {
		if got := SafeOnStale(tc.ops); got != tc.want {
			t.Errorf("%s: SafeOnStale = %v, want %v", name, got, tc.want)
		}
	}
}
