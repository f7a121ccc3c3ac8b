//go:build e2e

package node_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/images"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
	"github.com/edgeplane/edgeplane/internal/testsupport/localcluster"
)

// seedNodeInstances gives each real node an EC2 instance in the emulator
// whose primary ENI holds the node's address and, as a delegated prefix,
// the host-local half of its pod range: the ENI a PodElasticIP finds for
// a pod IP of that node.
func (e *env) seedNodeInstances(sim *cloudsim.Server) {
	e.t.Helper()
	var fx core.Fixtures
	for _, name := range e.cluster.RealNodes() {
		var node corev1.Node
		if err := e.c.Get(e.ctx, client.ObjectKey{Name: name}, &node); err != nil {
			e.t.Fatal(err)
		}
		podCIDR, err := netip.ParsePrefix(node.Spec.PodCIDR)
		if err != nil {
			e.t.Fatalf("node %s's pod range %q: %v", name, node.Spec.PodCIDR, err)
		}
		nodeIP := e.nodeIPs()[name]
		hostLocal := netip.PrefixFrom(podCIDR.Addr(), podCIDR.Bits()+1)
		fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{
			Tags: map[string]string{"Name": name},
			NetworkInterfaces: []core.EC2ENIFixture{{
				PrivateIPAddresses: []string{nodeIP},
				IPv4Prefixes:       []string{hostLocal.String()},
			}},
		})
	}
	if _, err := sim.World().ApplyFixtures(&fx); err != nil {
		e.t.Fatal(err)
	}
}

// addresses are the emulator's Elastic IPs.
func (e *env) addresses() []core.EC2Address { return e.sim.World().Snapshot().EC2.Addresses }

