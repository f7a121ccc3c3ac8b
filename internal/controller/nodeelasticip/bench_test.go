package nodeelasticip_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/cpuuse"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/internal/testsupport/readywatch"
)

// BenchmarkConverge200Nodes: 200 nodes on EC2 instances are labelled for
// an Elastic IP at once, against the emulator with EC2's per-action buckets
// (mutating: 50 burst, 5/s; describe: 100, 20/s; tags: 100, 10/s) on a
// clock ten times faster, client-side buckets to match. It measures the
// time from the labels to every translated NodeElasticIP Ready (its address
// associated with the node's primary IP) and reports it divided by the
// physical bound: AllocateAddress and AssociateAddress each drain their own
// bucket, so with one node's association overlapping the next one's
// allocation the slower bucket alone sets the pace, (N − 50)/(5 × 10) s,
// plus one round trip. Cloud calls are counted on the client side (the
// SDK's retries of a call are one call; docs/cloudsim.md). The manager runs
// with its default settings (64 workers) but for the account's raised
// limits; NEIP_BENCH_WORKERS sets another worker count to compare.
func BenchmarkConverge200Nodes(b *testing.B) {
	const nodes = 200
	mutating := core.Bucket{Burst: 50, RefillPerSecond: 5 * 10}
	describe := core.Bucket{Burst: 100, RefillPerSecond: 20 * 10}
	tags := core.Bucket{Burst: 100, RefillPerSecond: 10 * 10}
	// NEIP_BENCH_WORKERS: another worker count than the default, to
	// compare (the target is measured with the default).
	workers := 0
	if v := os.Getenv("NEIP_BENCH_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("NEIP_BENCH_WORKERS=%q: want a positive number", v)
		}
		workers = n
	}
	for range b.N {
		w := newWorld(b, worldOpts{instances: nodes, noManager: true,
			settings: core.Settings{EC2AddressQuota: 1000, RateLimitScale: 1, RateLimitOverrides: map[string]core.Bucket{
				"ec2/AllocateAddress": mutating, "ec2/AssociateAddress": mutating, "ec2/DisassociateAddress": mutating,
				"ec2/ReleaseAddress": mutating, "ec2/DescribeAddresses": describe, "ec2/DescribeNetworkInterfaces": describe,
				"ec2/CreateTags": tags, "ec2/DeleteTags": tags,
			}},
			opts: func(o *nodeelasticip.Options) {
				// The manager's defaults (what a user gets without
				// flags), but for the account's raised limits and the
				// test's selector and provider config: the target is
				// measured with them.
				d := nodeelasticip.DefaultOptions()
				o.PollInterval, o.BlockedPollInterval, o.ListingMaxAge = d.PollInterval, d.BlockedPollInterval, d.ListingMaxAge
				o.BatchWindow, o.MaxBackoff, o.MaxConcurrentReconciles = d.BatchWindow, d.MaxBackoff, d.MaxConcurrentReconciles
				o.AWSRateLimitScale = 10
				if workers > 0 {
					o.MaxConcurrentReconciles = workers
				}
			}})
		cfg := rest.CopyConfig(env.Config)
		clientlimit.Apply(cfg, clientlimit.DefaultQPS, clientlimit.DefaultBurst) // the manager's default: no client-side limit
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			b.Fatal(err)
		}
		w.c = c
		// The annotations every kubelet sets on its node at registration
		// (as BenchmarkConverge200 of AnycastIPBinding gives its nodes): a
		// node without any would make the node patch add the whole
		// annotation map, which is not safe on a cached copy, so every
		// node would be read from the API server before its patch — a
		// read no real node costs.
		parallel(nodes, 32, func(i int) {
			w.node(i, false, func(n *corev1.Node) {
				n.Annotations = map[string]string{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
			})
		})
		writes := &writeCounter{}
		// NEIP_BENCH_TRACE also prints the manager's API requests by verb
		// and resource with their latencies and when they were answered
		// (reads included), and the CPU each process used.
		requests := apicount.New()
		w.wrap = func(rt http.RoundTripper) http.RoundTripper { return requests.Wrap(writes.wrap(rt)) }
		w.startManager()
		// A manager serving a cluster has its caches filled long before
		// nodes are labelled: wait for the informers the translator and
		// the reconciler use (as AnycastIPBinding's benchmark does), so
		// the manager's start is not measured as convergence.
		for _, obj := range []client.Object{&corev1.Node{}, &networkingv1alpha1.NodeElasticIP{}} {
			if _, err := w.mgr.GetCache().GetInformer(w.ctx, obj); err != nil {
				b.Fatal(err)
			}
		}
		if !w.mgr.GetCache().WaitForCacheSync(w.ctx) {
			b.Fatal("the manager's cache did not sync")
		}
		before := clientCalls()
		// Convergence is seen by an informer beside the manager: a list
		// poll would load the API server under measurement.
		watch, err := readywatch.Start(cfg, env.Scheme, &networkingv1alpha1.NodeElasticIP{}, cache.Options{}, func(o client.Object) bool {
			n := o.(*networkingv1alpha1.NodeElasticIP)
			return strings.HasPrefix(n.Name, w.prefix) && n.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable
		})
		if err != nil {
			b.Fatal(err)
		}

		load := cpuuse.Load1()
		cpuBefore := cpuuse.Read()
		requests.Reset()
		start := time.Now()
		b.ResetTimer()
		// The label, and the taint the Node webhook would add in the same
		// request (envtest calls no webhook).
		label := fmt.Sprintf(`{"metadata":{"labels":{"edgeplane-test/want-eip":%q}},"spec":{"taints":[{"key":%q,"value":"true","effect":"NoSchedule"}]}}`,
			w.prefix, networkingv1alpha1.DefaultNodeElasticIPTaintKey)
		parallel(nodes, 32, func(i int) {
			n := &corev1.Node{}
			n.Name = w.nodeName(i)
			if err := c.Patch(context.Background(), n, client.RawPatch(types.MergePatchType, []byte(label))); err != nil {
				b.Errorf("labelling node %d: %v", i, err)
			}
		})
		stopTrace := trace(watch, start, before)
		ready := watch.Wait(nodes, start.Add(5*time.Minute))
		elapsed := time.Since(start)
		b.StopTimer()
		stopTrace()
		watch.Stop()
		if ready < nodes {
			b.Fatalf("only %d of %d Ready after %s", ready, nodes, elapsed)
		}
		if os.Getenv("NEIP_BENCH_TRACE") != "" {
			fmt.Printf("CPU used while converging:\n%smanager API requests:\n%s", cpuuse.Read().Since(cpuBefore, elapsed), requests)
		}
		calls := promtext.Delta(clientCalls(), before)
		mutOK := calls["AllocateAddress/OK"] + calls["AssociateAddress/OK"] + calls["DisassociateAddress/OK"] + calls["ReleaseAddress/OK"] +
			calls["CreateTags/OK"] + calls["DeleteTags/OK"]
		var describes, failed float64
		for k, v := range calls {
			if strings.HasPrefix(k, "Describe") {
				describes += v
			}
			if !strings.HasSuffix(k, "/OK") {
				failed += v
			}
		}
		bound := float64(nodes-50) / (5 * 10)
		b.ReportMetric(elapsed.Seconds(), "s-converge")
		b.ReportMetric(elapsed.Seconds()/bound, "ratio-per-action-bound")
		b.ReportMetric(mutOK/nodes, "mutating-ok/node")
		b.ReportMetric(describes/nodes, "describe/node")
		b.ReportMetric(failed, "calls-failed")
		b.ReportMetric(float64(writes.total())/nodes, "kube-writes/node")
		b.ReportMetric(load, "load1")
		fmt.Printf("NodeElasticIP convergence: %d nodes Ready in %.2fs; per-action bound (%d-50)/(5*10) = %.1fs -> ratio %.3f; "+
			"client-side calls: mutating OK %.0f (%.3f/node), describe %.0f (%.3f/node), failed %.0f; by action %v; "+
			"the manager's Kubernetes API writes: %.2f/node %v\n",
			nodes, elapsed.Seconds(), nodes, bound, elapsed.Seconds()/bound, mutOK, mutOK/nodes, describes, describes/nodes, failed, calls,
			float64(writes.total())/nodes, writes.byKind())
		w.stop()
	}
}

