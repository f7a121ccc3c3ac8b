package floatippool

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

// TestPoolValidatorEditsThatKeepIPs: of two overlapping pools that both got
// past the webhook (created at the same moment), each can still be edited
// without touching its IPs, so the reconciler can add its finalizer and the
// ledger decides which one hands out IPs; an edit of the ranges is still
// checked.
func TestPoolValidatorEditsThatKeepIPs(t *testing.T) {
	ctx := testenv.Context(t)
	existing := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-ips-a"},
		Spec:       networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.0.11.1~10.0.11.10"}, Subnet: "10.0.0.0/16", NodeSubnets: []string{"192.168.1.0/24"}},
	}
	must(t, env.Client.Create(ctx, existing))
	t.Cleanup(func() { _ = env.Client.Delete(ctx, existing) })

	v := &PoolValidator{Reader: env.Client}
	old := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "keep-ips-b"},
		Spec:       networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{"10.0.11.5~10.0.11.20"}, Subnet: "10.0.0.0/16", NodeSubnets: []string{"192.168.1.0/24"}},
	}
	finalized := old.DeepCopy()
	finalized.Finalizers = []string{networkingv1alpha1.FloatIPPoolFinalizer}
	if _, err := v.ValidateUpdate(ctx, old, finalized); err != nil {
		t.Fatalf("an edit that keeps the IPs was refused: %v", err)
	}
	moved := withRanges(old, "10.0.11.8~10.0.11.30")
	if _, err := v.ValidateUpdate(ctx, old, moved); err == nil || !strings.Contains(err.Error(), "overlaps FloatIPPool keep-ips-a") {
		t.Fatalf("an edit of overlapping ranges: err = %v, want an overlap", err)
	}
}
