package floatippool_test

// The float-IP benchmarks (run by `make bench`, never tests) measure how long
// the real kube-scheduler, using edgeplane's float-IP extender, takes to bind
// float-IP pods on kwok nodes spread over node subnets (one FloatIPPool per
// subnet), divided by the time the same scheduler needs for as many pods
// without float IPs, in the same run and on the same nodes. Target: at most
// 1.25 on every shape.
//
//   - BenchmarkFloatIP2000Pods: 2,000 pods on 50 nodes in 5 subnets
//     (EDGEPLANE_BENCH_FIP_PODS overrides the pod count).
//   - BenchmarkFloatIP20Nodes4Subnets: 20 nodes in 4 subnets, 500 and 2,000
//     pods (sub-benchmarks pods=500 and pods=2000, one cluster).
//
// Bare pods are created directly by 16 client workers, so the controller
// manager's rate limit plays no part; a pod counts once it is bound (and,
// with a float IP, carries galaxy's args annotation), seen through a watch.
// Before each phase the previous one's pods and FloatIPs are gone. A round
// is four phases, plain, float-IP, float-IP, plain, after an unmeasured
// warm-up (100 pods of each kind), so that the load of other jobs on the
// machine, rising or falling over a round, weighs on both kinds alike; the
// ratio is the float-IP phases' total time over the plain phases'. The
// manager runs as users run it, in a process of its own (benchmanager_test.go)
// with every controller and its default settings, and the API server calls
// its admission webhooks (every pod created goes through its pod webhook).
// Besides the ratio each benchmark reports, per phase (plain, floatip):
//   - create-*-s: until the 16 workers have created every pod;
//   - mgr-cpu-*-s: CPU time (user+system) of the manager process, and
//     kube-apiserver-cpu-*-s, etcd-cpu-*-s those of the cluster's (the log
//     has every component's, and the API server's requests by verb and
//     resource and its watch events by kind);
//   - mgr-writes/pod, mgr-reads/pod: the manager's API requests during the
//     float-IP phase per pod (internal/testsupport/apicount; the breakdown
//     by verb and resource is logged);
//   - filter-ms/op, bind-ms/op and their p99 (a bucket's upper bound): the
//     extender's latencies during the float-IP phase, from its histogram;
//   - cpu-floatip/plain: the CPU time of the cluster's processes and the
//     manager together, float-IP phases over plain (where the machine's CPU
//     is saturated, the time ratio follows it);
//   - webhook-*-ms/op: the manager's pod webhook's mean latency;
//   - load1: the machine's 1-minute load average, mean of the samples at the
//     start and end of every phase (others share the machine).
//
// EDGEPLANE_BENCH_FIP_PROFILE=<dir> writes a CPU profile of the manager
// process for each float-IP phase into dir (`go tool pprof <test binary>
// <file>`), and one of the API server over the first 10 s of every phase
// (`go tool pprof -diff_base <plain> <float-IP>`).

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/cpuuse"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

// benchWorkers create the pods.
const benchWorkers = 16

func BenchmarkFloatIP2000Pods(b *testing.B) {
	pods, err := strconv.Atoi(cmp.Or(os.Getenv("EDGEPLANE_BENCH_FIP_PODS"), "2000"))
	if err != nil {
		b.Fatal(err)
	}
	f := startFIPBench(b, 50, 5, pods)
	f.measure(b, pods)
}

func BenchmarkFloatIP20Nodes4Subnets(b *testing.B) {
	f := startFIPBench(b, 20, 4, 2000)
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) { f.measure(b, n) })
	}
}

// fipBench is a local cluster with nodes in subnets, a pool per subnet, and
// the manager.
type fipBench struct {
	ctx     context.Context
	c       client.Client
	cs      kubernetes.Interface
	mgr     *benchManager
	cluster *localcluster.Cluster
	profile string // directory for CPU profiles, or ""
	runs    int    // namespaces used so far
}

