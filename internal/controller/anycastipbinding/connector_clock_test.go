package anycastipbinding

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
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

// TestBatchWindow: look-ups wait at least one token interval of the
// DescribeAddresses bucket, never less than configured; batching off and
// client-side limits off are left alone.
func TestBatchWindow(t *testing.T) {
	def := tencentcloud.DefaultRateLimits()
	scaled := tencentcloud.DefaultRateLimits()
	scaled.PerAction["DescribeAddresses"] = cloud.RateLimit{QPS: 200, Burst: 200}
	cases := []struct {
		name       string
		configured time.Duration
		limits     tencentcloud.RateLimits
		want       time.Duration
	}{
		{"Tencent's 20/s", 20 * time.Millisecond, def, 50 * time.Millisecond},
		{"a bucket ten times larger", 20 * time.Millisecond, scaled, 20 * time.Millisecond},
		{"a longer window configured", 80 * time.Millisecond, def, 80 * time.Millisecond},
		{"batching off", 0, def, 0},
		{"limits off", 20 * time.Millisecond, tencentcloud.RateLimits{Disabled: true}, 20 * time.Millisecond},
		{"limits unset: the defaults", 20 * time.Millisecond, tencentcloud.RateLimits{}, 50 * time.Millisecond},
	}
	for _, c := range cases {
		if got := batchWindow(c.configured, c.limits); got != c.want {
			t.Errorf("%s: batchWindow = %s, want %s", c.name, got, c.want)
		}
	}
}
