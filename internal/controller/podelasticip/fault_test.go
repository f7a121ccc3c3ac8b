package podelasticip_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

const (
	childManagerEnv = "PEIP_CHILD_MANAGER"
	childKubeconfig = "PEIP_CHILD_KUBECONFIG"
	childNamespace  = "PEIP_CHILD_NAMESPACE"
	childCluster    = "PEIP_CHILD_CLUSTER"
)

// runChildManager is the child process of TestFaultChurnWithManagerKills:
// a manager with the PodElasticIP controllers (translator included) on the
// parent's API server, until it is killed.
func runChildManager() int {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(childKubeconfig))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	scheme, err := edgescheme.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ns := os.Getenv(childNamespace)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := testOptions()
	o.MaxBackoff = 3 * time.Second
	ctx := ctrl.SetupSignalHandler()
	if err := o.Setup()(ctx, mgr, setup.Config{ClusterName: os.Getenv(childCluster)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestFaultChurnWithManagerKills: 200 annotated pods are created and
// deleted while every mutating EC2 action is throttled 10% of the time and
// committed-then-dropped 5% of the time, and the manager (a child process)
// is SIGKILLed three times. At the end every live pod has exactly one
// associated address, the one its PodElasticIP records; no address serves
// two pods; and after one sweep no address tagged for this cluster lacks a
// PodElasticIP.
func TestFaultChurnWithManagerKills(t *testing.T) {
	faultChurn(t, false)
}

// TestFaultChurnWithManagerKillsTencent is the same churn on a Tencent
// Cloud provider config: every write action (AllocateAddresses,
// AssociateAddress, DisassociateAddress, ReleaseAddresses,
// ModifyResourceTags) is throttled 10% of the time and committed-then-
// dropped 5% of the time, and 5% of the tasks they start end FAILED (the
// cloud rolls them back); the manager is SIGKILLed three times. The same
// invariants hold: every live pod's IP carries exactly the address its
// PodElasticIP records, none carries two, no address serves two pods, and
// after one sweep of the Tencent accounts every address tagged for the
// cluster has a PodElasticIP.
func TestFaultChurnWithManagerKillsTencent(t *testing.T) {
	faultChurn(t, true)
}

// faultAddr is an address as the fault test's invariants see it, on
// either cloud: bound to PrivateIP (empty: bound to nothing).
type faultAddr struct {
	ID, PrivateIP string
	Tags          map[string]string
}

func faultChurn(t *testing.T, tencent bool) {
	w := newWorld(t, worldOpts{defaultConfig: true, noManager: true, tencent: tencent})
	var faults []core.FaultSpec
	if tencent {
		for _, a := range []string{"AllocateAddresses", "AssociateAddress", "DisassociateAddress", "ReleaseAddresses", "ModifyResourceTags"} {
			faults = append(faults, core.FaultSpec{Provider: core.ProviderTencent, Action: a, ErrorRate: 0.10, ErrorCode: core.TCRequestLimitExceeded,
				DropRate: 0.05, DropHold: core.Duration(300 * time.Millisecond), TaskFailureRate: 0.05})
		}
	} else {
		for _, a := range []string{"AllocateAddress", "AssociateAddress", "DisassociateAddress", "ReleaseAddress", "CreateTags", "DeleteTags"} {
			faults = append(faults, core.FaultSpec{Provider: core.ProviderEC2, Action: a, ErrorRate: 0.10, ErrorCode: core.EC2RequestLimitExceeded,
				DropRate: 0.05, DropHold: core.Duration(300 * time.Millisecond)})
		}
	}
	if err := w.sim.World().SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	// addresses are the cloud's addresses, bound ones with their pod IP.
	addresses := func() []faultAddr {
		var out []faultAddr
		if tencent {
			for _, a := range w.tcAddresses() {
				fa := faultAddr{ID: a.AddressID, Tags: tagMap(a.Tags)}
				if a.AddressStatus == "BIND" || a.AddressStatus == "BIND_ENI" {
					fa.PrivateIP = a.PrivateAddressIP
				}
				out = append(out, fa)
			}
			return out
		}
		for _, a := range w.addresses() {
			out = append(out, faultAddr{ID: a.AllocationID, PrivateIP: a.PrivateIPAddress, Tags: tagMap(a.Tags)})
		}
		return out
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	var child *exec.Cmd
	startChild := func() {
		child = exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), childManagerEnv+"=1", childKubeconfig+"="+kubeconfig, childNamespace+"="+w.ns, childCluster+"="+w.cluster)
		if err := child.Start(); err != nil {
			t.Fatalf("starting the manager: %v", err)
		}
	}
	kills := 0
	kill := func() {
		if err := child.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("killing the manager: %v", err)
		}
		_ = child.Wait()
		kills++
	}
	t.Cleanup(func() {
		if child != nil && child.ProcessState == nil {
			_ = child.Process.Signal(syscall.SIGKILL)
			_ = child.Wait()
		}
	})

	rng := rand.New(rand.NewPCG(4, 2))
	nextIP := 0
	ip := func() string {
		nextIP++
		if nextIP <= 250 {
			return fmt.Sprintf("10.0.1.%d", nextIP)
		}
		return fmt.Sprintf("10.0.2.%d", nextIP-250)
	}
	live := sets.New[string]()
	created, deleted := 0, 0
	create := func(n int) {
		for range n {
			name := fmt.Sprintf("churn-%03d", created)
			created++
			w.pod(name, ip(), hostIP1, func(p *corev1.Pod) { p.Annotations = map[string]string{translate.Type: "auto"} })
			live.Insert(name)
		}
	}
	remove := func(n int) {
		names := sets.List(live)
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, name := range names[:n] {
			pod := &corev1.Pod{}
			pod.Namespace, pod.Name = w.ns, name
			if err := w.c.Delete(w.ctx, pod, client.GracePeriodSeconds(0)); err != nil {
				t.Fatalf("deleting pod %s: %v", name, err)
			}
			live.Delete(name)
			deleted++
		}
	}

	startChild()
	create(120)
	time.Sleep(3 * time.Second)
	kill() // 1: mid-allocation
	create(40)
	remove(30) // deleted while the manager is down
	startChild()
	time.Sleep(3 * time.Second)
	remove(30)
	create(40)
	time.Sleep(2 * time.Second)
	kill() // 2: mid-churn
	startChild()
	time.Sleep(4 * time.Second)
	remove(20)
	time.Sleep(time.Second)
	kill() // 3
	startChild()

	// Converge: every live pod's PodElasticIP Ready, every deleted pod's gone.
	deadline := time.Now().Add(3 * time.Minute)
	var list networkingv1alpha1.PodElasticIPList
	for {
		if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, p := range list.Items {
			if live.Has(p.Name) && p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable {
				ready++
			}
		}
		if ready == live.Len() && len(list.Items) == live.Len() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not converged: %d of %d live pods Ready, %d PodElasticIPs", ready, live.Len(), len(list.Items))
		}
		time.Sleep(250 * time.Millisecond)
	}
	churnKills := kills
	kill() // stop the manager before checking the cloud
	child = nil

	if tencent {
		// Tasks started before the last kill end on the cloud's clock.
		time.Sleep(time.Second)
	}
	// Invariants.
	byIP := map[string][]faultAddr{}
	for _, a := range addresses() {
		if a.PrivateIP != "" {
			byIP[a.PrivateIP] = append(byIP[a.PrivateIP], a)
		}
	}
	crByPod, uids, allocs := map[string]networkingv1alpha1.PodElasticIP{}, sets.New[string](), map[string]string{}
	for _, p := range list.Items {
		crByPod[p.Spec.PodName] = p
		uids.Insert(string(p.UID))
	}
	livePodsWithOne, twice := 0, 0
	for name := range live {
		pod := w.getPod(name)
		got := byIP[pod.Status.PodIP]
		cr := crByPod[name]
		if len(got) != 1 || got[0].ID != cr.Status.AllocationID {
			t.Errorf("pod %s (%s): %d associated addresses %+v, PodElasticIP records %q", name, pod.Status.PodIP, len(got), got, cr.Status.AllocationID)
			continue
		}
		livePodsWithOne++
		if other, ok := allocs[got[0].ID]; ok {
			twice++
			t.Errorf("address %s serves %s and %s", got[0].ID, other, name)
		}
		allocs[got[0].ID] = name
	}
	o := testOptions()
	o.OrphanMode, o.OrphanGracePeriod = orphan.ModeDelete, 0
	newSweeper := podelasticip.NewSweeper
	if tencent {
		newSweeper = podelasticip.NewTencentSweeper
	}
	s, err := newSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tencent && len(rep.Deleted) > 0 {
		// Released orphans are gone once their tasks end.
		time.Sleep(time.Second)
	}
	tagged, unowned := 0, 0
	final := addresses()
	for _, a := range final {
		if a.Tags[decide.TagCluster] != w.cluster {
			continue
		}
		tagged++
		if !uids.Has(a.Tags[decide.TagOwnerUID]) {
			unowned++
			t.Errorf("address %s is tagged for this cluster but its PodElasticIP %s is gone", a.ID, a.Tags[decide.TagOwnerUID])
		}
	}
	stats := w.sim.World().Stats()
	allocate, release := stats["ec2/AllocateAddress/OK"], stats["ec2/ReleaseAddress/OK"]
	if tencent {
		allocate, release = stats["tencent/AllocateAddresses/OK"], stats["tencent/ReleaseAddresses/OK"]
	}
	fmt.Printf("fault test (%s): %d pods created, %d deleted, %d live; manager SIGKILLed %d times during the churn; live pods with exactly one associated address matching their PodElasticIP: %d/%d; "+
		"addresses associated with two pods: %d; sweep deleted %d orphans; addresses tagged for this cluster after the sweep: %d, without a PodElasticIP: %d; "+
		"total addresses %d; injected: throttled %d, allocations OK %d, releases OK %d\n",
		map[bool]string{false: "aws", true: "tencentcloud"}[tencent],
		created, deleted, live.Len(), churnKills, livePodsWithOne, live.Len(), twice, len(rep.Deleted), tagged, unowned, len(final),
		sumSuffix(stats, "/RequestLimitExceeded"), allocate, release)
	if churnKills != 3 || livePodsWithOne != live.Len() || twice != 0 || unowned != 0 || tagged != live.Len() {
		t.Fatalf("invariants broken: %d/%d live pods with one address, %d twice, %d unowned, %d tagged", livePodsWithOne, live.Len(), twice, unowned, tagged)
	}
}

func sumSuffix(stats map[string]int64, suffix string) int64 {
	var n int64
	for k, v := range stats {
		if len(k) > len(suffix) && k[len(k)-len(suffix):] == suffix {
			n += v
		}
	}
	return n
}
