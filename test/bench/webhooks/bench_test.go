// Package webhooks_test benchmarks every admission webhook edgeplane serves
// (issue 10 and issue 21: p99 ≤ 10 ms): the BurstPolicy pod webhook under
// 200 concurrent pod creations, the AnycastIPBinding node webhook under 200
// concurrent node creations and as many updates, and the FloatIPPool
// validating webhook under 200 concurrent pool creations. Each is timed
// three ways: inside the webhook server's handler, by the API server around
// its call of the webhook (its trace spans, the latency a client's request
// pays for the webhook), and by the client for its whole request. It runs
// under `make bench`; its one test only checks that no webhook of the
// configurations is left without a benchmark.
package webhooks_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

const (
	concurrentPods  = 200
	concurrentNodes = 200
	concurrentPools = 200
)

// benchmarked names the benchmark of each webhook edgeplane serves, by its
// name in the webhook configurations; TestEveryWebhookIsBenchmarked keeps it
// complete.
var benchmarked = map[string]func(*testing.B){
	"burst.pods.scheduling.edgeplane.io":   BenchmarkWebhooks200ConcurrentPods,
	"aia.nodes.networking.edgeplane.io":    BenchmarkWebhooks200ConcurrentNodes,
	"vfloatippool.networking.edgeplane.io": BenchmarkWebhooks200ConcurrentFloatIPPools,
}

// recorder times every admission request by URL path, at the server, so the
// figures are the webhooks' own (decoding, cache reads, the decision, the
// patch), not the API server's.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	d    map[string][]time.Duration
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	r.next.ServeHTTP(w, req)
	took := time.Since(start)
	r.mu.Lock()
	r.d[req.URL.Path] = append(r.d[req.URL.Path], took)
	r.mu.Unlock()
}

func (r *recorder) reset() map[string][]time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.d
	r.d = map[string][]time.Duration{}
	return out
}

// fixture is set up once per process: the benchmark function runs several
// times (b.N = 1, then more), and one manager per process keeps controller
// names unique.
type fixture struct {
	env    *testenv.Env
	rec    *recorder
	spans  *spanSink
	served []string
	// paths maps each configured webhook's name to its URL path.
	paths map[string]string
	stop  func()

	mu       sync.Mutex
	requests []time.Duration // the client's requests of the timed rounds
}

var (
	fx    *fixture
	fxErr error
	round int // pod name prefix, unique across the benchmark's runs
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fx != nil {
		fx.stop()
	}
	os.Exit(code)
}

func setUp(b *testing.B) *fixture {
	if fx != nil || fxErr != nil {
		if fxErr != nil {
			b.Fatal(fxErr)
		}
		return fx
	}
	f, err := newFixture()
	if err != nil {
		fxErr = err
		b.Fatal(err)
	}
	fx = f
	return f
}

