package podelasticip_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/testsupport/apicount"
)

// Tencent Cloud's published limits (docs/architecture.md section 5): 10
// requests per second for each write action, modelled as a bucket holding
// one second's worth; its tasks take a second or two at real time.
const (
	tencentWriteRate = 10
	tencentTask      = 2 * time.Second
)

// BenchmarkConvergence500Tencent: 500 Auto PodElasticIPs for 500 running
// pods on a Tencent Cloud provider config, against the emulator with
// Tencent's limits on the server and the client side (10/s and a bucket of
// 10 for each write action, 20/s for DescribeAddresses and
// DescribeTaskResult, 100/s for DescribeNetworkInterfaces) and 2-second
// tasks, with the manager's default settings otherwise. x1 runs at real
// time; x10 on a cloud ten times faster (rates and buckets ×10, tasks and
// the task poll interval ÷10).
//
// The bound is the floor the cloud allows: each pod needs one
// AllocateAddresses and one AssociateAddress, each from its own bucket, so
// after the first bucketful the allocations take (N − burst) / rate, and
// the last pod still waits for its allocation task and then its binding
// task: (N − burst) / rate + 2 T(task) = (500 − 10) / 10 + 4 = 53 s at x1,
// 4.4 s at x10 — the AnycastIPBinding benchmark's ratio-bound. Reported:
// s-converge, ratio-bound, throttled (calls the emulator refused as over
// the limit), the cloud calls per pod (writes, describes, task results)
// and the Kubernetes writes and reads per pod.
func BenchmarkConvergence500Tencent(b *testing.B) {
	for _, scale := range []int{10, 1} {
		b.Run(fmt.Sprintf("x%d", scale), func(b *testing.B) {
			for range b.N {
				benchTencent(b, scale)
			}
		})
	}
}

func benchTencent(b *testing.B, scale int) {
	b.StopTimer()
	const pods = 500
	task := tencentTask / time.Duration(scale)
	counter := apicount.New()
	w := newWorld(b, worldOpts{
		tencent: true,
		wrap:    counter.Wrap,
		settings: core.Settings{TencentAddressQuota: 2 * pods, RateLimitScale: float64(scale),
			TaskDuration: core.Duration(task)},
		opts: func(o *podelasticip.Options) {
			// The manager's defaults, on the world's time scale.
			d := podelasticip.DefaultOptions()
			o.PollInterval, o.ListingMaxAge, o.MaxBackoff = d.PollInterval, d.ListingMaxAge, d.MaxBackoff
			o.TaskPollInterval = d.TaskPollInterval / time.Duration(scale)
			o.TencentRateLimitScale = float64(scale)
			o.TencentRetryBaseDelay = 500 * time.Millisecond / time.Duration(scale)
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
	parallel(pods, 32, func(i int) { w.pod(fmt.Sprintf("t%03d", i), ip(i), hostIP1, nil) })
	watch := watchAvailable(b, cfg, w.ns)
	counter.Reset()
	writesBefore, readsBefore := counter.Writes(), counter.Reads()
	statsBefore := w.sim.World().Stats()
	start := time.Now()
	b.StartTimer()
	stopTimeline := tencentTimeline(b, w, start)
	parallel(pods, 32, func(i int) { w.peip(fmt.Sprintf("t%03d", i), fmt.Sprintf("t%03d", i), nil) })
	ready := watch.Wait(pods, start.Add(10*time.Minute))
	elapsed := time.Since(start)
	b.StopTimer()
	stopTimeline()
	watch.Stop()
	if ready < pods {
		b.Fatalf("only %d of %d Ready after %s", ready, pods, elapsed)
	}
	stats := w.sim.World().Stats()
	count := func(action, result string) int64 {
		var n int64
		for k, v := range stats {
			if strings.HasPrefix(k, "tencent/"+action+"/") && (result == "" || k == "tencent/"+action+"/"+result) {
				n += v - statsBefore[k]
			}
		}
		return n
	}
	var throttled int64
	for k, v := range stats {
		if strings.HasPrefix(k, "tencent/") && strings.HasSuffix(k, "/"+core.TCRequestLimitExceeded) {
			throttled += v - statsBefore[k]
		}
	}
	rate, burst := float64(tencentWriteRate*scale), float64(tencentWriteRate*scale)
	bound := time.Duration((pods-burst)/rate*float64(time.Second)) + 2*task
	writesOK := count("AllocateAddresses", "OK") + count("AssociateAddress", "OK")
	writesSent := count("AllocateAddresses", "") + count("AssociateAddress", "") + count("ModifyResourceTags", "")
	describes := count("DescribeAddresses", "") + count("DescribeNetworkInterfaces", "")
	b.ReportMetric(elapsed.Seconds(), "s-converge")
	b.ReportMetric(elapsed.Seconds()/bound.Seconds(), "ratio-bound")
	b.ReportMetric(float64(throttled), "throttled")
	b.ReportMetric(float64(writesOK)/pods, "writes-ok/pod")
	b.ReportMetric(float64(writesSent)/pods, "writes-sent/pod")
	b.ReportMetric(float64(describes)/pods, "describe/pod")
	b.ReportMetric(float64(count("DescribeTaskResult", ""))/pods, "taskresults/pod")
	b.ReportMetric(float64(counter.Writes()-writesBefore)/pods, "kube-writes/pod")
	b.ReportMetric(float64(counter.Reads()-readsBefore)/pods, "kube-reads/pod")
	if os.Getenv("PEIP_BENCH_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "the manager's API requests:\n%s\n", counter)
	}
	b.Logf("x%d: %d pods Ready in %s; bound (N − burst)/rate + 2 T(task) = (%d − %.0f)/%.0f s + 2 × %s = %s: ratio %.3f; throttled %d; per pod: %.3f writes OK, %.3f sent (incl. tags), %.3f describes, %.3f task results",
		scale, pods, elapsed.Round(time.Millisecond), pods, burst, rate, task, bound, elapsed.Seconds()/bound.Seconds(), throttled,
		float64(writesOK)/pods, float64(writesSent)/pods, float64(describes)/pods, float64(count("DescribeTaskResult", ""))/pods)
	w.stop()
}

// tencentTimeline, with PEIP_BENCH_DEBUG set, prints every 500 ms how many
// addresses the emulator holds and how many are bound.
func tencentTimeline(b *testing.B, w *world, start time.Time) func() {
	if os.Getenv("PEIP_BENCH_DEBUG") == "" {
		return func() {}
	}
	done := make(chan struct{})
	go wait.Until(func() {
		var alloc, bound int
		for _, a := range w.sim.World().Snapshot().Tencent.Addresses {
			alloc++
			if a.AddressStatus == "BIND" {
				bound++
			}
		}
		var calls []string
		for k, v := range w.sim.World().Stats() {
			if strings.HasPrefix(k, "tencent/") {
				calls = append(calls, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, "tencent/"), v))
			}
		}
		slices.Sort(calls)
		fmt.Fprintf(os.Stderr, "%6.1fs: %d addresses, %d bound; %s\n", time.Since(start).Seconds(), alloc, bound, strings.Join(calls, " "))
	}, 500*time.Millisecond, done)
	return func() { close(done) }
}
