package podelasticip_test

import (
	"fmt"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
	"github.com/edgeplane/edgeplane/internal/translator"
)

func poolAddresses(n int, key string) []core.EC2AddressFixture {
	out := make([]core.EC2AddressFixture, n)
	for i := range out {
		out[i] = core.EC2AddressFixture{Tags: map[string]string{key: ""}}
	}
	return out
}

func pool(key string) func(*networkingv1alpha1.PodElasticIP) {
	return func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModePool, TagKey: key}
	}
}

// TestPoolMode: a Pool address is claimed (claim and ownership tags, then
// association), and given back untagged on deletion (Retain, the default).
func TestPoolMode(t *testing.T) {
	w := newWorld(t, worldOpts{opts: allowClaims("pec-ip-pool"), addresses: func(string) []core.EC2AddressFixture { return poolAddresses(2, "pec-ip-pool") }})
	w.pod("p0", "10.0.1.30", hostIP1, nil)
	w.peip("p0", "p0", pool("pec-ip-pool"))
	p := w.waitReady("p0")
	a, _ := w.address(p.Status.AllocationID)
	tags := tagMap(a.Tags)
	if a.PrivateIPAddress != "10.0.1.30" || tags[decide.TagClaim] != w.cluster+"/"+w.ns+"/p0" || tags[decide.TagOwnerUID] != string(p.UID) {
		t.Fatalf("claimed address %+v", a)
	}
	if n := w.calls("AllocateAddress"); n != 0 {
		t.Errorf("Pool mode allocated %d addresses", n)
	}
	w.eventually("legacy labels", func() (bool, string) {
		pod := w.getPod("p0")
		return pod.Labels[translate.LabelType] == "fixed-tag" && pod.Labels[translate.LabelFixedTag] == "pec-ip-pool", fmt.Sprint(pod.Labels)
	})
	w.delete("p0")
	w.waitGone("p0")
	a, _ = w.address(p.Status.AllocationID)
	tags = tagMap(a.Tags)
	if a.AssociationID != "" || tags[decide.TagClaim] != "" || tags[decide.TagCluster] != "" {
		t.Fatalf("given-back address %+v", a)
	}
	if _, ok := tags["pec-ip-pool"]; !ok || len(w.addresses()) != 2 {
		t.Fatalf("the pool lost an address or its tag: %+v", w.addresses())
	}
}

// TestStaticMode: by tag value <namespace>/<pod> and by allocation ID;
// a missing address is AddressNotFound.
func TestStaticMode(t *testing.T) {
	w := newWorld(t, worldOpts{opts: allowClaims("pec-fixed,static-ok"), addresses: func(ns string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{
			{Tags: map[string]string{"pec-fixed": ns + "/s0"}},
			{AllocationID: "eipalloc-00000000000000aa", Tags: map[string]string{"static-ok": ""}},
		}
	}})
	w.pod("s0", "10.0.1.40", hostIP1, nil)
	w.peip("s0", "s0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "pec-fixed"}
	})
	p := w.waitReady("s0")
	a, _ := w.address(p.Status.AllocationID)
	if tagMap(a.Tags)["pec-fixed"] != w.ns+"/s0" || a.PrivateIPAddress != "10.0.1.40" {
		t.Fatalf("static address %+v", a)
	}

	w.pod("s1", "10.0.1.41", hostIP1, nil)
	w.peip("s1", "s1", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eipalloc-00000000000000aa"}
	})
	if p := w.waitReady("s1"); p.Status.AllocationID != "eipalloc-00000000000000aa" {
		t.Fatalf("static by ID got %s", p.Status.AllocationID)
	}

	w.pod("s2", "10.0.1.42", hostIP1, nil)
	w.peip("s2", "s2", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: "pec-fixed"}
	})
	w.waitReason("s2", networkingv1alpha1.PodElasticIPReasonAddressNotFound)
	// The static address is associated with s1's pod: asking for it again
	// from another pod is AddressInUse, and it is never taken away.
	w.pod("s3", "10.0.1.43", hostIP1, nil)
	w.peip("s3", "s3", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eipalloc-00000000000000aa"}
	})
	w.waitReason("s3", networkingv1alpha1.PodElasticIPReasonAddressInUse)
	if a, _ := w.address("eipalloc-00000000000000aa"); a.PrivateIPAddress != "10.0.1.41" {
		t.Fatalf("static address moved to %s", a.PrivateIPAddress)
	}
}