// writeCounter counts the manager's writes to the API server by verb and
// resource.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *writeCounter) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Method != http.MethodGet {
			// /api/v1/<res>/..., /apis/<group>/<version>/<res>/...,
			// either with namespaces/<ns>/ before <res>.
			parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
			i := 2
			if parts[0] == "apis" {
				i = 3
			}
			if i < len(parts) && parts[i] == "namespaces" && i+2 < len(parts) {
				i += 2
			}
			res := strings.Join(parts[min(i, len(parts)-1):min(i+1, len(parts))], "/")
			if parts[len(parts)-1] == "status" {
				res += "/status"
			}
			resp, err := next.RoundTrip(r)
			key := r.Method + " " + res
			if err == nil && resp.StatusCode >= 400 {
				key += fmt.Sprintf(" %d", resp.StatusCode)
			}
			c.mu.Lock()
			if c.counts == nil {
				c.counts = map[string]int{}
			}
			c.counts[key]++
			c.mu.Unlock()
			return resp, err
		}
		return next.RoundTrip(r)
	})
}

func (c *writeCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

func (c *writeCounter) byKind() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// clientCalls reads edgeplane_cloud_api_requests_total for EC2 by
// "<action>/<code>": the calls the client made, each with its retries.
func clientCalls() map[string]float64 {
	requests, _, _ := cloud.Collectors()
	ch := make(chan prometheus.Metric, 256)
	go func() { requests.Collect(ch); close(ch) }()
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) != nil {
			continue
		}
		if l := promtext.Labels(&d); l["provider"] == cloud.ProviderAWS {
			out[l["action"]+"/"+l["code"]] += d.GetCounter().GetValue()
		}
	}
	return out
}

// parallel runs fn(0..n-1) on k goroutines.
func parallel(n, k int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range k {
		wg.Go(func() {
			for i := range next {
				fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// trace, with NEIP_BENCH_TRACE set, prints every 100 ms how many objects
// exist and are Ready and how many addresses the cloud allocated and associated. It
// returns the function that stops it.
func trace(watch *readywatch.Watch, start time.Time, before map[string]float64) func() {
	if os.Getenv("NEIP_BENCH_TRACE") == "" {
		return func() {}
	}
	done := make(chan struct{})
	go wait.Until(func() {
		st := promtext.Delta(clientCalls(), before)
		ready, all := watch.Counts()
		fmt.Printf("%.1fs: %d objects, %d ready, alloc %.0f assoc %.0f\n", time.Since(start).Seconds(), all, ready,
			st["AllocateAddress/OK"], st["AssociateAddress/OK"])
	}, 100*time.Millisecond, done)
	return func() { close(done) }
}
