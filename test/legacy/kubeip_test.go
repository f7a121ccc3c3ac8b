package legacy_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/testsupport/eventually"
)

// doitintl/kubeip v2. From its README: the DaemonSet's nodeSelector
// `kubeip.com/public: "true"`, the AWS FILTER example
// `Name=tag:env,Values=dev;Name=tag:app,Values=streamer`, the taint key
// example `kubeip.com/not-ready` (removed once the address is assigned),
// and the v1 node label `kubip_assigned` whose value is the address with
// `.` replaced by `_`. The manager gets them as kubeip's DaemonSet env
// would be carried over (docs/migration/kubeip.md); the flags are set in
// startManager.
const (
	kubeipSelector = "kubeip.com/public=true"
	kubeipFilter   = "Name=tag:env,Values=dev;Name=tag:app,Values=streamer"
	kubeipTaint    = "kubeip.com/not-ready"
)

func kubeipInstance(i int) string { return fmt.Sprintf("i-0c1b00000000000%d", i) }
func kubeipENI(i int) string      { return fmt.Sprintf("eni-0c1b00000000000%d", i) }
func kubeipIP(i int) string       { return fmt.Sprintf("10.40.0.%d", i) }

func kubeIP() project {
	return project{
		name: "kubeip",
		fixtures: func(fx *core.Fixtures) {
			for i := 1; i <= 3; i++ {
				fx.EC2.Instances = append(fx.EC2.Instances, core.EC2InstanceFixture{InstanceID: kubeipInstance(i), VpcID: "vpc-kubeip", SubnetID: "subnet-kubeip",
					NetworkInterfaces: []core.EC2ENIFixture{{NetworkInterfaceID: kubeipENI(i), PrivateIPAddresses: []string{kubeipIP(i)}}}})
			}
			reserved := map[string]string{"env": "dev", "app": "streamer"}
			fx.EC2.Addresses = append(fx.EC2.Addresses,
				// kubeip's assignment on node 1, before edgeplane came.
				core.EC2AddressFixture{AllocationID: "eipalloc-0c1b000000000001", PublicIP: "198.51.100.71", Tags: reserved,
					NetworkInterfaceID: kubeipENI(1), PrivateIPAddress: kubeipIP(1)},
				// A free reserved address, for node 2.
				core.EC2AddressFixture{AllocationID: "eipalloc-0c1b000000000002", PublicIP: "198.51.100.72", Tags: reserved},
				// Outside the filter (env=prod): never taken.
				core.EC2AddressFixture{AllocationID: "eipalloc-0c1b000000000003", PublicIP: "198.51.100.73", Tags: map[string]string{"env": "prod", "app": "streamer"}},
			)
		},
		setup: func(w *world) {
			for i := 1; i <= 2; i++ {
				// The node group taints new nodes with TAINT_KEY, as kubeip's
				// README has it; the agent (here edgeplane) removes it.
				w.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("kubeip-node-%d", i), Labels: map[string]string{"kubeip.com/public": "true"}},
					Spec: corev1.NodeSpec{ProviderID: "aws:///ap-southeast-1a/" + kubeipInstance(i),
						Taints: []corev1.Taint{{Key: kubeipTaint, Effect: corev1.TaintEffectNoSchedule}}}})
			}
			// Not selected: nothing.
			w.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kubeip-node-3"}, Spec: corev1.NodeSpec{ProviderID: "aws:///ap-southeast-1a/" + kubeipInstance(3)}})
		},
		test: testKubeIP,
	}
}

func testKubeIP(t *testing.T, w *world) {
	want := map[string]struct{ id, ip string }{
		"kubeip-node-1": {"eipalloc-0c1b000000000001", "198.51.100.71"},
		"kubeip-node-2": {"eipalloc-0c1b000000000002", "198.51.100.72"},
	}
	for name, addr := range want {
		eventually.That(t.Context(), t, name+" has its address, labelled and untainted", func() (bool, string) {
			n := &corev1.Node{}
			if err := env.Client.Get(w.ctx, client.ObjectKey{Name: name}, n); err != nil {
				return false, err.Error()
			}
			for _, taint := range n.Spec.Taints {
				if taint.Key == kubeipTaint {
					return false, fmt.Sprintf("still tainted %v", n.Spec.Taints)
				}
			}
			got := n.Labels["kubip_assigned"]
			return got == map[string]string{"198.51.100.71": "198_51_100_71", "198.51.100.72": "198_51_100_72"}[addr.ip], fmt.Sprintf("kubip_assigned=%q", got)
		})
	}
	for _, a := range w.emu.World().Snapshot().EC2.Addresses {
		switch a.AllocationID {
		case "eipalloc-0c1b000000000001":
			if a.NetworkInterfaceID != kubeipENI(1) || a.PrivateIPAddress != kubeipIP(1) {
				t.Errorf("kubeip's address moved: %+v", a)
			}
		case "eipalloc-0c1b000000000002":
			if a.NetworkInterfaceID != kubeipENI(2) || a.PrivateIPAddress != kubeipIP(2) {
				t.Errorf("the reserved address is not on node 2's primary IP: %+v", a)
			}
		case "eipalloc-0c1b000000000003":
			if a.AssociationID != "" {
				t.Errorf("an address outside FILTER was taken: %+v", a)
			}
		}
	}
	n1 := &networkingv1alpha1.NodeElasticIP{}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "kubeip-node-1"}, n1); err != nil || n1.Status.Adopted == "" {
		t.Errorf("node 1's NodeElasticIP: %+v, %v; want its address adopted", n1.Status, err)
	}
	if err := env.Client.Get(w.ctx, client.ObjectKey{Name: "kubeip-node-3"}, &networkingv1alpha1.NodeElasticIP{}); err == nil {
		t.Error("a node kubeip's selector does not pick got a NodeElasticIP")
	}
}
