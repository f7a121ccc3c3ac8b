package scale

// BenchmarkScale1000Nodes10000Pods (run by `make bench`, never a test)
// measures the manager at the size issue 10 names, and
// BenchmarkScale5000Nodes50000Pods (`make bench-scale`: too long for `make
// bench`) at five times that, the envelope of issue 21: a local cluster with
// kwok nodes and pods of which a tenth are edgeplane's business, the cloud
// emulator seeded to match, and edgeplane-manager built from this tree and
// run as a separate process with every controller on. Figures:
//   - rss-idle-MiB: VmRSS once everything has converged and the manager is idle;
//   - rss-peak-MiB: VmHWM of a freshly started manager re-listing everything
//     (the full resync), i.e. its peak; rss-peak-first-MiB that of the first
//     manager, which saw every object created and made ready;
//   - cpu-resync-s: CPU time (user+system) of that manager from start until
//     it is idle again;
//   - cloud-mutations-resync: successful mutating cloud calls during the
//     resync, from the emulator's counters (target 0);
//   - cpu-idle-percent: the idle first manager's CPU over 30 s, in percent of
//     a core: what its steady state (periodic checks, sweeps) costs;
//   - heap-idle-MiB: the Go heap in use while idle (go_memstats from /metrics),
//     with stack-idle-MiB (goroutine stacks) and heap-retained-idle-MiB (freed
//     heap not yet returned to the kernel), the rest of the anonymous memory.
//
// With -scale-resyncs N the manager is restarted N times: cpu-resync-s is
// the median, rss-peak-MiB the highest and cloud-mutations-resync the sum.
//
// The mix of edgeplane-relevant objects is mixFor's. BenchmarkScaleNodes runs
// the same at the size -scale-nodes gives, for development.
//
// Set EDGEPLANE_BENCH_PROFILE_DIR to save the idle manager's heap profile
// there (heap-idle.pprof; heap-resync.pprof after the last resync; with
// EDGEPLANE_BENCH_PROFILE_PEAKS also heap-peak-first.pprof) and
// EDGEPLANE_BENCH_MANAGER_ENV to add variables to the manager's environment
// (GODEBUG=memprofilerate=4096 for a finer profile; such runs are for
// finding where memory goes, not for the figures).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/floatippooltest"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/wire"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

// size is one scale the benchmark runs at: the cluster and the edgeplane
// mix, which grows with it (mixFor).
type size struct {
	nodes, pods  int
	aiaNodes     int // the first nodes: n0000..
	idsNodes     int // the next ones
	neipNodes    int // the next ones, each on an EC2 instance of its own
	idsPerNode   int
	peipPods     int
	floatIPPods  int
	burstDeploys int
	burstPerDep  int
	plainNS      int
	// podCIDR is wide enough for every pod: kwok hands out pod IPs from one
	// pool shared by the nodes, a /24 by default. enis is the number of /24s
	// in it, each an EC2 ENI in the emulator.
	podCIDR string
	enis    int
	// The FloatIPPool: a range of at least floatIPPods addresses.
	poolRange, poolSubnet string
	// nodeLease is kwok's --node-lease-duration-seconds; it renews each
	// node's Lease every quarter of it.
	nodeLease int
	// kwokParallelism, if set, is how many pods (and nodes) kwok moves
	// through their stages at once (4 by default). Each step is an API
	// request; on a loaded machine 4 at a time start about 250 pods a
	// minute.
	kwokParallelism int
	// Time allowed for the cluster to reach each state.
	nodesTimeout, convergeTimeout time.Duration
}

