package nodeelasticip_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
)

// poolID is the allocation ID of pool address i.
func poolID(i int) string { return fmt.Sprintf("eipalloc-%017x", 0xc000+i) }

// poolAddresses are n reserved addresses tagged kubeip=reserved, whose
// priority tag runs opposite to their allocation IDs and public IPs, and
// one address outside the pool.
func poolAddresses(n int) func(string) []core.EC2AddressFixture {
	return func(string) []core.EC2AddressFixture {
		var out []core.EC2AddressFixture
		for i := range n {
			out = append(out, core.EC2AddressFixture{AllocationID: poolID(i), PublicIP: fmt.Sprintf("203.0.113.%d", 10+i),
				Tags: map[string]string{"kubeip": "reserved", "priority": fmt.Sprint(n - i)}})
		}
		return append(out, core.EC2AddressFixture{AllocationID: poolID(99), PublicIP: "203.0.113.99", Tags: map[string]string{"priority": "0"}})
	}
}

func pool(orderBy string) func(*networkingv1alpha1.NodeElasticIP) {
	return func(n *networkingv1alpha1.NodeElasticIP) {
		n.Spec.Allocation = networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModePool,
			Pool: &networkingv1alpha1.NodeElasticIPPool{OrderBy: orderBy,
				Filters: []networkingv1alpha1.AddressFilter{{Name: "tag:kubeip", Values: []string{"reserved"}}}}}
	}
}

// TestPoolClaimsInOrderAndGivesBack: nodes claim free pool addresses in
// the pool's order (Tag:priority here, the reverse of the IDs), never one
// outside the pool; a node finding the pool exhausted stays tainted with
// PoolExhausted and a Warning Event; deleting a NodeElasticIP (Retain)
// disassociates its address and takes edgeplane's tags off, leaving the
// pool's own, and the waiting node then gets it.
func TestPoolClaimsInOrderAndGivesBack(t *testing.T) {
	w := newWorld(t, worldOpts{addresses: poolAddresses(3)})
	want := []string{poolID(2), poolID(1), poolID(0)} // priorities 1, 2, 3
	for i := range 3 {
		w.node(i, false)
		w.neip(i, pool("Tag:priority"))
		n := w.waitReady(i)
		if n.Status.AllocationID != want[i] {
			t.Fatalf("node %d claimed %s, want %s (the pool's order)", i, n.Status.AllocationID, want[i])
		}
		w.wantOnNode(i, want[i])
	}
	if got := w.calls("AllocateAddress", "OK"); got != 0 {
		t.Errorf("%d allocations in Pool mode, want 0", got)
	}

	w.node(3, false)
	w.neip(3, pool("Tag:priority"))
	w.waitReason(3, networkingv1alpha1.NodeElasticIPReasonPoolExhausted)
	w.eventually("node 3 tainted", func() (bool, string) { n := w.getNode(3); return tainted(n), fmt.Sprint(n.Spec.Taints) })
	w.eventually("a Warning Event on node 3", func() (bool, string) {
		return w.nodeEvents(3, networkingv1alpha1.NodeElasticIPEventFailed) > 0, ""
	})

	first := w.get(0).UID
	w.delete(0)
	w.waitGone(0)
	// The waiting node may claim it at once: the address is no longer
	// node 0's, and the pool's own tags stay.
	a, ok := w.address(want[0])
	if !ok || a.NetworkInterfaceID == eniID(0) {
		t.Fatalf("given-back address %+v (present %v): want it kept and off node 0", a, ok)
	}
	if tags := tagMap(a.Tags); tags[decide.TagOwnerUID] == string(first) || tags["kubeip"] != "reserved" || tags["priority"] != "1" {
		t.Errorf("given-back tags %v: want node 0's ownership gone, the pool's kept", tags)
	}
	w.wantClean(0)
	if got := w.waitReady(3).Status.AllocationID; got != want[0] {
		t.Errorf("the waiting node got %s, want the given-back %s", got, want[0])
	}
	w.wantOnNode(3, want[0])
}

