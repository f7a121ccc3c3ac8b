package podelasticip_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/testsupport/steppedclock"
)

// tcPool seeds n unbound Tencent addresses carrying the pool's tag key.
func tcPool(n int, key string) []core.TCAddressFixture {
	out := make([]core.TCAddressFixture, n)
	for i := range out {
		out[i] = core.TCAddressFixture{Tags: map[string]string{key: ""}}
	}
	return out
}

// TestTencentPoolMode: a Pool address is claimed (claim and ownership tags
// through the tag API, then bound to the pod's private IP) and given back
// unbound and untagged on deletion (Retain, the default).
func TestTencentPoolMode(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, opts: allowClaims("pec-ip-pool"), tcAddresses: func(string) []core.TCAddressFixture { return tcPool(2, "pec-ip-pool") }})
	w.pod("p0", "10.0.1.30", hostIP1, nil)
	w.peip("p0", "p0", pool("pec-ip-pool"))
	p := w.waitReady("p0")
	a, _ := w.tcAddress(p.Status.AllocationID)
	tags := tcTags(a)
	if a.AddressStatus != "BIND" || a.PrivateAddressIP != "10.0.1.30" || tags[decide.TagClaim] != w.cluster+"/"+w.ns+"/p0" || tags[decide.TagOwnerUID] != string(p.UID) {
		t.Fatalf("claimed address %+v", a)
	}
	if n := w.tcCalls("AllocateAddresses"); n != 0 {
		t.Errorf("Pool mode allocated %d addresses", n)
	}
	w.eventually("legacy labels", func() (bool, string) {
		pod := w.getPod("p0")
		return pod.Labels[translate.LabelType] == "fixed-tag" && pod.Labels[translate.LabelFixedTag] == "pec-ip-pool", fmt.Sprint(pod.Labels)
	})
	if n := w.eventCount("p0", "Associated"); n != 1 {
		t.Errorf("%d Associated Events, want 1 once the binding task ended", n)
	}
	w.delete("p0")
	w.waitGone("p0")
	w.eventually("given back unbound", func() (bool, string) {
		a, _ = w.tcAddress(p.Status.AllocationID)
		return a.AddressStatus == "UNBIND", a.AddressStatus
	})
	tags = tcTags(a)
	if tags[decide.TagClaim] != "" || tags[decide.TagCluster] != "" {
		t.Fatalf("given-back address %+v", a)
	}
	if _, ok := tags["pec-ip-pool"]; !ok || len(w.tcAddresses()) != 2 {
		t.Fatalf("the pool lost an address or its tag: %+v", w.tcAddresses())
	}
}

// TestTencentPoolContention: 20 pods race for 10 pooled addresses, which
// Tencent binds one task at a time: 10 bind, 10 report PoolExhausted, no
// address is bound twice and no pod IP carries two.
func TestTencentPoolContention(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, opts: allowClaims("race"), tcAddresses: func(string) []core.TCAddressFixture { return tcPool(10, "race") }})
	for i := range 20 {
		w.pod(fmt.Sprintf("r%02d", i), fmt.Sprintf("10.0.1.%d", 100+i), hostIP1, nil)
	}
	for i := range 20 {
		name := fmt.Sprintf("r%02d", i)
		w.peip(name, name, pool("race"))
	}
	var bound, exhausted int
	var ids []string
	w.eventually("10 bound and 10 exhausted", func() (bool, string) {
		var list networkingv1alpha1.PodElasticIPList
		if err := w.c.List(w.ctx, &list, client.InNamespace(w.ns)); err != nil {
			return false, err.Error()
		}
		bound, exhausted, ids = 0, 0, nil
		for _, p := range list.Items {
			switch p.GetCondition(xpv2.TypeReady).Reason {
			case xpv2.ReasonAvailable:
				bound++
				ids = append(ids, p.Status.AllocationID)
			case networkingv1alpha1.PodElasticIPReasonPoolExhausted:
				exhausted++
			}
		}
		return bound == 10 && exhausted == 10, fmt.Sprintf("bound %d, exhausted %d", bound, exhausted)
	})
	if s := sets.New(ids...); s.Len() != 10 {
		t.Fatalf("bound addresses %v: some bound twice", ids)
	}
	ips := sets.New[string]()
	for _, a := range w.tcAddresses() {
		if a.AddressStatus == "BIND" {
			if ips.Has(a.PrivateAddressIP) {
				t.Errorf("pod IP %s has two addresses", a.PrivateAddressIP)
			}
			ips.Insert(a.PrivateAddressIP)
		}
	}
	if ips.Len() != 10 {
		t.Fatalf("%d pod IPs carry an address, want 10", ips.Len())
	}
}

