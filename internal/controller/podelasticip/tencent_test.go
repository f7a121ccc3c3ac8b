package podelasticip_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
)

// tcTags is a Tencent address's tags as a map.
func tcTags(a core.TCAddress) map[string]string { return tagMap(a.Tags) }

// TestTencentAutoLifecycle: on a Tencent Cloud provider config an Auto
// address is allocated with spec.tencent's type, bandwidth, charge type and
// line and the ownership tags (one AllocateAddresses), bound to the pod's
// private IP on its ENI (one AssociateAddress with NetworkInterfaceId and
// PrivateIpAddress, the ENI found by a DescribeNetworkInterfaces), said in
// one Associated Event, reflected on the pod, followed when the pod is
// recreated with a new IP, and released on deletion.
func TestTencentAutoLifecycle(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	w.pod("web-0", "10.0.1.5", hostIP1, nil)
	w.peip("web-0", "web-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{AddressType: "HighQualityEIP", InternetChargeType: "BANDWIDTH_POSTPAID_BY_HOUR",
			InternetMaxBandwidthOut: 50, InternetServiceProvider: "BGP"}
		p.Spec.Tags = map[string]string{"team": "edge"}
	})
	p := w.waitReady("web-0")

	if got := []int64{w.tcCalls("AllocateAddresses"), w.tcCalls("AssociateAddress"), w.tcCalls("ModifyResourceTags")}; got[0] != 1 || got[1] != 1 || got[2] != 0 {
		t.Errorf("AllocateAddresses, AssociateAddress, ModifyResourceTags = %v, want 1, 1, 0", got)
	}
	a, ok := w.tcAddress(p.Status.AllocationID)
	if !ok || a.AddressStatus != "BIND" || a.NetworkInterfaceID != tcENI1 || a.PrivateAddressIP != "10.0.1.5" || a.InstanceID != "ins-node0001" {
		t.Fatalf("address %+v (found %v), want BIND to 10.0.1.5 on %s", a, ok, tcENI1)
	}
	if a.AddressType != "HighQualityEIP" || a.InternetChargeType != "BANDWIDTH_POSTPAID_BY_HOUR" || a.Bandwidth != 50 || a.ISP != "BGP" {
		t.Errorf("address settings %s %s %d %s, want spec.tencent's", a.AddressType, a.InternetChargeType, a.Bandwidth, a.ISP)
	}
	tags := tcTags(a)
	for k, v := range map[string]string{decide.TagCluster: w.cluster, decide.TagOwnerUID: string(p.UID), decide.TagPod: w.ns + "/web-0",
		decide.TagOwnerKind: "PodElasticIP", decide.TagMode: "Auto", decide.TagNamespace: w.ns, "team": "edge"} {
		if tags[k] != v {
			t.Errorf("tag %s = %q, want %q", k, tags[k], v)
		}
	}
	if meta.GetExternalName(p) != a.AddressID || p.Status.PublicIP != a.AddressIP || p.Status.NetworkInterfaceID != tcENI1 ||
		p.Status.PrivateIP != "10.0.1.5" || p.Status.AssociationID != tcENI1+"/10.0.1.5" || p.Status.NodeName != "w1" || p.Status.PodUID == "" {
		t.Errorf("status %+v, external name %q", p.Status, meta.GetExternalName(p))
	}
	w.eventually("pod marks", func() (bool, string) {
		pod := w.getPod("web-0")
		cond := ""
		for _, c := range pod.Status.Conditions {
			if c.Type == networkingv1alpha1.PodConditionElasticIPReady {
				cond = string(c.Status)
			}
		}
		return pod.Labels[translate.LabelPublicIP] == a.AddressIP && pod.Annotations[networkingv1alpha1.AnnotationPodPublicIP] == a.AddressIP && cond == "True",
			fmt.Sprintf("labels %v annotations %v condition %q", pod.Labels, pod.Annotations, cond)
	})
	if n := w.eventCount("web-0", "Associated"); n != 1 {
		t.Errorf("%d Associated Events, want 1", n)
	}

	// The pod is recreated with a new IP: its old IP goes back to the VPC
	// (Tencent unbinds the address with it), and the address follows.
	if err := w.sim.World().Remove(&core.Removals{Tencent: core.TencentRemovals{PrivateIPs: []core.TCPrivateIPFixture{
		{NetworkInterfaceID: tcENI1, PrivateIPAddresses: []string{"10.0.1.5"}}}}}); err != nil {
		t.Fatal(err)
	}
	w.deletePod("web-0")
	w.waitReason("web-0", networkingv1alpha1.PodElasticIPReasonPodNotFound)
	w.pod("web-0", "10.0.2.7", hostIP1, nil)
	w.eventually("address follows the pod", func() (bool, string) {
		p = w.get("web-0")
		return p.Status.PrivateIP == "10.0.2.7" && p.Status.NetworkInterfaceID == tcENI2 && p.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue,
			fmt.Sprintf("%+v %+v", p.Status, p.GetCondition(xpv2.TypeReady))
	})
	if p.Status.AllocationID != a.AddressID || w.tcCalls("AllocateAddresses") != 1 || len(w.tcAddresses()) != 1 {
		t.Errorf("recreation allocated again: %s vs %s, %d allocations", p.Status.AllocationID, a.AddressID, w.tcCalls("AllocateAddresses"))
	}

	// Delete policy: unbound, then released.
	w.delete("web-0")
	w.waitGone("web-0")
	if n := len(w.tcAddresses()); n != 0 {
		t.Errorf("%d addresses left, want 0", n)
	}
	w.eventually("pod unmarked", func() (bool, string) {
		pod := w.getPod("web-0")
		_, hasLabel := pod.Labels[translate.LabelPublicIP]
		return !hasLabel, fmt.Sprint(pod.Labels)
	})
	// Every task ended as meant, which the address itself showed: no
	// DescribeTaskResult was needed (it is asked only of a task whose
	// address did not end as the task meant).
	if n := w.tcCalls("DescribeTaskResult"); n != 0 {
		t.Errorf("%d DescribeTaskResult calls, want 0", n)
	}
}

