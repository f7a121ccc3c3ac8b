package nodeelasticip_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	edgescheme "github.com/edgeplane/edgeplane/internal/scheme"
)

const (
	childManagerEnv = "NEIP_CHILD_MANAGER"
	childKubeconfig = "NEIP_CHILD_KUBECONFIG"
	childPrefix     = "NEIP_CHILD_PREFIX"
	childConfig     = "NEIP_CHILD_CONFIG"
	childCluster    = "NEIP_CHILD_CLUSTER"
)

// runChildManager is the child process of TestFaultChurnWithManagerKills:
// a manager with the NodeElasticIP controllers (translator included) on the
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
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o := testOptions(os.Getenv(childPrefix), os.Getenv(childConfig))
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

// TestFaultChurnWithManagerKills: 200 labelled nodes come and go (some
// with their instances terminated) while every mutating EC2 action is
// throttled 10% of the time and committed-then-dropped 5% of the time
// (the action happens, its answer is lost), and the manager (a child
// process) is SIGKILLed three times, once with nodes deleted while it is
// down. At the end every live node has exactly one address on its primary
// IP, the one its NodeElasticIP records; no address is on two nodes; every
// deleted node's NodeElasticIP is gone; and after one sweep no address
// tagged for this cluster lacks a NodeElasticIP.
func TestFaultChurnWithManagerKills(t *testing.T) {
	const total = 200
	w := newWorld(t, worldOpts{noManager: true, instances: total})
	var faults []core.FaultSpec
	for _, a := range []string{"AllocateAddress", "AssociateAddress", "DisassociateAddress", "ReleaseAddress", "CreateTags", "DeleteTags"} {
		faults = append(faults, core.FaultSpec{Provider: core.ProviderEC2, Action: a, ErrorRate: 0.10, ErrorCode: core.EC2RequestLimitExceeded,
			DropRate: 0.05, DropHold: core.Duration(300 * time.Millisecond)})
	}
	if err := w.sim.World().SetFaults(faults); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	var child *exec.Cmd
	startChild := func() {
		child = exec.Command(os.Args[0], "-test.run=^$")
		child.Env = append(os.Environ(), childManagerEnv+"=1", childKubeconfig+"="+kubeconfig, childPrefix+"="+w.prefix,
			childConfig+"="+w.cpc, childCluster+"="+w.cluster)
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

	rng := rand.New(rand.NewPCG(22, 2))
	live, terminated := sets.New[int](), 0
	created := 0
	create := func(n int) {
		for range n {
			w.node(created, true)
			live.Insert(created)
			created++
		}
	}
	remove := func(n int) {
		nodes := sets.List(live)
		rng.Shuffle(len(nodes), func(i, j int) { nodes[i], nodes[j] = nodes[j], nodes[i] })
		for _, i := range nodes[:n] {
			if err := w.c.Delete(w.ctx, w.getNode(i)); err != nil {
				t.Fatalf("deleting node %d: %v", i, err)
			}
			// Half the nodes go with their instance (EC2 disassociates the
			// address with the primary interface), half are only drained
			// from the cluster.
			if rng.IntN(2) == 0 {
				if err := w.sim.World().Remove(&core.Removals{EC2: core.EC2Removals{Instances: []string{instanceID(i)}}}); err != nil {
					t.Fatalf("terminating instance %d: %v", i, err)
				}
				terminated++
			}
			live.Delete(i)
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

	// Converge: every live node's NodeElasticIP Ready, every deleted one's gone.
	deadline := time.Now().Add(4 * time.Minute)
	var list networkingv1alpha1.NodeElasticIPList
	ours := func() []networkingv1alpha1.NodeElasticIP {
		var out []networkingv1alpha1.NodeElasticIP
		for _, n := range list.Items {
			if strings.HasPrefix(n.Name, w.prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	for {
		if err := w.c.List(w.ctx, &list); err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, n := range ours() {
			if n.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable {
				ready++
			}
		}
		if ready == live.Len() && len(ours()) == live.Len() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not converged: %d of %d live nodes Ready, %d NodeElasticIPs", ready, live.Len(), len(ours()))
		}
		time.Sleep(250 * time.Millisecond)
	}
	churnKills := kills
	kill() // stop the manager before checking the cloud
	child = nil

	// Invariants.
	onENI := map[string][]core.EC2Address{}
	for _, a := range w.addresses() {
		if a.NetworkInterfaceID != "" {
			onENI[a.NetworkInterfaceID+"/"+a.PrivateIPAddress] = append(onENI[a.NetworkInterfaceID+"/"+a.PrivateIPAddress], a)
		}
	}
	byNode, uids, seen := map[string]networkingv1alpha1.NodeElasticIP{}, sets.New[string](), map[string]string{}
	for _, n := range ours() {
		byNode[n.Spec.NodeName] = n
		uids.Insert(string(n.UID))
	}
	withOne, twice := 0, 0
	for i := range live {
		got := onENI[eniID(i)+"/"+primaryIP(i)]
		n := byNode[w.nodeName(i)]
		if len(got) != 1 || got[0].AllocationID != n.Status.AllocationID {
			t.Errorf("node %d: %d addresses on its primary IP %+v, its NodeElasticIP records %q", i, len(got), got, n.Status.AllocationID)
			continue
		}
		withOne++
		if other, ok := seen[got[0].AllocationID]; ok {
			twice++
			t.Errorf("address %s is on %s and %s", got[0].AllocationID, other, w.nodeName(i))
		}
		seen[got[0].AllocationID] = w.nodeName(i)
		if node := w.getNode(i); node.Labels[networkingv1alpha1.LabelNodeElasticIP] != got[0].PublicIP || tainted(node) {
			t.Errorf("node %d: label %q tainted %v, want %s and no taint", i, node.Labels[networkingv1alpha1.LabelNodeElasticIP], tainted(node), got[0].PublicIP)
		}
	}
	o := w.testOptions()
	o.OrphanMode, o.OrphanGracePeriod = orphan.ModeDelete, 0
	s, err := nodeelasticip.NewSweeper(env.Client, env.Client, o, w.cluster)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tagged, unowned := 0, 0
	for _, a := range w.addresses() {
		tags := tagMap(a.Tags)
		if tags[decide.TagCluster] != w.cluster {
			continue
		}
		tagged++
		if !uids.Has(tags[decide.TagOwnerUID]) {
			unowned++
			t.Errorf("address %s is tagged for this cluster but its NodeElasticIP %s is gone", a.AllocationID, tags[decide.TagOwnerUID])
		}
	}
	stats := w.sim.World().Stats()
	fmt.Printf("fault test: %d nodes created, %d deleted (%d with their instance), %d live; manager SIGKILLed %d times during the churn; "+
		"live nodes with exactly one address matching their NodeElasticIP: %d/%d; addresses on two nodes: %d; sweep deleted %d orphans; "+
		"addresses tagged for this cluster after the sweep: %d, without a NodeElasticIP: %d; total addresses %d; injected: throttled %d; "+
		"allocations OK %d, releases OK %d\n",
		created, created-live.Len(), terminated, live.Len(), churnKills, withOne, live.Len(), twice, len(rep.Deleted), tagged, unowned,
		len(w.addresses()), sumSuffix(stats, "/RequestLimitExceeded"), stats["ec2/AllocateAddress/OK"], stats["ec2/ReleaseAddress/OK"])
	if churnKills != 3 || withOne != live.Len() || twice != 0 || unowned != 0 || tagged != live.Len() {
		t.Fatalf("invariants broken: %d/%d live nodes with one address, %d twice, %d unowned, %d tagged", withOne, live.Len(), twice, unowned, tagged)
	}
}

func sumSuffix(stats map[string]int64, suffix string) int64 {
	var n int64
	for k, v := range stats {
		if strings.HasSuffix(k, suffix) {
			n += v
		}
	}
	return n
}
