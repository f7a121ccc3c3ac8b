package integration_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/containernetworking/plugins/pkg/testutils"
	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cniipam"
	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
	"github.com/edgeplane/edgeplane/internal/testsupport/testbin"
)

// referencePlugins returns the folder of the bridge, macvlan and loopback
// plugins `make cni-plugins` builds from the module hack/cni/go.mod pins;
// the test fails (never skips) when they are missing.
func referencePlugins(t *testing.T) string {
	t.Helper()
	dir, err := k8sbin.CNIDir("bridge", "macvlan", "loopback")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// podNet is one pod sandbox: its network namespace and the runtime's view.
type podNet struct {
	t     *testing.T
	netns ns.NetNS
	pod   *corev1.Pod
}

func (n *podNet) rt(ifname string, uid string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: "sandbox-" + n.pod.Name + "-" + uid, NetNS: n.netns.Path(), IfName: ifname, Args: [][2]string{
		{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", n.pod.Namespace}, {"K8S_POD_NAME", n.pod.Name},
		{"K8S_POD_INFRA_CONTAINER_ID", "sandbox"}, {"K8S_POD_UID", uid},
	}}
}

// v4 reads an interface's IPv4 addresses and its default route's gateway
// inside the pod's namespace.
func (n *podNet) v4(ifname string) (addrs []string, gateway string) {
	n.t.Helper()
	err := n.netns.Do(func(ns.NetNS) error {
		link, err := netlink.LinkByName(ifname)
		if err != nil {
			return fmt.Errorf("interface %s: %w", ifname, err)
		}
		as, err := netlink.AddrList(link, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, a := range as {
			addrs = append(addrs, a.IPNet.String())
		}
		routes, err := netlink.RouteList(link, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, r := range routes {
			if (r.Dst == nil || r.Dst.String() == "0.0.0.0/0") && r.Gw != nil {
				gateway = r.Gw.String()
			}
		}
		return nil
	})
	if err != nil {
		n.t.Fatal(err)
	}
	return addrs, gateway
}

// TestRealPluginsInNetworkNamespaces runs containernetworking's bridge,
// macvlan and loopback plugins through libcni, with edgeplane's IPAM,
// against the envtest API server, in network namespaces the test creates
// and removes (the bridge and the macvlan's veth parent have no uplink:
// nothing leaves the machine). After ADD the interface carries exactly the
// pod's float IP and the pool's gateway (read back with netlink); CHECK
// passes; DEL twice succeeds; a pod of the same name with another UID is
// refused; a two-interface pod gets both of its addresses.
func TestRealPluginsInNetworkNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces and links: run it as root (make test does)")
	}
	plugins := referencePlugins(t)
	ipamDir := t.TempDir()
	nsName := newNamespace(t, "cni-netns")
	kc := kubeconfig(t)
	testbin.BuildWithVars(t, ipamDir, map[string]string{"main.kubeconfigPath": kc}, "edgeplane-cni-ipam")
	ctx := context.Background()
	suffix := fmt.Sprintf("%x", os.Getpid()%0xfffff)
	bridge, parent := "epb"+suffix, "epm"+suffix
	// The macvlan parent: one end of a veth pair whose other end goes
	// nowhere (no uplink), removed at the end with its peer.
	must(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: parent}, PeerName: parent + "p"}))
	t.Cleanup(func() { deleteLink(t, parent) })
	link, err := netlink.LinkByName(parent)
	must(t, err)
	must(t, netlink.LinkSetUp(link))
	t.Cleanup(func() { deleteLink(t, bridge) }) // the bridge plugin creates it
	ipamConf := func(extra string) string {
		return fmt.Sprintf(`{"type":"edgeplane-cni-ipam","waitTimeout":"1s"%s}`, extra)
	}
	confList := func(name, plugin string) *libcni.NetworkConfigList {
		l, err := libcni.ConfListFromBytes(fmt.Appendf(nil, `{"cniVersion":"1.0.0","name":%q,"plugins":[%s]}`, name, plugin))
		must(t, err)
		return l
	}
	eth0 := confList("float-bridge", fmt.Sprintf(`{"type":"bridge","bridge":%q,"isGateway":false,"ipMasq":false,"ipam":%s}`, bridge, ipamConf("")))
	net1 := confList("float-storage", fmt.Sprintf(`{"type":"macvlan","master":%q,"mode":"bridge","ipam":%s}`, parent, ipamConf(`,"routes":[]`)))
	lo := confList("lo", `{"type":"loopback"}`)
	cni := libcni.NewCNIConfigWithCacheDir([]string{plugins, ipamDir}, t.TempDir(), nil)

	sandbox := func(pod *corev1.Pod) *podNet {
		t.Helper()
		netns, err := testutils.NewNS()
		must(t, err)
		t.Cleanup(func() {
			_ = netns.Close()
			if err := testutils.UnmountNS(netns); err != nil {
				t.Errorf("removing network namespace %s: %v", netns.Path(), err)
			}
		})
		return &podNet{t: t, netns: netns, pod: pod}
	}

	// One float IP on eth0 (bridge), plus loopback.
	web := newPod(t, nsName, "web", true, nil)
	ips := allocate(t, web)
	pn := sandbox(web)
	uid := string(web.UID)
	if _, err := cni.AddNetworkList(ctx, lo, pn.rt("lo", uid)); err != nil {
		t.Fatalf("loopback ADD: %v", err)
	}
	if _, err := cni.AddNetworkList(ctx, eth0, pn.rt("eth0", uid)); err != nil {
		t.Fatalf("bridge ADD: %v", err)
	}
	addrs, gw := pn.v4("eth0")
	if !slices.Equal(addrs, []string{ips[0] + "/24"}) || gw != "198.51.100.1" {
		t.Fatalf("eth0 has %v via %q, want exactly [%s/24] via 198.51.100.1", addrs, gw, ips[0])
	}
	if loAddrs, _ := pn.v4("lo"); !slices.Equal(loAddrs, []string{"127.0.0.1/8"}) {
		t.Fatalf("lo has %v", loAddrs)
	}
	if err := cni.CheckNetworkList(ctx, eth0, pn.rt("eth0", uid)); err != nil {
		t.Fatalf("bridge CHECK: %v", err)
	}
	for i := range 2 {
		if err := cni.DelNetworkList(ctx, eth0, pn.rt("eth0", uid)); err != nil {
			t.Fatalf("bridge DEL #%d: %v", i+1, err)
		}
	}
	must(t, cni.DelNetworkList(ctx, lo, pn.rt("lo", uid)))
	_ = pn.netns.Do(func(ns.NetNS) error {
		if _, err := netlink.LinkByName("eth0"); err == nil {
			t.Errorf("eth0 is still in the namespace after DEL")
		}
		return nil
	})

	// The same name, another UID: the recreated pod never gets the old
	// pod's IP (it has none yet), and the old sandbox is refused too.
	must(t, env.Client.Delete(ctx, web, client.GracePeriodSeconds(0)))
	again := newPod(t, nsName, "web", true, nil)
	pn2 := sandbox(again)
	// A failed ADD leaves the bridge's veth behind; the runtime's DEL
	// removes it before the next attempt, as a real runtime does.
	for _, attempt := range []struct {
		uid  string
		code uint
		msg  string
	}{
		{string(again.UID), types.ErrTryAgainLater, "no FloatIP bound to UID " + string(again.UID)},
		{uid, cniipam.CodePodUIDMismatch, "runtime asks for UID " + uid},
	} {
		_, err := cni.AddNetworkList(ctx, eth0, pn2.rt("eth0", attempt.uid))
		expectCNICode(t, err, attempt.code, attempt.msg)
		if addrs, _ := pn2.v4OrNone("eth0"); len(addrs) != 0 {
			t.Fatalf("a refused pod's eth0 has addresses %v", addrs)
		}
		must(t, cni.DelNetworkList(ctx, eth0, pn2.rt("eth0", attempt.uid)))
	}

	// Two interfaces: eth0 on the bridge from one pool, net1 (its Multus
	// network) on macvlan from another.
	multi := newPod(t, nsName, "multi", true, map[string]string{
		networkingv1alpha1.AnnotationMultusNetworks:    "storage",
		networkingv1alpha1.AnnotationFloatIPInterfaces: `[{"interface":"eth0","pool":"` + poolPublic + `"},{"network":"storage","pool":"` + poolStorage + `"}]`,
	})
	mips := allocate(t, multi)
	pm := sandbox(multi)
	muid := string(multi.UID)
	if _, err := cni.AddNetworkList(ctx, eth0, pm.rt("eth0", muid)); err != nil {
		t.Fatalf("bridge ADD eth0: %v", err)
	}
	if _, err := cni.AddNetworkList(ctx, net1, pm.rt("net1", muid)); err != nil {
		t.Fatalf("macvlan ADD net1: %v", err)
	}
	a0, gw0 := pm.v4("eth0")
	a1, gw1 := pm.v4("net1")
	if !slices.Equal(a0, []string{mips[0] + "/24"}) || gw0 != "198.51.100.1" {
		t.Fatalf("eth0 has %v via %q, want [%s/24] via 198.51.100.1", a0, gw0, mips[0])
	}
	if !slices.Equal(a1, []string{mips[1] + "/24"}) || gw1 != "" || !strings.HasPrefix(mips[1], "203.0.113.") {
		t.Fatalf("net1 has %v via %q, want [%s/24] from the storage pool and no second default route", a1, gw1, mips[1])
	}
	for _, c := range []struct {
		list   *libcni.NetworkConfigList
		ifname string
	}{{eth0, "eth0"}, {net1, "net1"}} {
		if err := cni.CheckNetworkList(ctx, c.list, pm.rt(c.ifname, muid)); err != nil {
			t.Fatalf("CHECK %s: %v", c.ifname, err)
		}
		for range 2 {
			if err := cni.DelNetworkList(ctx, c.list, pm.rt(c.ifname, muid)); err != nil {
				t.Fatalf("DEL %s: %v", c.ifname, err)
			}
		}
	}
}

// v4OrNone is v4 for an interface that may not exist.
func (n *podNet) v4OrNone(ifname string) ([]string, string) {
	var exists bool
	_ = n.netns.Do(func(ns.NetNS) error {
		_, err := netlink.LinkByName(ifname)
		exists = err == nil
		return nil
	})
	if !exists {
		return nil, ""
	}
	return n.v4(ifname)
}

func deleteLink(t *testing.T, name string) {
	link, err := netlink.LinkByName(name)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if !errors.As(err, &notFound) {
			t.Errorf("finding link %s: %v", name, err)
		}
		return
	}
	if err := netlink.LinkDel(link); err != nil {
		t.Errorf("deleting link %s: %v", name, err)
	}
}

// expectCNICode checks the error a runtime gets through libcni.
func expectCNICode(t *testing.T, err error, code uint, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("ADD succeeded, want CNI error %d containing %q", code, msg)
	}
	var e *types.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a CNI error %d", err, err, code)
	}
	if e.Code != code || !strings.Contains(e.Msg+e.Details, msg) {
		t.Fatalf("CNI error %d %q (%s), want code %d containing %q", e.Code, e.Msg, e.Details, code, msg)
	}
}