// startFIPBench starts the cluster with nodes nodes, every node in one of
// subnets node subnets, and pools large enough for maxPods pods.
func startFIPBench(b *testing.B, nodes, subnets, maxPods int) *fipBench {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(b.Context())
	b.Cleanup(cancel)
	scheme, err := edgescheme.New()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	extAddr, err := benchFreeAddr()
	if err != nil {
		b.Fatal(err)
	}
	// kube-scheduler calls the extender over TLS with its client
	// certificate, keeping its connections alive, as in a cluster.
	certs := floatippooltest.Write(b, "")
	cfgPath := writeSchedulerConfig(b, dir, certs, "https://"+extAddr, true, 500)
	var specs []localcluster.NodeSpec
	for i := range nodes {
		specs = append(specs, localcluster.NodeSpec{Name: fmt.Sprintf("n%02d", i), Pods: 200})
	}
	profile := os.Getenv("EDGEPLANE_BENCH_FIP_PROFILE")
	var apiFlags []string
	if profile != "" {
		apiFlags = []string{"--profiling=true"} // /debug/pprof for the API server's profile
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Scheme: scheme, Nodes: specs, StartTimeout: 5 * time.Minute,
		SchedulerFlags: []string{"--config=" + cfgPath}, APIServerFlags: apiFlags,
	})
	if err != nil {
		b.Fatalf("starting the local cluster: %v", err)
	}
	b.Cleanup(func() { _ = cluster.Stop() })
	c := cluster.Client()

	// The node subnets: kwok keeps an InternalIP it finds on the node.
	for i := range nodes {
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: fmt.Sprintf("n%02d", i)}, &n); err != nil {
				return err
			}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.0.%d", i%subnets, 10+i)}, {Type: corev1.NodeHostName, Address: n.Name}}
			return c.Status().Update(ctx, &n)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	root, err := k8sbin.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true}); err != nil {
		b.Fatalf("installing CRDs: %v", err)
	}
	// edgeplane's admission webhooks, served by the manager on loopback.
	webhooks := &envtest.WebhookInstallOptions{Paths: []string{filepath.Join(root, "config", "webhook", "manifests.yaml")}, LocalServingHost: "127.0.0.1"}
	if err := webhooks.Install(cluster.RESTConfig()); err != nil {
		b.Fatalf("installing the webhook configurations: %v", err)
	}
	b.Cleanup(func() { _ = webhooks.Cleanup() })
	mgr := startBenchManager(b, ctx, cluster.KubeconfigPath(), append([]string{
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--cluster-name=bench",
		"--webhook-host=" + webhooks.LocalServingHost, "--webhook-port=" + strconv.Itoa(webhooks.LocalServingPort),
		"--webhook-cert-dir=" + webhooks.LocalServingCertDir, "--webhook-cert-mode=cert-manager",
		"--floatippool-extender-address=" + extAddr,
	}, certs.ManagerFlags()...), cluster.LogDir())

	perPool := maxPods/subnets + maxPods/10 + 1
	for s := range subnets {
		p := &networkingv1alpha1.FloatIPPool{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("subnet-%d", s)},
			Spec: networkingv1alpha1.FloatIPPoolSpec{
				Ranges:      []string{fmt.Sprintf("172.%d.0.1~172.%d.%d.%d", 16+s, 16+s, perPool/250, perPool%250+1)},
				Subnet:      fmt.Sprintf("172.%d.0.0/16", 16+s),
				Gateway:     fmt.Sprintf("172.%d.0.1", 16+s),
				NodeSubnets: []string{fmt.Sprintf("10.%d.0.0/24", s)},
				ExcludeIPs:  []string{fmt.Sprintf("172.%d.0.1", 16+s)},
			},
		}
		// The pool webhook answers once the manager serves it.
		var last error
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			last = c.Create(ctx, p.DeepCopy())
			return last == nil, nil
		})
		if err != nil {
			b.Fatalf("creating pool %s: %v (%v)", p.Name, err, last)
		}
	}
	// Every pool admitted and Available: the extender hands out IPs.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list networkingv1alpha1.FloatIPPoolList
		if err := c.List(ctx, &list); err != nil {
			return false, nil
		}
		ready := 0
		for _, p := range list.Items {
			for _, cond := range p.Status.Conditions {
				if cond.Type == networkingv1alpha1.FloatIPTypeReady && cond.Status == metav1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == subnets, nil
	})
	if err != nil {
		b.Fatalf("waiting for the pools to be admitted: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cluster.RESTConfig())
	if err != nil {
		b.Fatal(err)
	}
	f := &fipBench{ctx: ctx, c: c, cs: cs, mgr: mgr, cluster: cluster, profile: profile}
	f.warmUp(b)
	return f
}

// phase is what one run of n pods (plain or float-IP) measured.
type phase struct {
	created, bound time.Duration
	cpu            float64            // the manager's, in seconds
	gcCycles       uint64             // the manager's garbage collections
	heapLive       uint64             // the manager's live heap at the end (bytes)
	components     map[string]float64 // the cluster's processes' CPU, in seconds
	apiRequests    map[string]int     // every client's, by "VERB resource", and watch events by kind
	requests       map[string]int     // the manager's, by "VERB resource"
	latency        map[string]latencies
	load           []float64
}

// measure runs b.N rounds of four phases of n pods each, plain, float-IP,
// float-IP, plain (so that a load that rises or falls steadily over a round,
// from other jobs on the machine, weighs on both kinds alike), and reports
// the means; floatip/plain is the float-IP phases' total time over the
// plain phases'.
func (f *fipBench) measure(b *testing.B, n int) {
	b.ResetTimer()
	var plain, fip []phase
	for range b.N {
		plain = append(plain, f.phase(b, n, false))
		fip = append(fip, f.phase(b, n, true), f.phase(b, n, true))
		plain = append(plain, f.phase(b, n, false))
	}
	b.StopTimer()
	mean := func(ps []phase, get func(phase) float64) float64 {
		s := 0.0
		for _, p := range ps {
			s += get(p)
		}
		return s / float64(len(ps))
	}
	bound := func(p phase) float64 { return p.bound.Seconds() }
	pt, ft := mean(plain, bound), mean(fip, bound)
	b.ReportMetric(pt, "plain-s")
	b.ReportMetric(ft, "floatip-s")
	b.ReportMetric(ft/pt, "floatip/plain")
	b.ReportMetric(float64(n)/ft, "allocations/s")
	b.ReportMetric(mean(plain, func(p phase) float64 { return p.created.Seconds() }), "create-plain-s")
	b.ReportMetric(mean(fip, func(p phase) float64 { return p.created.Seconds() }), "create-floatip-s")
	// The CPU the whole cluster and the manager spent, float-IP over plain:
	// on a machine whose CPU is saturated the time ratio follows it.
	totalCPU := func(p phase) float64 {
		t := p.cpu
		for _, c := range p.components {
			t += c
		}
		return t
	}
	b.ReportMetric(mean(fip, totalCPU)/mean(plain, totalCPU), "cpu-floatip/plain")
	b.ReportMetric(mean(plain, func(p phase) float64 { return p.cpu }), "mgr-cpu-plain-s")
	b.ReportMetric(mean(fip, func(p phase) float64 { return p.cpu }), "mgr-cpu-floatip-s")
	for _, c := range []string{localcluster.APIServer, localcluster.Etcd} {
		b.ReportMetric(mean(plain, func(p phase) float64 { return p.components[c] }), c+"-cpu-plain-s")
		b.ReportMetric(mean(fip, func(p phase) float64 { return p.components[c] }), c+"-cpu-floatip-s")
	}
	b.ReportMetric(mean(fip, func(p phase) float64 { return float64(writes(p.requests)) / float64(n) }), "mgr-writes/pod")
	b.ReportMetric(mean(fip, func(p phase) float64 { return float64(sum(p.requests)-writes(p.requests)) / float64(n) }), "mgr-reads/pod")
	for _, verb := range []string{"filter", "bind"} {
		b.ReportMetric(mean(fip, func(p phase) float64 { return p.latency[verb].meanMS() }), verb+"-ms/op")
		b.ReportMetric(mean(fip, func(p phase) float64 { return p.latency[verb].quantileMS(0.99) }), verb+"-p99-ms")
	}
	// The manager also serves the pod webhook every pod creation waits for.
	b.ReportMetric(mean(plain, func(p phase) float64 { return p.latency["webhook"].meanMS() }), "webhook-plain-ms/op")
	b.ReportMetric(mean(fip, func(p phase) float64 { return p.latency["webhook"].meanMS() }), "webhook-floatip-ms/op")
	b.ReportMetric(mean(append(plain, fip...), func(p phase) float64 { return meanOf(p.load) }), "load1")
	for i, p := range fip {
		q := plain[i]
		b.Logf("%d float-IP pods: bound in %.1fs (plain %.1fs), created in %.1fs (plain %.1fs), manager CPU %.1fs (plain %.1fs) with %d garbage collections (plain %d; live heap %d MiB), cluster CPU %s (plain %s), load %.1f (plain %.1f); the manager's requests during the phase:\n%s",
			n, p.bound.Seconds(), q.bound.Seconds(), p.created.Seconds(), q.created.Seconds(), p.cpu, q.cpu, p.gcCycles, q.gcCycles, p.heapLive>>20,
			formatCPU(p.components), formatCPU(q.components), meanOf(p.load), meanOf(q.load), formatCounts(p.requests))
		b.Logf("the API server's requests and watch events during the float-IP phase (plain phase):\n%s", formatCountsVs(p.apiRequests, q.apiRequests))
	}
}

// warmUp runs a small plain and float-IP phase, unmeasured, so that the
// first measured phase does not pay for cold caches and connections.
func (f *fipBench) warmUp(b *testing.B) {
	f.phase(b, 100, false)
	f.phase(b, 100, true)
}

// phase creates n pods in a fresh namespace and measures until every one is
// bound (with its float IP annotation when fip); then it deletes them and
// waits until they and their FloatIPs are gone.
func (f *fipBench) phase(b *testing.B, n int, fip bool) phase {
	ctx := f.ctx
	f.runs++
	ns := fmt.Sprintf("plain-%d", f.runs)
	if fip {
		ns = fmt.Sprintf("fip-%d", f.runs)
	}
	if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	if fip && f.profile != "" {
		if err := f.mgr.profile(ctx, filepath.Join(f.profile, fmt.Sprintf("%s-%s-%d.pprof", strings.ReplaceAll(b.Name(), "/", "_"), ns, n))); err != nil {
			b.Fatal(err)
		}
	}
	var p phase
	p.load = append(p.load, cpuuse.Load1())
	before, err := f.mgr.read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	cpuBefore := f.componentCPU()
	apiBefore := f.apiServerCounts(ctx)
	var apiProfile chan error
	if f.profile != "" {
		apiProfile = make(chan error, 1)
		path := filepath.Join(f.profile, fmt.Sprintf("%s-%s-%d-apiserver.pprof", strings.ReplaceAll(b.Name(), "/", "_"), ns, n))
		go func() { apiProfile <- f.apiServerProfile(ctx, path, 10*time.Second) }()
	}
	start := time.Now()
	boundc := make(chan error, 1)
	var boundAt time.Time
	go func() {
		var err error
		boundAt, err = waitBound(ctx, f.cs, ns, n, fip)
		boundc <- err
	}()
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, benchWorkers)
	for range benchWorkers {
		wg.Go(func() {
			for i := range work {
				if err := f.c.Create(ctx, benchPod(ns, i, fip)); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	p.created = time.Since(start)
	select {
	case err := <-errs:
		b.Fatalf("creating pods: %v", err)
	default:
	}
	if err := <-boundc; err != nil {
		b.Fatalf("waiting for the pods of %s: %v", ns, err)
	}
	p.bound = boundAt.Sub(start)
	after, err := f.mgr.read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p.cpu = after.CPU - before.CPU
	p.gcCycles, p.heapLive = after.GCCycles-before.GCCycles, after.HeapLive
	p.apiRequests = promtext.Delta(f.apiServerCounts(ctx), apiBefore)
	p.components = map[string]float64{}
	for c, t := range f.componentCPU() {
		p.components[c] = t - cpuBefore[c]
	}
	p.requests = promtext.Delta(after.Requests, before.Requests)
	p.latency = map[string]latencies{}
	for verb, l := range after.Latency {
		p.latency[verb] = l.minus(before.Latency[verb])
	}
	p.load = append(p.load, cpuuse.Load1())
	if fip && f.profile != "" {
		if err := f.mgr.profile(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
	if apiProfile != nil {
		if err := <-apiProfile; err != nil {
			b.Fatal(err)
		}
	}
	if err := f.clean(ctx, ns); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchPod(ns string, i int, fip bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%05d", i), Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}
	if fip {
		pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{
			Requests: corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
			Limits:   corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")},
		}
	}
	return pod
}

// waitBound watches the namespace's pods and returns when n of them are
// bound (and annotated, when fip).
func waitBound(ctx context.Context, cs kubernetes.Interface, ns string, n int, fip bool) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	bound := map[string]bool{}
	count := 0
	var at time.Time
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "pods", ns, fields.Everything())
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Pod{}, nil, func(ev watch.Event) (bool, error) {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			return false, nil
		}
		now := ev.Type != watch.Deleted && pod.Spec.NodeName != "" && (!fip || pod.Annotations[networkingv1alpha1.AnnotationCNIArgs] != "")
		if now != bound[pod.Name] {
			if now {
				count++
			} else {
				count--
			}
		}
		bound[pod.Name] = now
		if count == n {
			at = time.Now()
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("%d/%d bound: %w", count, n, err)
	}
	return at, nil
}

// clean deletes the namespace's pods and waits until they, and every
// FloatIP, are gone, so the next phase starts on a quiet cluster.
func (f *fipBench) clean(ctx context.Context, ns string) error {
	if err := f.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
		return err
	}
	left := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods := &metav1.PartialObjectMetadataList{}
		pods.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "PodList"})
		fips := &metav1.PartialObjectMetadataList{}
		fips.SetGroupVersionKind(networkingv1alpha1.GroupVersion.WithKind("FloatIPList"))
		if err := f.c.List(ctx, pods, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		if err := f.c.List(ctx, fips); err != nil {
			return false, nil
		}
		left = fmt.Sprintf("%d pods, %d FloatIPs left", len(pods.Items), len(fips.Items))
		return len(pods.Items) == 0 && len(fips.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("cleaning up %s: %w (%s)", ns, err, left)
	}
	return nil
}

// componentCPU is the CPU time (user+system, seconds) of each of the
// cluster's processes so far.
func (f *fipBench) componentCPU() map[string]float64 {
	out := map[string]float64{}
	for name, pid := range f.cluster.PIDs() {
		if t, err := processCPU(pid); err == nil {
			out[name] = t
		}
	}
	return out
}

// processCPU reads a process's user plus system time from /proc.
func processCPU(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command (in parentheses, which may hold spaces):
	// utime and stime are the 14th and 15th of the line, in clock ticks.
	s := string(raw)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var ticks float64
	for _, f := range fields[11:13] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return ticks / 100, nil // USER_HZ is 100 on Linux
}

// apiServerCounts reads the API server's metrics: requests by "VERB
// resource" (every client, dry runs and watches excluded) and the watch
// events it sent, by "WATCH-EVENTS kind". Empty when unreadable.
func (f *fipBench) apiServerCounts(ctx context.Context) map[string]int {
	out := map[string]int{}
	families, err := promtext.APIServer(ctx, f.cs.Discovery().RESTClient())
	if err != nil {
		return out
	}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := promtext.Labels(m)
		if l["verb"] == "WATCH" || l["dry_run"] != "" {
			continue
		}
		k := l["verb"] + " " + l["resource"]
		if sub := l["subresource"]; sub != "" {
			k += "/" + sub
		}
		out[k] += int(m.GetCounter().GetValue())
	}
	for _, m := range families["apiserver_watch_events_total"].GetMetric() {
		out["WATCH-EVENTS "+promtext.Labels(m)["resource"]] += int(m.GetCounter().GetValue())
	}
	return out
}

// formatCountsVs lists a's counts with b's beside them.
func formatCountsVs(a, b map[string]int) string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "  %-45s %6d (%d)\n", k, a[k], b[k])
	}
	return sb.String()
}

// apiServerProfile writes a CPU profile of the API server over d to path.
func (f *fipBench) apiServerProfile(ctx context.Context, path string, d time.Duration) error {
	raw, err := f.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("profiling the API server: %w", err)
	}
	return os.WriteFile(path, raw, 0o600)
}

func formatCPU(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.1fs", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// writes counts the requests that are neither GET nor LIST.
func writes(m map[string]int) int {
	n := 0
	for k, v := range m {
		if !strings.HasPrefix(k, "GET ") && !strings.HasPrefix(k, "LIST ") {
			n += v
		}
	}
	return n
}

func formatCounts(m map[string]int) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&sb, "  %-45s %6d\n", k, m[k])
	}
	return sb.String()
}

func benchFreeAddr() (string, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}
