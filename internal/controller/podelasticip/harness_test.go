package podelasticip_test

import (
	"context"
	"fmt"
	"math"
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
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/manager"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/tenancy"
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
	if os.Getenv("PEIP_DEBUG") != "" {
		log.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	} else {
		log.SetLogger(zap.New(zap.WriteTo(discard{})))
	}
	testenv.Main(m, &env)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// The emulated VPC: node w1 (instance i-0...1, host IP 10.0.0.10) holds
// secondary pod IPs 10.0.1.1-10.0.1.250 on its ENI; node w2 (instance
// i-0...2, host IP 10.0.0.20) uses prefix delegation: pod IPs come from
// 10.0.8.0/28 delegated to its second ENI.
const (
	hostIP1    = "10.0.0.10"
	hostIP2    = "10.0.0.20"
	eni1       = "eni-0000000000000001"
	eni2prefix = "eni-0000000000000022"
)

func fixtures() *core.Fixtures {
	ips := []string{hostIP1}
	for i := 1; i <= 250; i++ {
		ips = append(ips, fmt.Sprintf("10.0.1.%d", i))
	}
	more := []string{"10.0.0.11"}
	for i := 1; i <= 250; i++ {
		more = append(more, fmt.Sprintf("10.0.2.%d", i))
	}
	return &core.Fixtures{EC2: core.EC2Fixtures{Instances: []core.EC2InstanceFixture{
		{InstanceID: "i-0000000000000001", VpcID: "vpc-1", SubnetID: "subnet-1",
			NetworkInterfaces: []core.EC2ENIFixture{
				{NetworkInterfaceID: eni1, PrivateIPAddresses: ips},
				{NetworkInterfaceID: "eni-0000000000000012", PrivateIPAddresses: more},
			}},
		{InstanceID: "i-0000000000000002", VpcID: "vpc-1", SubnetID: "subnet-1",
			NetworkInterfaces: []core.EC2ENIFixture{
				{NetworkInterfaceID: "eni-0000000000000021", PrivateIPAddresses: []string{hostIP2}},
				{NetworkInterfaceID: eni2prefix, PrivateIPAddresses: []string{"10.0.0.21"}, IPv4Prefixes: []string{"10.0.8.0/28"}},
			}},
	}}}
}

// The emulated Tencent VPC: node w1 (instance ins-node0001, host IP
// 10.0.0.10 on its primary ENI) holds pod IPs 10.0.1.1-10.0.1.250 on its
// secondary ENI eni-pods0001 and 10.0.2.1-10.0.2.250 on eni-pods0002, the
// pod IPs of the EC2 fixtures, so a test's pods fit either cloud.
const (
	tcENI1 = "eni-pods0001"
	tcENI2 = "eni-pods0002"
)

func tencentFixtures() core.TencentFixtures {
	var ips1, ips2 []string
	for i := 1; i <= 250; i++ {
		ips1 = append(ips1, fmt.Sprintf("10.0.1.%d", i))
		ips2 = append(ips2, fmt.Sprintf("10.0.2.%d", i))
	}
	return core.TencentFixtures{Instances: []core.TCInstanceFixture{{
		InstanceID: "ins-node0001", VpcID: "vpc-1", SubnetID: "subnet-1", Zone: "ap-hongkong-2",
		NetworkInterfaceID: "eni-node0001", PrivateIPAddresses: []string{hostIP1},
		NetworkInterfaces: []core.TCENIFixture{
			{NetworkInterfaceID: tcENI1, PrivateIPAddresses: ips1},
			{NetworkInterfaceID: tcENI2, PrivateIPAddresses: ips2},
		},
	}}}
}

// world is one test's cloud and cluster: an emulator, a namespace, a
// ClusterProviderConfig pointing at the emulator, and a running manager
// with the PodElasticIP controllers.
type world struct {
	t       testing.TB
	ctx     context.Context
	sim     *cloudsimtest.Emulator
	ns      string
	cpc     string
	cluster string
	c       client.Client
	stop    func()
	// creds is set when the ProviderConfig controllers run (configController).
	creds *credstatus.Board
	// tenancy is the manager's tenant policy.
	tenancy tenancy.Policy
	// wrap wraps the manager's API transport (worldOpts.wrap).
	wrap func(http.RoundTripper) http.RoundTripper
}

type worldOpts struct {
	settings core.Settings
	// addresses seeds addresses (given the test's namespace).
	addresses func(ns string) []core.EC2AddressFixture
	opts      func(*podelasticip.Options)
	// defaultConfig makes the test's config ClusterProviderConfig/default,
	// which translated PodElasticIPs use.
	defaultConfig bool
	noManager     bool
	// sim shares another world's emulator (another cluster on one account).
	sim *cloudsimtest.Emulator
	// configController also runs the ProviderConfig controllers, fed by
	// the PodElasticIP controller's credential reports.
	configController bool
	// tenantEndpoint lets tenants' ProviderConfigs use the emulator (the
	// manager's --tenant-endpoints); otherwise they may use no endpoint.
	tenantEndpoint bool
	// wrap wraps the manager's API transport (a benchmark's request
	// counter).
	wrap func(http.RoundTripper) http.RoundTripper
	// tencent makes the test's config a Tencent Cloud one, on the
	// emulator's Tencent front (tencentFixtures; tasks take 200ms unless
	// settings say otherwise); tcAddresses seeds Tencent addresses.
	tencent     bool
	tcAddresses func(ns string) []core.TCAddressFixture
	// cluster is the test's cluster identity ("": its own); two worlds
	// with one identity and one emulator are two namespaces of one
	// cluster sharing an account.
	cluster string
}

func newWorld(t testing.TB, wo worldOpts) *world {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if wo.settings.EC2AddressQuota == 0 {
		wo.settings.EC2AddressQuota = 1000
	}
	if wo.settings.TencentAddressQuota == 0 {
		wo.settings.TencentAddressQuota = 1000
	}
	if wo.tencent && wo.settings.TaskDuration == 0 {
		wo.settings.TaskDuration = core.Duration(200 * time.Millisecond)
	}
	wo.settings.RateLimitsDisabled = wo.settings.RateLimitsDisabled || wo.settings.RateLimitScale == 0
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("%s-%d", strings.Trim(name, "-"), nameSeq.Add(1))
	fx := fixtures()
	if wo.addresses != nil {
		fx.EC2.Addresses = append(fx.EC2.Addresses, wo.addresses(name)...)
	}
	if wo.tencent {
		fx.Tencent = tencentFixtures()
		if wo.tcAddresses != nil {
			fx.Tencent.Addresses = append(fx.Tencent.Addresses, wo.tcAddresses(name)...)
		}
	}
	sim := wo.sim
	if sim == nil {
		sim = cloudsimtest.Start(t, cloudsim.Options{Seed: 7, Settings: wo.settings, Fixtures: fx})
	}
	w := &world{t: t, ctx: ctx, sim: sim, ns: name, cpc: "peip-" + name, cluster: "cluster-" + name, c: env.Client}
	if wo.cluster != "" {
		w.cluster = wo.cluster
	}
	if wo.defaultConfig {
		w.cpc = cloudv1alpha1.DefaultProviderConfigName
	}
	if wo.configController {
		w.creds = credstatus.New()
	}
	if wo.tenantEndpoint {
		p, err := tenancy.NewPolicy([]string{sim.URL()})
		if err != nil {
			t.Fatal(err)
		}
		w.tenancy = p
	}
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.ns}}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	cpc := &cloudv1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: w.cpc}}
	cpc.Spec.Provider, cpc.Spec.Region, cpc.Spec.Endpoint = cloudv1alpha1.ProviderAWS, "us-east-1", sim.URL()
	if wo.tencent {
		cpc.Spec.Provider, cpc.Spec.Region = cloudv1alpha1.ProviderTencentCloud, "ap-hongkong"
	}
	cpc.Spec.ClusterIdentity = w.cluster
	cpc.Spec.Credentials.Source = cloudv1alpha1.CredentialsNone
	if err := env.Client.Create(ctx, cpc); err != nil {
		t.Fatalf("creating ClusterProviderConfig: %v", err)
	}
	t.Cleanup(func() {
		// The ProviderConfig controller (configController) holds a config
		// in use with a finalizer; it has stopped by now, so drop it, or
		// later tests' sweeps would list a config whose emulator is gone.
		ctx := context.Background()
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cpc), cpc); err == nil && len(cpc.Finalizers) > 0 {
			cpc.Finalizers = nil
			_ = env.Client.Update(ctx, cpc)
		}
		_ = env.Client.Delete(ctx, cpc)
	})
	t.Cleanup(w.cleanup)
	w.wrap = wo.wrap
	if !wo.noManager {
		w.startManager(wo.opts)
	}
	return w
}

