//go:build e2e

package anycastipbinding_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

const (
	faultNodes   = 100
	faultLeaving = 50
	faultCluster = "fault"
)

// TestFaults: 100 labelled nodes join and 50 of them leave while the
// emulator throttles (RequestLimitExceeded) and commits-then-drops
// mutating calls, and the manager — the real edgeplane-manager binary, built
// from this tree, in its own process — is killed with SIGKILL three times at
// random moments mid-churn (nothing shut down gracefully, its Lease not
// released; some joins and leaves happen while it is down) and started
// again. It runs on the local cluster (etcd, kube-apiserver,
// kube-controller-manager) and reaches the emulator by URL through a
// ClusterProviderConfig. At the end every labelled node must have exactly
// one bound address that matches its binding and no taint, and no address
// tagged for this cluster may lack a binding. The counts are printed.
func TestFaults(t *testing.T) {
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 5))
	t.Logf("kill moments seeded with %d", seed)

	bin := testbin.Build(t, t.TempDir(), "edgeplane-manager")[0]
	scheme, err := edgescheme.New()
	if err != nil {
		t.Fatal(err)
	}
	cluster := localcluster.StartForTest(ctx, t, localcluster.Options{Scheme: scheme, DisableScheduler: true})

	fx := &core.Fixtures{}
	for i := range faultNodes {
		fx.Tencent.Instances = append(fx.Tencent.Instances, core.TCInstanceFixture{InstanceID: instanceOf(i), PrivateIPAddresses: []string{fmt.Sprintf("10.2.%d.%d", i/200, i%200+1)}})
	}
	drops := &dropCounter{}
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 7, Fixtures: fx, Logger: slog.New(drops), Settings: core.Settings{
		TencentAddressQuota: 1000,
		TaskDuration:        core.Duration(300 * time.Millisecond),
		RateLimitScale:      10,
	}})
	var faults []core.FaultSpec
	for _, action := range []string{"AllocateAddresses", "AssociateAddress", "DisassociateAddress", "ReleaseAddresses"} {
		faults = append(faults, core.FaultSpec{Provider: "tencent", Action: action, ErrorRate: 0.1, ErrorCode: "RequestLimitExceeded",
			DropRate: 0.05, DropHold: core.Duration(1500 * time.Millisecond)})
	}
	faults = append(faults, core.FaultSpec{Provider: "tencent", Action: "*", ErrorRate: 0.1, ErrorCode: "RequestLimitExceeded"})
	if err := emu.World().SetFaults(faults); err != nil {
		t.Fatal(err)
	}

	c := cluster.Client()
	if err := c.Create(ctx, &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: emu.URL(), ClusterIdentity: faultCluster},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}); err != nil {
		t.Fatal(err)
	}

	createNodes := func(from, to int) {
		for i := from; i < to; i++ {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeOf(i), Labels: map[string]string{
				networkingv1alpha1.LegacyLabelNeedAIAIP: "true"}}, Spec: corev1.NodeSpec{ProviderID: "qcloud:///800002/" + instanceOf(i)}}
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	deleteNodes := func(from, to int) {
		for i := from; i < to; i++ {
			if err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeOf(i)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// randomPause waits between lo and hi, so the kills land at moments
	// the test does not choose.
	randomPause := func(lo, hi time.Duration) { time.Sleep(lo + time.Duration(rng.Int64N(int64(hi-lo)))) }

	kubeconfig := cluster.KubeconfigPath()
	starts := 0
	start := func() *managerProcess {
		starts++
		return startManagerProcess(ctx, t, bin, kubeconfig, fmt.Sprintf("manager-%d", starts))
	}
	var kills []string
	kill := func(m *managerProcess) {
		m.kill(t)
		kills = append(kills, fmt.Sprintf("%s after %s", m.name, time.Since(m.started).Round(100*time.Millisecond)))
	}

	m := start()
	createNodes(0, 40)
	randomPause(time.Second, 4*time.Second)
	kill(m) // 1: mid-allocation
	createNodes(40, 70)
	m = start()
	randomPause(2*time.Second, 5*time.Second)
	deleteNodes(0, 20)
	createNodes(70, 100)
	randomPause(500*time.Millisecond, 3*time.Second)
	kill(m) // 2: mid-release and mid-allocation
	deleteNodes(20, 35)
	m = start()
	randomPause(time.Second, 3*time.Second)
	deleteNodes(35, faultLeaving)
	randomPause(200*time.Millisecond, 2*time.Second)
	kill(m) // 3: mid-release
	m = start()
	defer m.kill(t)

	live := sets.New[string]()
	for i := faultLeaving; i < faultNodes; i++ {
		live.Insert(nodeOf(i))
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(context.Context) (bool, error) {
		if err := m.ExitError(); err != nil {
			return false, fmt.Errorf("the manager exited by itself: %w", err)
		}
		r := check(ctx, t, c, emu, live)
		last = r.String()
		return r.ok(len(live)), nil
	})
	r := check(ctx, t, c, emu, live)
	t.Logf("manager SIGKILLs: %d (%s); %s", len(kills), strings.Join(kills, ", "), r)
	fmt.Printf("fault test: manager processes SIGKILLed %d times (%s); %s\n", len(kills), strings.Join(kills, ", "), r)
	if err != nil {
		t.Fatalf("did not converge (%v): %s", err, last)
	}
	if r.boundOK != r.liveNodes || r.tainted != 0 || r.wrongAddresses != 0 ||
		r.missingBinding != 0 || r.bindings != r.liveNodes || r.orphanAddresses != 0 || r.clusterAddresses != r.liveNodes {
		t.Errorf("invariants broken: %s", r)
	}
	stats := emu.World().Stats()
	var throttled int64
	for k, v := range stats {
		if strings.HasSuffix(k, "/RequestLimitExceeded") {
			throttled += v
		}
	}
	tasks := len(emu.World().Snapshot().Tencent.Tasks)
	t.Logf("emulator: %d throttled answers, %d responses dropped after commit, %d async tasks started", throttled, drops.n.Load(), tasks)
	fmt.Printf("fault test: emulator injected %d throttled answers and %d commit-then-drops; %d async tasks started\n", throttled, drops.n.Load(), tasks)
	if throttled == 0 || drops.n.Load() == 0 {
		t.Errorf("faults were not injected: %d throttled, %d dropped", throttled, drops.n.Load())
	}
}

type faultReport struct {
	liveNodes, boundOK, tainted, wrongAddresses, missingBinding int
	clusterAddresses, orphanAddresses, bindings                 int
	problems                                                    []string
}

func (r faultReport) ok(n int) bool {
	return r.boundOK == n && r.tainted == 0 && r.wrongAddresses == 0 && r.orphanAddresses == 0 && r.bindings == n
}

func (r faultReport) String() string {
	s := fmt.Sprintf("labelled nodes %d, with exactly one bound address matching their binding %d, tainted %d, with wrong or extra addresses %d, without binding %d; bindings %d; addresses tagged for this cluster %d, of which without a binding %d",
		r.liveNodes, r.boundOK, r.tainted, r.wrongAddresses, r.missingBinding, r.bindings, r.clusterAddresses, r.orphanAddresses)
	if len(r.problems) > 0 && len(r.problems) <= 5 {
		s += fmt.Sprintf("; e.g. %v", r.problems)
	} else if len(r.problems) > 5 {
		s += fmt.Sprintf("; e.g. %v", r.problems[:5])
	}
	return s
}

func check(ctx context.Context, t *testing.T, c client.Client, emu *cloudsimtest.Emulator, live sets.Set[string]) faultReport {
	t.Helper()
	var r faultReport
	var bindings networkingv1alpha1.AnycastIPBindingList
	if err := c.List(ctx, &bindings); err != nil {
		t.Fatal(err)
	}
	byNode := map[string]networkingv1alpha1.AnycastIPBinding{}
	uids := sets.New[string]()
	for _, b := range bindings.Items {
		byNode[b.Spec.NodeName] = b
		uids.Insert(string(b.UID))
	}
	r.bindings = len(bindings.Items)
	addrs := emu.World().Snapshot().Tencent.Addresses
	onInstance := map[string][]core.TCAddress{}
	for _, a := range addrs {
		if a.InstanceID != "" {
			onInstance[a.InstanceID] = append(onInstance[a.InstanceID], a)
		}
		tags := map[string]string{}
		for _, tg := range a.Tags {
			tags[tg.Key] = tg.Value
		}
		if tags[decide.TagCluster] == faultCluster {
			r.clusterAddresses++
			if !uids.Has(tags[decide.TagOwnerUID]) {
				r.orphanAddresses++
				r.problems = append(r.problems, fmt.Sprintf("orphan %s (%s, node %s)", a.AddressID, a.AddressStatus, tags[decide.TagNodeName]))
			}
		}
	}
	for name := range live {
		r.liveNodes++
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			t.Fatal(err)
		}
		if decide.HasTaint(n) {
			r.tainted++
		}
		b, ok := byNode[name]
		if !ok {
			r.missingBinding++
			continue
		}
		as := onInstance[strings.TrimPrefix(n.Spec.ProviderID, "qcloud:///800002/")]
		switch {
		case len(as) == 1 && as[0].AddressStatus == "BIND" && as[0].AddressID == b.Status.AddressID &&
			b.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			n.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPID] == as[0].AddressID:
			r.boundOK++
		case len(as) > 1:
			r.wrongAddresses++
			r.problems = append(r.problems, fmt.Sprintf("node %s has %d addresses", name, len(as)))
		case len(as) == 1 && as[0].AddressID != b.Status.AddressID:
			r.wrongAddresses++
			r.problems = append(r.problems, fmt.Sprintf("node %s: address %s, binding says %s", name, as[0].AddressID, b.Status.AddressID))
		}
	}
	return r
}