// TestStaticMode: a Static NodeElasticIP takes its address; one naming an
// address that does not exist reports AddressNotFound, one whose address
// is associated elsewhere AddressInUse, and neither allocates.
func TestStaticMode(t *testing.T) {
	w := newWorld(t, worldOpts{addresses: func(string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{
			{AllocationID: poolID(0), PublicIP: "203.0.113.10"},
			{AllocationID: poolID(1), PublicIP: "203.0.113.11", NetworkInterfaceID: fmt.Sprintf("eni-%017x", 0xb005), PrivateIPAddress: "10.1.0.15"},
		}
	}})
	static := func(id string) func(*networkingv1alpha1.NodeElasticIP) {
		return func(n *networkingv1alpha1.NodeElasticIP) {
			n.Spec.Allocation = networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: id}
		}
	}
	for i := range 3 {
		w.node(i, false)
	}
	w.neip(0, static(poolID(0)))
	w.neip(1, static(poolID(7)))
	w.neip(2, static(poolID(1)))
	if got := w.waitReady(0).Status.AllocationID; got != poolID(0) {
		t.Fatalf("static address %s, want %s", got, poolID(0))
	}
	w.wantOnNode(0, poolID(0))
	w.waitReason(1, networkingv1alpha1.NodeElasticIPReasonAddressNotFound)
	w.waitReason(2, networkingv1alpha1.NodeElasticIPReasonAddressInUse)
	if a, _ := w.address(poolID(1)); a.PrivateIPAddress != "10.1.0.15" {
		t.Errorf("the address in use was moved: %+v", a)
	}
	if got := w.calls("AllocateAddress", "OK"); got != 0 {
		t.Errorf("%d allocations in Static mode, want 0", got)
	}
	// Retain (Static's default) gives it back without releasing it.
	w.delete(0)
	w.waitGone(0)
	if a, ok := w.address(poolID(0)); !ok || a.AssociationID != "" {
		t.Errorf("static address after deletion: %+v (present %v); want kept, disassociated", a, ok)
	}
}

// TestAdoption: an address kubeip (or a person) put on a node's primary IP
// is adopted by a Pool NodeElasticIP whose filters it matches, and by a
// Static one naming it, without being moved (no AssociateAddress, its
// association ID unchanged), then tagged as the NodeElasticIP's; an Auto
// NodeElasticIP never takes a foreign address: NodeHasElasticIP, and no
// allocation (EC2 would refuse a second address on the IP anyway).
func TestAdoption(t *testing.T) {
	w := newWorld(t, worldOpts{addresses: func(string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{
			{AllocationID: poolID(0), PublicIP: "203.0.113.10", Tags: map[string]string{"kubeip": "reserved"}, NetworkInterfaceID: eniID(0), PrivateIPAddress: primaryIP(0)},
			{AllocationID: poolID(1), PublicIP: "203.0.113.11", NetworkInterfaceID: eniID(1), PrivateIPAddress: primaryIP(1)},
			{AllocationID: poolID(2), PublicIP: "203.0.113.12", NetworkInterfaceID: eniID(2), PrivateIPAddress: primaryIP(2)},
		}
	}})
	before := map[string]string{}
	for _, a := range w.addresses() {
		before[a.AllocationID] = a.AssociationID
	}
	for i := range 3 {
		w.node(i, false)
	}
	adopter := w.neip(0, pool(""))
	w.neip(1, nil)
	w.neip(2, func(n *networkingv1alpha1.NodeElasticIP) {
		n.Spec.Allocation = networkingv1alpha1.NodeElasticIPAllocation{Mode: networkingv1alpha1.NodeElasticIPModeStatic, AllocationID: poolID(2)}
	})
	for _, i := range []int{0, 2} {
		n := w.waitReady(i)
		if n.Status.AllocationID != poolID(i) || n.Status.Adopted != networkingv1alpha1.AdoptedAssociated {
			t.Errorf("node %d: %s adopted %q; want %s adopted", i, n.Status.AllocationID, n.Status.Adopted, poolID(i))
		}
		w.wantOnNode(i, poolID(i))
		a, _ := w.address(poolID(i))
		if a.AssociationID != before[poolID(i)] {
			t.Errorf("address %s was re-associated (%s -> %s)", poolID(i), before[poolID(i)], a.AssociationID)
		}
	}
	w.eventually("the adopted address tagged", func() (bool, string) {
		a, _ := w.address(poolID(0))
		tags := tagMap(a.Tags)
		return tags[decide.TagOwnerUID] == string(adopter.UID) && tags["kubeip"] == "reserved", fmt.Sprint(tags)
	})
	n := w.waitReason(1, networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP)
	if n.Status.AllocationID != "" {
		t.Errorf("Auto took the foreign address: %+v", n.Status)
	}
	if got := w.calls("AllocateAddress", "OK") + w.calls("AssociateAddress", "OK"); got != 0 {
		t.Errorf("%d allocations and associations, want 0", got)
	}
	// Giving the adopted pool address back leaves kubeip's tag.
	w.delete(0)
	w.waitGone(0)
	if a, _ := w.address(poolID(0)); tagMap(a.Tags)["kubeip"] != "reserved" || tagMap(a.Tags)[decide.TagOwnerUID] != "" {
		t.Errorf("given-back tags %v", tagMap(a.Tags))
	}
}