// cleanup (after the manager stopped) removes the test's PodElasticIPs
// without their finalizers: the emulator goes away with the test.
func (w *world) cleanup() {
	ctx := context.Background()
	var list networkingv1alpha1.PodElasticIPList
	if err := env.Client.List(ctx, &list, client.InNamespace(w.ns)); err != nil {
		return
	}
	for i := range list.Items {
		p := &list.Items[i]
		if len(p.Finalizers) > 0 {
			p.Finalizers = nil
			_ = env.Client.Update(ctx, p)
		}
		_ = env.Client.Delete(ctx, p)
	}
}

// testOptions are fast options for tests: short polls, no sweep.
func testOptions() podelasticip.Options {
	o := podelasticip.DefaultOptions()
	o.PollInterval = 2 * time.Second
	o.ListingMaxAge = time.Second
	o.OrphanMode = orphan.ModeOff
	o.OrphanInterval = time.Hour
	o.MaxBackoff = 2 * time.Second
	o.TaskPollInterval = 100 * time.Millisecond
	return o
}

// startManager starts a manager with the PodElasticIP controllers; stop
// ends it (also at cleanup).
func (w *world) startManager(mutate func(*podelasticip.Options)) {
	w.t.Helper()
	o := testOptions()
	if mutate != nil {
		mutate(&o)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	if w.wrap != nil {
		cfg.Wrap(w.wrap)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		// The manager's own cache (its transforms included), on the test's
		// namespace only: PodElasticIPs left by earlier tests must not reach
		// this test's emulator.
		Cache: manager.CacheOptions(w.ns),
	})
	if err != nil {
		w.t.Fatalf("creating manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sc := setup.Config{ClusterName: w.cluster, Credentials: w.creds, Tenancy: w.tenancy}
	if err := o.Setup()(ctx, mgr, sc); err != nil {
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
	var once sync.Once
	w.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	w.t.Cleanup(w.stop)
}

// pod creates a pod on a node with an IP, running (ip "" : pending).
func (w *world) pod(name, ip, hostIP string, mutate func(*corev1.Pod)) *corev1.Pod {
	w.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: corev1.PodSpec{NodeName: "w1", Containers: []corev1.Container{{Name: "c", Image: "nginx"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: networkingv1alpha1.PodConditionElasticIPReady}}},
	}
	if mutate != nil {
		mutate(p)
	}
	if err := w.c.Create(w.ctx, p); err != nil {
		w.t.Fatalf("creating pod %s: %v", name, err)
	}
	if ip != "" {
		w.setPodIP(p, ip, hostIP)
	}
	return p
}

func (w *world) setPodIP(p *corev1.Pod, ip, hostIP string) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := w.c.Get(w.ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.PodIP, p.Status.HostIP = ip, hostIP
		p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
		// The kubelet's conditions, which the manager's cache does not keep
		// of a bound pod: writes of the readiness gate must leave them.
		p.Status.Conditions = kubeletConditions()
		return w.c.Status().Update(w.ctx, p)
	})
	if err != nil {
		w.t.Fatalf("setting pod %s IP: %v", p.Name, err)
	}
}