// managerProcess is one edgeplane-manager process.
type managerProcess struct {
	*localcluster.Process
	name    string
	started time.Time
}

// startManagerProcess starts the manager with only the provider-config and
// AnycastIPBinding controllers, leader election on (short durations, so a
// restart after a SIGKILL takes the Lease over after a few seconds), and
// waits until it is healthy.
func startManagerProcess(ctx context.Context, t *testing.T, bin, kubeconfig, name string) *managerProcess {
	t.Helper()
	probe, webhook := testbin.FreeAddr(t), testbin.FreeAddr(t)
	_, webhookPort, _ := net.SplitHostPort(webhook)
	dir := t.TempDir()
	p, err := localcluster.StartProcess(name, bin, []string{"--kubeconfig", kubeconfig, "--cluster-name", faultCluster,
		"--controllers", "providerconfig,anycastipbinding",
		"--leader-elect", "--leader-election-namespace", "default", "--leader-election-id", "edgeplane-aia-fault",
		"--leader-election-lease-duration", "4s", "--leader-election-renew-deadline", "3s", "--leader-election-retry-period", "1s",
		"--metrics-bind-address", "0", "--health-probe-bind-address", probe,
		"--webhook-host", "127.0.0.1", "--webhook-port", webhookPort, "--webhook-cert-dir", filepath.Join(dir, "certs"),
		"--webhook-service-namespace", "default",
		"--floatippool-extender-address=", "--floatippool-api-address=",
		"--kube-api-qps", "200", "--kube-api-burst", "400",
		// No kubelets register these nodes, so the Node webhook is not
		// installed; the reconciler taints them.
		"--anycastipbinding-node-webhook=false",
		"--anycastipbinding-task-poll-interval", "200ms",
		"--anycastipbinding-max-concurrent-reconciles", "20",
		"--anycastipbinding-orphan-grace-period", "5s",
		"--anycastipbinding-orphan-interval", "3s"}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	m := &managerProcess{Process: p, name: name, started: time.Now()}
	t.Cleanup(func() { m.kill(t) })
	if err := testbin.WaitHTTPOK(ctx, "http://"+probe+"/healthz", 2*time.Minute, p.Exited); err != nil {
		t.Fatalf("manager %s never became healthy (%v); log in %s", name, err, p.LogPath())
	}
	return m
}

// kill sends SIGKILL (no graceful shutdown, the Lease is not released) and
// reaps the process.
func (m *managerProcess) kill(t *testing.T) {
	t.Helper()
	if err := m.Kill(); err != nil {
		t.Errorf("killing %s: %v", m.name, err)
	}
}

func nodeOf(i int) string     { return fmt.Sprintf("fault-node-%03d", i) }
func instanceOf(i int) string { return fmt.Sprintf("ins-f%07d", i) }

// dropCounter is an slog handler counting the emulator's commit-then-drop
// log lines.
type dropCounter struct{ n atomic.Int64 }

func (d *dropCounter) Enabled(context.Context, slog.Level) bool { return true }
func (d *dropCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "Dropped") {
		d.n.Add(1)
	}
	return nil
}
func (d *dropCounter) WithAttrs([]slog.Attr) slog.Handler { return d }
func (d *dropCounter) WithGroup(string) slog.Handler      { return d }
