package clientlimit

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

func TestApply(t *testing.T) {
	cases := map[string]struct {
		qps     float64
		burst   int
		limited bool
	}{
		"the default":   {qps: DefaultQPS, burst: DefaultBurst, limited: true},
		"no limit":      {qps: -1, burst: DefaultBurst},
		"a lower limit": {qps: 50, burst: 100, limited: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := &rest.Config{Host: "https://127.0.0.1:6443", RateLimiter: flowcontrol.NewTokenBucketRateLimiter(1, 1)}
			Apply(cfg, tc.qps, tc.burst)
			if cfg.RateLimiter != nil {
				t.Fatal("Apply kept the config's own rate limiter")
			}
			if Unlimited(tc.qps) == tc.limited {
				t.Errorf("Unlimited(%g) = %v", tc.qps, !tc.limited)
			}
			// What client-go makes of the config: a limiter, or none.
			c, err := rest.RESTClientFor(&rest.Config{Host: cfg.Host, QPS: cfg.QPS, Burst: cfg.Burst,
				ContentConfig: rest.ContentConfig{GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion()}})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.GetRateLimiter() != nil; got != tc.limited {
				t.Errorf("client has a rate limiter: %v, want %v", got, tc.limited)
			}
			if tc.limited && c.GetRateLimiter().QPS() != float32(tc.qps) {
				t.Errorf("client limit %g/s, want %g/s", c.GetRateLimiter().QPS(), tc.qps)
			}
		})
	}
}