func newFixture() (_ *fixture, err error) {
	ctrl.SetLogger(logr.Discard())
	// The API server traces every request and sends the spans here; its
	// span exporter (OpenTelemetry's batch processor, configured by these
	// variables, which the API server process inherits) sends them within
	// 100 ms and queues enough that none is dropped under 400 concurrent
	// requests. A dropped span would fail the benchmark (report).
	spans, err := startSpanSink()
	if err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_BSP_MAX_QUEUE_SIZE": "200000", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "4096"} {
		if err := os.Setenv(k, v); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "webhook-bench-")
	if err != nil {
		return nil, err
	}
	tracing, err := tracingConfig(dir, spans.addr)
	if err != nil {
		return nil, err
	}
	env, err := testenv.StartWith(testenv.Options{Webhooks: true, APIServerFlags: map[string]string{"tracing-config-file": tracing}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{env: env, spans: spans, paths: webhookPaths(env)}
	f.stop = func() {
		cancel()
		_ = env.Stop()
		spans.stop()
		_ = os.RemoveAll(dir)
	}
	defer func() {
		if err != nil {
			f.stop()
		}
	}()

	// Every controller that serves webhooks registers them on mux, exactly as
	// in the manager; the recorder serves mux where the API server calls
	// (the manager's own webhook server listens elsewhere, unused).
	mux := http.NewServeMux()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	// The manager's own client limits (--kube-api-qps/--kube-api-burst), not
	// client-go's 5/10: a webhook that reads live would be throttled here
	// as it is not in the manager.
	cfg := rest.CopyConfig(env.Config)
	defaults := manager.DefaultOptions()
	cfg.QPS, cfg.Burst = float32(defaults.KubeAPIQPS), defaults.KubeAPIBurst
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: env.Webhooks.LocalServingCertDir, WebhookMux: mux}),
	})
	if err != nil {
		return nil, err
	}
	all := manager.Controllers()
	fs := pflag.NewFlagSet("controllers", pflag.ContinueOnError)
	manager.BindControllerFlags(fs, all)
	if err := fs.Parse([]string{"--floatippool-extender-address=", "--floatippool-api-address=", "--floatippool-migrate-galaxy=false"}); err != nil {
		return nil, err
	}
	for _, c := range all {
		if !c.ServesWebhooks {
			continue
		}
		if err := c.Setup(ctx, mgr, setup.Config{ClusterName: "bench"}); err != nil {
			return nil, fmt.Errorf("setting up %s: %w", c.Name, err)
		}
		f.served = append(f.served, c.Name)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, errors.New("the cache did not sync")
	}

	// The API server calls controller-runtime's own webhook server, as in
	// the manager (the same TLS settings, HTTP/2, timeouts), whose one
	// handler is the recorder in front of the manager's mux.
	f.rec = &recorder{next: mux, d: map[string][]time.Duration{}}
	front := http.NewServeMux()
	front.Handle("/", f.rec)
	srv := webhook.NewServer(webhook.Options{Host: env.Webhooks.LocalServingHost, Port: env.Webhooks.LocalServingPort,
		CertDir: env.Webhooks.LocalServingCertDir, WebhookMux: front})
	go func() { _ = srv.Start(ctx) }()

	// A namespace whose pods a Pending-trigger BurstPolicy governs, so the pod
	// webhook does its whole job (list policies, decide, patch the gate).
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
		return nil, err
	}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "bench"},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "bench"}},
			Trigger:  schedulingv1alpha1.TriggerPending,
		},
	}
	if err := env.Client.Create(ctx, policy); err != nil {
		return nil, err
	}
	// Wait until the webhook answers through the API server and the policy
	// is in the cache: a warm-up pod gets gated.
	if err := waitGated(ctx, env, f.rec); err != nil {
		return nil, err
	}
	return f, nil
}

func BenchmarkWebhooks200ConcurrentPods(b *testing.B) {
	f := setUp(b)
	rounds(b, f, "burst.pods.scheduling.edgeplane.io", func(round int) {
		f.createPodsConcurrently(b.Context(), b, fmt.Sprintf("r%d", round))
	}, nil)
}

// A window is the span of one timed round.
type window struct{ from, to time.Time }

