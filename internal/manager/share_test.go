package manager

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// sameMap reports whether two maps are one map (not merely equal).
func sameMap(a, b map[string]string) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameSlice[T any](a, b []T) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

func TestMetaSharer(t *testing.T) {
	rs := func(name, uid string, controller *bool) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: types.UID("u-" + uid), Controller: controller, BlockOwnerDeletion: ptr.To(true)}}
	}
	pod := func(labels map[string]string, owners []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: labels, OwnerReferences: owners}}
	}
	for _, tc := range []struct {
		name              string
		first, second     *corev1.Pod
		shareLabels       bool
		shareOwnerRefList bool
	}{
		{"equal labels and owner: both shared",
			pod(map[string]string{"app": "a", "pod-template-hash": "h"}, rs("a-h", "1", ptr.To(true))),
			pod(map[string]string{"pod-template-hash": "h", "app": "a"}, rs("a-h", "1", ptr.To(true))), true, true},
		{"another label value",
			pod(map[string]string{"app": "a", "pod-template-hash": "h"}, nil),
			pod(map[string]string{"app": "a", "pod-template-hash": "i"}, nil), false, false},
		{"a key that is another's key and value run together",
			pod(map[string]string{"ab": "", "c": ""}, nil),
			pod(map[string]string{"a": "b", "c": ""}, nil), false, false},
		{"separators inside values",
			pod(map[string]string{"a": "x\x001:b", "c": ""}, nil),
			pod(map[string]string{"a": "x", "b": "1:c"}, nil), false, false},
		{"another owner UID",
			pod(nil, rs("a-h", "1", ptr.To(true))), pod(nil, rs("a-h", "2", ptr.To(true))), false, false},
		{"controller unset, false and true differ",
			pod(nil, rs("a-h", "1", nil)), pod(nil, rs("a-h", "1", ptr.To(false))), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.second.DeepCopy()
			transformBoth(t, tc.first, tc.second)
			if !reflect.DeepEqual(want.ObjectMeta, tc.second.ObjectMeta) {
				t.Errorf("sharing changed the content: %+v, want %+v", tc.second.ObjectMeta, want.ObjectMeta)
			}
			if got := sameMap(tc.first.Labels, tc.second.Labels); got != tc.shareLabels {
				t.Errorf("labels shared: %v, want %v", got, tc.shareLabels)
			}
			if got := sameSlice(tc.first.OwnerReferences, tc.second.OwnerReferences); got != tc.shareOwnerRefList {
				t.Errorf("owner references shared: %v, want %v", got, tc.shareOwnerRefList)
			}
		})
	}
}

// TestMetaSharerBounded: it remembers the most recently used sharedSets
// label sets and owner lists, no more; a shared slice has no room to grow
// into, so an append to a copy never writes into another object's owners.
func TestMetaSharerBounded(t *testing.T) {
	s := newMetaSharer()
	labels := func(i int) map[string]string { return map[string]string{"app": fmt.Sprint(i)} }
	first := labels(0)
	for i := range sharedSets + 1 {
		l := labels(i)
		if i == 0 {
			l = first
		}
		if _, err := s.transform(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: l}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.maps.Len(); n != sharedSets {
		t.Errorf("remembers %d label sets, want %d", n, sharedSets)
	}
	again := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels(0)}}
	if _, err := s.transform(again); err != nil {
		t.Fatal(err)
	}
	if sameMap(again.Labels, first) {
		t.Error("the least recently used label set is still shared")
	}

	refs := make([]metav1.OwnerReference, 1, 4)
	refs[0] = metav1.OwnerReference{Kind: "Job", Name: "j", UID: "u"}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs}}
	if _, err := s.transform(p); err != nil {
		t.Fatal(err)
	}
	if c := cap(p.OwnerReferences); c != 1 {
		t.Errorf("a shared owner list has capacity %d, want 1", c)
	}
}

