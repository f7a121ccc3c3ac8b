package webhooks_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	collectortracev1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// The spans the API server opens around each call of an admission webhook
// (k8s.io/apiserver's mutating and validating dispatchers): from sending the
// AdmissionReview to decoding the answer, including waiting for a
// connection. That is the latency a client's request pays for the webhook,
// measured where the API server sees it.
const (
	spanMutating   = "Call mutating webhook"
	spanValidating = "Call validating webhook"
)

// webhookCall is one admission webhook call as the API server timed it.
type webhookCall struct {
	webhook    string // the webhook's name in its configuration
	start, end time.Time
}

// spanSink is an OTLP/gRPC trace receiver for the API server's spans; it
// keeps the admission webhook calls.
type spanSink struct {
	collectortracev1.UnimplementedTraceServiceServer
	mu    sync.Mutex
	calls []webhookCall
	srv   *grpc.Server
	addr  string
}

// startSpanSink serves the receiver on a loopback port.
func startSpanSink() (*spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the API server's spans: %w", err)
	}
	s := &spanSink{srv: grpc.NewServer(), addr: ln.Addr().String()}
	collectortracev1.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *spanSink) stop() { s.srv.Stop() }

// Export implements the OTLP trace service.
func (s *spanSink) Export(_ context.Context, req *collectortracev1.ExportTraceServiceRequest) (*collectortracev1.ExportTraceServiceResponse, error) {
	var calls []webhookCall
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if sp.GetName() != spanMutating && sp.GetName() != spanValidating {
					continue
				}
				c := webhookCall{start: time.Unix(0, int64(sp.GetStartTimeUnixNano())), end: time.Unix(0, int64(sp.GetEndTimeUnixNano()))}
				for _, kv := range sp.GetAttributes() {
					if kv.GetKey() == "webhook" {
						c.webhook = kv.GetValue().GetStringValue()
					}
				}
				calls = append(calls, c)
			}
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, calls...)
	s.mu.Unlock()
	return &collectortracev1.ExportTraceServiceResponse{}, nil
}

// between returns the durations, by webhook name, of the calls that started
// in [from, to].
func (s *spanSink) between(from, to time.Time) map[string][]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]time.Duration{}
	for _, c := range s.calls {
		if c.start.Before(from) || c.start.After(to) {
			continue
		}
		out[c.webhook] = append(out[c.webhook], c.end.Sub(c.start))
	}
	return out
}

// tracingConfig writes the API server's tracing configuration into dir:
// spans sent to the sink, no request sampled unless its client asks (a
// sampled traceparent from a system:masters client, which the API server
// honours).
func tracingConfig(dir, endpoint string) (string, error) {
	path := filepath.Join(dir, "tracing.yaml")
	cfg := fmt.Sprintf("apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: %s\nsamplingRatePerMillion: 0\n", endpoint)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", fmt.Errorf("writing the API server's tracing configuration: %w", err)
	}
	return path, nil
}