// report prints, for every webhook path that was called, p50 and p99 in
// the handler (<name>-p50-ms, <name>-p99-ms), p50 and p99 of the API
// server's calls of the webhook (<name>-apiserver-p50-ms, -p99-ms), and
// requests per round, then p50 and p99 of the client's requests
// (request-p50-ms, request-p99-ms). It fails when the API server did not
// call webhook, or when it traced fewer calls of a webhook than its handler
// served (a lost span would bias the figure).
func report(b *testing.B, f *fixture, webhook string, byPath map[string][]time.Duration, windows []window) {
	if len(byPath) == 0 {
		b.Fatalf("no admission request reached a webhook (controllers serving webhooks: %v)", f.served)
	}
	spans := f.awaitSpans(b, byPath, windows)
	if len(spans[webhook]) == 0 {
		b.Fatalf("the API server never called webhook %s (it called %v)", webhook, slices.Collect(maps.Keys(spans)))
	}
	for path, d := range byPath {
		name := filepath.Base(path)
		b.ReportMetric(ms(percentile(d, 50)), name+"-p50-ms")
		b.ReportMetric(ms(percentile(d, 99)), name+"-p99-ms")
		b.ReportMetric(float64(len(d))/float64(b.N), name+"-requests/op")
	}
	for hook, d := range spans {
		name := filepath.Base(f.paths[hook])
		b.ReportMetric(ms(percentile(d, 50)), name+"-apiserver-p50-ms")
		b.ReportMetric(ms(percentile(d, 99)), name+"-apiserver-p99-ms")
	}
	f.mu.Lock()
	requests := f.requests
	f.requests = nil
	f.mu.Unlock()
	b.ReportMetric(ms(percentile(requests, 50)), "request-p50-ms")
	b.ReportMetric(ms(percentile(requests, 99)), "request-p99-ms")
}

// awaitSpans waits until the API server has exported a span for every call
// the handlers served in the windows, and returns the calls' durations by
// webhook name.
func (f *fixture) awaitSpans(b *testing.B, byPath map[string][]time.Duration, windows []window) map[string][]time.Duration {
	deadline := time.Now().Add(time.Minute)
	for {
		spans := map[string][]time.Duration{}
		for _, w := range windows {
			for hook, d := range f.spans.between(w.from, w.to) {
				spans[hook] = append(spans[hook], d...)
			}
		}
		var missing []string
		for hook, path := range f.paths {
			if served := len(byPath[path]); len(spans[hook]) < served {
				missing = append(missing, fmt.Sprintf("%s: %d spans for %d requests served", hook, len(spans[hook]), served))
			}
		}
		if len(missing) == 0 {
			return spans
		}
		if time.Now().After(deadline) {
			b.Fatalf("the API server's spans are missing: %v", missing)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// percentile returns the p-th percentile of d (sorting d).
func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, len(d)*p/100)]
}

// do runs one request of a timed round and records how long the client
// waited for it.
func (f *fixture) do(fn func() error) error {
	start := time.Now()
	err := fn()
	took := time.Since(start)
	f.mu.Lock()
	f.requests = append(f.requests, took)
	f.mu.Unlock()
	return err
}

func collect(into map[string][]time.Duration, rec *recorder) {
	for path, d := range rec.reset() {
		into[path] = append(into[path], d...)
	}
}

// webhookPaths maps the name of every webhook in the configurations the API
// server was given to its URL path.
func webhookPaths(env *testenv.Env) map[string]string {
	out := map[string]string{}
	add := func(name string, cc admissionregistrationv1.WebhookClientConfig) {
		if cc.URL != nil {
			if u, err := url.Parse(*cc.URL); err == nil {
				out[name] = path.Clean(u.Path)
			}
		}
	}
	for _, c := range env.Webhooks.MutatingWebhooks {
		for _, w := range c.Webhooks {
			add(w.Name, w.ClientConfig)
		}
	}
	for _, c := range env.Webhooks.ValidatingWebhooks {
		for _, w := range c.Webhooks {
			add(w.Name, w.ClientConfig)
		}
	}
	return out
}

