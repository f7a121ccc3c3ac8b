package floatippool

import (
	"strings"
	"testing"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ledger"
	"github.com/edgeplane/edgeplane/internal/status"
)

// TestPoolPastTheLedgerLimits: a pool the FloatIPPoolLedger has no room
// for is Ready=False LedgerFull with a Warning Event saying why, hands out
// nothing (its claim is not written), and is admitted once there is room.
// The ledger here is full at its current size (the limits are lowered, as
// filling it to the CRD's own bounds would take every other test's pools).
func TestPoolPastTheLedgerLimits(t *testing.T) {
	f := newFixture(t, "ledger-full", []string{"10.0.250.10~10.0.250.20"}, networkingv1alpha1.ReleasePolicyDefault)
	var l networkingv1alpha1.FloatIPPoolLedger
	must(t, env.Client.Get(f.ctx, client.ObjectKey{Name: networkingv1alpha1.FloatIPPoolLedgerName}, &l))
	rec := events.NewFakeRecorder(10)
	f.pr = &PoolReconciler{Client: env.Client, Recorder: rec, Limits: ledger.Limits{MaxClaims: len(l.Spec.Claims), MaxEntries: networkingv1alpha1.MaxFloatIPPoolClaimEntries}}

	second := f.pool.DeepCopy()
	second.ObjectMeta = f.pool.ObjectMeta
	second.Name, second.ResourceVersion, second.UID, second.Finalizers = "ledger-full-2", "", "", nil
	second.Spec.Ranges = []string{"10.0.251.10"}
	must(t, env.Client.Create(f.ctx, second))
	t.Cleanup(func() {
		p := &networkingv1alpha1.FloatIPPool{}
		if env.Client.Get(f.ctx, client.ObjectKeyFromObject(second), p) == nil {
			p.Finalizers = nil
			_ = env.Client.Update(f.ctx, p)
			_ = env.Client.Delete(f.ctx, p)
		}
	})
	f.pool = second
	got := f.reconcilePool()
	ready := status.Get(got, networkingv1alpha1.FloatIPTypeReady)
	if ready == nil || ready.Status != "False" || ready.Reason != networkingv1alpha1.FloatIPReasonLedgerFull || !strings.Contains(ready.Message, "FloatIPPoolLedger is full") {
		t.Fatalf("Ready = %+v, want False %s saying the ledger is full", ready, networkingv1alpha1.FloatIPReasonLedgerFull)
	}
	var events []string
	for len(rec.Events) > 0 {
		events = append(events, <-rec.Events)
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning "+networkingv1alpha1.FloatIPReasonLedgerFull) {
		t.Errorf("events %q, want one Warning %s", events, networkingv1alpha1.FloatIPReasonLedgerFull)
	}
	must(t, env.Client.Get(f.ctx, client.ObjectKey{Name: networkingv1alpha1.FloatIPPoolLedgerName}, &l))
	for _, c := range l.Spec.Claims {
		if c.Pool == second.Name {
			t.Fatalf("the ledger holds a claim of %s past its limits", second.Name)
		}
	}

	// Room is made: the pool is admitted.
	f.pr.Limits.MaxClaims++
	got = f.reconcilePool()
	if ready := status.Get(got, networkingv1alpha1.FloatIPTypeReady); ready == nil || ready.Reason != networkingv1alpha1.FloatIPReasonAvailable {
		t.Errorf("Ready = %+v once there is room, want %s", ready, networkingv1alpha1.FloatIPReasonAvailable)
	}
}
