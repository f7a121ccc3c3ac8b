package podelasticip_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
)

// allowClaims is the admin's bound on Pool and Static claims
// (--podelasticip-claimable-tags).
func allowClaims(selectors string) func(*podelasticip.Options) {
	return func(o *podelasticip.Options) { o.ClaimableTags = selectors }
}

// staticByID is a Static allocation by address ID.
func staticByID(id string) func(*networkingv1alpha1.PodElasticIP) {
	return func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: id}
	}
}

// waitSettled waits until the PodElasticIP's Ready reason is one of
// reasons and returns it, so a test sees at once what the controller made
// of a claim (taken or refused) instead of timing out on the other one.
func (w *world) waitSettled(name string, reasons ...xpv2.ConditionReason) xpv2.ConditionReason {
	w.t.Helper()
	var got xpv2.ConditionReason
	w.eventually(fmt.Sprintf("PodElasticIP %s Ready reason in %v", name, reasons), func() (bool, string) {
		p := w.get(name)
		if p == nil {
			return false, "not found"
		}
		c := p.GetCondition(xpv2.TypeReady)
		got = c.Reason
		return slices.Contains(reasons, c.Reason), fmt.Sprintf("%s/%s %q", c.Status, c.Reason, c.Message)
	})
	return got
}

// ec2State is what a test compares of an address: its association and
// tags.
func ec2State(a core.EC2Address) string {
	return fmt.Sprintf("association=%q ip=%q tags=%v", a.AssociationID, a.PrivateIPAddress, tagMap(a.Tags))
}

// TestStaticRefusesAnotherTenantsAddress: two namespaces of one cluster
// share the account. Tenant B's Auto address is unassociated while B's pod
// restarts, and B keeps another one under AfterDelay; both carry a tag the
// admin lets Static claim. Tenant A's Static PodElasticIPs name them by ID:
// each is refused (Ready=False AddressOwnedElsewhere and a Warning Event),
// nothing of A's reaches the addresses, and B's pod, back, gets its own
// address again.
func TestStaticRefusesAnotherTenantsAddress(t *testing.T) {
	b := newWorld(t, worldOpts{})
	a := newWorld(t, worldOpts{sim: b.sim, cluster: b.cluster, opts: allowClaims("team")})

	b.pod("web-0", "10.0.1.60", hostIP1, nil)
	b.peip("web-0", "web-0", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Tags = map[string]string{"team": "b"} })
	restarting := b.waitReady("web-0").Status.AllocationID
	b.deletePod("web-0")
	b.waitReason("web-0", networkingv1alpha1.PodElasticIPReasonPodNotFound)

	b.pod("kept-0", "10.0.1.61", hostIP1, nil)
	b.peip("kept-0", "kept-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Tags = map[string]string{"team": "b"}
		p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
		p.Spec.ReleaseDelay = &metav1.Duration{Duration: time.Hour}
	})
	kept := b.waitReady("kept-0").Status.AllocationID
	b.delete("kept-0")
	b.waitGone("kept-0")

	before := map[string]string{}
	for _, id := range []string{restarting, kept} {
		addr, ok := b.address(id)
		if !ok || addr.AssociationID != "" {
			t.Fatalf("B's address %s: %+v (present %v), want it unassociated", id, addr, ok)
		}
		before[id] = ec2State(addr)
	}
	for i, id := range []string{restarting, kept} {
		name := fmt.Sprintf("a-%d", i)
		a.pod(name, fmt.Sprintf("10.0.1.%d", 70+i), hostIP1, nil)
		a.peip(name, name, staticByID(id))
		if got := a.waitSettled(name, xpv2.ReasonAvailable, networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere); got != networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere {
			t.Errorf("tenant A's Static PodElasticIP naming B's %s: Ready reason %s, want AddressOwnedElsewhere", id, got)
		}
		if n := a.eventCount(name, string(networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere)); n == 0 {
			t.Errorf("no Warning Event AddressOwnedElsewhere on %s", name)
		}
	}
	for id, was := range before {
		if addr, _ := b.address(id); ec2State(addr) != was {
			t.Errorf("B's address %s changed:\n was %s\n now %s", id, was, ec2State(addr))
		}
	}

	b.pod("web-0", "10.0.1.60", hostIP1, nil)
	if got := b.waitReady("web-0").Status.AllocationID; got != restarting {
		t.Errorf("B's restarted pod got %s, want its own %s back", got, restarting)
	}
}

