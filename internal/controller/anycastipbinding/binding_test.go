package anycastipbinding

import (
	"slices"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/translator"
)

func instances(ids ...string) *core.Fixtures {
	f := &core.Fixtures{}
	for i, id := range ids {
		f.Tencent.Instances = append(f.Tencent.Instances, core.TCInstanceFixture{InstanceID: id, PrivateIPAddresses: []string{"10.1.0." + string(rune('1'+i))}})
	}
	return f
}

// TestEveryAddressType binds and releases each address type through a
// hand-made binding: allocated with the ownership tags and the ClientToken,
// bound (BIND confirmed), the node untainted and annotated, then on deletion
// unbound, released, and the node cleaned. The EIP case is the legacy
// controller's bug (its nodes stayed tainted forever).
func TestEveryAddressType(t *testing.T) {
	for _, typ := range []networkingv1alpha1.AnycastAddressType{networkingv1alpha1.AddressTypeAnycastEIP, networkingv1alpha1.AddressTypeHighQualityEIP, networkingv1alpha1.AddressTypeEIP} {
		t.Run(string(typ), func(t *testing.T) {
			f := newFixture(t, core.Settings{}, instances("ins-node0001"))
			name := prefix(t)
			f.node(name, "ins-node0001", false)
			f.binding(name, name, func(b *networkingv1alpha1.AnycastIPBinding) {
				b.Spec.AddressType = typ
				b.Spec.Tags = map[string]string{"team": "edge"}
			})
			b := f.converge(name, ready)
			a := f.address(b.Status.AddressID)
			if a == nil || a.AddressType != string(typ) || a.AddressStatus != "BIND" || a.InstanceID != "ins-node0001" {
				t.Fatalf("address %+v, want a BIND %s on ins-node0001", a, typ)
			}
			tags := map[string]string{}
			for _, tg := range a.Tags {
				tags[tg.Key] = tg.Value
			}
			for k, v := range map[string]string{decide.TagCluster: "cluster-" + f.cpc, decide.TagOwnerUID: string(b.UID), decide.TagNodeName: name, decide.TagInstanceID: "ins-node0001", "team": "edge"} {
				if tags[k] != v {
					t.Errorf("tag %s = %q, want %q", k, tags[k], v)
				}
			}
			if b.Status.PublicIP != a.AddressIP || b.Status.State != "BIND" || b.Status.InstanceID != "ins-node0001" || b.Status.ObservedGeneration != b.Generation {
				t.Errorf("status %+v", b.Status)
			}
			f.wantNode(name, false, a.AddressID, a.AddressIP)
			f.wantEvent(name, networkingv1alpha1.AnycastEventBound)
			if n := f.calls("AllocateAddresses"); n != 1 {
				t.Errorf("AllocateAddresses called %d times, want 1", n)
			}
			if n := f.calls("DescribeTaskResult"); n < 1 {
				t.Errorf("DescribeTaskResult never called")
			}

			f.deleteBinding(name)
			if len(f.addresses()) != 0 {
				t.Errorf("addresses left after deletion: %+v", f.addresses())
			}
			f.wantNode(name, false, "", "")
			f.wantEvent(name, networkingv1alpha1.AnycastEventReleased)
		})
	}
}

