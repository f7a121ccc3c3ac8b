package anycastipbinding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	testenv.Main(m, &env)
}

// fixture is one test's world: an emulator on a manual clock, a
// ClusterProviderConfig pointing at it, and the package's reconcilers
// driven by hand against the shared API server.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	emu   *cloudsimtest.Emulator
	clock *core.ManualClock
	cpc   string
	opts  Options
	mgr   ctrl.Manager
	conn  *Connector
	r     *reconciler.Reconciler[*networkingv1alpha1.AnycastIPBinding]
	tr    *Translator
	sweep *Sweep
}

// prefix makes object names unique per test.
func prefix(t *testing.T) string {
	p := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(p) > 40 {
		p = p[len(p)-40:]
	}
	return strings.Trim(p, "-")
}

func newFixture(t *testing.T, settings core.Settings, fixtures *core.Fixtures) *fixture {
	t.Helper()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	settings.TaskDuration = core.Duration(2 * time.Second)
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 1, Clock: clock, Settings: settings, Fixtures: fixtures})
	f := &fixture{t: t, ctx: testenv.Context(t), emu: emu, clock: clock, cpc: prefix(t)}
	f.create(&cloudv1alpha1.ClusterProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: f.cpc},
		Spec: cloudv1alpha1.ClusterProviderConfigSpec{
			CloudSettings: cloudv1alpha1.CloudSettings{Provider: cloudv1alpha1.ProviderTencentCloud, Region: "ap-hongkong", Endpoint: emu.URL(), ClusterIdentity: "cluster-" + f.cpc},
			Credentials:   cloudv1alpha1.ClusterProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone},
		},
	})
	t.Cleanup(f.cleanup)
	f.opts = DefaultOptions()
	f.opts.ProviderConfig = f.cpc
	f.opts.OrphanGracePeriod = time.Minute
	// Passes are a few milliseconds apart in real time while the manual
	// clock moves a second per pass (and the controller's clock with it,
	// see start): a tiny poll interval makes every still-running task
	// "slow", so it is followed with DescribeTaskResult.
	f.opts.TaskPollInterval = time.Millisecond
	f.opts.ClientOptions = func(o *tencentcloud.Options) {
		// The manual clock does not refill the server's buckets by itself;
		// the tests advance it, so client-side waiting would only slow
		// them down.
		o.RateLimits.Disabled = true
		o.Retry.BaseDelay = time.Millisecond
		o.Retry.MaxBackoff = 10 * time.Millisecond
	}
	f.start()
	return f
}

// cleanup removes the bindings of this test's provider config, finalizers
// and all, so later tests (and their sweeps) do not see them.
func (f *fixture) cleanup() {
	ctx := context.Background()
	var list networkingv1alpha1.AnycastIPBindingList
	if err := env.Client.List(ctx, &list); err != nil {
		return
	}
	for i := range list.Items {
		b := &list.Items[i]
		if r := b.Spec.ProviderConfigReference; r == nil || r.Name != f.cpc {
			continue
		}
		b.Finalizers = nil
		_ = env.Client.Update(ctx, b)
		_ = env.Client.Delete(ctx, b)
	}
}

// emulatorClock is the controller's clock in these tests: it moves with
// the emulator's, real time plus how far the test has advanced the manual
// clock since start (no fake of k8s.io/utils/clock combines the two).
type emulatorClock struct {
	manual *core.ManualClock
	start  time.Time
}

func (c emulatorClock) Now() time.Time { return time.Now().Add(c.manual.Now().Sub(c.start)) }