// eipPod creates a podreport pod with the PodElasticIP readiness gate and
// its PodElasticIP, and waits until the pod is Ready with the address on
// its IP.
func (e *env) eipPod(name string) (corev1.Pod, core.EC2Address) {
	e.t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workloads, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{localcluster.RealNodeLabel: "true"},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			ReadinessGates:                []corev1.PodReadinessGate{{ConditionType: networkingv1alpha1.PodConditionElasticIPReady}},
			Containers: []corev1.Container{{
				Name:            "web",
				Image:           images.PodReportRef,
				ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
	if err := e.c.Create(e.ctx, pod); err != nil {
		e.t.Fatal(err)
	}
	peip := &networkingv1alpha1.PodElasticIP{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workloads},
		Spec:       networkingv1alpha1.PodElasticIPSpec{PodName: name},
	}
	if err := e.c.Create(e.ctx, peip); err != nil {
		e.t.Fatal(err)
	}
	ready := e.readyPod(map[string]string{"app": name}, "")
	var addr core.EC2Address
	eventually.That(e.ctx, e.t, "the emulator to associate an address with "+ready.Status.PodIP, func() (bool, string) {
		for _, a := range e.addresses() {
			if a.PrivateIPAddress == ready.Status.PodIP && a.AssociationID != "" {
				addr = a
				return true, ""
			}
		}
		return false, fmt.Sprintf("%+v", e.addresses())
	})
	if err := e.c.Get(e.ctx, client.ObjectKeyFromObject(peip), peip); err != nil {
		e.t.Fatal(err)
	}
	if peip.Status.PublicIP != addr.PublicIP {
		e.t.Errorf("PodElasticIP %s reports %q, the emulator associated %s", name, peip.Status.PublicIP, addr.PublicIP)
	}
	return ready, addr
}

// testPodElasticIP: a PodElasticIP of a real pod: the emulator associates
// an address with the pod's real IP (on its node's ENI), and the pod's
// readiness gate opens only then (eipPod waits for Ready).
func (base *env) testPodElasticIP(t *testing.T) {
	e := base.with(t)
	pod, addr := e.eipPod("eip-web")
	if !slices.Contains(e.cluster.RealNodes(), pod.Spec.NodeName) {
		t.Errorf("pod %s runs on %q", pod.Name, pod.Spec.NodeName)
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == networkingv1alpha1.PodConditionElasticIPReady && c.Status != corev1.ConditionTrue {
			t.Errorf("pod %s is Ready with %s=%s", pod.Name, c.Type, c.Status)
		}
	}
	t.Logf("pod %s (%s on %s) has %s (%s)", pod.Name, pod.Status.PodIP, pod.Spec.NodeName, addr.PublicIP, addr.AllocationID)
}

// testLeaderFailover: killing the leader's pod, the other replica takes
// the lease over and carries on (a new PodElasticIP gets its address),
// and nothing leaks: one address per PodElasticIP.
func (base *env) testLeaderFailover(t *testing.T) {
	e := base.with(t)
	holder := e.leader()
	var leader corev1.Pod
	for _, p := range e.managerPods() {
		if strings.HasPrefix(holder, p.Name+"_") {
			leader = p
		}
	}
	if leader.Name == "" {
		t.Fatalf("no manager pod holds the lease (%q)", holder)
	}
	if err := e.c.Delete(e.ctx, &leader, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	eventually.That(e.ctx, t, "another replica to take the lease over", func() (bool, string) {
		now := e.leader()
		return !strings.HasPrefix(now, leader.Name+"_") && strings.Contains(now, "_"), now
	})
	t.Logf("the lease went from %s to %s", holder, e.leader())
	e.eipPod("eip-after-failover")
	var peips networkingv1alpha1.PodElasticIPList
	if err := e.c.List(e.ctx, &peips); err != nil {
		t.Fatal(err)
	}
	if got := e.addresses(); len(got) != len(peips.Items) {
		t.Errorf("the emulator holds %d addresses for %d PodElasticIPs: %+v", len(got), len(peips.Items), got)
	}
}

// testUninstall follows docs/operations.md's order ("Installing,
// upgrading and uninstalling the chart"): the translators off, the
// workloads and edgeplane's objects deleted while the manager still runs
// (its finalizers give the cloud's addresses back), then `helm uninstall`.
// No address is left in the emulator and no object waits on a finalizer.
func (base *env) testUninstall(t *testing.T) {
	e := base.with(t)
	e.helm("upgrade", release, "charts/edgeplane", "--namespace", namespace, "--reuse-values",
		"--set", "anycastIP.translateNodes=false,nodeElasticIP.translateNodes=false,podElasticIP.translateAnnotations=false,floatIP.migrateGalaxy=false",
		"--wait", "--timeout", "10m")
	for _, args := range [][]string{
		{"delete", "namespace", workloads, "--wait", "--timeout=5m"},
		{"delete", "edgeplane", "--all", "--all-namespaces", "--wait", "--timeout=5m"},
	} {
		if out, err := e.cluster.Kubectl(e.ctx, args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	e.t.Log(e.helm("uninstall", release, "--namespace", namespace, "--wait", "--timeout", "5m"))
	if got := e.addresses(); len(got) != 0 {
		t.Errorf("the emulator still holds %d addresses after uninstalling: %+v", len(got), got)
	}
	eventually.That(e.ctx, t, "the manager's pods to be gone", func() (bool, string) {
		pods := e.managerPods()
		return len(pods) == 0, fmt.Sprint(len(pods))
	})
	// Nothing waits on a finalizer: every object still there that names
	// one of edgeplane's is stuck, its manager gone.
	out, err := e.cluster.Kubectl(e.ctx, "get", "edgeplane,floatippoolledgers,clusterproviderconfigusages,providerconfigusages,pods,nodes,namespaces,secrets", "--all-namespaces",
		"-o", `jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name} {.metadata.finalizers}{"\n"}{end}`)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, "edgeplane.io/") {
			t.Errorf("stuck on a finalizer after uninstalling: %s", strings.TrimSpace(line))
		}
	}
}

// testManagersLogNoErrors: through the install, the workloads above and a
// failover, the manager replicas running now logged no error: what a
// user's first install would show them is the chart's defaults working.
func (base *env) testManagersLogNoErrors(t *testing.T) {
	e := base.with(t)
	out, err := e.cluster.Kubectl(e.ctx, "logs", "-n", namespace, "-l", "app.kubernetes.io/component=manager",
		"--tail=-1", "--prefix", "--max-log-requests=4")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(out) {
		if strings.Contains(line, `"level":"error"`) {
			t.Errorf("a manager logged an error: %s", strings.TrimSpace(line))
		}
	}
}
