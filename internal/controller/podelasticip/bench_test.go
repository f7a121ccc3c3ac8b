package podelasticip_test

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
	"github.com/edgeplane/edgeplane/internal/testsupport/readywatch"
)

// BenchmarkConvergence500Auto: 500 Auto PodElasticIPs for 500 running pods
// against the emulator with EC2's mutating bucket (50 burst, 5/s) on a
// clock ten times faster (refill 50/s), client-side buckets to match. It
// reports the convergence time divided by the rate-limit bound
// (2·500 − 50)/(5·10) s from the issue (one shared mutating bucket for the
// 1000 mutating calls), the same against the bound of EC2's per-action
// buckets (allocations and associations each (500 − 50)/50 s, overlapping),
// and the mutating and describe calls per pod.
func BenchmarkConvergence500Auto(b *testing.B) {
	const pods = 500
	mutating := core.Bucket{Burst: 50, RefillPerSecond: 5 * 10}
	describe := core.Bucket{Burst: 100, RefillPerSecond: 20 * 10}
	tags := core.Bucket{Burst: 100, RefillPerSecond: 10 * 10}
	for range b.N {
		counter := apicount.New()
		w := newWorld(b, worldOpts{
			wrap: counter.Wrap,
			settings: core.Settings{EC2AddressQuota: 1000, RateLimitScale: 1, RateLimitOverrides: map[string]core.Bucket{
				"ec2/AllocateAddress": mutating, "ec2/AssociateAddress": mutating, "ec2/DisassociateAddress": mutating,
				"ec2/ReleaseAddress": mutating, "ec2/DescribeAddresses": describe, "ec2/DescribeNetworkInterfaces": describe,
				"ec2/CreateTags": tags, "ec2/DeleteTags": tags,
			}},
			opts: func(o *podelasticip.Options) {
				o.AWSRateLimitScale = 10
				o.PollInterval = time.Minute
				o.ListingMaxAge = 10 * time.Second
				o.MaxBackoff = 5 * time.Second
				if v := os.Getenv("PEIP_BENCH_WORKERS"); v != "" {
					o.MaxConcurrentReconciles, _ = strconv.Atoi(v)
				}
			},
		})
		cfg := rest.CopyConfig(env.Config)
		clientlimit.Apply(cfg, clientlimit.DefaultQPS, clientlimit.DefaultBurst) // the manager's default: no client-side limit
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			b.Fatal(err)
		}
		w.c = c
		ip := func(i int) string {
			if i < 250 {
				return fmt.Sprintf("10.0.1.%d", i+1)
			}
			return fmt.Sprintf("10.0.2.%d", i-249)
		}
		parallel(pods, 32, func(i int) { w.pod(fmt.Sprintf("b%03d", i), ip(i), hostIP1, nil) })

		// Convergence is seen by an informer beside the manager: a list
		// poll of 500 objects would load the API server under measurement.
		watch := watchAvailable(b, cfg, w.ns)
		counter.Reset()
		writesBefore, readsBefore := counter.Writes(), counter.Reads()
		start := time.Now()
		b.ResetTimer()
		stopTimeline := timeline(b, w, start)
		parallel(pods, 32, func(i int) { w.peip(fmt.Sprintf("b%03d", i), fmt.Sprintf("b%03d", i), nil) })
		ready := watch.Wait(pods, start.Add(10*time.Minute))
		elapsed := time.Since(start)
		b.StopTimer()
		stopTimeline()
		watch.Stop()
		if ready < pods {
			b.Fatalf("only %d of %d Ready after %s", ready, pods, elapsed)
		}
		stats := w.sim.World().Stats()
		count := func(actions ...string) (ok, all int64) {
			for k, v := range stats {
				for _, a := range actions {
					if len(k) > len("ec2/"+a+"/") && k[:len("ec2/"+a+"/")] == "ec2/"+a+"/" {
						all += v
						if k == "ec2/"+a+"/OK" {
							ok += v
						}
					}
				}
			}
			return ok, all
		}
		mutOK, mutAll := count("AllocateAddress", "AssociateAddress", "DisassociateAddress", "ReleaseAddress", "CreateTags", "DeleteTags")
		descOK, descAll := count("DescribeAddresses", "DescribeNetworkInterfaces")
		issueBound := float64(2*pods-50) / (5 * 10)
		perActionBound := float64(pods-50) / (5 * 10)
		b.ReportMetric(elapsed.Seconds(), "s-converge")
		b.ReportMetric(elapsed.Seconds()/issueBound, "ratio-issue-bound")
		b.ReportMetric(elapsed.Seconds()/perActionBound, "ratio-per-action-bound")
		b.ReportMetric(float64(mutOK)/pods, "mutating-ok/pod")
		b.ReportMetric(float64(mutAll)/pods, "mutating-sent/pod")
		b.ReportMetric(float64(descAll)/pods, "describe/pod")
		b.ReportMetric(float64(counter.Writes()-writesBefore)/pods, "kube-writes/pod")
		b.ReportMetric(float64(counter.Reads()-readsBefore)/pods, "kube-reads/pod")
		if os.Getenv("PEIP_BENCH_DEBUG") != "" {
			b.Logf("the manager's API requests:\n%s", counter)
		}
		fmt.Printf("PodElasticIP convergence: %d pods Ready in %.2fs; issue bound (2*%d-50)/(5*10) = %.1fs -> ratio %.3f; "+
			"per-action bound (%d-50)/50 = %.1fs -> ratio %.3f; mutating calls OK %d (%.3f/pod), sent %d (%.3f/pod, incl. throttled); "+
			"describe calls OK %d, sent %d (%.3f/pod); stats %v\n",
			pods, elapsed.Seconds(), pods, issueBound, elapsed.Seconds()/issueBound, pods, perActionBound, elapsed.Seconds()/perActionBound,
			mutOK, float64(mutOK)/pods, mutAll, float64(mutAll)/pods, descOK, descAll, float64(descAll)/pods, stats)
		w.stop()
	}
}

// timeline, with PEIP_BENCH_DEBUG set, prints every 500 ms how many
// addresses the emulator holds and how many are associated, so a slow run
// shows whether the cloud side or the Kubernetes side is behind. It returns
// the function that stops it.
func timeline(b *testing.B, w *world, start time.Time) func() {
	if os.Getenv("PEIP_BENCH_DEBUG") == "" {
		return func() {}
	}
	done := make(chan struct{})
	go wait.Until(func() {
		var alloc, assoc int
		for _, a := range w.sim.World().Snapshot().EC2.Addresses {
			alloc++
			if a.AssociationID != "" {
				assoc++
			}
		}
		b.Logf("%6.1fs: %d addresses, %d associated", time.Since(start).Seconds(), alloc, assoc)
	}, 500*time.Millisecond, done)
	return func() { close(done) }
}

// watchAvailable counts the PodElasticIPs of a namespace whose Ready is
// Available.
func watchAvailable(b *testing.B, cfg *rest.Config, ns string) *readywatch.Watch {
	b.Helper()
	w, err := readywatch.Start(cfg, env.Scheme, &networkingv1alpha1.PodElasticIP{}, cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		func(o client.Object) bool {
			return o.(*networkingv1alpha1.PodElasticIP).GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable
		})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// parallel runs fn(0..n-1) on k goroutines.
func parallel(n, k int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
