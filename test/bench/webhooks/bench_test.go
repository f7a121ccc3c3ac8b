// Package webhooks_test benchmarks every admission webhook edgeplane serves
// (issue 10 and issue 21: p99 ≤ 10 ms): the BurstPolicy pod webhook under
// 200 concurrent pod creations, the AnycastIPBinding node webhook under 200
// concurrent node creations and as many updates, and the FloatIPPool
// validating webhook under 200 concurrent pool creations. Each is timed
// three ways: inside the webhook server's handler, by the API server around
// its call of the webhook (its trace spans, the latency a client's request
// pays for the webhook), and by the client for its whole request. The
// webhooks are served by a manager process of its own (this test binary
// re-executed, manager_test.go), not by the benchmark's process, whose 200
// client goroutines would otherwise compete with the handlers for the same
// Go scheduler. It runs under `make bench`; its one test only checks that
// no webhook of the configurations is left without a benchmark.
package webhooks_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

const (
	concurrentPods  = 200
	concurrentNodes = 200
	concurrentPools = 200
)

// sampled sets a W3C traceparent with the sampled flag and a random trace
// on every request.
type sampled struct{ next http.RoundTripper }

func (s sampled) RoundTrip(req *http.Request) (*http.Response, error) {
	var id [24]byte
	_, _ = rand.Read(id[:])
	req = req.Clone(req.Context())
	req.Header.Set("traceparent", fmt.Sprintf("00-%x-%x-01", id[:16], id[16:]))
	return s.next.RoundTrip(req)
}

// benchmarked names the benchmark of each webhook edgeplane serves, by its
// name in the webhook configurations; TestEveryWebhookIsBenchmarked keeps it
// complete.
var benchmarked = map[string]func(*testing.B){
	"burst.pods.scheduling.edgeplane.io":   BenchmarkWebhooks200ConcurrentPods,
	"aia.nodes.networking.edgeplane.io":    BenchmarkWebhooks200ConcurrentNodes,
	"neip.nodes.networking.edgeplane.io":   BenchmarkWebhooks200ConcurrentElasticIPNodes,
	"vfloatippool.networking.edgeplane.io": BenchmarkWebhooks200ConcurrentFloatIPPools,
}

// recorder times the admission requests the benchmark's requests cause, by
// URL path, at the server, so the figures are the webhooks' own (decoding,
// cache reads, the decision, the patch, and the wait for a CPU in the
// manager process), not the API server's. It runs in the manager process.
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	d    map[string][]time.Duration
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	r.next.ServeHTTP(w, req)
	took := time.Since(start)
	// Only the benchmark's own requests, which the API server traces and
	// whose trace context it passes on to the webhook; not the manager's.
	if !strings.HasSuffix(req.Header.Get("traceparent"), "-01") {
		return
	}
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
	env *testenv.Env
	// c is env's administrator whose every request asks the API server to
	// trace it (a sampled W3C traceparent): the API server samples nothing
	// else, so tracing costs it little and the spans are the benchmark's.
	c client.Client
	// apiserver reads the API server's own metrics.
	apiserver rest.Interface
	// rec is the manager process, whose recorder times the handlers.
	rec    *managerProc
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
	if spec := os.Getenv(managerSpecEnv); spec != "" {
		os.Exit(runManager(spec))
	}
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
	traced := rest.CopyConfig(env.Config)
	traced.Wrap(func(rt http.RoundTripper) http.RoundTripper { return sampled{rt} })
	c, err := client.New(traced, client.Options{Scheme: env.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{env: env, c: c, apiserver: cs.Discovery().RESTClient(), spans: spans, paths: webhookPaths(env)}
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

	// The manager runs as a process of its own (manager_test.go says why),
	// serving the webhooks where the API server's configurations point.
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	mgr, err := startManagerProc(ctx, dir, kubeconfig, env.Webhooks.LocalServingCertDir, env.Webhooks.LocalServingHost, env.Webhooks.LocalServingPort)
	if err != nil {
		return nil, err
	}
	f.rec = mgr
	stopEnv := f.stop
	f.stop = func() {
		mgr.stop()
		stopEnv()
	}
	f.served = servedWebhooks()

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

// BenchmarkWebhooks200ConcurrentPods times the BurstPolicy pod webhook: 200
// pods a policy with trigger Pending governs created at once (each must come
// back gated); the pods are deleted afterwards (untimed).
func BenchmarkWebhooks200ConcurrentPods(b *testing.B) {
	f := setUp(b)
	ctx := b.Context()
	probe := func(i int) error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i), Namespace: "bench"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
		if err := f.c.Create(ctx, pod); err != nil {
			return err
		}
		return f.env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))
	}
	prefix := func(round int) string { return fmt.Sprintf("r%d", round) }
	rounds(b, f, "burst.pods.scheduling.edgeplane.io", probe, func(round int, noop bool) {
		f.createPodsConcurrently(ctx, b, prefix(round), !noop)
	}, func(round int) {
		// Every round starts from the same namespace: without this the
		// policy would govern 400 more pods each round, and the
		// controllers' passes over them would load the manager more with
		// every run of one process.
		inParallel(b, concurrentPods, func(i int) error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: podName(prefix(round), i), Namespace: "bench"}}
			return client.IgnoreNotFound(f.env.Client.Delete(ctx, pod, client.GracePeriodSeconds(0)))
		})
	})
}

