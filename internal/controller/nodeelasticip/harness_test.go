package nodeelasticip_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
)

var (
	env     *testenv.Env
	nameSeq atomic.Int64
)

func TestMain(m *testing.M) {
	if os.Getenv(childManagerEnv) != "" {
		// The fault test runs the manager as this binary in a child process
		// it can SIGKILL.
		os.Exit(runChildManager())
	}
	if os.Getenv("NEIP_DEBUG") != "" {
		log.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		log.SetLogger(zap.New(zap.WriteTo(discard{})))
	}
	testenv.Main(m, &env)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// The emulated VPC: instance i (0-based) is instanceID(i) with its primary
// network interface eniID(i) holding primaryIP(i), and a secondary
// interface as the VPC CNI attaches to nodes (so EC2 refuses to associate
// by instance, and the controller must address the primary interface).
func instanceID(i int) string { return fmt.Sprintf("i-%017x", 0xa000+i) }
func eniID(i int) string      { return fmt.Sprintf("eni-%017x", 0xa000+i) }
func primaryIP(i int) string  { return fmt.Sprintf("10.0.%d.%d", i/200, 10+i%200) }

func fixtures(instances int) *core.Fixtures {
	f := &core.Fixtures{}
	for i := range instances {
		f.EC2.Instances = append(f.EC2.Instances, core.EC2InstanceFixture{
			InstanceID: instanceID(i), VpcID: "vpc-1", SubnetID: "subnet-1", AvailabilityZone: "us-east-1a",
			NetworkInterfaces: []core.EC2ENIFixture{
				{NetworkInterfaceID: eniID(i), PrivateIPAddresses: []string{primaryIP(i)}},
				{NetworkInterfaceID: fmt.Sprintf("eni-%017x", 0xb000+i), PrivateIPAddresses: []string{fmt.Sprintf("10.1.%d.%d", i/200, 10+i%200)}},
			}})
	}
	return f
}

// world is one test's cloud and cluster: an emulator, a
// ClusterProviderConfig pointing at it, and a running manager with the
// NodeElasticIP controllers. Nodes and NodeElasticIPs are cluster-scoped:
// names carry the test's prefix.
type world struct {
	t       testing.TB
	ctx     context.Context
	sim     *cloudsimtest.Emulator
	prefix  string
	cpc     string
	cluster string
	c       client.Client
	stop    func()
	creds   *credstatus.Board
	opts    func(*nodeelasticip.Options)
	// wrap, when set, wraps the manager's transport to the API server.
	wrap func(http.RoundTripper) http.RoundTripper
	// mgr is the running manager (startManager).
	mgr ctrl.Manager
}

type worldOpts struct {
	settings  core.Settings
	instances int
	// addresses seeds addresses (given the world's cluster identity).
	addresses func(cluster string) []core.EC2AddressFixture
	opts      func(*nodeelasticip.Options)
	noManager bool
	// configController also runs the ProviderConfig controllers.
	configController bool
	// sharedSim is another world's emulator (another cluster on one
	// account).
	sharedSim *cloudsimtest.Emulator
}

func newWorld(t testing.TB, wo worldOpts) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if wo.settings.EC2AddressQuota == 0 {
		wo.settings.EC2AddressQuota = 1000
	}
	wo.settings.RateLimitsDisabled = wo.settings.RateLimitsDisabled || wo.settings.RateLimitScale == 0
	if wo.instances == 0 {
		wo.instances = 8
	}
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 30 {
		name = name[len(name)-30:]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), nameSeq.Add(1))
	w := &world{t: t, ctx: ctx, prefix: name, cpc: "neip-" + name, cluster: "cluster-" + name, c: env.Client, opts: wo.opts}
	fx := fixtures(wo.instances)
	if wo.addresses != nil {
		fx.EC2.Addresses = append(fx.EC2.Addresses, wo.addresses(w.cluster)...)
	}
	w.sim = wo.sharedSim
	if w.sim == nil {
		w.sim = cloudsimtest.Start(t, cloudsim.Options{Seed: 7, Settings: wo.settings, Fixtures: fx})
	}
	if wo.configController {
		w.creds = credstatus.New()
	}
	cpc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.cpc}}
	cpc.Spec.Provider, cpc.Spec.Region, cpc.Spec.Endpoint = cloudv1alpha1.ProviderAWS, "us-east-1", w.sim.URL()
	cpc.Spec.ClusterIdentity = w.cluster
	cpc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	if err := env.Client.Create(ctx, cpc); err != nil {
		t.Fatalf("creating ClusterProviderConfig: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err == nil && len(cpc.Finalizers) > 0 {
			cpc.Finalizers = nil
			_ = env.Client.Update(ctx, cpc)
		}
		_ = env.Client.Delete(ctx, cpc)
	})
	t.Cleanup(w.cleanup)
	if !wo.noManager {
		w.startManager()
	}
	return w
}