// otherClusters are addresses another cluster's PodElasticIPs hold in the
// shared account, unassociated: an Auto one of the same namespace, and a
// Pool one that cluster keeps (AfterDelay) for a pod of the same name.
func otherClusters(ns string) map[string]map[string]string {
	owner := func(mode string, extra map[string]string) map[string]string {
		tags := map[string]string{decide.TagCluster: "another-cluster", decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "uid-of-another-cluster-" + mode,
			decide.TagNamespace: ns, decide.TagPod: ns + "/web-0", decide.TagMode: mode}
		maps.Copy(tags, extra)
		return tags
	}
	return map[string]map[string]string{
		"auto": owner("Auto", map[string]string{"team": "x"}),
		"pool": owner("Pool", map[string]string{"shared-pool": "", decide.TagReleaseAfter: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}),
	}
}

// claimOtherClusters claims otherClusters' addresses, the Auto one (ID
// auto) by a Static PodElasticIP and the kept one by a Pool, and checks
// that both are refused.
func (w *world) claimOtherClusters(auto string) {
	w.t.Helper()
	w.pod("static-0", "10.0.1.80", hostIP1, nil)
	w.peip("static-0", "static-0", staticByID(auto))
	w.pod("web-0", "10.0.1.81", hostIP1, nil)
	w.peip("web-0", "web-0", pool("shared-pool"))
	if got := w.waitSettled("static-0", xpv2.ReasonAvailable, networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere); got != networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere {
		w.t.Errorf("Static naming another cluster's address: Ready reason %s, want AddressOwnedElsewhere", got)
	}
	if got := w.waitSettled("web-0", xpv2.ReasonAvailable, networkingv1alpha1.PodElasticIPReasonPoolExhausted); got != networkingv1alpha1.PodElasticIPReasonPoolExhausted {
		w.t.Errorf("Pool whose only address another cluster keeps: Ready reason %s, want PoolExhausted", got)
	}
}

// TestClaimRefusesAnotherClustersAddress: another cluster's addresses in
// the shared account are never claimed, though they are unassociated and
// carry tags the admin lets Pool and Static claim: a Static PodElasticIP
// naming the Auto one is AddressOwnedElsewhere, a Pool one (for a pod of
// the same name as the one the kept address waits for) finds the pool
// exhausted, and neither address changes.
func TestClaimRefusesAnotherClustersAddress(t *testing.T) {
	const auto, kept = "eipalloc-0000000000000d01", "eipalloc-0000000000000d02"
	w := newWorld(t, worldOpts{opts: allowClaims("team,shared-pool"), addresses: func(ns string) []core.EC2AddressFixture {
		other := otherClusters(ns)
		return []core.EC2AddressFixture{{AllocationID: auto, Tags: other["auto"]}, {AllocationID: kept, Tags: other["pool"]}}
	}})
	before := map[string]string{}
	for _, id := range []string{auto, kept} {
		addr, _ := w.address(id)
		before[id] = ec2State(addr)
	}
	w.claimOtherClusters(auto)
	for id, was := range before {
		if addr, _ := w.address(id); ec2State(addr) != was {
			t.Errorf("another cluster's address %s changed:\n was %s\n now %s", id, was, ec2State(addr))
		}
	}
	if n := w.calls("CreateTags") + w.calls("AssociateAddress"); n != 0 {
		t.Errorf("%d CreateTags/AssociateAddress calls, want none", n)
	}
}

// TestTencentClaimRefusesAnotherClustersAddress is the same on a Tencent
// Cloud account.
func TestTencentClaimRefusesAnotherClustersAddress(t *testing.T) {
	const auto, kept = "eip-00000d01", "eip-00000d02"
	w := newWorld(t, worldOpts{tencent: true, opts: allowClaims("team,shared-pool"), tcAddresses: func(ns string) []core.TCAddressFixture {
		other := otherClusters(ns)
		return []core.TCAddressFixture{{AddressID: auto, Tags: other["auto"]}, {AddressID: kept, Tags: other["pool"]}}
	}})
	state := func(id string) string {
		a, _ := w.tcAddress(id)
		return fmt.Sprintf("%s %s %v", a.AddressStatus, a.PrivateAddressIP, tcTags(a))
	}
	before := map[string]string{auto: state(auto), kept: state(kept)}
	w.claimOtherClusters(auto)
	for id, was := range before {
		if now := state(id); now != was {
			t.Errorf("another cluster's address %s changed:\n was %s\n now %s", id, was, now)
		}
	}
	if n := w.tcCalls("ModifyResourceTags") + w.tcCalls("AssociateAddress"); n != 0 {
		t.Errorf("%d ModifyResourceTags/AssociateAddress calls, want none", n)
	}
}

