package anycastipbinding

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/cpuuse"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

// debugBench logs the convergence timeline.
var debugBench = os.Getenv("AIA_BENCH_DEBUG") != ""

// benchNodes is how many nodes the benchmark labels at once.
const benchNodes = 200

// Tencent's published limits (docs/architecture.md section 5): 10/s for
// each write action, modelled as a bucket holding one second's worth.
const (
	tencentWriteRate  = 10
	tencentWriteBurst = 10
	// tencentTask is how long the emulator's asynchronous tasks take at
	// real time (AllocateAddresses, AssociateAddress: a second or two).
	tencentTask = 2 * time.Second
)

// BenchmarkConverge200 labels 200 nodes at once and measures the time until
// every one has a Ready AnycastIPBinding (address allocated, bound, node
// untainted), against the emulator with the real Tencent limits (10/s for
// each write action, 20/s for DescribeAddresses and DescribeTaskResult), on
// both the server and the client side, with the manager's default settings
// (what a user gets without tuning a flag). x1 runs at real time; x10 on a
// cloud ten times faster (rate limits ×10, tasks ÷10, and the task poll
// interval ÷10 with them, as the world's time is scaled).
//
// The bound is the floor the cloud allows: each node needs one
// AllocateAddresses and one AssociateAddress, each from its own bucket, so
// after the first bucketful the allocations of N nodes take (N − burst) /
// rate, and the last node still waits for its allocation task and then its
// association task: (N − burst) / rate + 2 T(task) — 23 s at x1, 1.4 s at
// x10. Reported: converge-s, ratio-bound (converge ÷ that bound), ratio
// (converge ÷ N / rate, the earlier yardstick that left out the tasks),
// throttled (calls the emulator refused as over the limit), and the cloud
// and Kubernetes calls per node.
func BenchmarkConverge200(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	for _, scale := range []int{10, 1} {
		b.Run(fmt.Sprintf("x%d", scale), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				benchConverge(b, i, scale)
			}
		})
	}
}

