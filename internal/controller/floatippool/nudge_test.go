package floatippool

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func TestWaitingPods(t *testing.T) {
	pod := func(name, node string, fip, deleting bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c"}}}}
		if fip {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")}
		}
		if deleting {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	got := waitingPods([]corev1.Pod{
		pod("pending-fip", "", true, false),
		pod("bound-fip", "n1", true, false),
		pod("pending-plain", "", false, false),
		pod("deleting-fip", "", true, true),
	})
	if diff := cmp.Diff([]types.NamespacedName{{Namespace: "ns", Name: "pending-fip"}}, got); diff != "" {
		t.Errorf("waiting pods (-want +got):\n%s", diff)
	}
	var many []corev1.Pod
	for range maxNudges + 5 {
		many = append(many, pod("p", "", true, false))
	}
	if n := len(waitingPods(many)); n != maxNudges {
		t.Errorf("%d pods nudged, want at most %d", n, maxNudges)
	}
}
