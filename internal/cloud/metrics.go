package cloud

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "cloud",
		Name:      "api_requests_total",
		Help:      "Cloud API calls by provider, action and result code (OK, the cloud's error code, or Timeout/Canceled/NetworkError/ClientError). One call includes the SDK's retries.",
	}, []string{"provider", "action", "code"})

	apiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "edgeplane",
		Subsystem: "cloud",
		Name:      "api_request_duration_seconds",
		Help:      "Duration of cloud API calls, including client-side rate limiting and retries.",
		Buckets:   []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"provider", "action"})

	throttleWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "edgeplane",
		Subsystem: "cloud",
		Name:      "client_rate_limit_wait_seconds",
		Help:      "Time an attempt waited for a client-side token bucket before being sent.",
		Buckets:   []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"provider", "action"})

	credentialHolds = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "edgeplane",
		Subsystem: "cloud",
		Name:      "credential_holds_total",
		Help:      "Cloud API calls not sent because the cloud rejected the account's credentials and the backoff window had not passed (see CredentialsRejected).",
	})
)

func init() {
	metrics.Registry.MustRegister(apiRequests, apiDuration, throttleWait, credentialHolds)
}

// CredentialHolds is how many calls credential gates have held back so far.
func CredentialHolds() float64 {
	var m dto.Metric
	if err := credentialHolds.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// ObserveCall records one finished cloud API call.
func ObserveCall(provider, action, code string, d time.Duration) {
	if code == "" {
		code = CodeOK
	}
	apiRequests.WithLabelValues(provider, action, code).Inc()
	apiDuration.WithLabelValues(provider, action).Observe(d.Seconds())
}

// ObserveRateLimitWait records how long an attempt waited for a client-side
// token.
func ObserveRateLimitWait(provider, action string, d time.Duration) {
	throttleWait.WithLabelValues(provider, action).Observe(d.Seconds())
}

// Collectors exposes the collectors, for tests that read them with
// prometheus/testutil.
func Collectors() (requests *prometheus.CounterVec, duration, rateLimitWait *prometheus.HistogramVec) {
	return apiRequests, apiDuration, throttleWait
}