// TestTencentDefaultsAndProviderMismatch: without spec.tencent an address
// gets Tencent Cloud's defaults; settings of the other cloud are
// ProviderMismatch (a Warning Event, nothing allocated), on a Tencent
// config (publicIPv4Pool, an EC2 allocation ID) and on an AWS one
// (spec.tencent, a Tencent address ID); a reserved Tencent tag key is
// InvalidSpec.
func TestTencentDefaultsAndProviderMismatch(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	w.pod("plain", "10.0.1.30", hostIP1, nil)
	w.peip("plain", "plain", nil)
	a, _ := w.tcAddress(w.waitReady("plain").Status.AllocationID)
	if a.AddressType != "EIP" || a.InternetChargeType != "TRAFFIC_POSTPAID_BY_HOUR" || a.Bandwidth != 1 || a.ISP != "BGP" {
		t.Errorf("default address %s %s %d %s, want EIP TRAFFIC_POSTPAID_BY_HOUR 1 BGP", a.AddressType, a.InternetChargeType, a.Bandwidth, a.ISP)
	}

	w.pod("pool", "10.0.1.31", hostIP1, nil)
	w.peip("pool", "pool", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Allocation.PublicIPv4Pool = "amazon" })
	w.pod("ec2id", "10.0.1.32", hostIP1, nil)
	w.peip("ec2id", "ec2id", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eipalloc-0123456789abcdef0"}
	})
	w.pod("qcloud", "10.0.1.33", hostIP1, nil)
	w.peip("qcloud", "qcloud", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Tags = map[string]string{"qcloud:app": "x"} })
	for _, n := range []string{"pool", "ec2id"} {
		p := w.waitReason(n, networkingv1alpha1.PodElasticIPReasonProviderMismatch)
		if s := p.GetCondition(xpv2.TypeReady); s.Status != corev1.ConditionFalse || !strings.Contains(s.Message, "Tencent Cloud") {
			t.Errorf("%s Ready = %+v", n, s)
		}
		if st := p.GetCondition("Stalled"); st.Status != corev1.ConditionTrue {
			t.Errorf("%s Stalled = %+v, want True (only a person can fix it)", n, st)
		}
		w.eventually(n+" Warning Event", func() (bool, string) { c := w.eventCount(n, "ProviderMismatch"); return c == 1, fmt.Sprint(c) })
	}
	w.waitReason("qcloud", networkingv1alpha1.PodElasticIPReasonInvalidSpec)

	aws := newWorld(t, worldOpts{})
	aws.pod("tc", "10.0.1.34", hostIP1, nil)
	aws.peip("tc", "tc", func(p *networkingv1alpha1.PodElasticIP) { p.Spec.Tencent = &networkingv1alpha1.PodElasticIPTencent{} })
	aws.pod("tcid", "10.0.1.35", hostIP1, nil)
	aws.peip("tcid", "tcid", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.Allocation = networkingv1alpha1.PodElasticIPAllocation{Mode: networkingv1alpha1.PodElasticIPModeStatic, AllocationID: "eip-0a1b2c3d"}
	})
	for _, n := range []string{"tc", "tcid"} {
		aws.waitReason(n, networkingv1alpha1.PodElasticIPReasonProviderMismatch)
		aws.eventually(n+" Warning Event", func() (bool, string) { c := aws.eventCount(n, "ProviderMismatch"); return c == 1, fmt.Sprint(c) })
	}

	// Nothing was allocated for any of them, and a while later still
	// nothing, with one Event each.
	time.Sleep(time.Second)
	if n, m := w.tcCalls("AllocateAddresses"), aws.calls("AllocateAddress"); n != 1 || m != 0 {
		t.Errorf("allocations Tencent %d, AWS %d; want 1 (plain) and 0", n, m)
	}
	if c := w.eventCount("pool", "ProviderMismatch"); c != 1 {
		t.Errorf("%d ProviderMismatch Events, want 1", c)
	}
	// The mismatched ones are deleted without a cloud call.
	w.delete("pool")
	w.waitGone("pool")
	aws.delete("tc")
	aws.waitGone("tc")
}

