package podelasticip_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
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
		w := newWorld(b, worldOpts{
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
		cfg.QPS, cfg.Burst = 2000, 4000
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

		start := time.Now()
		b.ResetTimer()
		parallel(pods, 32, func(i int) { w.peip(fmt.Sprintf("b%03d", i), fmt.Sprintf("b%03d", i), nil) })
		ready := 0
		deadline := start.Add(10 * time.Minute)
		for ready < pods && time.Now().Before(deadline) {
			var list networkingv1alpha1.PodElasticIPList
			if err := c.List(context.Background(), &list, client.InNamespace(w.ns)); err != nil {
				b.Fatal(err)
			}
			ready = 0
			for _, p := range list.Items {
				if p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable {
					ready++
				}
			}
			if ready < pods {
				time.Sleep(100 * time.Millisecond)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
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
		fmt.Printf("PodElasticIP convergence: %d pods Ready in %.2fs; issue bound (2*%d-50)/(5*10) = %.1fs -> ratio %.3f; "+
			"per-action bound (%d-50)/50 = %.1fs -> ratio %.3f; mutating calls OK %d (%.3f/pod), sent %d (%.3f/pod, incl. throttled); "+
			"describe calls OK %d, sent %d (%.3f/pod); stats %v\n",
			pods, elapsed.Seconds(), pods, issueBound, elapsed.Seconds()/issueBound, pods, perActionBound, elapsed.Seconds()/perActionBound,
			mutOK, float64(mutOK)/pods, mutAll, float64(mutAll)/pods, descOK, descAll, float64(descAll)/pods, stats)
		w.stop()
	}
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