// deletePod deletes a pod at once (no kubelet in envtest).
func (w *world) deletePod(name string) {
	w.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}
	if err := w.c.Delete(w.ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("deleting pod %s: %v", name, err)
	}
	w.eventually(fmt.Sprintf("pod %s gone", name), func() (bool, string) {
		err := w.c.Get(w.ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

func (w *world) peip(name, podName string, mutate func(*networkingv1alpha1.PodElasticIP)) *networkingv1alpha1.PodElasticIP {
	w.t.Helper()
	p := &networkingv1alpha1.PodElasticIP{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: networkingv1alpha1.PodElasticIPSpec{
			PodName:    podName,
			Allocation: networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeAuto},
		},
	}
	p.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: w.cpc}
	if mutate != nil {
		mutate(p)
	}
	if err := w.c.Create(w.ctx, p); err != nil {
		w.t.Fatalf("creating PodElasticIP %s: %v", name, err)
	}
	return p
}

func (w *world) get(name string) *networkingv1alpha1.PodElasticIP {
	w.t.Helper()
	p := &networkingv1alpha1.PodElasticIP{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		w.t.Fatalf("getting PodElasticIP %s: %v", name, err)
	}
	return p
}

// eventually polls cond (generous timeout only to avoid hanging).
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
		time.Sleep(100 * time.Millisecond)
	}
	w.t.Fatalf("timed out waiting for %s; last state: %s", what, last)
}