// TestQuotaExceeded: with the account's Elastic IP quota used up a
// NodeElasticIP reports QuotaExceeded (and retries); once the quota is
// raised it gets its address.
func TestQuotaExceeded(t *testing.T) {
	w := newWorld(t, worldOpts{settings: core.Settings{EC2AddressQuota: 1}})
	w.node(0, false)
	w.node(1, false)
	w.neip(0, nil)
	w.waitReady(0)
	w.neip(1, nil)
	w.waitReason(1, networkingv1alpha1.NodeElasticIPReasonQuotaExceeded)
	// No hot loop: over three backoff periods, at most one AllocateAddress
	// per pass the work queue's backoff (setup.go: 20ms doubling up to
	// MaxBackoff) allows: the ramp's steps below MaxBackoff, one per
	// MaxBackoff, and the pass due at the start,
	// ceil(log2(MaxBackoff/20ms)) + floor(window/MaxBackoff) + 1
	// (6 + 3 + 1 = 10 for the harness's 1s).
	maxBackoff := w.testOptions().MaxBackoff
	window := 3 * maxBackoff
	limit := int64(math.Ceil(math.Log2(float64(maxBackoff)/float64(20*time.Millisecond)))) + int64(window/maxBackoff) + 1
	refused := func() int64 { return w.calls("AllocateAddress", core.EC2AddressLimitExceeded) }
	before := refused()
	time.Sleep(window)
	n := refused() - before
	t.Logf("%d refused AllocateAddress calls in %s (bound %d)", n, window, limit)
	if n > limit {
		t.Errorf("%d refused AllocateAddress calls in %s at QuotaExceeded, want at most %d (the backoff's passes)", n, window, limit)
	}
	if r := w.get(1).GetCondition(xpv2.TypeReady).Reason; r != networkingv1alpha1.NodeElasticIPReasonQuotaExceeded {
		t.Errorf("Ready reason %s after the window, want QuotaExceeded held", r)
	}
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) { s.EC2AddressQuota = 5 }); err != nil {
		t.Fatal(err)
	}
	w.wantOnNode(1, w.waitReady(1).Status.AllocationID)
}

// TestReleasePolicyRetainOnAuto: an allocated address with Retain is
// disassociated and keeps living, without edgeplane's tags; the user's
// tags stay.
func TestReleasePolicyRetainOnAuto(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.node(0, false)
	w.neip(0, func(n *networkingv1alpha1.NodeElasticIP) {
		n.Spec.ReleasePolicy = networkingv1alpha1.NodeElasticIPReleaseRetain
		n.Spec.Tags = map[string]string{"team": "edge"}
	})
	id := w.waitReady(0).Status.AllocationID
	w.delete(0)
	w.waitGone(0)
	a, ok := w.address(id)
	if !ok || a.AssociationID != "" {
		t.Fatalf("retained address %+v (present %v)", a, ok)
	}
	if tags := tagMap(a.Tags); tags[decide.TagCluster] != "" || tags[decide.TagOwnerUID] != "" || tags["team"] != "edge" {
		t.Errorf("retained tags %v", tags)
	}
	w.wantClean(0)
}

// TestCrashRecovery: an address carrying the NodeElasticIP's UID (the
// process died after allocating, before recording it) is found and used:
// no second allocation.
func TestCrashRecovery(t *testing.T) {
	w := newWorld(t, worldOpts{noManager: true})
	w.node(0, false)
	n := w.neip(0, nil)
	if _, err := w.sim.World().ApplyFixtures(&core.Fixtures{EC2: core.EC2Fixtures{Addresses: []core.EC2AddressFixture{{
		AllocationID: poolID(0), Tags: decide.Tags(decide.Owner{Cluster: w.cluster, UID: n.UID, Node: w.nodeName(0),
			Mode: networkingv1alpha1.NodeElasticIPModeAuto})}}}}); err != nil {
		t.Fatal(err)
	}
	w.startManager()
	if got := w.waitReady(0).Status.AllocationID; got != poolID(0) {
		t.Errorf("address %s, want the one allocated before the crash %s", got, poolID(0))
	}
	if got := w.calls("AllocateAddress", "OK"); got != 0 {
		t.Errorf("%d allocations, want 0", got)
	}
	w.wantOnNode(0, poolID(0))
}

// TestUnknownInstance: a node without an AWS providerID gets no address
// and the reason says why; the node stays tainted.
func TestUnknownInstance(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.node(0, false, func(n *corev1.Node) { n.Spec.ProviderID = "" })
	w.neip(0, nil)
	w.waitReason(0, networkingv1alpha1.NodeElasticIPReasonInstanceIDUnknown)
	w.eventually("node tainted", func() (bool, string) { return tainted(w.getNode(0)), "" })
	// A node on an instance the account does not have.
	w.node(1, false)
	if err := w.sim.World().Remove(&core.Removals{EC2: core.EC2Removals{Instances: []string{instanceID(1)}}}); err != nil {
		t.Fatal(err)
	}
	w.neip(1, nil)
	n1 := w.waitReason(1, networkingv1alpha1.NodeElasticIPReasonNetworkInterfaceNotFound)
	if n1.GetCondition(xpv2.TypeSynced).Status != "True" {
		t.Errorf("a node without an interface is not a failed pass: %+v", n1.GetCondition(xpv2.TypeSynced))
	}
}