// cleanup (after the manager stopped) removes the test's NodeElasticIPs
// without their finalizers and its nodes.
func (w *world) cleanup() {
	ctx := context.Background()
	var list networkingv1alpha1.NodeElasticIPList
	if err := env.Client.List(ctx, &list); err == nil {
		for i := range list.Items {
			n := &list.Items[i]
			if !strings.HasPrefix(n.Name, w.prefix) && !strings.HasPrefix(n.Spec.NodeName, w.prefix) {
				continue
			}
			n.Finalizers = nil
			_ = env.Client.Update(ctx, n)
			_ = env.Client.Delete(ctx, n)
		}
	}
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes); err == nil {
		for i := range nodes.Items {
			if strings.HasPrefix(nodes.Items[i].Name, w.prefix) {
				_ = env.Client.Delete(ctx, &nodes.Items[i])
			}
		}
	}
}

// testOptions are fast options for tests: short polls, no sweep, no
// webhook (envtest calls none; webhook_test.go drives it).
func (w *world) testOptions() nodeelasticip.Options {
	o := testOptions(w.prefix, w.cpc)
	if w.opts != nil {
		w.opts(&o)
	}
	return o
}

// testOptions are the options of a test's manager (also the fault test's
// child process): its own selector label value and provider config.
func testOptions(prefix, cpc string) nodeelasticip.Options {
	o := nodeelasticip.DefaultOptions()
	o.NodeSelector = "edgeplane-test/want-eip=" + prefix
	o.ProviderConfig = cpc
	o.Webhook = false
	o.PollInterval = 2 * time.Second
	o.BlockedPollInterval = time.Second
	o.ListingMaxAge = time.Second
	o.MaxBackoff = time.Second
	o.OrphanMode = orphan.ModeOff
	o.OrphanInterval = time.Hour
	return o
}

// startManager starts a manager with the NodeElasticIP controllers; stop
// ends it (also at cleanup).
func (w *world) startManager() {
	w.t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	if w.wrap != nil {
		cfg.WrapTransport = w.wrap
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		w.t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sc := setup.Config{ClusterName: w.cluster, Credentials: w.creds}
	if err := w.testOptions().Setup()(ctx, mgr, sc); err != nil {
		cancel()
		w.t.Fatalf("setting up: %v", err)
	}
	if w.creds != nil {
		if err := providerconfig.Setup(ctx, mgr, sc); err != nil {
			cancel()
			w.t.Fatalf("setting up the ProviderConfig controllers: %v", err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := mgr.Start(ctx); err != nil {
			w.t.Logf("manager stopped: %v", err)
		}
	}()
	w.mgr = mgr
	var once sync.Once
	w.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	w.t.Cleanup(w.stop)
}

func clientKey(name string) client.ObjectKey { return client.ObjectKey{Name: name} }

// nodeName is the name of the test's node i.
func (w *world) nodeName(i int) string { return fmt.Sprintf("%s-n%d", w.prefix, i) }

// node creates the test's node i on instance i; labelled, it matches the
// translator's selector.
func (w *world) node(i int, labelled bool, mutate ...func(*corev1.Node)) *corev1.Node {
	w.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(i), Labels: map[string]string{}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-east-1a/" + instanceID(i)}}
	if labelled {
		n.Labels["edgeplane-test/want-eip"] = w.prefix
	}
	for _, m := range mutate {
		m(n)
	}
	if err := w.c.Create(w.ctx, n); err != nil {
		w.t.Fatalf("creating node %s: %v", n.Name, err)
	}
	return n
}

func (w *world) getNode(i int) *corev1.Node {
	w.t.Helper()
	n := &corev1.Node{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Name: w.nodeName(i)}, n); err != nil {
		w.t.Fatalf("getting node %s: %v", w.nodeName(i), err)
	}
	return n
}

// neip creates a NodeElasticIP for the test's node i.
func (w *world) neip(i int, mutate func(*networkingv1alpha1.NodeElasticIP)) *networkingv1alpha1.NodeElasticIP {
	w.t.Helper()
	n := &networkingv1alpha1.NodeElasticIP{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(i)},
		Spec: networkingv1alpha1.NodeElasticIPSpec{NodeName: w.nodeName(i), TaintKey: networkingv1alpha1.DefaultNodeElasticIPTaintKey}}
	n.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: w.cpc}
	if mutate != nil {
		mutate(n)
	}
	if err := w.c.Create(w.ctx, n); err != nil {
		w.t.Fatalf("creating NodeElasticIP %s: %v", n.Name, err)
	}
	return n
}

func (w *world) get(i int) *networkingv1alpha1.NodeElasticIP {
	w.t.Helper()
	n := &networkingv1alpha1.NodeElasticIP{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Name: w.nodeName(i)}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		w.t.Fatalf("getting NodeElasticIP %s: %v", w.nodeName(i), err)
	}
	return n
}