// ready waits for a PodElasticIP's Ready condition to have the reason.
func (w *world) waitReason(name string, reason xpv2.ConditionReason) *networkingv1alpha1.PodElasticIP {
	w.t.Helper()
	var p *networkingv1alpha1.PodElasticIP
	w.eventually(fmt.Sprintf("PodElasticIP %s Ready reason %s", name, reason), func() (bool, string) {
		p = w.get(name)
		if p == nil {
			return false, "not found"
		}
		c := p.GetCondition(xpv2.TypeReady)
		return c.Reason == reason, fmt.Sprintf("%s/%s %q; synced %q", c.Status, c.Reason, c.Message, p.GetCondition(xpv2.TypeSynced).Message)
	})
	return p
}

// reasons records every Ready reason a PodElasticIP's versions carried,
// from a watch started before the object exists. A reason that lasts one
// short pass (TaskFailed, before the next allocation) can fall between two
// polls of waitReason; the watch sees every version the controller wrote.
type reasons struct {
	mu   sync.Mutex
	seen []xpv2.ConditionReason
}

func (r *reasons) has(reason xpv2.ConditionReason) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.seen {
		if s == reason {
			return true, ""
		}
	}
	return false, fmt.Sprint(r.seen)
}

// watchReasons starts recording the Ready reasons of PodElasticIP name.
func (w *world) watchReasons(name string) *reasons {
	w.t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: w.c.Scheme()})
	if err != nil {
		w.t.Fatalf("watch client: %v", err)
	}
	wi, err := wc.Watch(w.ctx, &networkingv1alpha1.PodElasticIPList{}, client.InNamespace(w.ns), client.MatchingFields{"metadata.name": name})
	if err != nil {
		w.t.Fatalf("watching PodElasticIP %s: %v", name, err)
	}
	w.t.Cleanup(wi.Stop)
	r := &reasons{}
	go func() {
		for ev := range wi.ResultChan() {
			p, ok := ev.Object.(*networkingv1alpha1.PodElasticIP)
			if !ok {
				continue
			}
			reason := p.GetCondition(xpv2.TypeReady).Reason
			r.mu.Lock()
			if n := len(r.seen); n == 0 || r.seen[n-1] != reason {
				r.seen = append(r.seen, reason)
			}
			r.mu.Unlock()
		}
	}()
	return r
}