// TestPoolClaimsOnlyAllowedAddresses: the admin lets Pool and Static claim
// only addresses tagged edgeplane-claimable. A Pool with tagKey Name (a
// key every console-named address carries) gets the one allowed address;
// the next finds only a person's address outside the allow-list and is
// AddressNotAllowed, as is a Static naming that address; the person's
// address is never tagged or associated.
func TestPoolClaimsOnlyAllowedAddresses(t *testing.T) {
	const persons, pooled = "eipalloc-0000000000000e01", "eipalloc-0000000000000e02"
	w := newWorld(t, worldOpts{opts: allowClaims("edgeplane-claimable"), addresses: func(string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{
			{AllocationID: persons, Tags: map[string]string{"Name": "bastion"}},
			{AllocationID: pooled, Tags: map[string]string{"Name": "pool-1", "edgeplane-claimable": ""}},
		}
	}})
	was, _ := w.address(persons)
	w.pod("p0", "10.0.1.90", hostIP1, nil)
	w.peip("p0", "p0", pool("Name"))
	if got := w.waitReady("p0").Status.AllocationID; got != pooled {
		t.Errorf("Pool with tagKey Name claimed %s, want the allowed %s", got, pooled)
	}
	w.pod("p1", "10.0.1.91", hostIP1, nil)
	w.peip("p1", "p1", pool("Name"))
	w.pod("s0", "10.0.1.92", hostIP1, nil)
	w.peip("s0", "s0", staticByID(persons))
	for _, name := range []string{"p1", "s0"} {
		if got := w.waitSettled(name, xpv2.ReasonAvailable, networkingv1alpha1.PodElasticIPReasonAddressNotAllowed); got != networkingv1alpha1.PodElasticIPReasonAddressNotAllowed {
			t.Errorf("%s: Ready reason %s, want AddressNotAllowed", name, got)
		}
		if n := w.eventCount(name, string(networkingv1alpha1.PodElasticIPReasonAddressNotAllowed)); n == 0 {
			t.Errorf("no Warning Event AddressNotAllowed on %s", name)
		}
	}
	if now, _ := w.address(persons); ec2State(now) != ec2State(was) {
		t.Errorf("the person's address changed:\n was %s\n now %s", ec2State(was), ec2State(now))
	}
}

// TestForgedExternalNameTakesNothing: a tenant writes another tenant's
// address into its PodElasticIP's crossplane.io/external-name. The address
// stays where it is, with its tags; the forger's pod gets an address of
// its own.
func TestForgedExternalNameTakesNothing(t *testing.T) {
	const victim = "eipalloc-0000000000000f01"
	w := newWorld(t, worldOpts{addresses: func(ns string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{{AllocationID: victim, NetworkInterfaceID: eni1, PrivateIPAddress: "10.0.1.100",
			Tags: map[string]string{decide.TagCluster: "cluster-" + ns, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "uid-of-tenant-b",
				decide.TagNamespace: "tenant-b", decide.TagPod: "tenant-b/web-0", decide.TagMode: "Auto"}}}
	}})
	was, _ := w.address(victim)
	w.pod("forger", "10.0.1.101", hostIP1, nil)
	w.peip("forger", "forger", func(p *networkingv1alpha1.PodElasticIP) { meta.SetExternalName(p, victim) })
	if got := w.waitReady("forger").Status.AllocationID; got == victim {
		t.Errorf("the forger's PodElasticIP is Ready with the victim's address %s", victim)
	}
	if now, _ := w.address(victim); ec2State(now) != ec2State(was) {
		t.Errorf("the victim's address changed:\n was %s\n now %s", ec2State(was), ec2State(now))
	}
}