// mixFor is the cluster of n nodes: 10 pods a node, a tenth of the pods
// edgeplane's. At 1,000 nodes (the size issue 10 names):
//   - 250 pods annotated for an auto-allocated Elastic IP (PodElasticIP);
//   - 250 float-IP pods of a Deployment, placed by kube-scheduler through
//     the manager's scheduler extender (FloatIPPool);
//   - 250 pods of 5 legacy-annotated burst Deployments of 50 (BurstPolicy
//     translator and controller; the local floor covers every replica,
//     nothing bursts);
//   - 250 pods of an IngressDaemonSet, 2 per node on 125 labelled nodes;
//   - 100 nodes labelled for an anycast address (AnycastIPBinding
//     translator, Tencent Cloud instances in the emulator);
//   - 50 nodes labelled for an Elastic IP (NodeElasticIP translator, EC2
//     instances in the emulator).
//
// The other 9,000 pods are plain, in 20 namespaces, created already bound to
// a node (kwok runs them); the relevant bound pods are spread the same way.
// Every figure scales with n.
func mixFor(n int) size {
	s := size{nodes: n, pods: 10 * n, aiaNodes: n / 10, idsNodes: n / 8, neipNodes: n / 20, idsPerNode: 2,
		peipPods: n / 4, floatIPPods: n / 4, burstDeploys: max(1, n/200), burstPerDep: 50, plainNS: max(1, n/50),
		nodeLease: 40, nodesTimeout: 10 * time.Minute, convergeTimeout: 20 * time.Minute}
	// Pod IPs: a power of two of /24s holding every pod with a quarter to
	// spare (64 at 1,000 nodes, a /18).
	s.enis = 1
	for s.enis*256 < s.pods*5/4 {
		s.enis *= 2
	}
	s.podCIDR = fmt.Sprintf("10.0.0.1/%d", 24-bits(s.enis))
	// The pool: a power of two of /24s holding half as many addresses again
	// as there are float-IP pods (a /23 at 1,000 nodes).
	blocks := 1
	for blocks*256 < s.floatIPPods*3/2 {
		blocks *= 2
	}
	s.poolRange = fmt.Sprintf("172.20.0.10~172.20.%d.250", blocks-1)
	s.poolSubnet = fmt.Sprintf("172.20.0.0/%d", 24-bits(blocks))
	if n > 1000 {
		// 5,000 nodes renewing a Lease every 10 s would be 500 writes a
		// second on a 2-core machine: every 150 s is 33, and the controller
		// manager tolerates 10 minutes of silence (localcluster). More pods
		// in flight at once in kwok, and more time for everything.
		s.nodeLease, s.kwokParallelism = 600, 32
		s.nodesTimeout = time.Duration(n/1000) * 6 * time.Minute
		s.convergeTimeout = time.Duration(n/1000) * 12 * time.Minute
	}
	return s
}

// bits is log2 of a power of two.
func bits(pow2 int) int {
	n := 0
	for pow2 > 1 {
		pow2 /= 2
		n++
	}
	return n
}

func (s size) plainPods() int {
	return s.pods - s.peipPods - s.floatIPPods - s.burstDeploys*s.burstPerDep - s.idsNodes*s.idsPerNode
}

func nodeName(i int) string { return fmt.Sprintf("n%04d", i) }

// scaleNodes sizes BenchmarkScaleNodes, the development run (neither `make
// bench` nor `make bench-scale` runs it): go test -run '^$' -bench
// BenchmarkScaleNodes -benchtime 1x ./test/bench/scale/ -scale-nodes 500.
var scaleNodes = flag.Int("scale-nodes", 500, "nodes of BenchmarkScaleNodes (10 pods each)")

// scaleResyncs is how many times a run restarts the manager (make
// bench-scale: 3). Not -benchtime Nx: with N > 1 the testing package runs
// the benchmark once with b.N = 1 first, which here would build the whole
// cluster twice.
var scaleResyncs = flag.Int("scale-resyncs", 1, "manager restarts (full resyncs) per run of the scale benchmarks")

// BenchmarkScale1000Nodes10000Pods is issue 10's size (`make bench`).
func BenchmarkScale1000Nodes10000Pods(b *testing.B) { benchmarkScale(b, mixFor(1000)) }

// BenchmarkScale5000Nodes50000Pods is issue 21's envelope (`make
// bench-scale`: too long for `make bench`).
func BenchmarkScale5000Nodes50000Pods(b *testing.B) { benchmarkScale(b, mixFor(5000)) }

// BenchmarkScaleNodes runs the same at -scale-nodes nodes, for development:
// its figures are judged by no target.
func BenchmarkScaleNodes(b *testing.B) { benchmarkScale(b, mixFor(*scaleNodes)) }

