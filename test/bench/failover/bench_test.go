// Package failover_test measures leader failover (issue 10): two
// edgeplane-manager processes with leader election against a real API server;
// the leader is killed with SIGKILL (it cannot hand the Lease over) and a
// ClusterProviderConfig is created at that moment. The figure is how long
// reconciling stops: from the kill until the standby has made that config
// Ready, against the floor the Lease allows (issue 21, point 4): no standby
// can take the Lease before it expires, one lease duration after the dead
// leader's last renewal (its renewTime, read after the kill), and the new
// leader then needs one reconcile of the probe object, measured in the same
// round on the leader before it is killed (create a config, time until it
// is Ready). The leader renews every retry period, so the first part is
// between lease duration − retry period and lease duration; the standby's
// own wait between attempts to take the Lease (one retry period, jittered)
// is what a controller could shorten and is not in the floor. Reported
// beside the ratio, as means over the rounds: acquire-lag-s, from the
// Lease's expiry until the standby took it (its acquireTime), and
// after-acquire-s, from then until the probe was Ready.
// It runs only under `make bench`: the package has no tests.
package failover_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

const (
	leaseDuration = 15 * time.Second // the manager's defaults
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	leaseName     = "edgeplane-failover-bench"
)

var env *testenv.Env

// rounds numbers the rounds of every run in this process (-count runs the
// benchmark again), so that each creates objects of its own.
var rounds atomic.Int64

// TestMain starts the API server only when benchmarks run: `make test` runs
// this package too, and it has no tests.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	testenv.Main(m, &env)
}

func startManager(t testing.TB, bin, kubeconfig, name string) *localcluster.Process {
	t.Helper()
	probe, webhook := testbin.FreeAddr(t), testbin.FreeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(webhook)
	dir := t.TempDir()
	p, err := localcluster.StartProcess(name, bin, []string{"--kubeconfig", kubeconfig, "--cluster-name", "bench",
		"--leader-elect", "--leader-election-namespace", "default", "--leader-election-id", leaseName,
		"--leader-election-lease-duration", leaseDuration.String(), "--leader-election-renew-deadline", renewDeadline.String(),
		"--leader-election-retry-period", retryPeriod.String(),
		"--metrics-bind-address", "0", "--health-probe-bind-address", probe,
		"--webhook-host", "127.0.0.1", "--webhook-port", webhookPort, "--webhook-cert-dir", filepath.Join(dir, "certs"),
		"--webhook-service-namespace", "default",
		"--floatippool-extender-address=", "--floatippool-api-address="}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill() })
	if err := testbin.WaitHTTPOK(context.Background(), "http://"+probe+"/healthz", 2*time.Minute, p.Exited); err != nil {
		t.Fatalf("manager %s never became healthy (%v); log in %s", name, err, p.LogPath())
	}
	return p
}