// TestAdoptByAddressID adopts an existing UNBIND address instead of
// allocating one; the binding's use of its provider config is recorded.
func TestAdoptByAddressID(t *testing.T) {
	fx := instances("ins-node0001")
	fx.Tencent.Addresses = []core.TCAddressFixture{{AddressID: "eip-adopt001", AddressType: "AnycastEIP"}}
	f := newFixture(t, core.Settings{}, fx)
	name := prefix(t)
	f.node(name, "ins-node0001", true)
	f.binding(name, name, func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-adopt001" })
	b := f.converge(name, ready)
	if b.Status.AddressID != "eip-adopt001" || b.Status.Adopted != networkingv1alpha1.AdoptedSpec {
		t.Errorf("status %+v", b.Status)
	}
	if n := f.calls("AllocateAddresses"); n != 0 {
		t.Errorf("AllocateAddresses called %d times for an adopted address", n)
	}
	f.wantNode(name, false, "eip-adopt001", f.address("eip-adopt001").AddressIP)
	f.wantUsage(b)
}

// TestLegacyAdoption migrates a node aia-ip-controller bound: its cluster
// identity ConfigMap and tags are recognised, the address is adopted (never
// re-allocated), and the node is never tainted, not even for one pass.
func TestLegacyAdoption(t *testing.T) {
	fx := instances("ins-node0001")
	name := prefix(t)
	legacyTags := map[string]string{
		networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid-" + name, networkingv1alpha1.LegacyTagClusterID: "cls-legacy",
		networkingv1alpha1.LegacyTagNodeName: name, networkingv1alpha1.LegacyTagInstanceID: "ins-node0001",
	}
	fx.Tencent.Addresses = []core.TCAddressFixture{{AddressID: "eip-legacy01", AddressType: "AnycastEIP", InstanceID: "ins-node0001", Tags: legacyTags}}
	f := newFixture(t, core.Settings{}, fx)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: LegacyNamespace, Name: networkingv1alpha1.LegacyClusterUUIDConfigMap},
		Data: map[string]string{networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid-" + name}}
	f.create(cm)
	t.Cleanup(func() { _ = env.Client.Delete(f.ctx, cm) })
	ip := f.address("eip-legacy01").AddressIP
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
		Labels:      map[string]string{networkingv1alpha1.LegacyLabelNeedAIAIP: "true"},
		Annotations: map[string]string{networkingv1alpha1.LegacyAnnotationAnycastIPID: "eip-legacy01", networkingv1alpha1.LegacyAnnotationAnycastIPAddress: ip}},
		Spec: corev1.NodeSpec{ProviderID: providerID("ins-node0001")}}
	f.create(n)
	t.Cleanup(func() { _ = env.Client.Delete(f.ctx, n) })

	f.translate(name)
	b := f.get(name)
	if b == nil || !translator.IsTranslated(b) {
		t.Fatalf("no translated binding: %v", b)
	}
	for range 5 {
		f.reconcile(name)
		f.wantNode(name, false, "eip-legacy01", ip)
	}
	b = f.get(name)
	if !ready(b) || b.Status.AddressID != "eip-legacy01" || b.Status.Adopted != networkingv1alpha1.AdoptedLegacy {
		t.Fatalf("binding %s", describe(b))
	}
	if n := f.calls("AllocateAddresses") + f.calls("AssociateAddress"); n != 0 {
		t.Errorf("%d allocate/associate calls for a legacy-bound node", n)
	}

	// An unbound address the legacy controller allocated for a node is
	// adopted too.
	if _, err := f.emu.World().ApplyFixtures(&core.Fixtures{Tencent: core.TencentFixtures{
		Instances: []core.TCInstanceFixture{{InstanceID: "ins-node0002"}},
		Addresses: []core.TCAddressFixture{{AddressID: "eip-legacy02", AddressType: "AnycastEIP", Tags: map[string]string{
			networkingv1alpha1.LegacyTagClusterUUID: "legacy-uuid-" + name, networkingv1alpha1.LegacyTagNodeName: name + "-2"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	f.node(name+"-2", "ins-node0002", true)
	f.translate(name + "-2")
	b2 := f.converge(name+"-2", ready)
	if b2.Status.AddressID != "eip-legacy02" || f.calls("AllocateAddresses") != 0 {
		t.Errorf("unbound legacy address not adopted: %s", describe(b2))
	}
}

// TestBlockedBindings covers the reasons a binding cannot progress: each is
// a Ready=False condition on the binding and a Warning Event on the node,
// which stays tainted.
func TestBlockedBindings(t *testing.T) {
	cases := map[string]struct {
		settings core.Settings
		fixtures func(*core.Fixtures)
		instance string
		mutate   func(*networkingv1alpha1.AnycastIPBinding)
		reason   string
		event    string
	}{
		"quota exceeded": {settings: core.Settings{TencentAddressQuota: 1}, instance: "ins-node0001",
			fixtures: func(fx *core.Fixtures) { fx.Tencent.Addresses = []core.TCAddressFixture{{AddressType: "EIP"}} },
			reason:   networkingv1alpha1.AnycastReasonQuotaExceeded, event: networkingv1alpha1.LegacyReasonFailedAllocate},
		"anycast not enabled": {settings: core.Settings{TencentAnycastZones: []string{}}, instance: "ins-node0001",
			reason: networkingv1alpha1.AnycastReasonAnycastNotEnabled, event: networkingv1alpha1.LegacyReasonFailedAllocate},
		"node without instance ID": {reason: networkingv1alpha1.AnycastReasonInstanceIDUnknown, event: networkingv1alpha1.LegacyReasonFailedAllocate},
		"node already has a public IP": {instance: "ins-node0001",
			fixtures: func(fx *core.Fixtures) {
				fx.Tencent.Addresses = []core.TCAddressFixture{{AddressID: "eip-wanip001", AddressType: "EIP", InstanceID: "ins-node0001"}}
			},
			reason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP, event: networkingv1alpha1.LegacyReasonFailedAllocate},
		"addressID bound elsewhere": {instance: "ins-node0001",
			fixtures: func(fx *core.Fixtures) {
				fx.Tencent.Instances = append(fx.Tencent.Instances, core.TCInstanceFixture{InstanceID: "ins-other001"})
				fx.Tencent.Addresses = []core.TCAddressFixture{{AddressID: "eip-taken001", AddressType: "AnycastEIP", InstanceID: "ins-other001"}}
			},
			mutate: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-taken001" },
			reason: networkingv1alpha1.AnycastReasonAddressInUse, event: networkingv1alpha1.LegacyReasonFailedAssociate},
		"addressID missing": {instance: "ins-node0001",
			mutate: func(b *networkingv1alpha1.AnycastIPBinding) { b.Spec.AddressID = "eip-missing1" },
			reason: networkingv1alpha1.AnycastReasonAddressNotFound, event: networkingv1alpha1.LegacyReasonFailedAllocate},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fx := instances("ins-node0001")
			if tc.fixtures != nil {
				tc.fixtures(fx)
			}
			f := newFixture(t, tc.settings, fx)
			n := prefix(t)
			f.node(n, tc.instance, true)
			f.binding(n, n, tc.mutate)
			b := f.converge(n, readyReason(tc.reason))
			if b.GetCondition(xpv2.TypeReady).Message == "" {
				t.Errorf("no message: %s", describe(b))
			}
			f.wantNode(n, true, "", "")
			f.wantEvent(n, tc.event)
			// Deleting a blocked binding releases nothing it does not own
			// and untaints the node.
			before := len(f.addresses())
			f.deleteBinding(n)
			if got := len(f.addresses()); got != before {
				t.Errorf("addresses %d -> %d after deleting a blocked binding", before, got)
			}
			f.wantNode(n, false, "", "")
		})
	}
}

// TestFailedTasks: an association task that ends FAILED is reported
// (TaskFailed) and retried; an allocation task that ends FAILED is
// retried with a new ClientToken.
func TestFailedTasks(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	if err := f.emu.World().AddFault(core.FaultSpec{Provider: "tencent", Action: "AssociateAddress", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	name := prefix(t)
	f.node(name, "ins-node0001", true)
	f.binding(name, name, nil)
	f.converge(name, readyReason(networkingv1alpha1.AnycastReasonTaskFailed))
	f.wantEvent(name, networkingv1alpha1.LegacyReasonFailedAssociate)
	b := f.converge(name, ready)
	if n := f.calls("AssociateAddress"); n != 2 {
		t.Errorf("AssociateAddress called %d times, want 2", n)
	}

	if err := f.emu.World().AddFault(core.FaultSpec{Provider: "tencent", Action: "AllocateAddresses", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	f.node(name+"-2", "ins-node0002", true)
	f.binding(name+"-2", name+"-2", nil)
	f.converge(name+"-2", readyReason(networkingv1alpha1.AnycastReasonTaskFailed))
	b2 := f.converge(name+"-2", ready)
	if b2.Annotations[AnnotationAttempt] != "1" || b2.Status.AddressID == b.Status.AddressID {
		t.Errorf("retry after a failed allocation: %s", describe(b2))
	}
	if n := len(f.addresses()); n != 2 {
		t.Errorf("%d addresses, want 2 (the failed allocation leaves none)", n)
	}
}

// TestDeferredProgress: with transitional progress left unwritten (a
// progress window longer than the test), the Binding step is not written,
// yet the next pass follows the association task it started: a FAILED
// association is still reported (TaskFailed and a Warning Event, never a
// silent retry); once the window has passed, progress is written.
func TestDeferredProgress(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	f.opts.ProgressWindow = time.Hour
	f.start()
	// The reconciler's own clock, so the test can end the progress window
	// without moving the emulator's (which would finish the tasks).
	writesClock := clocktesting.NewFakeClock(time.Now())
	f.r = newReconciler(f.mgr, f.conn, writesClock)
	if err := f.emu.World().AddFault(core.FaultSpec{Provider: "tencent", Action: "AssociateAddress", TaskFailureRate: 1, Times: 1}); err != nil {
		t.Fatal(err)
	}
	name := prefix(t)
	f.node(name, "ins-node0001", true)
	f.binding(name, name, nil)
	var written []string
	f.converge(name, func(b *networkingv1alpha1.AnycastIPBinding) bool {
		r := string(b.GetCondition(xpv2.TypeReady).Reason)
		written = append(written, r)
		return r == networkingv1alpha1.AnycastReasonTaskFailed
	})
	if slices.Contains(written, networkingv1alpha1.AnycastReasonBinding) || slices.Contains(written, string(xpv2.ReasonCreating)) {
		t.Errorf("progress was written within the progress window: %v", written)
	}
	f.wantEvent(name, networkingv1alpha1.LegacyReasonFailedAssociate)
	f.converge(name, ready)
	if n := f.calls("AssociateAddress"); n != 2 {
		t.Errorf("AssociateAddress called %d times, want 2", n)
	}

	// Progress still unwritten when the window ends is written by the
	// next pass.
	other := name + "-2"
	f.node(other, "ins-node0002", true)
	b := f.binding(other, other, nil)
	f.converge(other, func(*networkingv1alpha1.AnycastIPBinding) bool {
		u, ok := f.r.Unwritten(client.ObjectKeyFromObject(b))
		return ok && u.GetCondition(xpv2.TypeReady).Reason == networkingv1alpha1.AnycastReasonBinding
	})
	writesClock.Step(2 * time.Hour)
	f.reconcile(other)
	got := f.get(other)
	if r := got.GetCondition(xpv2.TypeReady).Reason; r != networkingv1alpha1.AnycastReasonBinding || got.Status.PendingTask == nil {
		t.Errorf("after the progress window: %s, pendingTask %+v; want Binding with the association task", describe(got), got.Status.PendingTask)
	}
	f.converge(other, ready)
}

// TestTranslatorLifecycle: a labelled node gets a translated binding owned
// by it; removing the label deletes the binding, which releases the
// address and cleans the node; a hand-made binding for the node wins.
func TestTranslatorLifecycle(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	name := prefix(t)
	f.node(name, "ins-node0001", true)
	f.translate(name)
	b := f.get(name)
	if b == nil || b.Spec.NodeName != name || b.Spec.ProviderConfigReference.Name != f.cpc || !translator.IsTranslated(b) {
		t.Fatalf("translated binding: %+v", b)
	}
	if ref := metav1.GetControllerOf(b); ref == nil || ref.Kind != "Node" || ref.Name != name {
		t.Errorf("owner %+v", ref)
	}
	b = f.converge(name, ready)
	addr := b.Status.AddressID

	// Remove the label: the translator deletes the binding.
	n := f.getNode(name)
	delete(n.Labels, networkingv1alpha1.LegacyLabelNeedAIAIP)
	if err := env.Client.Update(f.ctx, n); err != nil {
		t.Fatal(err)
	}
	f.translate(name)
	f.converge(name, gone)
	if f.address(addr) != nil {
		t.Errorf("address %s not released", addr)
	}
	f.wantNode(name, false, "", "")

	// A person's binding for a labelled node wins over the translator.
	other := name + "-2"
	f.node(other, "ins-node0002", true)
	f.binding("mine-"+other, other, nil)
	f.translate(other)
	if f.get(other) != nil {
		t.Errorf("translator created a binding next to a hand-made one")
	}
	if mine := f.get("mine-" + other); mine == nil || translator.IsTranslated(mine) {
		t.Errorf("hand-made binding touched: %+v", mine)
	}
}

// TestNodeDeletedWhileStopped: a node goes away while the manager is down;
// after the restart the translator deletes its binding and the finalizer
// releases the address. If the binding was force-removed too, the orphan
// sweep releases the address once its grace period has passed.
func TestNodeDeletedWhileStopped(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001", "ins-node0002"))
	name := prefix(t)
	f.node(name, "ins-node0001", true)
	f.translate(name)
	addr := f.converge(name, ready).Status.AddressID

	// "Stop" the manager: nothing reconciles while the node is deleted.
	if err := env.Client.Delete(f.ctx, f.getNode(name)); err != nil {
		t.Fatal(err)
	}
	f.start() // a new manager with new reconcilers
	f.translate(name)
	f.converge(name, gone)
	if f.address(addr) != nil {
		t.Errorf("address %s of the deleted node was not released", addr)
	}

	// The harder case: binding and node both gone without the finalizer
	// running (the binding's finalizer removed by hand).
	other := name + "-2"
	f.node(other, "ins-node0002", true)
	f.translate(other)
	addr2 := f.converge(other, ready).Status.AddressID
	b := f.get(other)
	b.Finalizers = nil
	if err := env.Client.Update(f.ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(f.ctx, b); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(f.ctx, f.getNode(other)); err != nil {
		t.Fatal(err)
	}
	rep, err := f.sweep.Sweep(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || f.address(addr2) == nil {
		t.Fatalf("address deleted within its grace period: %+v", rep)
	}
	f.clock.Advance(2 * f.opts.OrphanGracePeriod)
	rep, err = f.sweep.Sweep(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 1 || rep.Deleted[0].Object.ID != addr2 {
		t.Fatalf("sweep report %+v", rep)
	}
	f.clock.Advance(5 * time.Second)
	if a := f.address(addr2); a != nil {
		t.Errorf("orphan %s still exists: %+v", addr2, a)
	}
}

// TestSweepKeepsWhatIsNotOrphaned: addresses of live bindings, of live
// nodes, legacy ones and other clusters' are never deleted.
func TestSweepKeepsWhatIsNotOrphaned(t *testing.T) {
	name := prefix(t)
	fx := instances("ins-node0001")
	fx.Tencent.Addresses = []core.TCAddressFixture{
		// Another cluster's.
		{AddressID: "eip-other001", AddressType: "AnycastEIP", Tags: map[string]string{decide.TagCluster: "someone-else", decide.TagOwnerUID: "x"}},
		// This cluster's, for a node that still exists, whose binding is gone.
		{AddressID: "eip-livenode", AddressType: "AnycastEIP", Tags: map[string]string{decide.TagCluster: "cluster-" + prefix(t), decide.TagOwnerUID: "gone", decide.TagNodeName: name}},
	}
	f := newFixture(t, core.Settings{}, fx)
	f.node(name, "ins-node0001", false)
	f.clock.Advance(time.Hour)
	rep, err := f.sweep.Sweep(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || len(f.addresses()) != 2 {
		t.Errorf("sweep deleted something: %+v", rep)
	}
}

// TestOrphanPolicy: management policies without Delete keep the address
// when the binding is deleted, and the orphan sweep never releases it.
func TestOrphanPolicy(t *testing.T) {
	f := newFixture(t, core.Settings{}, instances("ins-node0001"))
	name := prefix(t)
	f.node(name, "ins-node0001", false)
	f.binding(name, name, func(b *networkingv1alpha1.AnycastIPBinding) {
		b.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate, xpv2.ManagementActionLateInitialize}
	})
	addr := f.converge(name, ready).Status.AddressID
	f.deleteBinding(name)
	if a := f.address(addr); a == nil || a.AddressStatus != "BIND" {
		t.Fatalf("address %s not kept: %+v", addr, a)
	}
	if err := env.Client.Delete(f.ctx, f.getNode(name)); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	rep, err := f.sweep.Sweep(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || len(rep.Reported) != 1 || f.address(addr) == nil {
		t.Errorf("sweep: %+v", rep)
	}
}
