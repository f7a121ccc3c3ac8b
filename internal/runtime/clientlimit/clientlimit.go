// Package clientlimit is the manager's client-side limit on its own
// Kubernetes API requests, in one place for the manager and for the tests
// and benchmarks that must run a controller as the manager does.
//
// The default, 1,000 requests per second after a burst of 2,000, is set by
// two measurements. It must not pace the cloud pipelines: each
// PodElasticIP, NodeElasticIP or anycast binding costs seven or eight API
// requests, so 500 PodElasticIPs at EC2's limits ×10 ask about 4,000 in
// 9 s and 200 anycast bindings at Tencent's ×10 about 1,400 in 1.4 s; at
// the former default, 200 per second after 300, they waited for the client
// instead of the cloud's buckets. And it must hold the manager back during the biggest
// burst it meets, a first start among 5,000 nodes and 50,000 pods: with no
// client limit at all (controller-runtime's default since v0.21, relying on
// the API server's priority and fairness) that manager's resident memory
// peaked at 304–306 MiB, above the 300 MiB envelope, against 286–294 MiB
// at 200 per second. --kube-api-qps changes it; a negative value removes
// the limit.
package clientlimit

import "k8s.io/client-go/rest"

const (
	// DefaultQPS is the default limit, requests per second; a negative
	// QPS means no client-side limit.
	DefaultQPS = 1000
	// DefaultBurst is the burst above a positive QPS.
	DefaultBurst = 2000
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