// lease reads the benchmark's Lease.
func lease(ctx context.Context) (*coordinationv1.Lease, error) {
	var l coordinationv1.Lease
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

func holder(ctx context.Context) string {
	l, err := lease(ctx)
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// leaseTime reads one of the Lease's times, which pick chooses (its
// renewTime: the holder's last renewal; acquireTime: when the holder took
// it), written by the holder's clock, this machine's.
func leaseTime(ctx context.Context, pick func(coordinationv1.LeaseSpec) *metav1.MicroTime) (time.Time, error) {
	l, err := lease(ctx)
	if err != nil {
		return time.Time{}, err
	}
	t := pick(l.Spec)
	if t == nil {
		return time.Time{}, fmt.Errorf("the Lease lacks the time asked for: %+v", l.Spec)
	}
	return t.Time, nil
}

// dropLease deletes the Lease once no manager runs, so that the next round's
// first manager takes a fresh one instead of waiting for the last round's
// standby's to expire.
func dropLease(b *testing.B, ctx context.Context) {
	b.Helper()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: leaseName}}
	if err := client.IgnoreNotFound(env.Client.Delete(ctx, l)); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkLeaderFailover(b *testing.B) {
	bin := testbin.Build(b, b.TempDir(), "edgeplane-manager")[0]
	kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	var total, floors, acquireLags, afterAcquires time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		i := rounds.Add(1)
		dropLease(b, ctx)
		leader := startManager(b, bin, kubeconfig, fmt.Sprintf("a%d", i))
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return holder(ctx) != "", nil
		}); err != nil {
			b.Fatal("the first manager never took the Lease")
		}
		first := holder(ctx)
		standby := startManager(b, bin, kubeconfig, fmt.Sprintf("b%d", i))
		reconcile := probeReconcile(b, ctx, fmt.Sprintf("failover-warm-%d-%d", os.Getpid(), i))
		b.StartTimer()

		killed := time.Now()
		if err := leader.Signal(syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		if err := createProbe(ctx, fmt.Sprintf("failover-%d-%d", os.Getpid(), i)); err != nil {
			b.Fatal(err)
		}
		renewed, err := leaseTime(ctx, func(s coordinationv1.LeaseSpec) *metav1.MicroTime { return s.RenewTime })
		if err != nil {
			b.Fatal(err)
		}
		err = waitReady(ctx, fmt.Sprintf("failover-%d-%d", os.Getpid(), i))
		took := time.Since(killed)
		b.StopTimer()
		if err != nil {
			b.Fatalf("the standby never reconciled the config: %v", err)
		}
		if h := holder(ctx); h == first || h == "" {
			b.Fatalf("the Lease is still held by %q after failover", h)
		}
		takenAt, err := leaseTime(ctx, func(s coordinationv1.LeaseSpec) *metav1.MicroTime { return s.AcquireTime })
		if err != nil {
			b.Fatal(err)
		}
		total += took
		// The floor: the Lease expires one lease duration after the dead
		// leader's last renewal, then one reconcile.
		expired := renewed.Add(leaseDuration)
		floor := expired.Sub(killed) + reconcile
		floors += floor
		// Where the time above the floor goes: the standby's wait between
		// its attempts to take the Lease (acquired − expired), and from
		// taking it to the probe Ready (controllers starting, the
		// reconcile) against the leader's reconcile.
		acquireLag, afterAcquire := takenAt.Sub(expired), killed.Add(took).Sub(takenAt)
		acquireLags += acquireLag
		afterAcquires += afterAcquire
		b.Logf("round %d: killed %s after the last renewal; failover %s, floor %s (reconcile %s); taken %s after it expired, Ready %s after that",
			i, killed.Sub(renewed).Round(time.Millisecond), took.Round(time.Millisecond), floor.Round(time.Millisecond), reconcile.Round(time.Millisecond),
			acquireLag.Round(time.Millisecond), afterAcquire.Round(time.Millisecond))
		if err := standby.Kill(); err != nil {
			b.Fatal(err)
		}
	}
	dropLease(b, ctx)
	mean := total / time.Duration(b.N)
	bound := floors / time.Duration(b.N)
	b.ReportMetric(mean.Seconds(), "failover-s")
	b.ReportMetric(bound.Seconds(), "bound-s")
	b.ReportMetric(mean.Seconds()/bound.Seconds(), "failover/bound")
	b.ReportMetric((acquireLags / time.Duration(b.N)).Seconds(), "acquire-lag-s")
	b.ReportMetric((afterAcquires / time.Duration(b.N)).Seconds(), "after-acquire-s")
}

// probe is the ClusterProviderConfig a round creates: an AWS account without
// credentials, Ready as soon as a reconcile has seen it.
func probe(name string) *cloudv1alpha1.ClusterProviderConfig {
	return &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1", Endpoint: "http://127.0.0.1:1"},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}
}

func createProbe(ctx context.Context, name string) error { return env.Client.Create(ctx, probe(name)) }

// waitReady waits until the probe named name is Ready.
func waitReady(ctx context.Context, name string) error {
	cpc := probe(name)
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
			return false, nil
		}
		return cpc.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue, nil
	})
}

// probeReconcile is how long the running leader takes to make a new probe
// Ready: the "one reconcile" of the bound, in this round's conditions. It
// is the fastest of three probes (named name-0, -1, -2): the first probe
// of a process's first round took about 0.95 s where every later one, in
// that round and with the next rounds' fresh managers, took 15 ms, so a
// single probe raised the first round's floor by a warm-up the failover
// does not pay.
func probeReconcile(b *testing.B, ctx context.Context, name string) time.Duration {
	b.Helper()
	fastest := time.Duration(0)
	for i := range 3 {
		start := time.Now()
		n := fmt.Sprintf("%s-%d", name, i)
		if err := createProbe(ctx, n); err != nil {
			b.Fatal(err)
		}
		if err := waitReady(ctx, n); err != nil {
			b.Fatalf("the leader never reconciled the warm-up probe: %v", err)
		}
		if d := time.Since(start); i == 0 || d < fastest {
			fastest = d
		}
	}
	return fastest
}
