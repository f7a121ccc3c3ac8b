package plugin

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

var peipGVK = schema.GroupVersionKind{Group: "networking.edgeplane.io", Version: "v1alpha1", Kind: "PodElasticIP"}

// TestPodElasticIPOnTencent: `status` and `orphans` on the new combination,
// PodElasticIPs on a Tencent Cloud provider config. status shows the
// PodElasticIP's provider block; orphans lists, in the Tencent account, a
// PodElasticIP's address whose object is gone (deletable) and one still
// bound to a pod's ENI private IP (only reported), and not the address of
// the live PodElasticIP.
func TestPodElasticIPOnTencent(t *testing.T) {
	const ns, identity = "peip-tc", "plugin-peip-tc"
	if err := env.Client.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.edgeplane.io/v1alpha1", "kind": "PodElasticIP",
		"metadata": map[string]any{"name": "web-0", "namespace": ns},
		"spec": map[string]any{
			"podName":           "web-0",
			"providerConfigRef": map[string]any{"kind": "ClusterProviderConfig", "name": "orphans-tc-peip"},
			"tencent":           map[string]any{"addressType": "EIP", "internetMaxBandwidthOut": int64(10)},
		},
	}}
	apply(t, false, []*unstructured.Unstructured{live})
	deleteOnCleanup(t, []*unstructured.Unstructured{live})
	if err := env.Client.Get(ctx(t), client.ObjectKeyFromObject(live), live); err != nil {
		t.Fatal(err)
	}
	peip := func(uid string) map[string]string {
		return namespaced(ownerTags(identity, "PodElasticIP", uid), ns)
	}
	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 11, Fixtures: &core.Fixtures{Tencent: core.TencentFixtures{
		Instances: []core.TCInstanceFixture{{InstanceID: "ins-peip0001", VpcID: "vpc-peip", PrivateIPAddresses: []string{"10.4.0.1"},
			NetworkInterfaces: []core.TCENIFixture{{NetworkInterfaceID: "eni-peip0001", PrivateIPAddresses: []string{"10.4.1.5", "10.4.1.6"}}}}},
		Addresses: []core.TCAddressFixture{
			{AddressID: "eip-tp000001", AddressIP: "43.1.0.1", Tags: peip("uid-gone")},
			{AddressID: "eip-tp000002", AddressIP: "43.1.0.2", Tags: peip("uid-gone-2"), NetworkInterfaceID: "eni-peip0001", PrivateIPAddress: "10.4.1.5"},
			{AddressID: "eip-tp000003", AddressIP: "43.1.0.3", Tags: peip(string(live.GetUID())), NetworkInterfaceID: "eni-peip0001", PrivateIPAddress: "10.4.1.6"},
		},
	}}})
	before := emu.World().Snapshot()
	configs := []*unstructured.Unstructured{providerConfig("ClusterProviderConfig", "", "orphans-tc-peip", "tencentcloud", "ap-hongkong", emu.URL(), identity)}
	apply(t, false, configs)
	deleteOnCleanup(t, configs)

	setStatus(t, peipGVK, ns, "web-0", map[string]any{
		"observedGeneration": int64(0), "allocationID": "eip-tp000003", "publicIP": "43.1.0.3", "nodeName": "w1",
		"conditions": []any{ready("True", "Available", "", -1)},
	})
	r := run(t, "", "status", "-n", ns)
	if r.code != ExitOK || !strings.Contains(r.out, "43.1.0.3 → pod peip-tc/web-0 on w1 (Tencent EIP, 10 Mbps)") {
		t.Errorf("status: exit %d, want the Tencent PodElasticIP's row:\n%s%s", r.code, r.out, r.errOut)
	}

	r = run(t, "", "orphans", "-A")
	lines := map[string]string{}
	for _, l := range strings.Split(r.out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && strings.HasPrefix(f[2], "eip-tp") {
			lines[f[2]] = strings.Join(f, " ")
		}
	}
	for id, want := range map[string]string{
		"eip-tp000001": "PodElasticIP/uid-gone orphaned: no object with UID uid-gone exists (mode report)",
		"eip-tp000002": "PodElasticIP/uid-gone-2 orphaned, but not deletable: still associated with ins-peip0001",
	} {
		if !strings.Contains(lines[id], "ClusterProviderConfig/orphans-tc-peip") || !strings.Contains(lines[id], want) {
			t.Errorf("orphans row of %s = %q, want %q", id, lines[id], want)
		}
	}
	if l, ok := lines["eip-tp000003"]; ok {
		t.Errorf("the live PodElasticIP's address is listed: %q", l)
	}
	if t.Failed() {
		t.Logf("orphans output:\n%s%s", r.out, r.errOut)
	}
	if diff := cmpDiff(before.Tencent.Addresses, emu.World().Snapshot().Tencent.Addresses); diff != "" {
		t.Errorf("Tencent addresses changed:\n%s", diff)
	}
}