// podName is the name of the i-th pod of a round's concurrent creations.
func podName(prefix string, i int) string { return fmt.Sprintf("%s-%03d", prefix, i) }

// A window is the span of one timed round.
type window struct{ from, to time.Time }

// report prints, for every webhook path that was called in edgeplane's
// rounds, p50 and p99 in the handler (<name>-p50-ms, <name>-p99-ms) and
// requests per round; for every webhook the API server called, p50 and p99
// of its calls as the API server timed them (<name>-apiserver-p50-ms,
// -p99-ms); for the benchmarked webhook the same in the no-op rounds
// (<name>-apiserver-noop-p50-ms, -p99-ms) and the ratio of the two p99s
// (<name>-apiserver-p99/noop); the manager process's CPU during each kind
// of round (manager-cpu-ms/op, manager-noop-cpu-ms/op) and its collector's
// cycles, mark-assist CPU and pauses in the timed rounds (manager-gc/op,
// manager-gc-assist-ms/op, manager-gc-pause-ms/op); and p50 and p99 of
// the client's requests in both (request-p50-ms, request-p99-ms,
// request-noop-p50-ms, request-noop-p99-ms). It fails when the API server did not call webhook,
// or when it traced fewer calls of a webhook than its handler served (a
// lost span would bias the figure).
func report(b *testing.B, f *fixture, webhook string, real, noop *phase) {
	if len(real.handler) == 0 {
		b.Fatalf("no admission request reached a webhook (controllers serving webhooks: %v)", f.served)
	}
	want := map[string]int{}
	for hook, path := range f.paths {
		want[hook] = len(real.handler[path])
	}
	spans := f.awaitSpans(b, want, real.windows)
	if len(spans[webhook]) == 0 {
		b.Fatalf("the API server never called webhook %s (it called %v)", webhook, slices.Collect(maps.Keys(spans)))
	}
	floor := f.awaitSpans(b, map[string]int{webhook: len(noop.handler[noopPath])}, noop.windows)[webhook]
	if len(floor) == 0 {
		b.Fatalf("the API server never called the no-op webhook")
	}
	for path, d := range real.handler {
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
	name := filepath.Base(f.paths[webhook])
	b.ReportMetric(ms(percentile(floor, 50)), name+"-apiserver-noop-p50-ms")
	b.ReportMetric(ms(percentile(floor, 99)), name+"-apiserver-noop-p99-ms")
	b.ReportMetric(float64(percentile(spans[webhook], 99))/float64(percentile(floor, 99)), name+"-apiserver-p99/noop")
	b.ReportMetric(ms(real.managerCPU)/float64(b.N), "manager-cpu-ms/op")
	b.ReportMetric(ms(noop.managerCPU)/float64(b.N), "manager-noop-cpu-ms/op")
	b.ReportMetric(float64(real.managerGC.Cycles)/float64(b.N), "manager-gc/op")
	b.ReportMetric(ms(real.managerGC.Assist)/float64(b.N), "manager-gc-assist-ms/op")
	b.ReportMetric(ms(real.managerGC.Pause)/float64(b.N), "manager-gc-pause-ms/op")
	b.ReportMetric(ms(percentile(real.requests, 50)), "request-p50-ms")
	b.ReportMetric(ms(percentile(real.requests, 99)), "request-p99-ms")
	b.ReportMetric(ms(percentile(noop.requests, 50)), "request-noop-p50-ms")
	b.ReportMetric(ms(percentile(noop.requests, 99)), "request-noop-p99-ms")
}

// awaitSpans waits until the API server has exported, for every webhook in
// want, at least as many spans of calls that started in the windows as its
// handler served there, and returns their durations by webhook name.
func (f *fixture) awaitSpans(b *testing.B, want map[string]int, windows []window) map[string][]time.Duration {
	deadline := time.Now().Add(time.Minute)
	for {
		spans := map[string][]time.Duration{}
		for _, w := range windows {
			for hook, d := range f.spans.between(w.from, w.to) {
				spans[hook] = append(spans[hook], d...)
			}
		}
		var missing []string
		for hook, served := range want {
			if len(spans[hook]) < served {
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

func collect(into map[string][]time.Duration, rec *managerProc) {
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
	benchNodeWebhook(b, "aia.nodes.networking.edgeplane.io", networkingv1alpha1.LegacyLabelNeedAIAIP, networkingv1alpha1.LegacyTaintNoAIAIP)
}

// BenchmarkWebhooks200ConcurrentElasticIPNodes does the same for nodes
// labelled for a NodeElasticIP, whose webhook taints them until their
// address is on them.
func BenchmarkWebhooks200ConcurrentElasticIPNodes(b *testing.B) {
	benchNodeWebhook(b, "neip.nodes.networking.edgeplane.io", networkingv1alpha1.LabelWantElasticIP, networkingv1alpha1.DefaultNodeElasticIPTaintKey)
}

// benchNodeWebhook times the node webhook named webhook: 200 nodes with
// label=true created at once (each must come back with taintKey), then
// 200 updates at once; the nodes are deleted afterwards (untimed).
func benchNodeWebhook(b *testing.B, webhook, label, taintKey string) {
	f := setUp(b)
	probe, work, cleanup := nodeWork(b, f, strings.SplitN(webhook, ".", 2)[0], label, taintKey)
	rounds(b, f, webhook, probe, func(round int, noop bool) { work(round, !noop) }, cleanup)
}

// nodeWork is the node benchmarks' work, nodes named after prefix: probe(i)
// creates and deletes one node labelled label=true; work(round, tainted)
// creates concurrentNodes such nodes at once (tainted: each must come back
// with taintKey), then updates all of them at once; cleanup(round) deletes
// them.
func nodeWork(b *testing.B, f *fixture, prefix, label, taintKey string) (probe func(i int) error, work func(round int, tainted bool), cleanup func(round int)) {
	ctx := b.Context()
	name := func(round, i int) string { return fmt.Sprintf("wh-%s-r%d-%03d", prefix, round, i) }
	probe = func(i int) error {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wh-%s-probe-%d", prefix, i), Labels: map[string]string{label: "true"}}}
		if err := f.c.Create(ctx, node); err != nil {
			return err
		}
		return f.env.Client.Delete(ctx, node)
	}
	work = func(round int, tainted bool) {
		inParallel(b, concurrentNodes, func(i int) error {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i), Labels: map[string]string{label: "true"}}}
			if err := f.do(func() error { return f.c.Create(ctx, node) }); err != nil {
				return err
			}
			if tainted && !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taintKey }) {
				return fmt.Errorf("node %s was not tainted with %s at admission", node.Name, taintKey)
			}
			return nil
		})
		inParallel(b, concurrentNodes, func(i int) error {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}
			return f.do(func() error {
				return f.c.Patch(ctx, node, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"bench.edgeplane.io/updated":"true"}}}`)))
			})
		})
	}
	cleanup = func(round int) {
		inParallel(b, concurrentNodes, func(i int) error {
			return client.IgnoreNotFound(f.env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}))
		})
	}
	return probe, work, cleanup
}

// BenchmarkWebhooks200ConcurrentFloatIPPools creates 200 FloatIPPools with
// disjoint ranges at once; the validating webhook checks each against every
// pool it knows. The pools are deleted afterwards (untimed).
func BenchmarkWebhooks200ConcurrentFloatIPPools(b *testing.B) {
	f := setUp(b)
	ctx := b.Context()
	name := func(round, i int) string { return fmt.Sprintf("wh-r%d-%03d", round, i) }
	probe := func(i int) error {
		pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wh-probe-%d", i)},
			Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{fmt.Sprintf("10.99.%d.%d", i/250, i%250+1)},
				Subnet: "10.99.0.0/16", NodeSubnets: []string{"192.168.0.0/16"}}}
		if err := f.c.Create(ctx, pool); err != nil {
			return err
		}
		return f.env.Client.Delete(ctx, pool)
	}
	rounds(b, f, "vfloatippool.networking.edgeplane.io", probe, func(round int, _ bool) {
		inParallel(b, concurrentPools, func(i int) error {
			pool := &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)},
				Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{fmt.Sprintf("10.%d.%d.10~10.%d.%d.20", 100+round%100, i, 100+round%100, i)},
					Subnet: fmt.Sprintf("10.%d.%d.0/24", 100+round%100, i), NodeSubnets: []string{"192.168.0.0/16"}}}
			return f.do(func() error { return f.c.Create(ctx, pool) })
		})
	}, func(round int) {
		inParallel(b, concurrentPools, func(i int) error {
			return client.IgnoreNotFound(f.env.Client.Delete(ctx, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: name(round, i)}}))
		})
	})
}

// rounds runs b.N timed rounds of work with webhook (its name in the
// configurations) served by edgeplane, each followed by an untimed round of
// the same work with the webhook's configuration pointed at a no-op handler
// (the floor: what the API server pays for calling any webhook at this
// concurrency on this machine, measured under the same load), each round
// followed by an untimed clean-up. It reports the latencies of webhook and
// of every other webhook the work caused (the clean-up's admission requests
// are not counted). probe(i) makes one request that reaches webhook.
func rounds(b *testing.B, f *fixture, webhook string, probe func(i int) error, work func(round int, noop bool), cleanup func(round int)) {
	served := f.paths[webhook]
	var real, noop phase
	b.ResetTimer()
	for range b.N {
		f.run(b, &real, work, cleanup, false)
		b.StopTimer()
		f.point(b, webhook, noopPath, probe)
		f.run(b, &noop, work, cleanup, true)
		f.point(b, webhook, served, probe)
		b.StartTimer()
	}
	b.StopTimer()
	report(b, f, webhook, &real, &noop)
}

// A phase collects the rounds of one kind: edgeplane's webhook or the no-op.
type phase struct {
	handler  map[string][]time.Duration // by URL path
	windows  []window
	requests []time.Duration // the client's
	// managerCPU is the CPU the manager process used during the rounds'
	// work: the handlers and whatever its controllers did meanwhile.
	managerCPU time.Duration
	// managerGC is what its collector did meanwhile.
	managerGC gcStats
}

// run runs one round of work (timed if the timer runs) and its clean-up,
// collecting into ph.
func (f *fixture) run(b *testing.B, ph *phase, work func(round int, noop bool), cleanup func(round int), noop bool) {
	f.rec.reset()
	f.mu.Lock()
	f.requests = nil
	f.mu.Unlock()
	round++
	w := window{from: time.Now()}
	cpu, gc := f.rec.cpu(), f.rec.gc()
	work(round, noop)
	ph.managerCPU += f.rec.cpu() - cpu
	d := f.rec.gc().sub(gc)
	ph.managerGC.Cycles += d.Cycles
	ph.managerGC.Assist += d.Assist
	ph.managerGC.Pause += d.Pause
	w.to = time.Now()
	timed := !noop
	if timed {
		b.StopTimer()
	}
	ph.windows = append(ph.windows, w)
	if ph.handler == nil {
		ph.handler = map[string][]time.Duration{}
	}
	collect(ph.handler, f.rec)
	f.mu.Lock()
	ph.requests = append(ph.requests, f.requests...)
	f.mu.Unlock()
	if cleanup != nil {
		cleanup(round)
	}
	f.rec.reset()
	if timed {
		b.StartTimer()
	}
}

// noopPath serves a webhook that allows everything and changes nothing.
const noopPath = "/noop"

// noopWebhook answers every AdmissionReview with allowed, no patch.
func noopWebhook(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

var probes int // probe object names, unique across the benchmarks

// point makes the API server call path for webhook: it sets the path of the
// webhook's URL in its configuration and waits until a probe request
// arrives there.
func (f *fixture) point(b *testing.B, webhook, path string, probe func(i int) error) {
	if err := f.setWebhookPath(b.Context(), webhook, path); err != nil {
		b.Fatal(err)
	}
	f.probeUntil(b, fmt.Sprintf("the API server to call %s for webhook %s", path, webhook), probe, func(called map[string][]time.Duration, _ error) bool {
		_, ok := called[path]
		return ok
	})
}

// probeUntil makes probe requests until done holds for the webhook paths
// one of them reached and its error.
func (f *fixture) probeUntil(b *testing.B, what string, probe func(i int) error, done func(called map[string][]time.Duration, err error) bool) {
	eventually.That(b.Context(), b, what, func() (bool, string) {
		f.rec.reset()
		probes++
		err := probe(probes)
		called := f.rec.reset()
		return done(called, err), fmt.Sprintf("probe error %v, paths called %v", err, slices.Collect(maps.Keys(called)))
	})
}

// setWebhookPath sets the path of webhook's URL in whichever configuration
// holds it.
func (f *fixture) setWebhookPath(ctx context.Context, webhook, path string) error {
	setPath := func(cc *admissionregistrationv1.WebhookClientConfig) error {
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return err
		}
		u.Path = path
		cc.URL = ptr.To(u.String())
		return nil
	}
	var mutating admissionregistrationv1.MutatingWebhookConfigurationList
	if err := f.env.Client.List(ctx, &mutating); err != nil {
		return err
	}
	for i := range mutating.Items {
		c := &mutating.Items[i]
		for j := range c.Webhooks {
			if c.Webhooks[j].Name == webhook {
				if err := setPath(&c.Webhooks[j].ClientConfig); err != nil {
					return err
				}
				return f.env.Client.Update(ctx, c)
			}
		}
	}
	var validating admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := f.env.Client.List(ctx, &validating); err != nil {
		return err
	}
	for i := range validating.Items {
		c := &validating.Items[i]
		for j := range c.Webhooks {
			if c.Webhooks[j].Name == webhook {
				if err := setPath(&c.Webhooks[j].ClientConfig); err != nil {
					return err
				}
				return f.env.Client.Update(ctx, c)
			}
		}
	}
	return fmt.Errorf("no configuration holds webhook %s", webhook)
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

// createPodsConcurrently creates concurrentPods pods at once; gated: each
// must come back with the webhook's scheduling gate.
func (f *fixture) createPodsConcurrently(ctx context.Context, b *testing.B, prefix string, gated bool) {
	inParallel(b, concurrentPods, func(i int) error {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName(prefix, i), Namespace: "bench", Labels: map[string]string{"app": "bench"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if err := f.do(func() error { return f.c.Create(ctx, pod) }); err != nil {
			return err
		}
		if gated && len(pod.Spec.SchedulingGates) == 0 {
			return fmt.Errorf("pod %s was not gated: the webhook did not run", pod.Name)
		}
		return nil
	})
}

func waitGated(ctx context.Context, env *testenv.Env, rec *managerProc) error {
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
