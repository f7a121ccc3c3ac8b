package anycastipbinding

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// TestConnectorExpiresOnItsClock: a remembered allocation failure expires
// on the connector's clock, not the wall clock (a recorded usage expires on
// the reconciler's: internal/runtime/reconciler TestUsage).
func TestConnectorExpiresOnItsClock(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := &Connector{clock: clk}
	b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{UID: "u1", Generation: 1}}
	c.blocks.Store(b.UID, block{generation: 1, until: clk.Now().Add(time.Minute)})
	if _, ok := c.blockedAllocation(b); !ok {
		t.Error("the allocation block was dropped before its time")
	}
	clk.Step(time.Hour)
	if _, ok := c.blockedAllocation(b); ok {
		t.Error("the allocation block outlived its time on the connector's clock")
	}
}