// TestPoolContention: 20 pods race for 10 pooled addresses; exactly 10
// bind, 10 report PoolExhausted, and no address is bound twice.
func TestPoolContention(t *testing.T) {
	w := newWorld(t, worldOpts{opts: allowClaims("race"), addresses: func(string) []core.EC2AddressFixture { return poolAddresses(10, "race") }})
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		w.pod(name, fmt.Sprintf("10.0.1.%d", 100+i), hostIP1, nil)
	}
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		w.peip(name, name, pool("race"))
	}
	var bound, exhausted int
	w.eventually("10 bound and 10 exhausted", func() (bool, string) {
		var list networkingv1alpha1.PodElasticIPList
		if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
			return false, err.Error()
		}
		bound, exhausted = 0, 0
		for _, p := range list.Items {
			switch p.GetCondition(xpv2.TypeReady).Reason {
			case xpv2.ReasonAvailable:
				bound++
			case networkingv1alpha1.PodElasticIPReasonPoolExhausted:
				exhausted++
			}
		}
		return bound == 10 && exhausted == 10, fmt.Sprintf("bound %d, exhausted %d", bound, exhausted)
	})
	var list networkingv1alpha1.PodElasticIPList
	if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	ids, ips := sets.New[string](), sets.New[string]()
	for _, p := range list.Items {
		if p.Status.AllocationID == "" || p.GetCondition(xpv2.TypeReady).Reason != xpv2.ReasonAvailable {
			continue
		}
		if ids.Has(p.Status.AllocationID) {
			t.Errorf("address %s bound twice", p.Status.AllocationID)
		}
		ids.Insert(p.Status.AllocationID)
	}
	for _, a := range w.addresses() {
		if a.AssociationID != "" {
			if ips.Has(a.PrivateIPAddress) {
				t.Errorf("pod IP %s has two addresses", a.PrivateIPAddress)
			}
			ips.Insert(a.PrivateIPAddress)
		}
	}
	t.Logf("pool contention: %d bound, %d PoolExhausted, %d distinct addresses bound, %d associated pod IPs", bound, exhausted, ids.Len(), ips.Len())
	if ids.Len() != 10 || ips.Len() != 10 {
		t.Fatalf("distinct bound addresses %d, associated pod IPs %d; want 10 and 10", ids.Len(), ips.Len())
	}
}

// TestPoolContentionAcrossClusters: two clusters (two managers with their
// own identity) share one account's pool of 6 addresses; 12 pods race for
// them: 6 bind, 6 report PoolExhausted, none is bound twice.
func TestPoolContentionAcrossClusters(t *testing.T) {
	a := newWorld(t, worldOpts{opts: allowClaims("shared"), addresses: func(string) []core.EC2AddressFixture { return poolAddresses(6, "shared") }})
	b := newWorld(t, worldOpts{opts: allowClaims("shared"), sim: a.sim})
	for i, w := range []*world{a, b} {
		for j := range 6 {
			name := fmt.Sprintf("x%02d", j)
			w.pod(name, fmt.Sprintf("10.0.1.%d", 150+10*i+j), hostIP1, nil)
		}
	}
	// Interleaved, so both clusters claim at the same time.
	for j := range 6 {
		name := fmt.Sprintf("x%02d", j)
		for _, w := range []*world{a, b} {
			w.peip(name, name, pool("shared"))
		}
	}
	count := func() (bound, exhausted int, ids []string) {
		for _, w := range []*world{a, b} {
			var list networkingv1alpha1.PodElasticIPList
			if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
				t.Fatal(err)
			}
			for _, p := range list.Items {
				switch p.GetCondition(xpv2.TypeReady).Reason {
				case xpv2.ReasonAvailable:
					bound++
					ids = append(ids, p.Status.AllocationID)
				case networkingv1alpha1.PodElasticIPReasonPoolExhausted:
					exhausted++
				}
			}
		}
		return bound, exhausted, ids
	}
	var ids []string
	a.eventually("6 bound and 6 exhausted across both clusters", func() (bool, string) {
		bound, exhausted, got := count()
		ids = got
		return bound == 6 && exhausted == 6, fmt.Sprintf("bound %d, exhausted %d", bound, exhausted)
	})
	if s := sets.New(ids...); s.Len() != 6 {
		t.Fatalf("bound addresses %v: some bound twice", ids)
	}
	claims := map[string]int{}
	for _, addr := range a.addresses() {
		if addr.AssociationID != "" {
			claims[tagMap(addr.Tags)[decide.TagCluster]]++
		}
	}
	t.Logf("cross-cluster pool contention: 6 bound (%v per cluster), 6 PoolExhausted", claims)
}