// TestTencentStaticMode: by tag value <namespace>/<pod> and by address ID;
// a missing address is AddressNotFound, one bound to another pod
// AddressInUse (and it is never taken away).
func TestTencentStaticMode(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, opts: allowClaims("pec-fixed,static-ok"), tcAddresses: func(ns string) []core.TCAddressFixture {
		return []core.TCAddressFixture{{Tags: map[string]string{"pec-fixed": ns + "/s0"}}, {AddressID: "eip-000000aa", Tags: map[string]string{"static-ok": ""}}}
	}})
	static := func(key, id string) func(*networkingv1alpha1.PodElasticIP) {
		return func(p *networkingv1alpha1.PodElasticIP) {
			p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, TagKey: key, AllocationID: id}
		}
	}
	w.pod("s0", "10.0.1.40", hostIP1, nil)
	w.peip("s0", "s0", static("pec-fixed", ""))
	p := w.waitReady("s0")
	if a, _ := w.tcAddress(p.Status.AllocationID); tcTags(a)["pec-fixed"] != w.ns+"/s0" || a.PrivateAddressIP != "10.0.1.40" {
		t.Fatalf("static address %+v", a)
	}
	w.pod("s1", "10.0.1.41", hostIP1, nil)
	w.peip("s1", "s1", static("", "eip-000000aa"))
	if p := w.waitReady("s1"); p.Status.AllocationID != "eip-000000aa" {
		t.Fatalf("static by ID got %s", p.Status.AllocationID)
	}
	w.pod("s2", "10.0.1.42", hostIP1, nil)
	w.peip("s2", "s2", static("pec-fixed", ""))
	w.waitReason("s2", networkingv1alpha1.PodElasticIPReasonAddressNotFound)
	w.pod("s3", "10.0.1.43", hostIP1, nil)
	w.peip("s3", "s3", static("", "eip-000000aa"))
	w.waitReason("s3", networkingv1alpha1.PodElasticIPReasonAddressInUse)
	if a, _ := w.tcAddress("eip-000000aa"); a.PrivateAddressIP != "10.0.1.41" {
		t.Fatalf("static address moved to %s", a.PrivateAddressIP)
	}
}

// TestTencentLegacyAdoption: an address tagged by aws-pod-eip-controller's
// contract for an annotated pod, already bound to its IP, is adopted by the
// translated PodElasticIP: nothing is allocated or bound again; our tags
// are added through the tag API.
func TestTencentLegacyAdoption(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, defaultConfig: true, tcAddresses: func(ns string) []core.TCAddressFixture {
		return []core.TCAddressFixture{{AddressID: "eip-000000bb", NetworkInterfaceID: tcENI1, PrivateIPAddress: "10.0.1.50",
			Tags: map[string]string{decide.LegacyTagType: "auto", decide.LegacyTagCluster: "cluster-" + ns, decide.LegacyTagPod: ns + "/legacy-0"}}}
	}})
	w.pod("legacy-0", "10.0.1.50", hostIP1, func(p *corev1.Pod) { p.Annotations = map[string]string{translate.Type: "auto"} })
	p := w.waitReady("legacy-0")
	if p.Status.AllocationID != "eip-000000bb" {
		t.Fatalf("adopted %s, want the legacy address", p.Status.AllocationID)
	}
	if n := w.tcCalls("AllocateAddresses") + w.tcCalls("AssociateAddress"); n != 0 {
		t.Errorf("adoption made %d allocate/associate calls, want 0", n)
	}
	w.eventually("owner tag", func() (bool, string) {
		a, _ := w.tcAddress("eip-000000bb")
		return tcTags(a)[decide.TagOwnerUID] == string(p.UID), fmt.Sprint(tcTags(a))
	})
	if n := w.eventCount("legacy-0", "Adopted"); n != 1 {
		t.Errorf("%d Adopted Events, want 1", n)
	}
	pod := w.getPod("legacy-0")
	delete(pod.Annotations, translate.Type)
	if err := w.c.Update(w.ctx, pod); err != nil {
		t.Fatal(err)
	}
	w.waitGone("legacy-0")
	if n := len(w.tcAddresses()); n != 0 {
		t.Fatalf("%d addresses left, want the adopted Auto address released", n)
	}
}