// waitReasonSeen waits until some version of the PodElasticIP r watches
// carried the Ready reason.
func (w *world) waitReasonSeen(name string, r *reasons, reason xpv2.ConditionReason) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("PodElasticIP %s Ready reason %s in some version", name, reason), func() (bool, string) {
		ok, seen := r.has(reason)
		return ok, "reasons seen " + seen
	})
}

func (w *world) waitReady(name string) *networkingv1alpha1.PodElasticIP {
	w.t.Helper()
	return w.waitReason(name, xpv2.ReasonAvailable)
}

func (w *world) waitGone(name string) {
	w.t.Helper()
	w.eventually("PodElasticIP "+name+" gone", func() (bool, string) {
		p := w.get(name)
		if p == nil {
			return true, ""
		}
		return false, fmt.Sprintf("finalizers %v, ready %+v, synced %q", p.Finalizers, p.GetCondition(xpv2.TypeReady), p.GetCondition(xpv2.TypeSynced).Message)
	})
}

func (w *world) delete(name string) {
	w.t.Helper()
	if err := w.c.Delete(w.ctx, &networkingv1alpha1.PodElasticIP{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name}}); err != nil && !apierrors.IsNotFound(err) {
		w.t.Fatalf("deleting PodElasticIP %s: %v", name, err)
	}
}

// addresses lists the emulator's addresses (not counted as API calls).
func (w *world) addresses() []core.EC2Address {
	return w.sim.World().Snapshot().EC2.Addresses
}

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

// calls returns the emulator's successful call count of an action.
func (w *world) calls(action string) int64 {
	return w.sim.World().Stats()["ec2/"+action+"/OK"]
}

func (w *world) getPod(name string) *corev1.Pod {
	w.t.Helper()
	p := &corev1.Pod{}
	if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, p); err != nil {
		w.t.Fatalf("getting pod %s: %v", name, err)
	}
	return p
}

// eventCount counts the Events with reason on a PodElasticIP.
func (w *world) eventCount(name, reason string) int {
	w.t.Helper()
	var list eventsv1.EventList
	if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
		w.t.Fatalf("listing events: %v", err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Kind == "PodElasticIP" && e.Regarding.Name == name && e.Reason == reason {
			n++
		}
	}
	return n
}

// waitConfigReason waits for the test's ClusterProviderConfig's Ready reason.
func (w *world) waitConfigReason(reason xpv2.ConditionReason) {
	w.t.Helper()
	w.eventually(fmt.Sprintf("ClusterProviderConfig %s Ready reason %s", w.cpc, reason), func() (bool, string) {
		cpc := &cloudv1alpha1.ClusterProviderConfig{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Name: w.cpc}, cpc); err != nil {
			return false, err.Error()
		}
		c := cpc.GetCondition(xpv2.TypeReady)
		return c.Reason == reason, fmt.Sprintf("%s/%s %q", c.Status, c.Reason, c.Message)
	})
}

// waitRetries waits until the PodElasticIPs have tried the cloud twice
// each more (held back by the account's credential gate, which counts the
// calls it holds), giving them the chance to reach the cloud.
func (w *world) waitRetries(names []string) {
	w.t.Helper()
	start := cloud.CredentialHolds()
	w.eventually("retries of "+strings.Join(names, ", "), func() (bool, string) {
		got := cloud.CredentialHolds()
		return got >= start+float64(2*len(names)), fmt.Sprint(got - start)
	})
}

// tcAddresses lists the emulator's Tencent addresses.
func (w *world) tcAddresses() []core.TCAddress {
	return w.sim.World().Snapshot().Tencent.Addresses
}