// TestTencentQuotaExceeded: Tencent's AddressQuotaLimitExceeded is
// QuotaExceeded; freeing the quota lets the PodElasticIP through.
func TestTencentQuotaExceeded(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, settings: core.Settings{TencentAddressQuota: 1}})
	w.pod("q1", "10.0.1.11", hostIP1, nil)
	w.pod("q2", "10.0.1.12", hostIP1, nil)
	w.peip("q1", "q1", nil)
	w.waitReady("q1")
	w.peip("q2", "q2", nil)
	w.waitReason("q2", networkingv1alpha1.PodElasticIPReasonQuotaExceeded)
	w.assertBackedOff([]string{"q2"}, networkingv1alpha1.PodElasticIPReasonQuotaExceeded, "tencent/AllocateAddresses")
	w.delete("q1")
	w.waitGone("q1")
	w.waitReady("q2")
}

// TestTencentFailedTasks: an allocation task that FAILED (the cloud rolls
// the address back) is TaskFailed with a Warning Event, then allocated
// again under a new ClientToken; a failed association task likewise, then
// bound again. One address in the end.
func TestTencentFailedTasks(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	if err := w.sim.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AllocateAddresses", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	w.pod("f1", "10.0.1.40", hostIP1, nil)
	f1 := w.watchReasons("f1")
	w.peip("f1", "f1", nil)
	w.waitReasonSeen("f1", f1, networkingv1alpha1.PodElasticIPReasonTaskFailed)
	p := w.waitReady("f1")
	if n := w.tcCalls("AllocateAddresses"); n != 2 {
		t.Errorf("AllocateAddresses calls = %d, want 2 (the failed one, one under the next token)", n)
	}
	if p.GetAnnotations()["networking.edgeplane.io/allocation-attempt"] != "1" {
		t.Errorf("annotations %v, want allocation-attempt 1", p.GetAnnotations())
	}
	if c := w.eventCount("f1", "TaskFailed"); c != 1 {
		t.Errorf("%d TaskFailed Events, want 1", c)
	}

	if err := w.sim.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AssociateAddress", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	w.pod("f2", "10.0.1.41", hostIP1, nil)
	f2 := w.watchReasons("f2")
	w.peip("f2", "f2", nil)
	w.waitReasonSeen("f2", f2, networkingv1alpha1.PodElasticIPReasonTaskFailed)
	w.waitReady("f2")
	if n := w.tcCalls("AssociateAddress"); n != 3 {
		t.Errorf("AssociateAddress calls = %d, want 3 (f1, the failed f2, f2 again)", n)
	}
	if n := len(w.tcAddresses()); n != 2 {
		t.Errorf("%d addresses, want 2", n)
	}
}