// TestTencentPrivateIPInUse: a pod IP that already carries another EIP.
// Tencent refuses a second one (InvalidPrivateIpAddress.AlreadyBindEip), so
// Auto keeps its one allocation and reports PrivateIPInUse naming the
// holder, and Pool stops at the first refusal (no LostClaim); both bind
// once the other address is unbound.
func TestTencentPrivateIPInUse(t *testing.T) {
	const autoIP, poolIP, key = "10.0.1.61", "10.0.1.62", "inuse-pool"
	w := newWorld(t, worldOpts{tencent: true, opts: allowClaims(key), tcAddresses: func(string) []core.TCAddressFixture {
		return append(tcPool(5, key),
			core.TCAddressFixture{AddressID: "eip-0000f001", NetworkInterfaceID: tcENI1, PrivateIPAddress: autoIP},
			core.TCAddressFixture{AddressID: "eip-0000f002", NetworkInterfaceID: tcENI1, PrivateIPAddress: poolIP})
	}})
	w.pod("auto", autoIP, hostIP1, nil)
	w.pod("pool", poolIP, hostIP1, nil)
	w.peip("auto", "auto", nil)
	w.peip("pool", "pool", pool(key))
	for _, name := range []string{"auto", "pool"} {
		p := w.waitReason(name, networkingv1alpha1.PodElasticIPReasonPrivateIPInUse)
		if c := p.GetCondition(xpv2.TypeReady); !strings.Contains(c.Message, "is bound to") {
			t.Errorf("%s: Ready %q, want the holder named", name, c.Message)
		}
	}
	w.assertBackedOff([]string{"auto", "pool"}, networkingv1alpha1.PodElasticIPReasonPrivateIPInUse, "tencent/AssociateAddress")
	if n := w.tcCalls("AllocateAddresses"); n != 1 {
		t.Errorf("allocations = %d, want 1 (Auto keeps its address while it waits)", n)
	}
	if n := w.eventCount("pool", "LostClaim"); n != 0 {
		t.Errorf("the Pool PodElasticIP lost %d claims: it cycled through the pool", n)
	}
	for _, id := range []string{"eip-0000f001", "eip-0000f002"} {
		if _, err := w.sim.World().TCDisassociateAddress(id, false); err != nil {
			t.Fatal(err)
		}
	}
	for name, ip := range map[string]string{"auto": autoIP, "pool": poolIP} {
		p := w.waitReady(name)
		if a, _ := w.tcAddress(p.Status.AllocationID); a.PrivateAddressIP != ip {
			t.Errorf("%s: address %+v, want it on %s", name, a, ip)
		}
	}
}