func (c emulatorClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// manualPassiveClock is the emulator's manual clock as a
// k8s.io/utils/clock.PassiveClock.
type manualPassiveClock struct{ *core.ManualClock }

func (c manualPassiveClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// start builds a manager and the reconcilers (again after stop: a manager
// restart).
func (f *fixture) start() {
	t := f.t
	mgr, err := ctrl.NewManager(rest.CopyConfig(env.Config), ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Uncached reads: the tests assert right after writing.
		NewClient: func(cfg *rest.Config, o client.Options) (client.Client, error) {
			return client.New(cfg, client.Options{Scheme: o.Scheme})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := f.opts.validate()
	if err != nil {
		t.Fatal(err)
	}
	f.mgr = mgr
	f.conn = NewConnector(mgr, "unused", f.opts)
	f.conn.clock = emulatorClock{manual: f.clock, start: f.clock.Now()}
	f.r = NewReconciler(mgr, f.conn)
	f.tr = &Translator{Client: &indexedClient{Client: mgr.GetClient()}, Recorder: mgr.GetEventRecorder("test"), Selector: ts.selector, Spec: ts.spec}
	f.sweep, err = NewSweep(mgr, f.conn, f.opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mgr.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// indexedClient answers the translator's spec.nodeName field selector by
// filtering, as the uncached test client has no index.
type indexedClient struct{ client.Client }

func (c *indexedClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	var node string
	if lo.FieldSelector != nil {
		if v, ok := lo.FieldSelector.RequiresExactMatch(indexNodeName); ok {
			node = v
			lo.FieldSelector = nil
		}
	}
	if err := c.Client.List(ctx, list, lo); err != nil {
		return err
	}
	if bl, ok := list.(*networkingv1alpha1.AnycastIPBindingList); ok && node != "" {
		kept := bl.Items[:0]
		for _, b := range bl.Items {
			if b.Spec.NodeName == node {
				kept = append(kept, b)
			}
		}
		bl.Items = kept
	}
	return nil
}

func (f *fixture) create(objs ...client.Object) {
	f.t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(f.ctx, o); err != nil {
			f.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// providerID is a Tencent node's spec.providerID for a CVM instance.
func providerID(instance string) string { return "qcloud:///800002/" + instance }

// node is a node on a CVM instance (its spec.providerID; empty instance:
// none), labelled for a translated binding or not.
func (f *fixture) node(name, instance string, labelled bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if labelled {
		n.Labels[networkingv1alpha1.LegacyLabelNeedAIAIP] = "true"
	}
	if instance != "" {
		n.Spec.ProviderID = providerID(instance)
	}
	f.create(n)
	f.t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	return n
}

// binding creates a hand-made binding.
func (f *fixture) binding(name, node string, mutate func(*networkingv1alpha1.AnycastIPBinding)) *networkingv1alpha1.AnycastIPBinding {
	b := &networkingv1alpha1.AnycastIPBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1alpha1.AnycastIPBindingSpec{NodeName: node}}
	b.Spec.ProviderConfigReference = providerConfigRef(f.cpc)
	if mutate != nil {
		mutate(b)
	}
	f.create(b)
	return b
}

// reconcile runs one pass of the binding reconciler.
func (f *fixture) reconcile(name string) {
	f.t.Helper()
	if _, err := f.r.Reconcile(f.ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}}); err != nil {
		f.t.Logf("reconcile %s: %v", name, err)
	}
}

// translate runs one pass of the translator for a node.
func (f *fixture) translate(node string) {
	f.t.Helper()
	if _, err := f.tr.Reconcile(f.ctx, reconcile.Request{NamespacedName: client.ObjectKey{Name: node}}); err != nil {
		f.t.Fatalf("translate %s: %v", node, err)
	}
}

// converge advances the emulator's clock and reconciles name until done
// holds (at most 30 passes).
func (f *fixture) converge(name string, done func(b *networkingv1alpha1.AnycastIPBinding) bool) *networkingv1alpha1.AnycastIPBinding {
	f.t.Helper()
	var b *networkingv1alpha1.AnycastIPBinding
	for range 30 {
		f.reconcile(name)
		b = f.get(name)
		if done(b) {
			return b
		}
		f.clock.Advance(time.Second)
	}
	f.t.Fatalf("binding %s did not converge; last: %s", name, describe(b))
	return nil
}

func describe(b *networkingv1alpha1.AnycastIPBinding) string {
	if b == nil {
		return "<gone>"
	}
	c := b.GetCondition(xpv2.TypeReady)
	s := b.GetCondition(xpv2.TypeSynced)
	return fmt.Sprintf("address=%s state=%s ready=%s/%s (%s) synced=%s (%s) annotations=%v", b.Status.AddressID, b.Status.State, c.Status, c.Reason, c.Message, s.Status, s.Message, b.Annotations)
}

// get returns the binding, nil when it is gone.
func (f *fixture) get(name string) *networkingv1alpha1.AnycastIPBinding {
	f.t.Helper()
	b := &networkingv1alpha1.AnycastIPBinding{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Name: name}, b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		f.t.Fatal(err)
	}
	return b
}

func (f *fixture) getNode(name string) *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{}
	if err := env.Client.Get(f.ctx, client.ObjectKey{Name: name}, n); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func ready(b *networkingv1alpha1.AnycastIPBinding) bool {
	return b != nil && b.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue
}

func readyReason(reason string) func(*networkingv1alpha1.AnycastIPBinding) bool {
	return func(b *networkingv1alpha1.AnycastIPBinding) bool {
		return b != nil && string(b.GetCondition(xpv2.TypeReady).Reason) == reason
	}
}

func gone(b *networkingv1alpha1.AnycastIPBinding) bool { return b == nil }

// deleteBinding deletes a binding and reconciles until it is gone.
func (f *fixture) deleteBinding(name string) {
	f.t.Helper()
	b := f.get(name)
	if b == nil {
		return
	}
	if err := env.Client.Delete(f.ctx, b); err != nil {
		f.t.Fatal(err)
	}
	f.converge(name, gone)
}

// addresses are the emulator's Tencent addresses.
func (f *fixture) addresses() []core.TCAddress { return f.emu.World().Snapshot().Tencent.Addresses }

func (f *fixture) address(id string) *core.TCAddress {
	for _, a := range f.addresses() {
		if a.AddressID == id {
			return &a
		}
	}
	return nil
}

func (f *fixture) calls(action string) int64 {
	var n int64
	for k, v := range f.emu.World().Stats() {
		if strings.HasPrefix(k, "tencent/"+action+"/") {
			n += v
		}
	}
	return n
}

// wantNode checks the node's taint and annotations.
func (f *fixture) wantNode(name string, tainted bool, addressID, ip string) {
	f.t.Helper()
	n := f.getNode(name)
	if got := decide.HasTaint(n); got != tainted {
		f.t.Errorf("node %s tainted = %v, want %v (taints %v)", name, got, tainted, n.Spec.Taints)
	}
	if got := n.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPID]; got != addressID {
		f.t.Errorf("node %s annotation %s = %q, want %q", name, networkingv1alpha1.LegacyAnnotationAnycastIPID, got, addressID)
	}
	if got := n.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPAddress]; got != ip {
		f.t.Errorf("node %s annotation %s = %q, want %q", name, networkingv1alpha1.LegacyAnnotationAnycastIPAddress, got, ip)
	}
}

// wantEvent waits for an Event with reason on the node.
func (f *fixture) wantEvent(node, reason string) {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var list eventsv1.EventList
		if err := env.Client.List(f.ctx, &list); err != nil {
			f.t.Fatal(err)
		}
		for _, e := range list.Items {
			if e.Regarding.Kind == "Node" && e.Regarding.Name == node && e.Reason == reason {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	f.t.Errorf("no Event %s on node %s", reason, node)
}

// wantUsage checks that b's use of its provider config is recorded (a
// ClusterProviderConfigUsage of its config owned by it), which Observe waits for.
func (f *fixture) wantUsage(b *networkingv1alpha1.AnycastIPBinding) {
	f.t.Helper()
	var list cloudv1alpha1.ClusterProviderConfigUsageList
	if err := env.Client.List(f.ctx, &list); err != nil {
		f.t.Fatal(err)
	}
	for _, u := range list.Items {
		if u.ProviderConfigReference.Name == f.cpc && u.ResourceReference.Name == b.Name &&
			slices.ContainsFunc(u.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == b.UID }) {
			return
		}
	}
	f.t.Errorf("no ClusterProviderConfigUsage of %s owned by binding %s", f.cpc, b.Name)
}
