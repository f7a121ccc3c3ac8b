package legacy_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// tkestack/aia-ip-controller. From its README: the node label
// `tke.cloud.tencent.com/need-aia-ip: 'true'`, the taint
// `tke.cloud.tencent.com/no-aia-ip": "true"` and the node annotations
// `tke.cloud.tencent.com/anycast-ip-id: eip-xxx` and
// `tke.cloud.tencent.com/anycast-ip-address: xxxxx`. From its code (the
// README only says it "relies on ... Tencent Cloud Tag api"): the instance
// label cloud.tencent.com/node-instance-id, the ConfigMap
// kube-system/aia-official-cluster-uuid with key aia-official-cluster-uuid,
// the address tags aia-official-cluster-uuid and aia-node-name, the taint
// effect NoSchedule and the Event reason FailedAllocateAnycastIp. The
// instance label is the node's own to rewrite, so edgeplane reads the
// instance from the node's spec.providerID, which TKE nodes carry beside
// the label (docs/migration/aia-ip-controller.md).
const aiaClusterUUID = "0f8d7c2e-5b1a-4c3d-9e8f-7a6b5c4d3e2f"

func aiaIPController() project {
	return project{
		name: "aia-ip-controller",
		fixtures: func(fx *core.Fixtures) {
			fx.Tencent.Instances = append(fx.Tencent.Instances,
				core.TCInstanceFixture{InstanceID: "ins-aianode1", PrivateIPAddresses: []string{"10.20.0.1"}},
				core.TCInstanceFixture{InstanceID: "ins-aianode2", PrivateIPAddresses: []string{"10.20.0.2"}},
				core.TCInstanceFixture{InstanceID: "ins-aianode3", PrivateIPAddresses: []string{"10.20.0.3"}},
			)
			fx.Tencent.Addresses = append(fx.Tencent.Addresses,
				// Bound by the legacy controller to aia-node-2, found by its tags.
				core.TCAddressFixture{AddressID: "eip-aialgc02", AddressType: "AnycastEIP", InstanceID: "ins-aianode2",
					Tags: map[string]string{"aia-official-cluster-uuid": aiaClusterUUID, "aia-node-name": "aia-node-2"}},
				// aia-node-3's CVM already has a public IP of another kind.
				core.TCAddressFixture{AddressID: "eip-wanip003", AddressType: "EIP", InstanceID: "ins-aianode3"},
			)
		},
		setup: func(w *world) {
			w.namespace("kube-system")
			w.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "aia-official-cluster-uuid"},
				Data: map[string]string{"aia-official-cluster-uuid": aiaClusterUUID}})
			for i := 1; i <= 3; i++ {
				w.node(fmt.Sprintf("aia-node-%d", i), "", map[string]string{
					"tke.cloud.tencent.com/need-aia-ip":  "true",
					"cloud.tencent.com/node-instance-id": fmt.Sprintf("ins-aianode%d", i),
				}, fmt.Sprintf("qcloud:///800002/ins-aianode%d", i))
			}
			// Not labelled: no address.
			w.node("aia-node-plain", "", map[string]string{"cloud.tencent.com/node-instance-id": "ins-aianode9"}, "qcloud:///800002/ins-aianode9")
		},
		test: testAIA,
	}
}

func testAIA(t *testing.T, w *world) {
	node := func(name string) *corev1.Node {
		t.Helper()
		n := &corev1.Node{}
		if err := env.Client.Get(w.ctx, client.ObjectKey{Name: name}, n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tainted := func(n *corev1.Node) bool {
		for _, taint := range n.Spec.Taints {
			if taint.Key == "tke.cloud.tencent.com/no-aia-ip" && taint.Value == "true" && taint.Effect == corev1.TaintEffectNoSchedule {
				return true
			}
		}
		return false
	}
	bound := func(name string) *corev1.Node {
		t.Helper()
		var n *corev1.Node
		eventually.That(t.Context(), t, name+" bound and annotated", func() (bool, string) {
			n = node(name)
			a := n.Annotations
			return a["tke.cloud.tencent.com/anycast-ip-id"] != "" && a["tke.cloud.tencent.com/anycast-ip-address"] != "" && !tainted(n),
				fmt.Sprintf("annotations %v, taints %v", a, n.Spec.Taints)
		})
		return n
	}

	// A new node: an address is allocated, bound, and recorded on the node.
	n1 := bound("aia-node-1")
	id := n1.Annotations["tke.cloud.tencent.com/anycast-ip-id"]
	ip := n1.Annotations["tke.cloud.tencent.com/anycast-ip-address"]
	if !strings.HasPrefix(id, "eip-") {
		t.Errorf("anycast-ip-id %q, want eip-xxx", id)
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		t.Errorf("anycast-ip-address %q is not an IP: %v", ip, err)
	}
	found := false
	for _, a := range w.emu.World().Snapshot().Tencent.Addresses {
		if a.AddressID == id {
			found = a.AddressIP == ip && a.InstanceID == "ins-aianode1"
		}
	}
	if !found {
		t.Errorf("node annotations %s / %s are not the address bound to ins-aianode1 in the cloud", id, ip)
	}

	// The legacy controller's address (its ConfigMap's UUID and the node's
	// name in the address tags) is adopted, not a new one allocated.
	if got := bound("aia-node-2").Annotations["tke.cloud.tencent.com/anycast-ip-id"]; got != "eip-aialgc02" {
		t.Errorf("aia-node-2 anycast-ip-id = %q, want the legacy-tagged eip-aialgc02", got)
	}
	b := &networkingv1alpha1.AnycastIPBinding{}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "aia-node-2"}, b); err != nil {
		t.Fatal(err)
	}
	if b.Status.Adopted != "Legacy" {
		t.Errorf("aia-node-2's binding adopted = %q, want Legacy", b.Status.Adopted)
	}

	// A node whose CVM has a public IP of another kind cannot be bound: it
	// keeps the taint, and the node gets the legacy Warning Event.
	eventually.That(t.Context(), t, "aia-node-3 tainted with FailedAllocateAnycastIp", func() (bool, string) {
		n := node("aia-node-3")
		evs := events(t, w.ctx, "", string(n.UID), "FailedAllocateAnycastIp")
		return tainted(n) && len(evs) > 0 && evs[0].Type == corev1.EventTypeWarning,
			fmt.Sprintf("taints %v, %d events", n.Spec.Taints, len(evs))
	})

	// An unlabelled node gets nothing.
	if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "aia-node-plain"}, &networkingv1alpha1.AnycastIPBinding{}); err == nil {
		t.Error("a node without tke.cloud.tencent.com/need-aia-ip got an AnycastIPBinding")
	}
	if n := node("aia-node-plain"); tainted(n) || n.Annotations["tke.cloud.tencent.com/anycast-ip-id"] != "" {
		t.Errorf("unlabelled node touched: %v %v", n.Spec.Taints, n.Annotations)
	}
}