// TestLegacyAdoption: an address aws-pod-eip-controller allocated and
// associated for an annotated pod is adopted by the translated
// PodElasticIP: nothing is allocated or associated again.
func TestLegacyAdoption(t *testing.T) {
	w := newWorld(t, worldOpts{defaultConfig: true, addresses: func(ns string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{{AllocationID: "eipalloc-00000000000000bb", NetworkInterfaceID: eni1, PrivateIPAddress: "10.0.1.50",
			Tags: map[string]string{decide.LegacyTagType: "auto", decide.LegacyTagCluster: "cluster-" + ns, decide.LegacyTagPod: ns + "/legacy-0"}}}
	}})
	w.pod("legacy-0", "10.0.1.50", hostIP1, func(p *corev1.Pod) {
		p.Annotations = map[string]string{translate.Type: "auto"}
	})
	p := w.waitReady("legacy-0")
	if p.Status.AllocationID != "eipalloc-00000000000000bb" {
		t.Fatalf("adopted %s, want the legacy address", p.Status.AllocationID)
	}
	if n := w.calls("AllocateAddress") + w.calls("AssociateAddress"); n != 0 {
		t.Errorf("adoption made %d allocate/associate calls, want 0", n)
	}
	a, _ := w.address("eipalloc-00000000000000bb")
	if tagMap(a.Tags)[decide.TagOwnerUID] != string(p.UID) {
		t.Errorf("adopted address tags %v lack the owner", tagMap(a.Tags))
	}
	// Removing the annotation deletes the translated PodElasticIP, which
	// releases the (auto) address, as the legacy controller did.
	pod := w.getPod("legacy-0")
	delete(pod.Annotations, translate.Type)
	if err := w.c.Update(w.ctx, pod); err != nil {
		t.Fatal(err)
	}
	w.waitGone("legacy-0")
	if len(w.addresses()) != 0 {
		t.Fatalf("addresses left: %+v", w.addresses())
	}
}

