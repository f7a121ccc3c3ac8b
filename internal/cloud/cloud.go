// Package cloud holds what the provider clients (internal/cloud/aws,
// internal/cloud/tencentcloud) share: the cloud API call metrics, client-side
// rate-limit settings and the per-attempt HTTP timeout.
//
// The provider packages own everything provider-specific: a narrow interface
// with exactly the SDK calls edgeplane makes, pure mappers, error
// classifiers, and an SDK configuration that carries rate limiting and
// retries, so that callers (reconcilers) never sleep or retry by hand.
package cloud

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"time"

	"golang.org/x/time/rate"
)

// Provider label values of the metrics.
const (
	ProviderAWS          = "aws"
	ProviderTencentCloud = "tencentcloud"
)

// Result codes recorded for calls that did not get an API error code.
const (
	CodeOK       = "OK"
	CodeTimeout  = "Timeout"
	CodeCanceled = "Canceled"
	CodeNetwork  = "NetworkError"
	CodeClient   = "ClientError"
)

// RateLimit is a client-side token bucket: QPS tokens per second, up to
// Burst. A zero QPS means "use the default for this bucket"; use
// Unlimited to switch a bucket off.
type RateLimit struct {
	QPS   float64 `json:"qps,omitempty"`
	Burst int     `json:"burst,omitempty"`
}

// Unlimited is a RateLimit that never waits.
var Unlimited = RateLimit{QPS: -1}

// IsZero reports whether the limit is unset.
func (r RateLimit) IsZero() bool { return r.QPS == 0 && r.Burst == 0 }

// Or returns r, or def when r is unset.
func (r RateLimit) Or(def RateLimit) RateLimit {
	if r.IsZero() {
		return def
	}
	return r
}

// Scale returns r with its refill rate multiplied by rate and its bucket by
// bucket (at least one token): each cloud's Scaled decides which of the two
// a raised account limit raises (EC2: the refill only; Tencent Cloud, whose
// bucket holds one second's worth: both). Unlimited and unset limits stay.
func (r RateLimit) Scale(rate, bucket float64) RateLimit {
	if r.QPS <= 0 {
		return r
	}
	return RateLimit{QPS: r.QPS * rate, Burst: max(1, int(float64(r.Burst)*bucket))}
}

// MissingTags returns the tags of want that have lacks or carries with
// another value; nil when it carries them all. The tag contracts of every
// kind check their addresses' tags with it, on either cloud.
func MissingTags(have, want map[string]string) map[string]string {
	var out map[string]string
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// JitterAllowance is how much closer together than they left requests may
// reach the cloud (scheduling, connection reuse and network delays vary
// from one request to the next) without finding its bucket empty; see
// ClientSide.
const JitterAllowance = 100 * time.Millisecond

// ClientSide is the bucket a client keeps to stay inside the cloud's bucket
// r: the same refill, and a burst smaller by what the cloud refills in
// JitterAllowance (at least one token, while the burst stays at least one).
// A client that drained a bucket as large as the cloud's would have the
// cloud's bucket empty too, and any request that arrived a little early
// would be throttled; with the margin, the cloud's bucket holds that many
// tokens in steady state. The price is the margin's tokens once, at the
// start of a burst (for EC2's 50/5 s⁻¹ mutating bucket, one of 50; for
// Tencent's 10/s, one of 10).
func (r RateLimit) ClientSide() RateLimit {
	if r.QPS <= 0 || r.Burst <= 1 {
		return r
	}
	margin := max(1, int(math.Ceil(r.QPS*JitterAllowance.Seconds())))
	r.Burst = max(1, r.Burst-margin)
	return r
}

// NewLimiter builds a limiter for r (negative QPS: unlimited). A new bucket
// starts full, like the cloud's own buckets.
func (r RateLimit) NewLimiter() *rate.Limiter {
	if r.QPS < 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(rate.Limit(r.QPS), max(r.Burst, 1))
}

// maxIdleConnsPerHost is how many idle connections to one cloud endpoint
// the shared transport keeps.
const maxIdleConnsPerHost = 64

// sharedTransport is http.DefaultTransport keeping up to
// maxIdleConnsPerHost idle connections to each endpoint instead of its 2.
// A controller's calls to one endpoint run in parallel, one per worker:
// with only two connections kept, every burst closes the others and the
// next one opens them again, a TCP and TLS handshake per call.
var sharedTransport http.RoundTripper = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	t.MaxIdleConns = 4 * maxIdleConnsPerHost
	return t
}()

// AttemptTimeout wraps base so that every HTTP attempt (not the whole
// retried call) is bounded by d. The error of an attempt that runs out of
// time is a net.Error with Timeout() true, which both SDKs recognise, so
// their retry logic sees a timeout rather than a cancelled call. The
// Tencent SDK only offers whole-second timeouts, hence a transport.
//
// A nil base is the shared cloud transport (sharedTransport).
func AttemptTimeout(base http.RoundTripper, d time.Duration) http.RoundTripper {
	if base == nil {
		base = sharedTransport
	}
	if d <= 0 {
		return base
	}
	return &attemptTimeout{base: base, d: d}
}

type attemptTimeout struct {
	base http.RoundTripper
	d    time.Duration
}

func (t *attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.d)
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		if ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil {
			return nil, &timeoutError{d: t.d, err: err}
		}
		return nil, err
	}
	// The deadline must keep covering the body read; cancel on Close.
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type timeoutError struct {
	d   time.Duration
	err error
}

func (e *timeoutError) Error() string {
	return "HTTP attempt timed out after " + e.d.String() + ": " + e.err.Error()
}
func (e *timeoutError) Unwrap() error   { return e.err }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

var _ net.Error = (*timeoutError)(nil)

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// TransportCode classifies an error that carries no cloud API error code.
func TransportCode(err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return CodeOK
	case errors.Is(err, context.Canceled):
		return CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	case errors.As(err, &ne) && ne.Timeout():
		return CodeTimeout
	case errors.As(err, &ne):
		return CodeNetwork
	default:
		return CodeClient
	}
}