func benchConverge(b *testing.B, iter, scale int) {
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fx := &core.Fixtures{}
	for i := range benchNodes {
		fx.Tencent.Instances = append(fx.Tencent.Instances, core.TCInstanceFixture{InstanceID: fmt.Sprintf("ins-b%07d", i)})
	}
	emu := cloudsimtest.Start(b, cloudsim.Options{Seed: 3, Fixtures: fx, Settings: core.Settings{
		TencentAddressQuota: 10 * benchNodes,
		RateLimitScale:      float64(scale),
		TaskDuration:        core.Duration(tencentTask / time.Duration(scale)),
	}})
	cpc := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), iter)
	prefix := cpc + "-n"
	c := env.Client
	if err := c.Create(ctx, &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: cpc},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: emu.URL(), ClusterIdentity: cpc},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}); err != nil {
		b.Fatal(err)
	}
	nodes := make([]*corev1.Node, benchNodes)
	for i := range benchNodes {
		// The annotations every kubelet sets on its node at registration.
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s%03d", prefix, i),
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
			Spec: corev1.NodeSpec{ProviderID: providerID(fmt.Sprintf("ins-b%07d", i))}}
		if err := c.Create(ctx, n); err != nil {
			b.Fatal(err)
		}
		nodes[i] = n
	}
	defer func() {
		for _, n := range nodes {
			_ = c.Delete(context.Background(), n)
		}
		var list networkingv1alpha1.AnycastIPBindingList
		_ = c.List(context.Background(), &list)
		for i := range list.Items {
			bd := &list.Items[i]
			if r := bd.Spec.ProviderConfigReference; r != nil && r.Name == cpc {
				bd.Finalizers = nil
				_ = c.Update(context.Background(), bd)
				_ = c.Delete(context.Background(), bd)
			}
		}
	}()

	opts := DefaultOptions()
	opts.ProviderConfig = cpc
	opts.Webhook = false
	// The world's time is scaled: the task poll interval with it. Every
	// other option is the default.
	opts.TaskPollInterval /= time.Duration(scale)
	opts.OrphanMode = "off"
	if v := os.Getenv("AIA_BENCH_WORKERS"); v != "" {
		// Another worker count than the default, to compare (the target
		// is measured with the default).
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("AIA_BENCH_WORKERS=%q: want a positive number", v)
		}
		opts.MaxConcurrentReconciles = n
	}
	var trace *benchTrace
	if traceBench {
		trace = newBenchTrace(prefix)
	}
	opts.ClientOptions = func(o *tencentcloud.Options) {
		if trace != nil {
			o.HTTPClient = &http.Client{Transport: trace.cloud(http.DefaultTransport)}
		}
		o.RateLimits = tencentcloud.DefaultRateLimits()
		for k, v := range o.RateLimits.PerAction {
			v.QPS *= float64(scale)
			v.Burst *= scale
			o.RateLimits.PerAction[k] = v
		}
		o.Retry.BaseDelay /= time.Duration(scale)
	}
	cfg := rest.CopyConfig(env.Config)
	clientlimit.Apply(cfg, clientlimit.DefaultQPS, clientlimit.DefaultBurst) // the manager's default: no client-side limit
	counter := apicount.New()
	cfg.Wrap(counter.Wrap)
	if trace != nil {
		cfg.Wrap(trace.kube)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := opts.Setup()(ctx, mgr, setup.Config{ClusterName: cpc}); err != nil {
		b.Fatal(err)
	}
	mctx, mcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(mctx) }()
	var stopOnce sync.Once
	defer stopOnce.Do(func() { mcancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}

	conv := watchConvergence(ctx, b, cpc, benchNodes, trace)
	b.StartTimer()
	counter.Reset()
	cpuBefore := cpuuse.Read()
	passesBefore := reconcileTotal(ControllerName)
	start := time.Now()
	if trace != nil {
		trace.start = start
	}
	if f := os.Getenv("AIA_BENCH_APIPROF"); f != "" {
		go profileAPIServer(ctx, b, f)
	}
	stopProfile := func() {}
	if f := os.Getenv("AIA_BENCH_CPUPROF"); f != "" {
		stopProfile = profileSelf(b, f)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func(n *corev1.Node) {
			defer wg.Done()
			defer func() { <-sem }()
			// The label arrives with the taint, as the Node webhook (on by
			// default, not served by this envtest manager) would add it
			// in the same request.
			patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"`+networkingv1alpha1.LegacyLabelNeedAIAIP+`":"true"}},`+
				`"spec":{"taints":[{"key":"`+networkingv1alpha1.LegacyTaintNoAIAIP+`","value":"true","effect":"NoSchedule"}]}}`))
			if err := c.Patch(ctx, n, patch); err != nil {
				b.Error(err)
			}
			trace.note(n.Name, "label<", time.Now())
		}(n)
	}
	wg.Wait()
	var ticks <-chan time.Time
	if debugBench {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		ticks = t.C
	}
	for converged := false; !converged; {
		select {
		case <-conv.done:
			converged = true
		case <-ticks:
			total, withAddr, readyN := conv.counts()
			snap := emu.World().Snapshot()
			bound := 0
			for _, a := range snap.Tencent.Addresses {
				if a.AddressStatus == "BIND" {
					bound++
				}
			}
			fmt.Fprintf(os.Stderr, "%6.2fs bindings %d with address %d ready %d | cloud addresses %d bound %d\n", time.Since(start).Seconds(), total, withAddr, readyN, len(snap.Tencent.Addresses), bound)
		case <-ctx.Done():
			_, _, readyN := conv.counts()
			b.Fatalf("only %d of %d bindings Ready", readyN, benchNodes)
		}
	}
	elapsed := conv.convergedAt().Sub(start)
	stopProfile()
	b.StopTimer()
	cpuAfter := cpuuse.Read()
	passes := reconcileTotal(ControllerName) - passesBefore
	if trace != nil {
		trace.print(os.Stderr)
	}
	if debugBench {
		fmt.Fprintf(os.Stderr, "CPU used while converging:\n%s", cpuAfter.Since(cpuBefore, elapsed))
		printQueueing(ControllerName, TranslatorName)
	}
	// The Kubernetes API floor: the same writes with no controller, after
	// the manager has stopped.
	stopOnce.Do(func() { mcancel(); <-done })
	floor, replayed := replayWrites(ctx, b, env.Config, counter.WriteCounts(), nodes, cpc, opts.MaxConcurrentReconciles)
	defer func() {
		var fl networkingv1alpha1.AnycastIPBindingList
		_ = c.List(context.Background(), &fl)
		for i := range fl.Items {
			if bd := &fl.Items[i]; strings.HasPrefix(bd.Name, cpc+"-floor-") {
				bd.Finalizers = nil
				_ = c.Update(context.Background(), bd)
				_ = c.Delete(context.Background(), bd)
			}
		}
	}()

	rate, burst := float64(tencentWriteRate*scale), float64(tencentWriteBurst*scale)
	task := tencentTask / time.Duration(scale)
	bound := time.Duration(float64(benchNodes) / rate * float64(time.Second))
	floorBound := time.Duration((float64(benchNodes)-burst)/rate*float64(time.Second)) + 2*task
	stats := emu.World().Stats()
	per := func(action string) float64 {
		var n int64
		for k, v := range stats {
			if len(k) > len("tencent/"+action+"/") && k[:len("tencent/"+action+"/")] == "tencent/"+action+"/" {
				n += v
			}
		}
		return float64(n) / benchNodes
	}
	if debugBench {
		fmt.Fprintf(os.Stderr, "manager API requests:\n%s", counter)
		for k, v := range stats {
			if !strings.HasSuffix(k, "/OK") {
				fmt.Fprintf(os.Stderr, "emulator: %s %d\n", k, v)
			}
		}
	}
	var throttled int64
	for k, v := range stats {
		if strings.HasPrefix(k, "tencent/") && strings.HasSuffix(k, "/"+core.TCRequestLimitExceeded) {
			throttled += v
		}
	}
	b.ReportMetric(elapsed.Seconds(), "converge-s")
	b.ReportMetric(elapsed.Seconds()/floorBound.Seconds(), "ratio-bound")
	b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "ratio")
	b.ReportMetric(float64(throttled), "throttled")
	b.ReportMetric(per("DescribeAddresses"), "describes/node")
	b.ReportMetric(per("DescribeTaskResult"), "taskresults/node")
	b.ReportMetric(per("AllocateAddresses")+per("AssociateAddress"), "writes/node")
	b.ReportMetric(float64(counter.Writes())/benchNodes, "kube-writes/node")
	b.ReportMetric(floor.Seconds(), "k8s-floor-s")
	// Load-independent: the binding passes, and the CPU the test process
	// (manager, emulator, benchmark client) and the API server used from
	// the first label to the last Ready.
	b.ReportMetric(passes/benchNodes, "passes/node")
	b.ReportMetric((cpuAfter["test process"] - cpuBefore["test process"]).Seconds(), "test-cpu-s")
	b.ReportMetric((cpuAfter["kube-apiserver"] - cpuBefore["kube-apiserver"]).Seconds(), "apiserver-cpu-s")
	b.ReportMetric(elapsed.Seconds()/max(floor, bound).Seconds(), "ratio-k8s-floor")
	b.Logf("Kubernetes API floor: the manager's %d successful writes replayed as plain writes (%d) by %d workers take %s; convergence / max(floor, bound) = %.2f",
		counter.Writes(), replayed, opts.MaxConcurrentReconciles, floor.Round(time.Millisecond), elapsed.Seconds()/max(floor, bound).Seconds())
	b.Logf("x%d: %d nodes converged in %s; bound (N − burst)/rate + 2 T(task) = %s: ratio %.2f (%.2f against N/rate = %s); throttled %d; per node: %.2f DescribeAddresses, %.2f DescribeTaskResult, %.2f AllocateAddresses, %.2f AssociateAddress",
		scale, benchNodes, elapsed.Round(time.Millisecond), floorBound, elapsed.Seconds()/floorBound.Seconds(), elapsed.Seconds()/bound.Seconds(), bound, throttled,
		per("DescribeAddresses"), per("DescribeTaskResult"), per("AllocateAddresses"), per("AssociateAddress"))
}

// reconcileTotal is controller-runtime's count of the passes of the
// controller named name so far (controller_runtime_reconcile_total, every
// result).
func reconcileTotal(name string) float64 {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if promtext.Labels(m)["controller"] == name {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// printQueueing prints, for the named controllers, how long requests
// waited in the work queue and how long passes took (the process's totals:
// run the benchmark once for a clean figure).
func printQueueing(names ...string) {
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		return
	}
	for _, mf := range mfs {
		switch {
		case mf.GetName() == "workqueue_queue_duration_seconds", mf.GetName() == "controller_runtime_reconcile_time_seconds":
		case strings.HasSuffix(mf.GetName(), "client_rate_limit_wait_seconds"):
			// Time passes spent parked on the client-side buckets (a
			// worker each).
			names = append(names, "AllocateAddresses", "AssociateAddress", "DescribeAddresses")
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			l := promtext.Labels(m)
			for _, key := range []string{"action", "controller", "name"} {
				if v := l[key]; slices.Contains(names, v) {
					h := m.GetHistogram()
					fmt.Fprintf(os.Stderr, "%s %s: %d, mean %.1f ms, total %.2f s\n", mf.GetName(), v, h.GetSampleCount(),
						1000*h.GetSampleSum()/float64(max(h.GetSampleCount(), 1)), h.GetSampleSum())
					break
				}
			}
		}
	}
}

// profileAPIServer saves a 3 s CPU profile of the API server to file
// (AIA_BENCH_APIPROF; the API server must serve /debug/pprof:
// EDGEPLANE_TESTENV_PROFILING=1).
func profileAPIServer(ctx context.Context, b *testing.B, file string) {
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		b.Error(err)
		return
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(env.Config.Host, "/")+"/debug/pprof/profile?seconds=3", nil)
	resp, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Error(err)
	}
}

// convergenceWatch follows the benchmark's bindings through an informer and
// notes the moment the last of them turns Ready. (Listing them every few
// hundred milliseconds instead would round the figure up to the poll and
// load the API server under measurement with lists of every binding.)
type convergenceWatch struct {
	mu       sync.Mutex
	withAddr map[string]bool
	ready    map[string]bool
	at       time.Time     // when the last binding turned Ready
	done     chan struct{} // closed then
}

func watchConvergence(ctx context.Context, b *testing.B, cpc string, want int, trace *benchTrace) *convergenceWatch {
	// An informer, not a bare watch: the API server drops a watcher that
	// falls behind, which, on two busy cores, happens during the burst.
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	inf, err := c.GetInformer(ctx, &networkingv1alpha1.AnycastIPBinding{})
	if err != nil {
		b.Fatal(err)
	}
	cw := &convergenceWatch{withAddr: map[string]bool{}, ready: map[string]bool{}, done: make(chan struct{})}
	see := func(obj any, deleted bool) {
		bd, ok := obj.(*networkingv1alpha1.AnycastIPBinding)
		if !ok {
			return
		}
		if r := bd.Spec.ProviderConfigReference; r == nil || r.Name != cpc {
			return
		}
		now := time.Now()
		trace.note(bd.Name, "seen", now)
		if !deleted && bd.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			trace.note(bd.Name, "ready", now)
		}
		cw.mu.Lock()
		defer cw.mu.Unlock()
		cw.withAddr[bd.Name] = meta.GetExternalName(bd) != ""
		cw.ready[bd.Name] = !deleted && bd.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
		if cw.at.IsZero() && countTrue(cw.ready) == want {
			cw.at = now
			if os.Getenv("AIA_BENCH_DUMP") != "" {
				data, _ := json.Marshal(bd)
				fmt.Fprintf(os.Stderr, "%s\n", data)
			}
			close(cw.done)
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { see(obj, false) },
		UpdateFunc: func(_, obj any) { see(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			see(obj, true)
		},
	}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the bindings' informer did not sync")
	}
	return cw
}

// convergedAt is when the last binding turned Ready (zero if the watch
// ended first).
func (cw *convergenceWatch) convergedAt() time.Time {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.at
}

// counts returns how many bindings were seen, how many record an address,
// and how many are Ready.
func (cw *convergenceWatch) counts() (total, withAddr, ready int) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return len(cw.ready), countTrue(cw.withAddr), countTrue(cw.ready)
}

func countTrue(m map[string]bool) int {
	n := 0
	for _, v := range m {
		if v {
			n++
		}
	}
	return n
}

// profileSelf starts a CPU profile of this process (manager, emulator and
// benchmark client) into file (AIA_BENCH_CPUPROF) and returns its stop.
func profileSelf(b *testing.B, file string) func() {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