func benchmarkScale(b *testing.B, s size) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	root, err := k8sbin.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	work := b.TempDir()
	bin := testbin.Build(b, work, "edgeplane-manager")[0]

	sim := cloudsimtest.Start(b, cloudsim.Options{Seed: 1,
		Settings: core.Settings{EC2AddressQuota: 2 * (s.peipPods + s.neipNodes), TencentAddressQuota: 2 * s.aiaNodes, RateLimitsDisabled: true},
		Fixtures: s.fixtures()})

	// The scheduler sends float-IP pods to the manager's extender, over TLS
	// with its client certificate.
	extender := testbin.FreeAddr(b)
	extenderCerts = floatippooltest.Write(b, filepath.Join(work, "floatip-certs"))
	clusterDir := filepath.Join(work, "cluster")
	schedCfg := filepath.Join(work, "scheduler.yaml")
	if err := os.WriteFile(schedCfg, []byte(schedulerConfig(clusterDir, "https://"+extender)), 0o600); err != nil {
		b.Fatal(err)
	}
	scheme, err := edgescheme.New()
	if err != nil {
		b.Fatal(err)
	}
	var kwokConfigs []string
	if s.kwokParallelism > 0 {
		kwokCfg := filepath.Join(work, "kwok.yaml")
		if err := os.WriteFile(kwokCfg, []byte(kwokConfiguration(s.kwokParallelism)), 0o600); err != nil {
			b.Fatal(err)
		}
		kwokConfigs = append(kwokConfigs, kwokCfg)
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: clusterDir, Scheme: scheme, StartTimeout: 5 * time.Minute,
		SchedulerFlags:         []string{"--config=" + schedCfg},
		KwokFlags:              []string{"--cidr=" + s.podCIDR, fmt.Sprintf("--node-lease-duration-seconds=%d", s.nodeLease)},
		KwokConfigs:            kwokConfigs,
		ControllerManagerFlags: []string{"--kube-api-qps=100", "--kube-api-burst=200"},
	})
	if err != nil {
		b.Fatalf("starting the local cluster: %v", err)
	}
	defer func() { _ = cluster.Stop() }()
	if _, err := envtest.InstallCRDs(cluster.RESTConfig(), envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfPathMissing: true}); err != nil {
		b.Fatalf("installing CRDs: %v", err)
	}
	cfg := cluster.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 2000
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		b.Fatal(err)
	}

	start := time.Now()
	s.createNodes(ctx, b, c)
	b.Logf("%d nodes Ready after %s", s.nodes, time.Since(start).Round(time.Second))
	namespaces := []string{"scale-peip", "scale-fip", "scale-burst", "scale-ids"}
	for i := range s.plainNS {
		namespaces = append(namespaces, plainNamespace(i))
	}
	for _, ns := range namespaces {
		if err := cluster.CreateNamespace(ctx, ns); err != nil {
			b.Fatal(err)
		}
	}
	for _, obj := range s.cloudObjects(sim.URL()) {
		if err := c.Create(ctx, obj); err != nil {
			b.Fatal(err)
		}
	}

	kubeconfig := cluster.KubeconfigPath()
	mgr := startManager(b, bin, kubeconfig, extender, "first")
	stopWatch := mgr.profilePeaks(ctx, "heap-peak-first.pprof")
	if err := s.createWorkloads(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.Logf("workloads created after %s", time.Since(start).Round(time.Second))
	s.waitConverged(ctx, b, c)
	b.Logf("converged after %s", time.Since(start).Round(time.Second))
	waitIdle(ctx, b, mgr, 0, firstIdleShare)
	stopWatch()
	// Idle: the mean of a few samples, a second apart.
	var rss, anon, file int64
	for range 5 {
		m, err := ReadMemory(mgr.pid())
		if err != nil {
			b.Fatal(err)
		}
		rss, anon, file = rss+m.RSS/5, anon+m.Anon/5, file+m.File/5
		time.Sleep(time.Second)
	}
	stats := mgr.memStats(b)
	b.Logf("idle: RSS %.0f MiB (anonymous %.0f, file %.0f), heap in use %.0f MiB, allocated %.0f MiB, next collection at %.0f MiB",
		mib(rss), mib(anon), mib(file), mib(stats["heap_inuse_bytes"]), mib(stats["heap_alloc_bytes"]), mib(stats["next_gc_bytes"]))
	mgr.saveProfile(b, "heap-idle.pprof")
	steady := mgr.steadyState(ctx, b, 30*time.Second)
	first, err := ReadMemory(mgr.pid())
	if err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	var cpus []float64
	var peak int64
	mutations := map[string]int64{}
	for i := range b.N * max(1, *scaleResyncs) {
		// The full resync: a new manager process lists everything again and
		// must find nothing to change in the cloud.
		before := sim.World().Stats()
		mgr.stop(b)
		resync := time.Now()
		mgr = startManager(b, bin, kubeconfig, extender, fmt.Sprintf("resync-%d", i))
		cpu := waitIdle(ctx, b, mgr, 20*time.Second, resyncIdleShare)
		m, err := ReadMemory(mgr.pid())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("resync %d: CPU %.1f s, peak RSS %.0f MiB, idle again %s after the start", i, cpu.Seconds(), mib(m.HWM), time.Since(resync).Round(time.Second))
		cpus = append(cpus, cpu.Seconds())
		peak = max(peak, m.HWM)
		for k, n := range Mutations(before, sim.World().Stats()) {
			mutations[k] += n
		}
	}
	b.StopTimer()
	mgr.saveProfile(b, "heap-resync.pprof")
	mgr.stop(b)
	b.Logf("whole run %s", time.Since(start).Round(time.Second))
	var total int64
	for _, n := range mutations {
		total += n
	}
	if total > 0 {
		b.Logf("cloud mutations during the resyncs: %v", mutations)
	}
	b.ReportMetric(mib(rss), "rss-idle-MiB")
	b.ReportMetric(mib(anon), "rss-anon-idle-MiB")
	b.ReportMetric(mib(file), "rss-file-idle-MiB")
	b.ReportMetric(mib(peak), "rss-peak-MiB")
	b.ReportMetric(mib(first.HWM), "rss-peak-first-MiB")
	b.ReportMetric(mib(stats["heap_inuse_bytes"]), "heap-idle-MiB")
	// What else the anonymous resident set holds: goroutine stacks, and heap
	// the collector freed but has not yet returned to the kernel.
	b.ReportMetric(mib(stats["stack_inuse_bytes"]), "stack-idle-MiB")
	b.ReportMetric(mib(stats["heap_idle_bytes"]-stats["heap_released_bytes"]), "heap-retained-idle-MiB")
	// With -scale-resyncs N, N resyncs: the median CPU, the highest peak
	// and every mutation of them all.
	b.ReportMetric(median(cpus), "cpu-resync-s")
	b.ReportMetric(steady, "cpu-idle-percent")
	b.ReportMetric(float64(total), "cloud-mutations-resync")
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// fixtures seeds the emulator: EC2 instances whose ENIs hold every pod IP
// kwok can hand out (the PodElasticIP pods' IPs are not known in advance),
// a Tencent Cloud instance per anycast node and an EC2 instance per
// NodeElasticIP node (its primary interface with a primary IP of its own).
func (s size) fixtures() *core.Fixtures {
	var fx core.Fixtures
	for x := range s.enis { // the pod CIDR, a /24 per ENI
		eni := core.EC2ENIFixture{NetworkInterfaceID: fmt.Sprintf("eni-5ca1e%011d", x)}
		for y := range 256 {
			if x == 0 && y == 0 {
				continue
			}
			eni.PrivateIPAddresses = append(eni.PrivateIPAddresses, fmt.Sprintf("10.0.%d.%d", x, y))
		}
		fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{
			InstanceID: fmt.Sprintf("i-5ca1e%011d", x), VpcID: "vpc-5ca1e001", SubnetID: "subnet-5ca1e001",
			NetworkInterfaces: []core.EC2ENIFixture{eni},
		})
	}
	for i := range s.aiaNodes {
		fx.Tencent.Instances = append(fx.Tencent.Instances, core.TCInstanceFixture{
			InstanceID: instanceID(i), InstanceName: nodeName(i), PrivateIPAddresses: []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)},
		})
	}
	for i := s.aiaNodes + s.idsNodes; i < s.aiaNodes+s.idsNodes+s.neipNodes; i++ {
		fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{
			InstanceID: ec2InstanceID(i), VpcID: "vpc-5ca1e001", SubnetID: "subnet-5ca1e001", AvailabilityZone: "us-east-1a",
			NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: fmt.Sprintf("eni-5ca1e1%010d", i),
				PrivateIPAddresses: []string{fmt.Sprintf("10.3.%d.%d", i/250, i%250+1)}}},
		})
	}
	return &fx
}