func (w *world) tcAddress(id string) (core.TCAddress, bool) {
	for _, a := range w.tcAddresses() {
		if a.AddressID == id {
			return a, true
		}
	}
	return core.TCAddress{}, false
}

// tcCalls returns the emulator's successful call count of a Tencent action.
func (w *world) tcCalls(action string) int64 {
	return w.sim.World().Stats()["tencent/"+action+"/OK"]
}

// setPodConditions replaces the pod's conditions.
func (w *world) setPodConditions(name string, conds []corev1.PodCondition) {
	w.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p := &corev1.Pod{}
		if err := w.c.Get(w.ctx, client.ObjectKey{Namespace: w.ns, Name: name}, p); err != nil {
			return err
		}
		p.Status.Conditions = conds
		return w.c.Status().Update(w.ctx, p)
	})
	if err != nil {
		w.t.Fatalf("setting the conditions of pod %s: %v", name, err)
	}
}

// kubeletConditions are a running pod's conditions as its kubelet sets them
// while a readiness gate is not yet True.
func kubeletConditions() []corev1.PodCondition {
	at := metav1.NewTime(time.Unix(1700000000, 0))
	return []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ReadinessGatesNotReady", LastTransitionTime: at},
	}
}

// backoffBase is the first step of the controller's per-PodElasticIP
// backoff (setup.go's work-queue rate limiter: 20ms, doubling up to
// MaxBackoff).
const backoffBase = 20 * time.Millisecond

// backoffPasses bounds the passes the work queue lets one failing
// PodElasticIP make in a window: the ramp's steps shorter than maxBackoff
// (at most ceil(log2(maxBackoff/backoffBase)), wherever they fall), one
// per maxBackoff after it, and the pass already due at the window's start:
//
//	ceil(log2(maxBackoff/20ms)) + floor(window/maxBackoff) + 1
//
// (7 + 3 + 1 = 11 for the harness's 2s over 6s). It counts every pass the
// backoff allows, not what the test expects to see (about one per
// maxBackoff): a loaded machine only makes passes rarer.
func backoffPasses(maxBackoff, window time.Duration) int64 {
	ramp := int64(math.Ceil(math.Log2(float64(maxBackoff) / float64(backoffBase))))
	return ramp + int64(window/maxBackoff) + 1
}

// assertBackedOff checks that the PodElasticIPs, stuck with Ready reason
// reason, retry the cloud at the backoff's pace, not in a hot loop: over
// a window of three backoff periods each calls action (every answer
// counted, "ec2/AllocateAddress" for example) at most once per pass the
// backoff allows, and the reason holds.
func (w *world) assertBackedOff(names []string, reason xpv2.ConditionReason, action string) {
	w.t.Helper()
	maxBackoff := testOptions().MaxBackoff
	window := 3 * maxBackoff
	calls := func() int64 {
		var n int64
		for k, v := range w.sim.World().Stats() {
			if strings.HasPrefix(k, action+"/") {
				n += v
			}
		}
		return n
	}
	before, stats := calls(), w.sim.World().Stats()
	time.Sleep(window)
	n, limit := calls()-before, int64(len(names))*backoffPasses(maxBackoff, window)
	w.t.Logf("%d %s calls in %s from %d PodElasticIPs at %s (bound %d)", n, action, window, len(names), reason, limit)
	if n > limit {
		after := w.sim.World().Stats()
		for k, v := range after {
			if after[k] = v - stats[k]; after[k] == 0 {
				delete(after, k)
			}
		}
		w.t.Errorf("%d %s calls in %s from %d PodElasticIPs at %s, want at most %d (the backoff's passes, one call each); all calls %v",
			n, action, window, len(names), reason, limit, after)
	}
	for _, name := range names {
		if c := w.get(name).GetCondition(xpv2.TypeReady); c.Reason != reason {
			w.t.Errorf("%s: Ready reason %s after the window, want %s held", name, c.Reason, reason)
		}
	}
}
