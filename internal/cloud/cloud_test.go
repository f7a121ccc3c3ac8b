package cloud

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

func TestAttemptTimeoutBoundsEachAttempt(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: AttemptTimeout(nil, 100*time.Millisecond)}

	resp, err := c.Get(srv.URL + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || string(body) != "ok" {
		t.Fatalf("reading the body after the attempt returned: %q, %v", body, err)
	}

	_, err = c.Get(srv.URL + "/slow")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a net.Error timeout", err)
	}
	if got := TransportCode(err); got != CodeTimeout {
		t.Fatalf("TransportCode = %s, want %s", got, CodeTimeout)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/fast", nil)
	if _, err := c.Do(req); TransportCode(err) != CodeCanceled {
		t.Fatalf("a cancelled caller must not look like a timeout: %v", err)
	}
}

func TestTransportCode(t *testing.T) {
	cases := map[string]struct {
		err  error
		want string
	}{
		"nil":      {nil, CodeOK},
		"canceled": {fmt.Errorf("x: %w", context.Canceled), CodeCanceled},
		"deadline": {fmt.Errorf("x: %w", context.DeadlineExceeded), CodeTimeout},
		"refused":  {&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, CodeNetwork},
		"other":    {errors.New("boom"), CodeClient},
	}
	for name, tc := range cases {
		if got := TransportCode(tc.err); got != tc.want {
			t.Errorf("%s: TransportCode = %s, want %s", name, got, tc.want)
		}
	}
}

func TestRateLimit(t *testing.T) {
	if l := (RateLimit{QPS: 5, Burst: 50}).NewLimiter(); l.Limit() != 5 || l.Burst() != 50 {
		t.Errorf("limiter = %v/%d", l.Limit(), l.Burst())
	}
	// An unlimited bucket has burst 0, so a second token right away proves it never empties.
	l := Unlimited.NewLimiter()
	if first, second := l.Allow(), l.Allow(); !first || !second {
		t.Error("Unlimited throttled")
	}
	if got := (RateLimit{}).Or(RateLimit{QPS: 1, Burst: 1}); got.QPS != 1 {
		t.Errorf("Or on an unset limit = %+v", got)
	}
	if got := (RateLimit{QPS: 2}).Or(RateLimit{QPS: 1, Burst: 1}); got.QPS != 2 {
		t.Errorf("Or on a set limit = %+v", got)
	}
}

// TestClientSide: a client's bucket keeps a margin of what the cloud
// refills in JitterAllowance (at least one token) below the cloud's burst,
// and leaves unlimited and one-token buckets alone.
func TestClientSide(t *testing.T) {
	cases := []struct {
		in, want RateLimit
	}{
		{RateLimit{QPS: 5, Burst: 50}, RateLimit{QPS: 5, Burst: 49}},      // EC2 mutating
		{RateLimit{QPS: 50, Burst: 50}, RateLimit{QPS: 50, Burst: 45}},    // the same ×10
		{RateLimit{QPS: 10, Burst: 10}, RateLimit{QPS: 10, Burst: 9}},     // Tencent writes
		{RateLimit{QPS: 100, Burst: 100}, RateLimit{QPS: 100, Burst: 90}}, // ×10
		{RateLimit{QPS: 1, Burst: 1}, RateLimit{QPS: 1, Burst: 1}},
		{RateLimit{QPS: 200, Burst: 5}, RateLimit{QPS: 200, Burst: 1}},
		{Unlimited, Unlimited},
	}
	for _, c := range cases {
		if got := c.in.ClientSide(); got != c.want {
			t.Errorf("%+v.ClientSide() = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestScale: the rate and the bucket scale by their own factors, the
// bucket keeps at least one token, unlimited and unset limits stay.
func TestScale(t *testing.T) {
	cases := []struct {
		in           RateLimit
		rate, bucket float64
		want         RateLimit
	}{
		{RateLimit{QPS: 5, Burst: 50}, 10, 1, RateLimit{QPS: 50, Burst: 50}},     // EC2: the refill only
		{RateLimit{QPS: 10, Burst: 10}, 10, 10, RateLimit{QPS: 100, Burst: 100}}, // Tencent: one second's worth
		{RateLimit{QPS: 10, Burst: 10}, 0.01, 0.01, RateLimit{QPS: 0.1, Burst: 1}},
		{Unlimited, 10, 10, Unlimited},
		{RateLimit{}, 10, 10, RateLimit{}},
	}
	for _, c := range cases {
		if got := c.in.Scale(c.rate, c.bucket); got != c.want {
			t.Errorf("%+v.Scale(%v, %v) = %+v, want %+v", c.in, c.rate, c.bucket, got, c.want)
		}
	}
}

func TestMissingTags(t *testing.T) {
	have := map[string]string{"a": "1", "b": "2"}
	if got := MissingTags(have, map[string]string{"a": "1"}); got != nil {
		t.Errorf("carried tags: %v, want nil", got)
	}
	got := MissingTags(have, map[string]string{"a": "1", "b": "3", "c": ""})
	if len(got) != 2 || got["b"] != "3" || got["c"] != "" {
		t.Errorf("missing = %v, want b=3 (another value) and c= (absent)", got)
	}
	if got := MissingTags(nil, nil); got != nil {
		t.Errorf("nothing wanted: %v, want nil", got)
	}
}

func TestMetricsAreInTheControllerRuntimeRegistry(t *testing.T) {
	ObserveCall(ProviderAWS, "DescribeAddresses", "", time.Millisecond)
	ObserveCall(ProviderAWS, "DescribeAddresses", "RequestLimitExceeded", time.Millisecond)
	ObserveRateLimitWait(ProviderTencentCloud, "AllocateAddresses", time.Millisecond)
	requests, _, _ := Collectors()
	var m dto.Metric
	if err := requests.WithLabelValues(ProviderAWS, "DescribeAddresses", CodeOK).Write(&m); err != nil || m.GetCounter().GetValue() < 1 {
		t.Fatalf("OK calls = %v, %v", m.GetCounter().GetValue(), err)
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, f := range families {
		found[f.GetName()] = true
	}
	for _, name := range []string{"edgeplane_cloud_api_requests_total", "edgeplane_cloud_api_request_duration_seconds", "edgeplane_cloud_client_rate_limit_wait_seconds"} {
		if !found[name] {
			t.Errorf("%s is not in the controller-runtime registry", name)
		}
	}
}

// TestSharedTransportKeepsConnections: bursts of parallel calls to one
// endpoint reuse the connections of the burst before (http.DefaultTransport
// keeps two and opens the others again for every burst).
func TestSharedTransportKeepsConnections(t *testing.T) {
	const parallel, bursts = 16, 3
	var (
		mu       sync.Mutex
		arrived  int
		gate     = make(chan struct{})
		newConns atomic.Int64
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every call of a burst is answered only once all have arrived, so
		// each burst has `parallel` connections busy at once.
		mu.Lock()
		g := gate
		if arrived++; arrived == parallel {
			close(gate)
		}
		mu.Unlock()
		<-g
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			newConns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := &http.Client{Transport: AttemptTimeout(nil, time.Minute)}
	for range bursts {
		mu.Lock()
		arrived, gate = 0, make(chan struct{})
		mu.Unlock()
		var wg sync.WaitGroup
		for range parallel {
			wg.Go(func() {
				resp, err := c.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			})
		}
		wg.Wait()
	}
	if n := newConns.Load(); n > parallel {
		t.Errorf("%d bursts of %d parallel calls opened %d connections, want at most %d", bursts, parallel, n, parallel)
	}
}