// TestTencentCommitThenDropOnAllocate: AllocateAddresses commits, but
// every answer is lost (the SDK's own retries too) and the address stays
// invisible to describes for a while, so neither the answer nor the tag
// look-up can tell the controller it exists. The next pass allocates again
// under the same ClientToken (the PodElasticIP's UID), which returns the
// same address: one address, not two.
func TestTencentCommitThenDropOnAllocate(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	if err := w.sim.World().AddFault(core.FaultSpec{Provider: core.ProviderTencent, Action: "AllocateAddresses", DropRate: 1, Times: 4,
		DropHold: core.Duration(50 * time.Millisecond), VisibilityDelay: core.Duration(4 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	w.pod("drop", "10.0.1.45", hostIP1, nil)
	w.peip("drop", "drop", nil)
	w.waitReady("drop")
	if n := len(w.tcAddresses()); n != 1 {
		t.Errorf("%d addresses after a dropped allocation, want 1", n)
	}
	if n := w.tcCalls("AllocateAddresses"); n < 5 {
		t.Errorf("%d AllocateAddresses requests, want at least 5 (four dropped, then the controller's retry)", n)
	}
}

// TestTencentReleasePolicies: Retain gives an Auto address back unbound and
// untagged; AfterDelay keeps it for a PodElasticIP of the same pod, which
// gets the same address.
func TestTencentReleasePolicies(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	w.pod("keep", "10.0.1.20", hostIP1, nil)
	w.peip("keep", "keep", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseRetain
		p.Spec.Tags = map[string]string{"team": "edge"}
	})
	kept := w.waitReady("keep").Status.AllocationID
	w.delete("keep")
	w.waitGone("keep")
	w.eventually("retained address unbound", func() (bool, string) {
		a, ok := w.tcAddress(kept)
		return ok && a.AddressStatus == "UNBIND", fmt.Sprintf("%+v", a)
	})
	a, _ := w.tcAddress(kept)
	if tags := tcTags(a); tags[decide.TagCluster] != "" || tags[decide.TagOwnerUID] != "" || tags["team"] != "edge" {
		t.Errorf("retained address tags %v, want edgeplane's removed and the user's kept", tags)
	}

	w.pod("sts-0", "10.0.1.21", hostIP1, nil)
	w.peip("sts-0", "sts-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ReleasePolicy = networkingv1alpha1.PodElasticIPReleaseAfterDelay
		p.Spec.ReleaseDelay = &metav1.Duration{Duration: time.Hour}
	})
	first := w.waitReady("sts-0").Status.AllocationID
	w.delete("sts-0")
	w.waitGone("sts-0")
	w.eventually("kept address unbound", func() (bool, string) {
		a, ok := w.tcAddress(first)
		return ok && a.AddressStatus == "UNBIND" && tcTags(a)[decide.TagReleaseAfter] != "", fmt.Sprintf("%+v", a)
	})
	w.deletePod("sts-0")
	w.pod("sts-0", "10.0.1.22", hostIP1, nil)
	w.peip("sts-0", "sts-0", nil)
	p := w.waitReady("sts-0")
	if p.Status.AllocationID != first || p.Status.PrivateIP != "10.0.1.22" {
		t.Fatalf("recreated pod got %s at %s, want the kept %s", p.Status.AllocationID, p.Status.PrivateIP, first)
	}
	a, _ = w.tcAddress(first)
	if tags := tcTags(a); tags[decide.TagReleaseAfter] != "" || tags[decide.TagOwnerUID] != string(p.UID) {
		t.Errorf("adopted kept address tags %v", tags)
	}
	if n := w.tcCalls("AllocateAddresses"); n != 2 {
		t.Errorf("allocations = %d, want 2 (retain test and the first sts-0)", n)
	}
}

// TestTencentNetworkInterfaceNotFound: a pod IP no ENI holds is reported
// with a stable reason; the address waits, unbound.
func TestTencentNetworkInterfaceNotFound(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	w.pod("lost", "10.9.9.9", "10.9.0.1", nil)
	w.peip("lost", "lost", nil)
	w.waitReason("lost", networkingv1alpha1.PodElasticIPReasonNetworkInterfaceNotFound)
	if n := w.tcCalls("AssociateAddress"); n != 0 {
		t.Errorf("%d associations without an ENI", n)
	}
}

// TestTencentPodDeletedWhileManagerStopped: while the manager is down the
// pod goes (its IP with it, which unbinds the address) and its
// PodElasticIP is deleted; the restarted manager releases the address and
// lets the PodElasticIP go.
func TestTencentPodDeletedWhileManagerStopped(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true})
	w.pod("gone", "10.0.1.50", hostIP1, nil)
	w.peip("gone", "gone", nil)
	id := w.waitReady("gone").Status.AllocationID
	w.stop()
	if err := w.sim.World().Remove(&core.Removals{Tencent: core.TencentRemovals{PrivateIPs: []core.TCPrivateIPFixture{
		{NetworkInterfaceID: tcENI1, PrivateIPAddresses: []string{"10.0.1.50"}}}}}); err != nil {
		t.Fatal(err)
	}
	w.deletePod("gone")
	w.delete("gone")
	if a, ok := w.tcAddress(id); !ok || a.AddressStatus != "UNBIND" {
		t.Fatalf("address %+v (found %v), want UNBIND with the pod's IP gone", a, ok)
	}
	w.startManager(nil)
	w.waitGone("gone")
	if _, ok := w.tcAddress(id); ok {
		t.Errorf("address %s still allocated", id)
	}
}

// TestTencentTranslator: aws-pod-eip-controller's annotations on a pod of
// a cluster whose default provider config is a Tencent Cloud one give an
// Auto address on Tencent Cloud (with its defaults).
func TestTencentTranslator(t *testing.T) {
	w := newWorld(t, worldOpts{tencent: true, defaultConfig: true})
	w.pod("legacy", "10.0.1.60", hostIP1, func(p *corev1.Pod) {
		p.Annotations = map[string]string{translate.Type: "auto"}
	})
	p := w.waitReady("legacy")
	if r := p.Spec.ProviderConfigReference; r == nil || r.Name != cloudv1alpha1.DefaultProviderConfigName {
		t.Errorf("providerConfigRef %+v", r)
	}
	if _, ok := w.tcAddress(p.Status.AllocationID); !ok {
		t.Errorf("no Tencent address %s", p.Status.AllocationID)
	}
	w.deletePod("legacy")
	w.waitGone("legacy")
	if n := len(w.tcAddresses()); n != 0 {
		t.Errorf("%d addresses left after the pod went, want 0", n)
	}
}