// TestTencentOrphanSweep: the Tencent accounts' sweep releases an orphaned
// Auto address (unbinding it first), strips a Pool one of edgeplane's tags,
// leaves a kept one until its delay is over and a live PodElasticIP's and
// another cluster's alone; report mode touches nothing.
func TestTencentOrphanSweep(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, tcAddresses: func(ns string) []core.TCAddressFixture {
		base := func(mode string, extra map[string]string) map[string]string {
			m := map[string]string{decide.TagCluster: "cluster-" + ns, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "gone-uid",
				decide.TagPod: ns + "/x", decide.TagMode: mode}
			for k, v := range extra {
				m[k] = v
			}
			return m
		}
		return []core.TCAddressFixture{
			{AddressID: "eip-00000a01", Tags: base("Auto", nil), NetworkInterfaceID: tcENI1, PrivateIPAddress: "10.0.1.80"},
			{AddressID: "eip-00000a02", Tags: base("Pool", map[string]string{"pool": "", decide.TagClaim: "c/x"})},
			{AddressID: "eip-00000a03", Tags: base("Auto", map[string]string{decide.TagReleaseAfter: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})},
			{AddressID: "eip-00000a04", Tags: base("Auto", map[string]string{decide.TagReleaseAfter: time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})},
			{AddressID: "eip-00000a05", Tags: map[string]string{decide.TagCluster: "another-cluster", decide.TagOwnerKind: decide.OwnerKind, decide.TagMode: "Auto"}},
		}
	}})
	w.pod("live", "10.0.1.81", hostIP1, nil)
	w.peip("live", "live", nil)
	live := w.waitReady("live").Status.AllocationID

	o := testOptions()
	o.OrphanGracePeriod = 0
	o.OrphanMode = orphan.ModeReport
	s, err := podelasticip.NewTencentSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Reported) != 3 || len(rep.Deleted) != 0 || len(w.tcAddresses()) != 6 {
		t.Fatalf("report mode: reported %d deleted %d, %d addresses", len(rep.Reported), len(rep.Deleted), len(w.tcAddresses()))
	}
	// The AWS accounts' sweep does not look at a Tencent account.
	if aws, err := podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster}); err != nil {
		t.Fatal(err)
	} else if rep, err := aws.Sweep(w.ctx); err != nil || len(rep.Reported) != 0 {
		t.Fatalf("the AWS sweep reported %d of a Tencent account's addresses (%v)", len(rep.Reported), err)
	}

	o.OrphanMode = orphan.ModeDelete
	s, _ = podelasticip.NewTencentSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster})
	if rep, err = s.Sweep(w.ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep: listed %d, deleted %d, reported %d, failed %d", rep.Listed, len(rep.Deleted), len(rep.Reported), len(rep.Failed))
	w.eventually("orphans released", func() (bool, string) {
		got := map[string]core.TCAddress{}
		for _, a := range w.tcAddresses() {
			got[a.AddressID] = a
		}
		_, a01 := got["eip-00000a01"]
		_, a04 := got["eip-00000a04"]
		return !a01 && !a04, fmt.Sprintf("a01 %v, a04 %v", got["eip-00000a01"].AddressStatus, got["eip-00000a04"].AddressStatus)
	})
	got := map[string]core.TCAddress{}
	for _, a := range w.tcAddresses() {
		got[a.AddressID] = a
	}
	if a, ok := got["eip-00000a02"]; !ok || tcTags(a)[decide.TagClaim] != "" || tcTags(a)[decide.TagCluster] != "" || tcTags(a)["pool"] != "" {
		t.Errorf("orphaned Pool address %+v (present %v): want it kept without edgeplane's tags", a, ok)
	}
	for _, id := range []string{"eip-00000a03", "eip-00000a05", live} {
		if _, ok := got[id]; !ok {
			t.Errorf("address %s was removed", id)
		}
	}
}

// TestTencentCredentialsRejected: the Tencent account's key is revoked
// under three bound PodElasticIPs. They and their ClusterProviderConfig
// report CredentialsRejected; the account costs one cloud call per backoff
// window, not one per PodElasticIP and retry; they recover once the key
// works again.
func TestTencentCredentialsRejected(t *testing.T) {
	clock := &steppedclock.Clock{}
	w := newWorld(t, worldOpts{tencent: true, configController: true, opts: func(o *podelasticip.Options) {
		o.Clock = clock
		o.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Hour, Max: 4 * time.Hour}
	}})
	names := []string{"c0", "c1", "c2"}
	for i, n := range names {
		w.pod(n, fmt.Sprintf("10.0.1.%d", 70+i), hostIP1, nil)
		w.peip(n, n, nil)
	}
	for _, n := range names {
		w.waitReady(n)
	}
	rejections := func() int64 {
		var sum int64
		for k, v := range w.sim.World().Stats() {
			if strings.HasPrefix(k, "tencent/") && strings.HasSuffix(k, "/"+core.TCAuthFailureSecretIDNotFound) {
				sum += v
			}
		}
		return sum
	}
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) { delete(s.TencentCredentials, core.DefaultTencentSecretID) }); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		w.waitReason(n, networkingv1alpha1.PodElasticIPReasonCredentialsRejected)
	}
	w.waitConfigReason(cloudv1alpha1.ReasonCredentialsRejected)
	first := rejections()
	if first < 1 || first > int64(len(names)) {
		t.Fatalf("%d rejected calls before the gate closed, want 1..%d (only calls already in flight)", first, len(names))
	}
	w.waitRetries(names)
	if n := rejections(); n != first {
		t.Fatalf("%d rejected calls inside the backoff window, want %d", n, first)
	}
	clock.Step(time.Hour)
	w.eventually("one probe", func() (bool, string) { n := rejections(); return n == first+1, fmt.Sprint(n) })
	w.waitRetries(names)
	if n := rejections(); n != first+1 {
		t.Fatalf("%d rejected calls after one window, want %d (one probe)", n, first+1)
	}
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) {
		s.TencentCredentials[core.DefaultTencentSecretID] = core.DefaultTencentSecretKey
	}); err != nil {
		t.Fatal(err)
	}
	clock.Step(2 * time.Hour)
	for _, n := range names {
		w.waitReady(n)
	}
	w.waitConfigReason(cloudv1alpha1.ReasonCredentialsAvailable)
}
