//go:build e2e

package anycastipbinding_test

import (
	"context"
	"fmt"
	"log/slog"
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
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/testenv"
)

const (
	faultNodes   = 100
	faultLeaving = 50
	faultCluster = "fault"
)

// TestFaults: 100 labelled nodes join and 50 of them leave while the
// emulator throttles (RequestLimitExceeded) and commits-then-drops
// mutating calls, and the manager is killed three times (its context
// cancelled mid-flight, nothing shut down gracefully; some joins and leaves
// happen while it is down). At the end every labelled node must have
// exactly one bound address that matches its binding and no taint, and no
// address tagged for this cluster may lack a binding. The counts are
// printed.
func TestFaults(t *testing.T) {
	env, err := testenv.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

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

	c := env.Client
	if err := c.Create(ctx, &cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: emu.URL(), ClusterIdentity: faultCluster},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	}); err != nil {
		t.Fatal(err)
	}

	opts := anycastipbinding.DefaultOptions()
	opts.Webhook = false // envtest: no kubelets, the reconciler taints
	opts.TaskPollInterval = 200 * time.Millisecond
	opts.BlockedPollInterval = time.Second
	opts.MaxConcurrentReconciles = 20
	opts.OrphanGracePeriod = 5 * time.Second
	opts.OrphanInterval = 3 * time.Second
	opts.ClientOptions = func(o *tencentcloud.Options) {
		o.Timeout = time.Second // a dropped response is a timeout after 1s
		o.Retry.BaseDelay = 20 * time.Millisecond
		o.Retry.MaxBackoff = 500 * time.Millisecond
		scaleRateLimits(o, 10)
	}

	kills := 0
	stop := startManager(ctx, t, env, opts)
	createNodes := func(from, to int) {
		for i := from; i < to; i++ {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeOf(i), Labels: map[string]string{
				networkingv1alpha1.LegacyLabelNeedAIAIP: "true", networkingv1alpha1.LegacyLabelNodeInstanceID: instanceOf(i)}}}
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
	kill := func() {
		stop()
		kills++
	}
	pause := func(d time.Duration) { time.Sleep(d) }

	createNodes(0, 40)
	pause(2 * time.Second)
	kill() // 1: mid-allocation
	createNodes(40, 70)
	stop = startManager(ctx, t, env, opts)
	pause(3 * time.Second)
	deleteNodes(0, 20)
	createNodes(70, 100)
	pause(2 * time.Second)
	kill() // 2: mid-release and mid-allocation
	deleteNodes(20, 35)
	stop = startManager(ctx, t, env, opts)
	pause(2 * time.Second)
	deleteNodes(35, faultLeaving)
	pause(time.Second)
	kill() // 3
	stop = startManager(ctx, t, env, opts)
	defer stop()

	live := sets.New[string]()
	for i := faultLeaving; i < faultNodes; i++ {
		live.Insert(nodeOf(i))
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, time.Second, 8*time.Minute, true, func(context.Context) (bool, error) {
		r := check(ctx, t, c, emu, live)
		last = r.String()
		return r.ok(len(live)), nil
	})
	r := check(ctx, t, c, emu, live)
	t.Logf("manager kills: %d; %s", kills, r)
	fmt.Printf("fault test: manager kills %d; %s\n", kills, r)
	if err != nil {
		t.Fatalf("did not converge: %s", last)
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
		as := onInstance[n.Labels[networkingv1alpha1.LegacyLabelNodeInstanceID]]
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

// startManager runs the AnycastIPBinding controllers in a fresh manager;
// the returned function kills it (cancels its context without waiting for
// in-flight work to finish gracefully) and waits for it to return.
func startManager(ctx context.Context, t *testing.T, env *testenv.Env, opts anycastipbinding.Options) func() {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Each restart registers the same controller names.
		Controller: ctrlConfigSkipNameValidation(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := opts.Setup()(ctx, mgr, setup.Config{ClusterName: faultCluster}); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(mctx)
	}()
	stopped := false
	return func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		<-done
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

// scaleRateLimits multiplies the client-side buckets by the emulator's
// time scale.
func scaleRateLimits(o *tencentcloud.Options, scale float64) {
	o.RateLimits = tencentcloud.DefaultRateLimits()
	for k, v := range o.RateLimits.PerAction {
		v.QPS *= scale
		v.Burst = int(float64(v.Burst) * scale)
		o.RateLimits.PerAction[k] = v
	}
}

func ctrlConfigSkipNameValidation() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true)}
}