// eventually polls cond (a generous timeout only to avoid hanging).
func (w *world) eventually(what string, cond func() (bool, string)) {
	w.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(50 * time.Millisecond)
	}
	w.t.Fatalf("timed out waiting for %s; last state: %s", what, last)
}

func describe(n *networkingv1alpha1.NodeElasticIP) string {
	if n == nil {
		return "<gone>"
	}
	c, s := n.GetCondition(xpv2.TypeReady), n.GetCondition(xpv2.TypeSynced)
	return fmt.Sprintf("ready %s/%s %q; synced %s %q; allocation %s ip %s; finalizers %v", c.Status, c.Reason, c.Message, s.Status, s.Message,
		n.Status.AllocationID, n.Status.PublicIP, n.Finalizers)
}

// waitReason waits for the Ready reason of node i's NodeElasticIP.
func (w *world) waitReason(i int, reason xpv2.ConditionReason) *networkingv1alpha1.NodeElasticIP {
	w.t.Helper()
	var n *networkingv1alpha1.NodeElasticIP
	w.eventually(fmt.Sprintf("NodeElasticIP %s Ready reason %s", w.nodeName(i), reason), func() (bool, string) {
		n = w.get(i)
		return n != nil && n.GetCondition(xpv2.TypeReady).Reason == reason, describe(n)
	})
	return n
}

func (w *world) waitReady(i int) *networkingv1alpha1.NodeElasticIP {
	w.t.Helper()
	return w.waitReason(i, xpv2.ReasonAvailable)
}

func (w *world) waitGone(i int) {
	w.t.Helper()
	w.eventually("NodeElasticIP "+w.nodeName(i)+" gone", func() (bool, string) {
		n := w.get(i)
		return n == nil, describe(n)
	})
}

func (w *world) delete(i int) {
	w.t.Helper()
	if err := w.c.Delete(w.ctx, &networkingv1alpha1.NodeElasticIP{ObjectMeta: metav1.ObjectMeta{Name: w.nodeName(i)}}); err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("deleting NodeElasticIP %s: %v", w.nodeName(i), err)
	}
}

// addresses lists the emulator's addresses (not counted as API calls).
func (w *world) addresses() []core.EC2Address { return w.sim.World().Snapshot().EC2.Addresses }

func (w *world) address(id string) (core.EC2Address, bool) {
	for _, a := range w.addresses() {
		if a.AllocationID == id {
			return a, true
		}
	}
	return core.EC2Address{}, false
}

func tagMap(tags []core.Tag) map[string]string {
	out := map[string]string{}
	for _, t := range tags {
		out[t.Key] = t.Value
	}
	return out
}

// calls returns the emulator's count of an action's answers with code.
func (w *world) calls(action, code string) int64 {
	return w.sim.World().Stats()["ec2/"+action+"/"+code]
}

// wantOnNode checks that address id is associated with node i's primary
// IP and that the node carries its marks and no taint.
func (w *world) wantOnNode(i int, id string) {
	w.t.Helper()
	a, ok := w.address(id)
	if !ok {
		w.t.Fatalf("address %s does not exist", id)
	}
	if a.NetworkInterfaceID != eniID(i) || a.PrivateIPAddress != primaryIP(i) {
		w.t.Errorf("address %s is on %s/%s, want node %d's primary %s/%s", id, a.NetworkInterfaceID, a.PrivateIPAddress, i, eniID(i), primaryIP(i))
	}
	w.eventually(fmt.Sprintf("node %s marked with %s", w.nodeName(i), id), func() (bool, string) {
		n := w.getNode(i)
		ok := n.Labels[networkingv1alpha1.LabelNodeElasticIP] == a.PublicIP &&
			n.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID] == id && !tainted(n)
		return ok, fmt.Sprintf("labels %v annotations %v taints %v", n.Labels, n.Annotations, n.Spec.Taints)
	})
}

// wantClean checks that node i carries neither marks nor the taint.
func (w *world) wantClean(i int) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("node %s clean", w.nodeName(i)), func() (bool, string) {
		n := w.getNode(i)
		ok := n.Labels[networkingv1alpha1.LabelNodeElasticIP] == "" && n.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID] == "" && !tainted(n)
		return ok, fmt.Sprintf("labels %v annotations %v taints %v", n.Labels, n.Annotations, n.Spec.Taints)
	})
}

func tainted(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.MatchTaint(ptr.To(decide.Taint(networkingv1alpha1.DefaultNodeElasticIPTaintKey))) {
			return true
		}
	}
	return false
}

// nodeEvents counts the Events with reason on node i.
func (w *world) nodeEvents(i int, reason string) int {
	w.t.Helper()
	var list eventsv1.EventList
	if err := w.c.List(w.ctx, &list); err != nil {
		w.t.Fatalf("listing events: %v", err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == "Node" && e.Regarding.Name == w.nodeName(i) && e.Reason == reason {
			n++
		}
	}
	return n
}
