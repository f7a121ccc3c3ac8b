// Package clientlimit is the manager's client-side limit on its own
// Kubernetes API requests, in one place for the manager and for the tests
// and benchmarks that must run a controller as the manager does.
//
// By default there is none, as in controller-runtime's config since v0.21,
// on SIG API Machinery's advice: the API server's priority and fairness
// protects it, seat by seat, and a fixed rate on the client only paces the
// controllers below what the cluster and the clouds allow. At the manager's
// former default (200 requests/s after 300), a burst of 500 PodElasticIPs
// or 200 anycast bindings on a cloud with EC2's or Tencent's limits ×10
// waited for the client, not for the cloud's buckets, and so did a wave of
// 1,000 pods to burst. --kube-api-qps sets a limit where an administrator
// wants one.
package clientlimit

import "k8s.io/client-go/rest"

const (
	// DefaultQPS, negative, means no client-side limit.
	DefaultQPS = -1
	// DefaultBurst is the burst above a positive QPS.
	DefaultBurst = 300
)

// Apply gives cfg the limit: none when qps is negative (burst is then
// unused), else qps requests per second after a burst of burst. Any rate
// limiter already on cfg is dropped, so the limit is exactly this one.
func Apply(cfg *rest.Config, qps float64, burst int) {
	cfg.RateLimiter = nil
	cfg.QPS, cfg.Burst = float32(qps), burst
}

// Unlimited reports whether qps means no client-side limit.
func Unlimited(qps float64) bool { return qps < 0 }