// TestTranslator: annotations become a PodElasticIP owned by the pod;
// changing them re-creates it; bad values give InvalidSpec and a Warning
// Event; a hand-made PodElasticIP wins.
func TestTranslator(t *testing.T) {
	w := newWorld(t, worldOpts{defaultConfig: true, opts: allowClaims("tr-pool"), addresses: func(string) []core.EC2AddressFixture { return poolAddresses(1, "tr-pool") }})
	w.pod("tr", "10.0.1.60", hostIP1, func(p *corev1.Pod) {
		p.Annotations = map[string]string{translate.Type: "auto"}
	})
	p := w.waitReady("tr")
	if !translator.IsTranslated(p) || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Pod" ||
		p.Spec.Allocation.Mode != networkingv1alpha1.PodElasticIPModeAuto || p.Spec.PodName != "tr" {
		t.Fatalf("translated PodElasticIP %+v", p.ObjectMeta)
	}
	auto := p.Status.AllocationID

	setAnn := func(ann map[string]string) {
		t.Helper()
		pod := w.getPod("tr")
		pod.Annotations = ann
		if err := w.c.Update(w.ctx, pod); err != nil {
			t.Fatal(err)
		}
	}
	setAnn(map[string]string{translate.Type: "fixed-tag", translate.FixedTag: "tr-pool"})
	w.eventually("re-created in Pool mode", func() (bool, string) {
		p = w.get("tr")
		return p != nil && p.Spec.Allocation.Mode == networkingv1alpha1.PodElasticIPModePool &&
			p.GetCondition(xpv2.TypeReady).Reason == xpv2.ReasonAvailable, fmt.Sprintf("%+v", p)
	})
	if _, ok := w.address(auto); ok {
		t.Errorf("the Auto address %s was not released when the annotations changed", auto)
	}

	setAnn(map[string]string{translate.Type: "bogus"})
	p = w.waitReason("tr", networkingv1alpha1.PodElasticIPReasonInvalidSpec)
	w.eventually("Warning event on the pod", func() (bool, string) {
		var evs eventsv1.EventList
		if err := w.c.List(w.ctx, &evs, client.InNamespace(w.ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Reason == podelasticip.ReasonInvalidAnnotation && e.Regarding.Kind == "Pod" && e.Type == corev1.EventTypeWarning {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	time.Sleep(2 * time.Second)
	if n := w.calls("AllocateAddress"); n != 1 {
		t.Errorf("an invalid annotation allocated: %d allocations", n)
	}
	if a := w.addresses(); len(a) != 1 || a[0].AssociationID != "" {
		t.Errorf("the pool address is not back: %+v", a)
	}

	setAnn(nil)
	w.waitGone("tr")

	// A hand-made PodElasticIP for the pod wins over the annotations.
	w.peip("tr-by-hand", "tr", nil)
	setAnn(map[string]string{translate.Type: "auto"})
	w.waitReady("tr-by-hand")
	time.Sleep(2 * time.Second)
	if p := w.get("tr"); p != nil {
		t.Fatalf("translated a PodElasticIP next to a hand-made one: %+v", p.ObjectMeta)
	}
}

// TestCommitThenDropOnAllocate: the allocation succeeds but its answer is
// lost; the address is found again by its tags, never allocated twice.
func TestCommitThenDropOnAllocate(t *testing.T) {
	w := newWorld(t, worldOpts{})
	if err := w.sim.World().AddFault(core.FaultSpec{Provider: core.ProviderEC2, Action: "AllocateAddress", DropRate: 1, Times: 1,
		DropHold: core.Duration(200 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	w.pod("drop", "10.0.1.70", hostIP1, nil)
	w.peip("drop", "drop", nil)
	p := w.waitReady("drop")
	if n := len(w.addresses()); n != 1 {
		t.Fatalf("%d addresses after a dropped allocation, want 1", n)
	}
	if a, _ := w.address(p.Status.AllocationID); a.PrivateIPAddress != "10.0.1.70" {
		t.Fatalf("address %+v", a)
	}
}

// TestOrphanSweep: an Auto address whose PodElasticIP vanished is released,
// a Pool one only loses edgeplane's tags, a kept one is left until its
// delay is over; report mode touches nothing.
func TestOrphanSweep(t *testing.T) {
	w := newWorld(t, worldOpts{addresses: func(ns string) []core.EC2AddressFixture {
		base := func(mode string, extra map[string]string) map[string]string {
			m := map[string]string{decide.TagCluster: "cluster-" + ns, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "gone-uid",
				decide.TagPod: ns + "/x", decide.TagMode: mode}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		return []core.EC2AddressFixture{
			{AllocationID: "eipalloc-0000000000000a01", Tags: base("Auto", nil), NetworkInterfaceID: eni1, PrivateIPAddress: "10.0.1.80"},
			{AllocationID: "eipalloc-0000000000000a02", Tags: base("Pool", map[string]string{"pool": "", decide.TagClaim: "c/x"})},
			{AllocationID: "eipalloc-0000000000000a03", Tags: base("Auto", map[string]string{decide.TagReleaseAfter: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})},
			{AllocationID: "eipalloc-0000000000000a04", Tags: base("Auto", map[string]string{decide.TagReleaseAfter: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})},
			{AllocationID: "eipalloc-0000000000000a05", Tags: map[string]string{decide.TagCluster: "another-cluster", decide.TagOwnerKind: decide.OwnerKind, decide.TagMode: "Auto"}},
		}
	}})
	// A live PodElasticIP's address must survive.
	w.pod("live", "10.0.1.81", hostIP1, nil)
	w.peip("live", "live", nil)
	live := w.waitReady("live").Status.AllocationID

	o := testOptions()
	o.OrphanGracePeriod = 0
	o.OrphanMode = orphan.ModeReport
	s, err := podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reported) != 3 || len(rep.Deleted) != 0 || len(w.addresses()) != 6 {
		t.Fatalf("report mode: reported %d deleted %d, %d addresses", len(rep.Reported), len(rep.Deleted), len(w.addresses()))
	}
	o.OrphanMode = orphan.ModeDelete
	s, _ = podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	rep, err = s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep: listed %d, deleted %d, reported %d, failed %d", rep.Listed, len(rep.Deleted), len(rep.Reported), len(rep.Failed))
	got := map[string]core.EC2Address{}
	for _, a := range w.addresses() {
		got[a.AllocationID] = a
	}
	if _, ok := got["eipalloc-0000000000000a01"]; ok {
		t.Error("orphaned Auto address not released")
	}
	if _, ok := got["eipalloc-0000000000000a04"]; ok {
		t.Error("kept address past its delay not released")
	}
	if a, ok := got["eipalloc-0000000000000a02"]; !ok || tagMap(a.Tags)[decide.TagClaim] != "" || tagMap(a.Tags)[decide.TagCluster] != "" {
		t.Errorf("orphaned Pool address %+v (present %v): want it kept without edgeplane's tags", a, ok)
	}
	for _, id := range []string{"eipalloc-0000000000000a03", "eipalloc-0000000000000a05", live} {
		if _, ok := got[id]; !ok {
			t.Errorf("address %s was removed", id)
		}
	}
}

// TestOrphanSweepManagementPoliciesWithoutDelete: an Auto address of a
// PodElasticIP whose management policies leave out Delete is tagged
// deletion-policy=Orphan from its allocation (the tag follows a policy
// change of the live PodElasticIP), outlives the PodElasticIP, and the
// sweep in delete mode, past the grace period, only reports it.
func TestOrphanSweepManagementPoliciesWithoutDelete(t *testing.T) {
	w := newWorld(t, worldOpts{})
	noDelete := xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate,
		xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	w.pod("keep", "10.0.1.90", hostIP1, nil)
	w.peip("keep", "keep", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.ManagementPolicies = noDelete })
	p := w.waitReady("keep")
	id := p.Status.AllocationID
	if a, _ := w.address(id); tagMap(a.Tags)[decide.TagDeletionPolicy] != decide.DeletionPolicyOrphan {
		t.Fatalf("address tags %v lack %s=%s", tagMap(a.Tags), decide.TagDeletionPolicy, decide.DeletionPolicyOrphan)
	}
	if n := w.calls("AllocateAddress") + w.calls("CreateTags"); n != 1 {
		t.Errorf("%d AllocateAddress/CreateTags calls, want 1 (the tag goes with the allocation)", n)
	}
	// A policy change of the live PodElasticIP moves the tag.
	setPolicies := func(mp xpv2.ManagementPolicies) {
		t.Helper()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := w.get("keep")
			cur.Spec.ManagementPolicies = mp
			return w.c.Update(w.ctx, cur)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitTag := func(want string) {
		t.Helper()
		w.eventually("deletion-policy tag "+want, func() (bool, string) {
			a, _ := w.address(id)
			return tagMap(a.Tags)[decide.TagDeletionPolicy] == want, fmt.Sprint(tagMap(a.Tags))
		})
	}
	setPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionAll})
	waitTag("")
	setPolicies(noDelete)
	waitTag(decide.DeletionPolicyOrphan)

	w.delete("keep")
	w.waitGone("keep")
	if _, ok := w.address(id); !ok {
		t.Fatal("deleting the PodElasticIP released its address despite the management policies")
	}

	o := testOptions()
	o.OrphanGracePeriod = time.Second
	o.OrphanMode = orphan.ModeDelete
	s, err := podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Pending) != 1 || rep.Pending[0].Object.ID != id {
		t.Fatalf("first sweep: pending %+v, want %s within its grace period", rep.Pending, id)
	}
	time.Sleep(1100 * time.Millisecond)
	rep, err = s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || len(rep.Failed) != 0 || len(rep.Reported) != 1 || rep.Reported[0].Object.ID != id {
		t.Fatalf("sweep past the grace period: deleted %+v, failed %+v, reported %+v; want %s reported only", rep.Deleted, rep.Failed, rep.Reported, id)
	}
	t.Logf("reported: %s", rep.Reported[0].Decision.Reason)
	a, ok := w.address(id)
	if !ok {
		t.Fatal("the sweep released the address")
	}
	if tags := tagMap(a.Tags); tags[decide.TagOwnerUID] != string(p.UID) || tags[decide.TagCluster] != w.cluster || a.PrivateIPAddress != "10.0.1.90" {
		t.Fatalf("the sweep changed the address: %+v", a)
	}
	if v := orphanGauge(t); v != 1 {
		t.Errorf("edgeplane_orphan_objects{kind=%q} = %v, want 1", podelasticip.SweepKind, v)
	}
}

// TestOrphanSweepLegacyAddresses: addresses only aws-pod-eip-controller
// tagged for this cluster are reported once their pod is gone and no
// PodElasticIP is there to adopt them, and never released or untagged.
func TestOrphanSweepLegacyAddresses(t *testing.T) {
	const (
		gone     = "eipalloc-0000000000000b01"
		live     = "eipalloc-0000000000000b02"
		adopting = "eipalloc-0000000000000b03"
		other    = "eipalloc-0000000000000b04"
	)
	w := newWorld(t, worldOpts{noManager: true, addresses: func(ns string) []core.EC2AddressFixture {
		legacy := func(pod, cluster string) map[string]string {
			return map[string]string{decide.LegacyTagType: "auto", decide.LegacyTagCluster: cluster, decide.LegacyTagPod: ns + "/" + pod}
		}
		return []core.EC2AddressFixture{
			{AllocationID: gone, Tags: legacy("gone", "cluster-"+ns), NetworkInterfaceID: eni1, PrivateIPAddress: "10.0.1.91"},
			{AllocationID: live, Tags: legacy("live", "cluster-"+ns)},
			{AllocationID: adopting, Tags: legacy("adopting", "cluster-"+ns)},
			{AllocationID: other, Tags: legacy("gone", "another-cluster")},
		}
	}})
	w.pod("live", "10.0.1.92", hostIP1, nil)
	// A PodElasticIP for a pod that does not exist (yet): it would adopt.
	w.peip("adopting", "adopting", nil)
	before := map[string]core.EC2Address{}
	for _, a := range w.addresses() {
		before[a.AllocationID] = a
	}

	o := testOptions()
	o.OrphanGracePeriod = 0
	o.OrphanMode = orphan.ModeDelete
	s, err := podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || len(rep.Failed) != 0 || len(rep.Reported) != 1 || rep.Reported[0].Object.ID != gone {
		t.Fatalf("deleted %+v, failed %+v, reported %+v; want only %s reported", rep.Deleted, rep.Failed, rep.Reported, gone)
	}
	if rep.Listed != 3 {
		t.Errorf("listed %d addresses, want the 3 legacy ones of this cluster", rep.Listed)
	}
	t.Logf("reported %s: %s (%s)", gone, rep.Reported[0].Decision.Reason, rep.Reported[0].Object.Description)
	if v := orphanGauge(t); v != 1 {
		t.Errorf("edgeplane_orphan_objects{kind=%q} = %v, want 1", podelasticip.SweepKind, v)
	}
	after := w.addresses()
	if len(after) != len(before) {
		t.Fatalf("%d addresses left, want %d", len(after), len(before))
	}
	for _, a := range after {
		b := before[a.AllocationID]
		if fmt.Sprint(tagMap(a.Tags)) != fmt.Sprint(tagMap(b.Tags)) || a.AssociationID != b.AssociationID {
			t.Errorf("the sweep changed %s: %+v, was %+v", a.AllocationID, a, b)
		}
	}
}

// orphanGauge reads edgeplane_orphan_objects for PodElasticIP addresses.
func orphanGauge(t *testing.T) float64 {
	t.Helper()
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "edgeplane_orphan_objects" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if promtext.Labels(m)["kind"] == podelasticip.SweepKind {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatal("edgeplane_orphan_objects not found")
	return 0
}
