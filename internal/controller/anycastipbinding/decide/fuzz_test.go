package decide

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{"", "a=1,b=2", "a", "=", "a=1,a=1", "edgeplane.io/x=1", " k = v "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseTags(s)
		if err != nil {
			return
		}
		for k, v := range m {
			if k == "" || len(k) > 127 || len(v) > 255 || IsReservedTagKey(k) {
				t.Fatalf("ParseTags(%q) accepted %q=%q", s, k, v)
			}
		}
	})
}

func FuzzInstanceID(f *testing.F) {
	for _, s := range []string{"qcloud:///800002/ins-0a1b2c3d", "tencentcloud:///ins-0a1b2c3d/", "qcloud://", "kwok://x", ""} {
		f.Add(s, "ins-abcdefgh")
	}
	f.Fuzz(func(t *testing.T, providerID, label string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{networkingv1alpha1.LegacyLabelNodeInstanceID: label}}, Spec: corev1.NodeSpec{ProviderID: providerID}}
		id, err := InstanceID(n)
		if err == nil && !instanceIDPattern.MatchString(id) {
			t.Fatalf("InstanceID accepted %q", id)
		}
		// The node's own label never changes the answer.
		unlabelled, uerr := InstanceID(&corev1.Node{Spec: corev1.NodeSpec{ProviderID: providerID}})
		if unlabelled != id || (uerr == nil) != (err == nil) {
			t.Fatalf("the label %q changed InstanceID(%q) from %q (%v) to %q (%v)", label, providerID, unlabelled, uerr, id, err)
		}
	})
}

func FuzzParseNodeSelector(f *testing.F) {
	for _, s := range []string{"tke.cloud.tencent.com/need-aia-ip=true", "a in (b,c)", "!a", "", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseNodeSelector(s)
		if err == nil && sel.Empty() {
			t.Fatalf("ParseNodeSelector(%q) returned an empty selector", s)
		}
	})
}
