package manager

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/clientlimit"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var (
	env      *testenv.Env
	leaseSeq int
)

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func testOptions(controllers ...string) Options {
	o := DefaultOptions()
	o.Controllers = controllers
	o.ClusterName = "test"
	o.MetricsAddr = "0"
	o.ProbeAddr = "0"
	o.LeaderElectionNamespace = "default"
	// Controllers that serve webhooks get a self-managed certificate: keep its
	// Secret in a namespace envtest has, its files in a scratch folder, and the
	// server on a free loopback port.
	o.WebhookServiceNamespace = "default"
	o.WebhookHost = "127.0.0.1"
	o.WebhookPort = freePort()
	dir, err := os.MkdirTemp("", "edgeplane-webhook-certs-")
	if err != nil {
		panic(err)
	}
	o.WebhookCertDir = dir
	leaseSeq++
	o.LeaderElectionID = fmt.Sprintf("edgeplane-test-%d", leaseSeq)
	return o
}

// startManager runs a manager until the test ends.
// freePort returns a loopback port nobody listens on right now.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func startManager(t *testing.T, o Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	all := Controllers()
	// The float-IP servers default to galaxy's fixed ports; tests share a
	// machine, so they take free loopback ports, and their self-managed
	// certificates' files a scratch folder.
	fs := pflag.NewFlagSet("controllers", pflag.ContinueOnError)
	BindControllerFlags(fs, all)
	if err := fs.Parse([]string{"--floatippool-extender-address=127.0.0.1:0", "--floatippool-api-address=127.0.0.1:0",
		"--floatippool-cert-dir=" + t.TempDir()}); err != nil {
		cancel()
		t.Fatalf("parsing controller flags: %v", err)
	}
	mgr, err := New(ctx, env.Config, o, all)
	if err != nil {
		cancel()
		t.Fatalf("building the manager: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("manager stopped with: %v", err)
		}
	})
}

func emulatorConfig(name string) *cloudv1alpha1.ClusterProviderConfig {
	return &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderAWS, Region: "us-east-1", Endpoint: "http://127.0.0.1:1"},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}
}

func TestManagerElectsALeaderAndReconciles(t *testing.T) {
	ctx := testenv.Context(t)
	o := testOptions("*")
	startManager(t, o)

	lease := &coordinationv1.Lease{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: o.LeaderElectionNamespace, Name: o.LeaderElectionID}, lease)
		return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "", nil
	})
	if err != nil {
		t.Fatalf("no leader took the Lease %s/%s: %v", o.LeaderElectionNamespace, o.LeaderElectionID, err)
	}

	cpc := emulatorConfig("managed-by-manager")
	if err := env.Client.Create(ctx, cpc); err != nil {
		t.Fatalf("creating the config: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err != nil {
			return false, err
		}
		return cpc.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatalf("the running manager did not make the config Ready: %v (status %+v)", err, cpc.Status)
	}
}

func TestNewSetsUpOnlyEnabledControllers(t *testing.T) {
	ctx := testenv.Context(t)
	var called []string
	recordSetup := func(name string) setup.Func {
		return func(_ context.Context, _ ctrl.Manager, cfg setup.Config) error {
			if cfg.ClusterName != "test" {
				t.Errorf("controller %s got cluster name %q, want %q", name, cfg.ClusterName, "test")
			}
			if !cfg.Tenancy.AllowsEndpoint("http://127.0.0.1:8600") || cfg.Tenancy.AllowsEndpoint("http://127.0.0.1:8601") {
				t.Errorf("controller %s got tenant endpoints %v, want exactly --tenant-endpoints", name, cfg.Tenancy.Endpoints())
			}
			if cfg.Sweeps == nil {
				t.Errorf("controller %s got no orphan sweep turns, want the process's", name)
			}
			called = append(called, name)
			return nil
		}
	}
	all := []Controller{
		{Name: "a", Setup: recordSetup("a")},
		{Name: "b", Setup: recordSetup("b")},
		{Name: "opt-in", DisabledByDefault: true, Setup: recordSetup("opt-in")},
	}
	o := testOptions("*", "-a")
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.BindFlags(fs, nil)
	if err := fs.Parse([]string{"--tenant-endpoints= http://127.0.0.1:8600/ ,"}); err != nil {
		t.Fatal(err)
	}
	m, err := New(ctx, env.Config, o, all)
	if err != nil {
		t.Fatalf("building the manager: %v", err)
	}
	// A standby's controllers watch before it leads (failover).
	if w := m.GetControllerOptions().EnableWarmup; w == nil || !*w {
		t.Errorf("controllers' EnableWarmup = %v, want true", w)
	}
	if diff := cmp.Diff([]string{"b"}, called); diff != "" {
		t.Errorf("controllers set up (-want +got):\n%s", diff)
	}
}

func TestClusterNameDefaultsToKubeSystemUID(t *testing.T) {
	ctx := testenv.Context(t)
	scheme := env.Scheme
	ns := &corev1.Namespace{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatalf("getting kube-system: %v", err)
	}
	got, err := resolveClusterName(ctx, env.Config, scheme, "")
	if err != nil {
		t.Fatalf("resolving the cluster name: %v", err)
	}
	if got != string(ns.UID) {
		t.Errorf("cluster name = %q, want the kube-system UID %q", got, ns.UID)
	}
	if got, _ := resolveClusterName(ctx, env.Config, scheme, "prod-eu"); got != "prod-eu" {
		t.Errorf("an explicit cluster name was not kept: %q", got)
	}
}

// The client-side limit: clientlimit's by default, none or another when asked.
func TestKubeAPILimitOptions(t *testing.T) {
	o := DefaultOptions()
	if err := o.Validate(); err != nil || o.KubeAPIQPS != clientlimit.DefaultQPS || o.KubeAPIBurst != clientlimit.DefaultBurst {
		t.Fatalf("default --kube-api-qps %g --kube-api-burst %d (valid: %v), want clientlimit's", o.KubeAPIQPS, o.KubeAPIBurst, err)
	}
	for _, qps := range []float64{-1, 50} {
		o.KubeAPIQPS, o.KubeAPIBurst = qps, 100
		if err := o.Validate(); err != nil {
			t.Fatalf("--kube-api-qps %g refused: %v", qps, err)
		}
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	ctx := testenv.Context(t)
	cases := map[string]func(*Options){
		"unknown controller":  func(o *Options) { o.Controllers = []string{"*", "nope"} },
		"unknown cert mode":   func(o *Options) { o.WebhookCertMode = "vault" },
		"bad lease timing":    func(o *Options) { o.RenewDeadline = o.LeaseDuration },
		"bad webhook port":    func(o *Options) { o.WebhookPort = 70000 },
		"bad tenant endpoint": func(o *Options) { o.TenantEndpoints = []string{"127.0.0.1:8600"} },
		// 0 would silently mean client-go's 5 requests/s.
		"zero kube API QPS":          func(o *Options) { o.KubeAPIQPS = 0 },
		"a kube API limit, no burst": func(o *Options) { o.KubeAPIQPS, o.KubeAPIBurst = 50, 0 },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			o := testOptions("*")
			mutate(&o)
			if _, err := New(ctx, env.Config, o, Controllers()); err == nil {
				t.Fatal("New accepted bad options")
			}
		})
	}
}
