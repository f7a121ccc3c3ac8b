package floatippool_test

// BenchmarkFloatIP2000Pods (run by `make bench`, never a test) measures how
// long the real kube-scheduler, using edgeplane's float-IP extender, takes
// to bind 2,000 float-IP pods on 50 kwok nodes in 5 node subnets (one
// FloatIPPool per subnet), divided by the time the same scheduler needs for
// 2,000 pods without float IPs, in the same run. Target: at most 1.25. Pods
// are created directly by 16 workers, so the controller manager's rate limit
// plays no part. EDGEPLANE_BENCH_FIP_PODS overrides the pod count.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

const (
	benchFIPNodes   = 50
	benchFIPSubnets = 5
)

func BenchmarkFloatIP2000Pods(b *testing.B) {
	pods, err := strconv.Atoi(cmp.Or(os.Getenv("EDGEPLANE_BENCH_FIP_PODS"), "2000"))
	if err != nil {
		b.Fatal(err)
	}
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	scheme, err := edgescheme.New()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	extAddr, err := benchFreeAddr()
	if err != nil {
		b.Fatal(err)
	}
	cfgPath := writeSchedulerConfig(b, dir, "http://"+extAddr, true, 500)
	var specs []localcluster.NodeSpec
	for i := range benchFIPNodes {
		specs = append(specs, localcluster.NodeSpec{Name: fmt.Sprintf("n%02d", i), Pods: 200})
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Dir: dir, Scheme: scheme, Nodes: specs, StartTimeout: 5 * time.Minute,
		SchedulerFlags: []string{"--config=" + cfgPath},
	})
	if err != nil {
		b.Fatalf("starting the local cluster: %v", err)
	}
	defer func() { _ = cluster.Stop() }()
	c := cluster.Client()

	// Five node subnets: kwok keeps an InternalIP it finds on the node.
	for i := range benchFIPNodes {
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			var n corev1.Node
			if err := c.Get(ctx, client.ObjectKey{Name: fmt.Sprintf("n%02d", i)}, &n); err != nil {
				return err
			}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.%d.0.%d", i%benchFIPSubnets, 10+i)}, {Type: corev1.NodeHostName, Address: n.Name}}
			return c.Status().Update(ctx, &n)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	installFloatIPCRDs(b, cluster.RESTConfig())
	perPool := pods/benchFIPSubnets + pods/10 + 1
	for s := range benchFIPSubnets {
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
		if err := c.Create(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	restCfg := cluster.RESTConfig()
	restCfg.QPS, restCfg.Burst = 1000, 2000 // galaxy-ipam's client limits
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		b.Fatal(err)
	}
	if err := (floatippool.Options{ExtenderAddress: extAddr, SweepInterval: time.Minute}).Setup()(ctx, mgr, setup.Config{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	time.Sleep(2 * time.Second) // let the extender listen and the caches sync

	b.ResetTimer()
	var plainTotal, fipTotal time.Duration
	for i := range b.N {
		plain, err := benchRun(ctx, c, fmt.Sprintf("plain-%d", i), pods, false)
		if err != nil {
			b.Fatal(err)
		}
		fip, err := benchRun(ctx, c, fmt.Sprintf("fip-%d", i), pods, true)
		if err != nil {
			b.Fatal(err)
		}
		plainTotal += plain
		fipTotal += fip
	}
	b.StopTimer()
	plain, fip := plainTotal/time.Duration(b.N), fipTotal/time.Duration(b.N)
	b.ReportMetric(plain.Seconds(), "plain-s")
	b.ReportMetric(fip.Seconds(), "floatip-s")
	b.ReportMetric(float64(fip)/float64(plain), "floatip/plain")
	b.ReportMetric(float64(pods)/fip.Seconds(), "allocations/s")
	for verb, ms := range extenderLatencies() {
		b.ReportMetric(ms, verb+"-ms/op")
	}
}

// extenderLatencies returns the mean latency of the extender's verbs, in ms.
func extenderLatencies() map[string]float64 {
	out := map[string]float64{}
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range families {
		if f.GetName() != "edgeplane_floatip_extender_latency_seconds" {
			continue
		}
		sums, counts := map[string]float64{}, map[string]uint64{}
		for _, m := range f.GetMetric() {
			verb := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "verb" {
					verb = l.GetValue()
				}
			}
			sums[verb] += m.GetHistogram().GetSampleSum()
			counts[verb] += m.GetHistogram().GetSampleCount()
		}
		for v, n := range counts {
			if n > 0 {
				out[v] = 1000 * sums[v] / float64(n)
			}
		}
	}
	return out
}

func benchFreeAddr() (string, error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// benchRun creates n pods in a fresh namespace and returns the time until
// every one is bound (with its float IP annotation when fip), then deletes
// the namespace's pods.
func benchRun(ctx context.Context, c client.Client, ns string, n int, fip bool) (time.Duration, error) {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return 0, err
	}
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
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
				if err := c.Create(ctx, pod); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return 0, fmt.Errorf("creating pods: %w", err)
	default:
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		var list corev1.PodList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" && (!fip || p.Annotations[networkingv1alpha1.AnnotationCNIArgs] != "") {
				bound++
			}
		}
		last = fmt.Sprintf("%d/%d bound", bound, n)
		return bound == n, nil
	})
	took := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("waiting for %s: %w (%s)", ns, err, last)
	}
	if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.GracePeriodSeconds(0)); err != nil {
		return 0, err
	}
	return took, nil
}