// kwokConfiguration sets how many pods, nodes and node Leases kwok works on
// at once.
func kwokConfiguration(parallelism int) string {
	return fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: %[1]d
  nodePlayStageParallelism: %[1]d
  nodeLeaseParallelism: %[1]d
`, parallelism)
}

func instanceID(i int) string { return fmt.Sprintf("ins-sc%06d", i) }

// ec2InstanceID is the EC2 instance of NodeElasticIP node i.
func ec2InstanceID(i int) string { return fmt.Sprintf("i-5ca1e1%010d", i) }

// extenderCerts are the manager's extender certificates and the
// scheduler's client certificate, made once per benchmark run.
var extenderCerts floatippooltest.Certs

func schedulerConfig(clusterDir, extenderURL string) string {
	return wire.SchedulerConfig{
		Kubeconfig: localcluster.ComponentKubeconfig(clusterDir, localcluster.Scheduler), URLPrefix: extenderURL,
		Resource: networkingv1alpha1.ResourceENIIP, NodeCacheCapable: true, QPS: 200, CertDir: extenderCerts.ClientDir,
	}.YAML()
}

// parallel runs fn for 0..n-1 on 32 workers and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// createRetrying creates obj, retrying while the API server is overloaded.
func createRetrying(ctx context.Context, c client.Client, obj client.Object) error {
	return wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second},
		func(ctx context.Context) (bool, error) {
			err := c.Create(ctx, obj.DeepCopyObject().(client.Object))
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return true, nil
			case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsInternalError(err):
				return false, nil
			}
			return false, fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		})
}

func (s size) createNodes(ctx context.Context, b *testing.B, c client.Client) {
	err := parallel(s.nodes, func(i int) error {
		spec := localcluster.NodeSpec{Name: nodeName(i), Labels: map[string]string{}}
		switch {
		case i < s.aiaNodes:
			spec.Labels[networkingv1alpha1.LegacyLabelNeedAIAIP] = "true"
			spec.ProviderID = "qcloud:///800002/" + instanceID(i)
		case i < s.aiaNodes+s.idsNodes:
			spec.Labels["scale.edgeplane.io/ingress"] = "true"
		case i < s.aiaNodes+s.idsNodes+s.neipNodes:
			spec.Labels[networkingv1alpha1.LabelWantElasticIP] = "true"
			spec.ProviderID = "aws:///us-east-1a/" + ec2InstanceID(i)
		}
		return createRetrying(ctx, c, spec.Object())
	})
	if err != nil {
		b.Fatal(err)
	}
	s.poll(ctx, b, "every node Ready and untainted", s.nodesTimeout, func() (bool, string) {
		var list corev1.NodeList
		if err := c.List(ctx, &list); err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range list.Items {
			if nodeReady(&list.Items[i]) {
				ready++
			}
		}
		return ready == s.nodes, fmt.Sprintf("%d of %d ready", ready, s.nodes)
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return false
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (s size) cloudObjects(endpoint string) []client.Object {
	aws := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: cloudv1alpha1.DefaultProviderConfigName}}
	aws.Spec.Provider, aws.Spec.Region, aws.Spec.Endpoint, aws.Spec.ClusterIdentity = cloudv1alpha1.ProviderAWS, "us-east-1", endpoint, "scale"
	aws.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	tc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "tencentcloud"}}
	tc.Spec.Provider, tc.Spec.Region, tc.Spec.Endpoint, tc.Spec.ClusterIdentity = cloudv1alpha1.ProviderTencentCloud, "ap-hongkong", endpoint, "scale"
	tc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	pool := &networkingv1alpha1.FloatIPPool{
		ObjectMeta: metav1.ObjectMeta{Name: "scale"},
		Spec: networkingv1alpha1.FloatIPPoolSpec{Ranges: []string{s.poolRange}, Subnet: s.poolSubnet, Gateway: "172.20.0.1",
			NodeSubnets: []string{"10.0.0.0/8"}},
	}
	return []client.Object{aws, tc, pool}
}

// container is the shape of every pod's container: what a typical
// Deployment's pod carries (image, ports, env, resources, probes).
func container(name string) corev1.Container {
	return corev1.Container{
		Name: name, Image: "registry.example.com/team/" + name + ":1.4.2",
		Args:  []string{"--listen=:8080", "--log-format=json"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 10},
	}
}

func boundPod(ns, name string, node int, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{NodeName: nodeName(node), Containers: []corev1.Container{container("app")},
			AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](1)},
	}
}

func deployment(ns, name string, replicas int32, annotations map[string]string, mutate func(*corev1.PodSpec)) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container(name)}, AutomountServiceAccountToken: ptr.To(false),
					TerminationGracePeriodSeconds: ptr.To[int64](1)}}},
	}
	if mutate != nil {
		mutate(&d.Spec.Template.Spec)
	}
	return d
}

func (s size) createWorkloads(ctx context.Context, c client.Client) error {
	var objs []client.Object
	// IngressDaemonSet: 2 replicas on each labelled node.
	objs = append(objs, &appsv1alpha1.IngressDaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress", Namespace: "scale-ids"},
		Spec: appsv1alpha1.IngressDaemonSetSpec{
			Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingress"}},
			Template:        appsv1alpha1.PodTemplate{Metadata: appsv1alpha1.PodTemplateMetadata{Labels: map[string]string{"app": "ingress"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{container("ingress")}, TerminationGracePeriodSeconds: ptr.To[int64](1)}},
			ReplicasPerNode: int32(s.idsPerNode),
			NodeSelector:    map[string]string{"scale.edgeplane.io/ingress": "true"},
		},
	})
	// Float-IP pods through the scheduler and the extender.
	objs = append(objs, deployment("scale-fip", "fip", int32(s.floatIPPods), nil, func(spec *corev1.PodSpec) {
		eni := corev1.ResourceList{networkingv1alpha1.ResourceENIIP: resource.MustParse("1")}
		maps.Copy(spec.Containers[0].Resources.Requests, eni)
		spec.Containers[0].Resources.Limits[networkingv1alpha1.ResourceENIIP] = resource.MustParse("1")
	}))
	// Legacy-annotated burst workloads whose local floor covers every replica.
	for i := range s.burstDeploys {
		objs = append(objs, deployment("scale-burst", fmt.Sprintf("burst-%d", i), int32(s.burstPerDep),
			map[string]string{"AUTO_SCALE_EKS": "true", "LOCAL_REPLICAS": strconv.Itoa(s.burstPerDep)}, nil))
	}
	for _, o := range objs {
		if err := createRetrying(ctx, c, o); err != nil {
			return err
		}
	}
	// Bound pods: the Elastic-IP pods, then the plain ones, spread over
	// every node.
	return parallel(s.peipPods+s.plainPods(), func(i int) error {
		node := (i * 7) % s.nodes
		if i < s.peipPods {
			return createRetrying(ctx, c, boundPod("scale-peip", fmt.Sprintf("eip-%03d", i), node,
				map[string]string{"app": "eip"}, map[string]string{translate.Type: "auto"}))
		}
		j := i - s.peipPods
		ns := plainNamespace(j % s.plainNS)
		return createRetrying(ctx, c, boundPod(ns, fmt.Sprintf("plain-%04d", j), node,
			map[string]string{"app": fmt.Sprintf("plain-%d", j%50), "tier": "backend"}, nil))
	})
}

func plainNamespace(i int) string { return fmt.Sprintf("plain-%02d", i) }

// waitConverged waits until every pod runs and every edgeplane object the
// mix creates is Ready.
func (s size) waitConverged(ctx context.Context, b *testing.B, c client.Client) {
	s.poll(ctx, b, "every pod Running", s.convergeTimeout, func() (bool, string) {
		var all, notRunning metav1.PartialObjectMetadataList
		all.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		notRunning.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
		// One item and the count of the rest: how many pods exist, without
		// listing them all; then the few that do not run yet.
		if err := c.List(ctx, &all, client.Limit(1)); err != nil {
			return false, err.Error()
		}
		created := len(all.Items)
		if all.RemainingItemCount != nil {
			created += int(*all.RemainingItemCount)
		}
		if err := c.List(ctx, &notRunning, client.MatchingFieldsSelector{Selector: fieldsNotRunning}); err != nil {
			return false, err.Error()
		}
		running := created - len(notRunning.Items)
		return created >= s.pods && len(notRunning.Items) == 0, fmt.Sprintf("%d of %d pods (%d created) Running", running, s.pods, created)
	})
	s.poll(ctx, b, "every PodElasticIP, AnycastIPBinding and NodeElasticIP Ready", s.convergeTimeout, func() (bool, string) {
		var peips networkingv1alpha1.PodElasticIPList
		var aias networkingv1alpha1.AnycastIPBindingList
		var neips networkingv1alpha1.NodeElasticIPList
		for _, l := range []client.ObjectList{&peips, &aias, &neips} {
			if err := c.List(ctx, l); err != nil {
				return false, err.Error()
			}
		}
		p, a, n := 0, 0, 0
		for i := range peips.Items {
			if peips.Items[i].GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				p++
			}
		}
		for i := range aias.Items {
			if aias.Items[i].GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				a++
			}
		}
		for i := range neips.Items {
			if neips.Items[i].GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
				n++
			}
		}
		return p == s.peipPods && a == s.aiaNodes && n == s.neipNodes, fmt.Sprintf("%d of %d PodElasticIPs, %d of %d AnycastIPBindings, %d of %d NodeElasticIPs Ready",
			p, s.peipPods, a, s.aiaNodes, n, s.neipNodes)
	})
	s.poll(ctx, b, "the IngressDaemonSet Ready", s.convergeTimeout, func() (bool, string) {
		var ids appsv1alpha1.IngressDaemonSet
		if err := c.Get(ctx, client.ObjectKey{Namespace: "scale-ids", Name: "ingress"}, &ids); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(ids.Status.Conditions, appsv1alpha1.TypeReady), fmt.Sprintf("%+v", ids.Status.Conditions)
	})
}

// poll checks cond every 2 s (every 10 s at 5,000 nodes: each check lists
// nodes or pods) until it holds, printing its state to stderr every minute.
func (s size) poll(ctx context.Context, b *testing.B, what string, timeout time.Duration, cond func() (bool, string)) {
	b.Helper()
	var state string
	every := max(2*time.Second, time.Duration(s.nodes/500)*time.Second)
	logged := time.Now()
	err := wait.PollUntilContextTimeout(ctx, every, timeout, true, func(context.Context) (bool, error) {
		var ok bool
		ok, state = cond()
		if time.Since(logged) > time.Minute {
			// To stderr: a benchmark's log keeps only its first lines.
			fmt.Fprintf(os.Stderr, "%s waiting for %s: %s\n", time.Now().Format(time.TimeOnly), what, state)
			logged = time.Now()
		}
		return ok, nil
	})
	if err != nil {
		b.Fatalf("waiting for %s: %v (last: %s)", what, err, state)
	}
}

// The share of a core under which the manager counts as idle, over 10 s.
// The first manager is measured minutes after its objects became Ready:
// by then it is in its steady state, which is not free — it checks every
// cloud address again every PollInterval (about 2,000 at 5,000 nodes,
// PodElasticIPs every minute and the others every two: some 25 checks a
// second) and sweeps, about a tenth of a core (cpu-idle-percent reports it).
// Converging, it uses most of a core. A restarted manager is measured in its
// first minute, before its first periodic check falls due: it must quieten
// down completely.
const (
	firstIdleShare  = 0.20
	resyncIdleShare = 0.02
)

// waitIdle waits until the manager has used less than share of a core over
// the last 10 s (but at least minWait after this call), and returns its CPU
// time at that moment. When it never does, the failure names the
// controllers that kept reconciling.
func waitIdle(ctx context.Context, b *testing.B, m *managerProc, minWait time.Duration, share float64) time.Duration {
	b.Helper()
	const window = 10
	began := time.Now()
	var samples []time.Duration
	for {
		cpu, err := ReadCPU(m.pid())
		if err != nil {
			b.Fatal(err)
		}
		samples = append(samples, cpu)
		if n := len(samples); n > window && time.Since(began) >= minWait && cpu-samples[n-1-window] < time.Duration(share*float64(window*time.Second)) {
			return cpu
		}
		if time.Since(began) > 15*time.Minute {
			before := m.reconciles(b)
			time.Sleep(window * time.Second)
			b.Fatalf("the manager never went idle: CPU %v over the last samples; reconciles in the next %d s by controller: %v",
				samples[max(0, len(samples)-window):], window, promtext.Delta(m.reconciles(b), before))
		}
		select {
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// steadyState watches the idle manager for d and returns the share of a
// core it used, in percent, logging what its controllers did meanwhile.
func (m *managerProc) steadyState(ctx context.Context, b *testing.B, d time.Duration) float64 {
	b.Helper()
	rec0 := m.reconciles(b) // before the CPU reading: a scrape costs CPU
	cpu0, err := ReadCPU(m.pid())
	if err != nil {
		b.Fatal(err)
	}
	select {
	case <-ctx.Done():
		b.Fatal(ctx.Err())
	case <-time.After(d):
	}
	cpu1, err := ReadCPU(m.pid())
	if err != nil {
		b.Fatal(err)
	}
	percent := 100 * (cpu1 - cpu0).Seconds() / d.Seconds()
	b.Logf("idle for %s: %.1f%% of a core; reconciles by controller: %v", d, percent, promtext.Delta(m.reconciles(b), rec0))
	return percent
}

// reconciles reads controller_runtime_reconcile_total from the manager's
// metrics, summed over results, by controller.
func (m *managerProc) reconciles(b *testing.B) map[string]float64 {
	b.Helper()
	out := map[string]float64{}
	for _, c := range m.metricFamilies(b)["controller_runtime_reconcile_total"].GetMetric() {
		out[promtext.Labels(c)["controller"]] += c.GetCounter().GetValue()
	}
	return out
}

// metricFamilies reads the manager's metrics.
func (m *managerProc) metricFamilies(b *testing.B) map[string]*dto.MetricFamily {
	b.Helper()
	families, err := promtext.Get(b.Context(), "http://"+m.metrics+"/metrics")
	if err != nil {
		b.Fatal(err)
	}
	return families
}

type managerProc struct {
	p       *localcluster.Process
	metrics string
	pprof   string
}

// saveProfile writes the manager's heap profile to
// $EDGEPLANE_BENCH_PROFILE_DIR/name when that variable is set.
func (m *managerProc) saveProfile(b *testing.B, name string) {
	dir := os.Getenv("EDGEPLANE_BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	if err := m.writeProfile(filepath.Join(dir, name)); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "heap profile in %s\n", filepath.Join(dir, name))
}

// profilePeaks, when EDGEPLANE_BENCH_PROFILE_DIR and
// EDGEPLANE_BENCH_PROFILE_PEAKS are set, saves the manager's heap profile as
// name each time its resident set has grown 8 MiB past the last saved one,
// until the returned function is called: the profile nearest its peak.
// Each profile costs the manager a little memory, so such runs are for
// finding where it goes, not for the figures.
func (m *managerProc) profilePeaks(ctx context.Context, name string) (stop func()) {
	dir := os.Getenv("EDGEPLANE_BENCH_PROFILE_DIR")
	if dir == "" || os.Getenv("EDGEPLANE_BENCH_PROFILE_PEAKS") == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var saved int64
		for ctx.Err() == nil {
			if mem, err := ReadMemory(m.pid()); err == nil && mem.RSS > saved+8<<20 {
				if err := m.writeProfile(filepath.Join(dir, name)); err == nil {
					saved = mem.RSS
					fmt.Fprintf(os.Stderr, "%s heap profile at RSS %.0f MiB in %s\n", time.Now().Format(time.TimeOnly), mib(mem.RSS), name)
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// writeProfile writes the manager's heap profile to path.
func (m *managerProc) writeProfile(path string) error {
	resp, err := http.Get("http://" + m.pprof + "/debug/pprof/heap")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

func (m *managerProc) pid() int { return m.p.Pid() }

func (m *managerProc) stop(b *testing.B) {
	if err := m.p.Stop(30 * time.Second); err != nil {
		b.Fatal(err)
	}
}

// memStats reads the manager's go_memstats_* gauges from its metrics, by
// name without the prefix (heap_inuse_bytes, stack_inuse_bytes, ...).
func (m *managerProc) memStats(b *testing.B) map[string]int64 {
	b.Helper()
	out := map[string]int64{}
	for name, f := range m.metricFamilies(b) {
		if name, ok := strings.CutPrefix(name, "go_memstats_"); ok && f.GetType() == dto.MetricType_GAUGE && len(f.GetMetric()) == 1 {
			out[name] = int64(f.GetMetric()[0].GetGauge().GetValue())
		}
	}
	if _, ok := out["heap_inuse_bytes"]; !ok {
		b.Fatal("go_memstats_heap_inuse_bytes missing from the manager's metrics")
	}
	return out
}

func startManager(b *testing.B, bin, kubeconfig, extender, name string) *managerProc {
	b.Helper()
	probe, webhook, metrics, pprof := testbin.FreeAddr(b), testbin.FreeAddr(b), testbin.FreeAddr(b), testbin.FreeAddr(b)
	_, webhookPort, _ := net.SplitHostPort(webhook)
	dir := b.TempDir()
	p, err := localcluster.StartProcess(name, bin, append([]string{"--kubeconfig", kubeconfig, "--cluster-name", "scale", "--leader-elect=false",
		"--metrics-bind-address", metrics, "--metrics-secure=false", "--health-probe-bind-address", probe, "--pprof-bind-address", pprof,
		"--webhook-host", "127.0.0.1", "--webhook-port", webhookPort, "--webhook-cert-dir", filepath.Join(dir, "certs"),
		"--webhook-service-namespace", "default",
		"--floatippool-extender-address", extender,
		"--anycastipbinding-provider-config", "tencentcloud"}, extenderCerts.ManagerFlags()...), managerEnv(), dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Kill() })
	if err := testbin.WaitHTTPOK(b.Context(), "http://"+probe+"/readyz", 2*time.Minute, p.Exited); err != nil {
		tail, _ := os.ReadFile(p.LogPath())
		b.Fatalf("manager %s never became ready: %v\n%s", name, err, lastLines(string(tail), 30))
	}
	return &managerProc{p: p, metrics: metrics, pprof: pprof}
}

// managerEnv passes EDGEPLANE_BENCH_MANAGER_ENV, space-separated VAR=value
// pairs, to the manager (e.g. GODEBUG=memprofilerate=65536 for a finer heap
// profile, or GOGC=25 to try another collector setting).
func managerEnv() []string {
	return strings.Fields(os.Getenv("EDGEPLANE_BENCH_MANAGER_ENV"))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

var fieldsNotRunning = fields.OneTermNotEqualSelector("status.phase", string(corev1.PodRunning))