// BenchmarkWebhooks200ConcurrentNodes creates 200 nodes labelled for an
// anycast address at once (the node webhook taints each in the same
// request), then updates all 200 at once, then deletes them (untimed).
func BenchmarkWebhooks200ConcurrentNodes(b *testing.B) {
	f := setUp(b)
	ctx := b.Context()
	name := func(round, i int) string { return fmt.Sprintf("wh-r%d-%03d", round, i) }
	rounds(b, f, "aia.nodes.networking.edgeplane.io", func(round int) {
		inParallel(b, concurrentNodes, func(i int) error {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i), Labels: map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}}}
			if err := f.do(func() error { return f.env.Client.Create(ctx, node) }); err != nil {
				return err
			}
			if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == networkingv1alpha1.LegacyTaintNoAIAIP }) {
				return fmt.Errorf("node %s was not tainted: the webhook did not run", node.Name)
			}
			return nil
		})
		inParallel(b, concurrentNodes, func(i int) error {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}
			return f.do(func() error {
				return f.env.Client.Patch(ctx, node, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"bench.edgeplane.io/updated":"true"}}}`)))
			})
		})
	}, func(round int) {
		inParallel(b, concurrentNodes, func(i int) error {
			return client.IgnoreNotFound(f.env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}))
		})
	})
}

// BenchmarkWebhooks200ConcurrentFloatIPPools creates 200 FloatIPPools with
// disjoint ranges at once; the validating webhook checks each against every
// pool it knows. The pools are deleted afterwards (untimed).
func BenchmarkWebhooks200ConcurrentFloatIPPools(b *testing.B) {
	f := setUp(b)
	ctx := b.Context()
	name := func(round, i int) string { return fmt.Sprintf("wh-r%d-%03d", round, i) }
	rounds(b, f, "vfloatippool.networking.edgeplane.io", func(round int) {
		inParallel(b, concurrentPools, func(i int) error {
			pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)},
				Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{fmt.Sprintf("10.%d.%d.10~10.%d.%d.20", 100+round%100, i, 100+round%100, i)},
					Subnet: fmt.Sprintf("10.%d.%d.0/24", 100+round%100, i), NodeSubnets: []string{"192.168.0.0/16"}}}
			return f.do(func() error { return f.env.Client.Create(ctx, pool) })
		})
	}, func(round int) {
		inParallel(b, concurrentPools, func(i int) error {
			return client.IgnoreNotFound(f.env.Client.Delete(ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}))
		})
	})
}

// rounds runs b.N timed rounds of work, each followed by an untimed clean-up,
// and reports the latencies of webhook (its name in the configurations) and
// of every other webhook the work caused (the clean-up's admission requests
// are not counted).
func rounds(b *testing.B, f *fixture, webhook string, work, cleanup func(round int)) {
	f.rec.reset()
	f.mu.Lock()
	f.requests = nil
	f.mu.Unlock()
	b.ResetTimer()
	all := map[string][]time.Duration{}
	var windows []window
	for range b.N {
		round++
		w := window{from: time.Now()}
		work(round)
		w.to = time.Now()
		windows = append(windows, w)
		b.StopTimer()
		collect(all, f.rec)
		if cleanup != nil {
			cleanup(round)
		}
		f.rec.reset()
		b.StartTimer()
	}
	b.StopTimer()
	report(b, f, webhook, all, windows)
}

// inParallel runs fn(0..n-1) all at once and fails b on any error.
func inParallel(b *testing.B, n int, fn func(i int) error) {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := fn(i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (f *fixture) createPodsConcurrently(ctx context.Context, b *testing.B, prefix string) {
	inParallel(b, concurrentPods, func(i int) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%03d", prefix, i), Namespace: "bench", Labels: map[string]string{"app": "bench"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if err := f.do(func() error { return f.env.Client.Create(ctx, pod) }); err != nil {
			return err
		}
		if len(pod.Spec.SchedulingGates) == 0 {
			return fmt.Errorf("pod %s was not gated: the webhook did not run", pod.Name)
		}
		return nil
	})
}

func waitGated(ctx context.Context, env *testenv.Env, rec *recorder) error {
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("warm-%d", i), Namespace: "bench", Labels: map[string]string{"app": "bench"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if err := env.Client.Create(ctx, pod); err == nil && len(pod.Spec.SchedulingGates) > 0 {
			rec.reset()
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the pod webhook never gated a pod")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
