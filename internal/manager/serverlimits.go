package manager

import (
	"net/http"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/edgeplane/edgeplane/internal/runtime/httpserve"
)

// controller-runtime builds the http.Server of the webhook, metrics and
// health-probe servers itself (its internal/httpserver: ReadHeaderTimeout
// 32 s, IdleTimeout 90 s, MaxHeaderBytes 1 MiB) and none of their options
// sets a read or write timeout. The webhook and metrics servers take
// handlers from the manager (registered webhooks, the metrics filter), so
// each request gets its read and write deadlines there
// (httpserve.Deadlines); the health-probe server takes none, and its
// handlers read no body and write a few bytes (docs/operations.md,
// "Security model").
const (
	// The API server gives a webhook timeoutSeconds (3 s for every one of
	// edgeplane's, at most 30 s) for the whole call.
	webhookReadTimeout  = 10 * time.Second
	webhookWriteTimeout = 30 * time.Second
	// A scrape of every metric is written well within this.
	metricsReadTimeout  = 30 * time.Second
	metricsWriteTimeout = 60 * time.Second
)

// deadlineWebhookServer registers every webhook with read and write
// deadlines.
type deadlineWebhookServer struct{ webhook.Server }

func (s deadlineWebhookServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, httpserve.Deadlines(webhookReadTimeout, webhookWriteTimeout, hook))
}

// withDeadlines is a metrics FilterProvider that gives each request read
// and write deadlines before next's filter (none when next is nil).
func withDeadlines(next func(*rest.Config, *http.Client) (metricsserver.Filter, error)) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	return func(cfg *rest.Config, c *http.Client) (metricsserver.Filter, error) {
		inner := metricsserver.Filter(func(_ logr.Logger, h http.Handler) (http.Handler, error) { return h, nil })
		if next != nil {
			var err error
			if inner, err = next(cfg, c); err != nil {
				return nil, err
			}
		}
		return func(log logr.Logger, h http.Handler) (http.Handler, error) {
			filtered, err := inner(log, h)
			if err != nil {
				return nil, err
			}
			return httpserve.Deadlines(metricsReadTimeout, metricsWriteTimeout, filtered), nil
		}, nil
	}
}
