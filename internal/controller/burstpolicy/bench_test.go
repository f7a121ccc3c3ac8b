package burstpolicy_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy"
)

// benchPods is the number of pending burstable pods of the benchmark.
const benchPods = 1000

// BenchmarkBurst1000Pending measures, for 1,000 pending pods governed by one
// BurstPolicy (burstAfter 0), the time from a pod becoming unschedulable (the
// moment before its PodScheduled=False/Unschedulable status is written) to
// the moment a watch sees it carry the virtual-node toleration, and the CPU
// time of this process over that window. The process runs the manager
// (cache, reconciler, pod patches) and the load generator (status writes and
// the watch); the API server and etcd are separate processes.
//
// Two arrival patterns: "unpaced" marks all pods unschedulable as fast as
// 16 writers can (the worst case: the last pod waits for all the others), and
// "200-per-s" paces them the way a busy kube-scheduler reports failures.
func BenchmarkBurst1000Pending(b *testing.B) {
	for _, tc := range []struct {
		name string
		rate int // pods per second; 0 = unpaced
	}{{"unpaced", 0}, {"200-per-s", 200}} {
		b.Run(tc.name, func(b *testing.B) {
			for i := range b.N {
				runBurstBench(b, fmt.Sprintf("bench-%s-%d-%d", tc.name, time.Now().Unix(), i), tc.rate)
			}
		})
	}
}

func runBurstBench(b *testing.B, ns string, rate int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := env.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	labels := map[string]string{"app": "bench"}
	policy := &schedulingv1alpha1.BurstPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: ns},
		Spec: schedulingv1alpha1.BurstPolicySpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Enabled:  ptr.To(true),
			Trigger:  schedulingv1alpha1.TriggerUnschedulable,
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		b.Fatal(err)
	}

	// Create the pods (pending: envtest runs no scheduler).
	parallel(benchPods, 16, func(i int) {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%04d", i), Namespace: ns, Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}
		if err := c.Create(ctx, p); err != nil {
			b.Error(err)
		}
	})

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// One manager per run; the controller names repeat.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		b.Fatal(err)
	}
	r := &burstpolicy.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), FloorHandoff: time.Minute}
	if err := r.SetupWithManager(mgr, 4); err != nil {
		b.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	// The cache above syncs before the controller has even registered its
	// informers; the measurement starts once the controller has reconciled
	// the policy once (its status observed), so it measures a running
	// manager, not the manager's start-up (listing the 1,000 pods).
	waitObserved(ctx, b, policy)

	// An informer of its own sees every pod change (it re-watches when the
	// API server closes a watch).
	pc, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		b.Fatal(err)
	}
	inf, err := pc.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	start := make(map[string]time.Time, benchPods)
	burst := make(map[string]time.Time, benchPods)
	watchDone := make(chan struct{})
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || !slices.ContainsFunc(p.Spec.Tolerations, func(t corev1.Toleration) bool { return t.MatchToleration(&eksToleration) }) {
			return
		}
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, seen := burst[p.Name]; seen {
			return
		}
		burst[p.Name] = now
		if len(burst) == benchPods {
			close(watchDone)
		}
	}}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = pc.Start(mgrCtx) }()
	if !pc.WaitForCacheSync(ctx) {
		b.Fatal("pod informer did not sync")
	}

	b.ResetTimer()
	cpuBefore := cpuTime()
	began := time.Now()
	// The pods become unschedulable, 16 status writes at a time (paced to
	// rate when it is set), each one strategic-merge patch as the scheduler
	// writes it.
	var pace <-chan time.Time
	if rate > 0 {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		pace = tick.C
	}
	parallel(benchPods, 16, func(i int) {
		if pace != nil {
			<-pace
		}
		name := fmt.Sprintf("p-%04d", i)
		now := time.Now()
		patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes are available","lastTransitionTime":%q}]}}`,
			now.UTC().Format(time.RFC3339))
		mu.Lock()
		start[name] = now
		mu.Unlock()
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		if err := c.Status().Patch(ctx, p, client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil {
			b.Error(err)
		}
	})
	select {
	case <-watchDone:
	case <-ctx.Done():
		mu.Lock()
		n := len(burst)
		mu.Unlock()
		b.Fatalf("only %d of %d pods burst", n, benchPods)
	}
	elapsed := time.Since(began)
	cpu := cpuTime() - cpuBefore
	b.StopTimer()

	mu.Lock()
	lat := make([]time.Duration, 0, benchPods)
	for name, t1 := range burst {
		if t0, ok := start[name]; ok {
			lat = append(lat, max(t1.Sub(t0), 0))
		}
	}
	mu.Unlock()
	if len(lat) != benchPods {
		b.Fatalf("measured %d pods, want %d", len(lat), benchPods)
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)*50/100], lat[min(len(lat)*99/100, len(lat)-1)]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000, "process-cpu-ms")
	b.ReportMetric(elapsed.Seconds(), "wall-s")
	b.Logf("%d pods: p50 %s, p99 %s, max %s; wall %s; process CPU %s", len(lat), p50, p99, lat[len(lat)-1], elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond))

	_ = c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
}

// waitObserved polls until the policy's status observes its generation.
func waitObserved(ctx context.Context, b *testing.B, p *schedulingv1alpha1.BurstPolicy) {
	b.Helper()
	for {
		got := &schedulingv1alpha1.BurstPolicy{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			b.Fatal(err)
		}
		if got.Status.ObservedGeneration == got.Generation {
			return
		}
		select {
		case <-ctx.Done():
			b.Fatal("the policy was never reconciled")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// parallel runs f(0..n-1) on workers goroutines.
func parallel(n, workers int, f func(int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