// TestSlimBoundPodOneCopyOfItsIPs: the first pod and host IP share the
// string of PodIP and HostIP.
func TestSlimBoundPodOneCopyOfItsIPs(t *testing.T) {
	// Built as the decoder builds them: separate strings of equal content.
	ip := func() string { return string([]byte("10.0.0.7")) }
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{
		PodIP: ip(), PodIPs: []corev1.PodIP{{IP: ip()}, {IP: "fd00::7"}}, HostIP: ip(), HostIPs: []corev1.HostIP{{IP: ip()}}}}
	slimBoundPod(pod)
	if unsafe.StringData(pod.Status.PodIPs[0].IP) != unsafe.StringData(pod.Status.PodIP) {
		t.Error("PodIPs[0] has a copy of PodIP")
	}
	if unsafe.StringData(pod.Status.HostIPs[0].IP) != unsafe.StringData(pod.Status.HostIP) {
		t.Error("HostIPs[0] has a copy of HostIP")
	}
	if pod.Status.PodIPs[1].IP != "fd00::7" {
		t.Errorf("the second pod IP changed: %s", pod.Status.PodIPs[1].IP)
	}
}

// TestMetaSharerNodes: nodes of one group share their annotations and
// allocatable resources, not their labels (unique: the host name).
func TestMetaSharerNodes(t *testing.T) {
	node := func(name, cpu string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, "pool": "a"},
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}},
		}
	}
	s := newMetaSharer()
	a, b, c := node("a", "8"), node("b", "8"), node("c", "16")
	want := b.DeepCopy()
	for _, n := range []*corev1.Node{a, b, c} {
		if _, err := s.transformNode(n); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(want, b) {
		t.Errorf("sharing changed the node: %+v, want %+v", b, want)
	}
	if !sameMap(a.Annotations, b.Annotations) || !sameMap(a.Annotations, c.Annotations) {
		t.Error("equal annotations are not shared")
	}
	if sameMap(a.Labels, b.Labels) {
		t.Error("unequal labels are shared")
	}
	same := func(x, y corev1.ResourceList) bool {
		return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	if !same(a.Status.Allocatable, b.Status.Allocatable) || same(a.Status.Allocatable, c.Status.Allocatable) {
		t.Error("allocatable shared between unequal nodes or not between equal ones")
	}
}

// TestMetaSharerStrings: strings many pods repeat share one copy
// (generateName and phase), and no content changes.
func TestMetaSharerStrings(t *testing.T) {
	// Built as the decoder builds them: separate strings of equal content.
	str := func(s string) string { return string([]byte(s)) }
	pod := func(name, ns, generateName string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: str(name), Namespace: str(ns), GenerateName: str(generateName)},
			Status: corev1.PodStatus{Phase: corev1.PodPhase(str(string(phase)))}}
	}
	same := func(a, b string) bool { return a != "" && unsafe.StringData(a) == unsafe.StringData(b) }
	for _, tc := range []struct {
		name          string
		first, second *corev1.Pod
		gen, phase    bool
	}{
		{"one ReplicaSet and phase", pod("a-1", "team", "a-", corev1.PodRunning), pod("a-2", "team", "a-", corev1.PodRunning), true, true},
		{"another ReplicaSet and phase", pod("a-1", "team", "a-", corev1.PodRunning), pod("a-1", "other", "b-", corev1.PodPending), false, false},
		{"no generateName or phase", pod("a", "team", "", ""), pod("b", "team", "", ""), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.second.DeepCopy()
			transformBoth(t, tc.first, tc.second)
			if !reflect.DeepEqual(want, tc.second) {
				t.Errorf("sharing changed the pod: %+v, want %+v", tc.second, want)
			}
			if got := same(tc.first.GenerateName, tc.second.GenerateName); got != tc.gen {
				t.Errorf("generateName shared: %v, want %v", got, tc.gen)
			}
			if got := same(string(tc.first.Status.Phase), string(tc.second.Status.Phase)); got != tc.phase {
				t.Errorf("phase shared: %v, want %v", got, tc.phase)
			}
		})
	}
}

// transformBoth runs one metaSharer's transform on first, then second.
func transformBoth(t *testing.T, first, second *corev1.Pod) {
	t.Helper()
	s := newMetaSharer()
	for _, p := range []*corev1.Pod{first, second} {
		if _, err := s.transform(p); err != nil {
			t.Fatal(err)
		}
	}
}
