package nodeelasticip_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/retry"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/testsupport/steppedclock"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// TestTranslator: a node matching the selector gets a NodeElasticIP named
// after it with the translated spec (here kubeip's FILTER and ORDER_BY and
// a taint key), owned by the node; losing the label deletes it, which
// gives the address back and cleans the node; a person's NodeElasticIP for
// a node wins over the translator's.
func TestTranslator(t *testing.T) {
	w := newWorld(t, worldOpts{addresses: poolAddresses(3), opts: func(o *nodeelasticip.Options) {
		o.PoolFilter = "Name=tag:kubeip,Values=reserved"
		o.PoolOrderBy = "Tag:priority"
		o.TaintKey = networkingv1alpha1.DefaultNodeElasticIPTaintKey
		o.KubeIPLabel = true
	}})
	node := w.node(0, true)
	n := w.waitReady(0)
	if !translator.IsTranslated(n) || len(n.OwnerReferences) != 1 || n.OwnerReferences[0].UID != node.UID {
		t.Fatalf("translated NodeElasticIP %+v", n.ObjectMeta)
	}
	if n.Spec.Allocation.Mode != networkingv1alpha1.NodeElasticIPModePool || n.Spec.Allocation.Pool.OrderBy != "Tag:priority" ||
		n.Spec.Allocation.Pool.Filters[0].Name != "tag:kubeip" || n.Spec.ProviderConfigReference.Name != w.cpc {
		t.Fatalf("translated spec %+v", n.Spec)
	}
	if n.Status.AllocationID != poolID(2) {
		t.Fatalf("claimed %s, want %s first in the pool's order", n.Status.AllocationID, poolID(2))
	}
	w.wantOnNode(0, poolID(2))
	if got := w.getNode(0).Labels[networkingv1alpha1.LegacyLabelKubeIPAssigned]; got != "203_0_113_12" {
		t.Errorf("kubip_assigned = %q, want 203_0_113_12", got)
	}

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := w.getNode(0)
		delete(cur.Labels, "edgeplane-test/want-eip")
		return w.c.Update(w.ctx, cur)
	})
	if err != nil {
		t.Fatal(err)
	}
	w.waitGone(0)
	w.wantClean(0)
	if got := w.getNode(0).Labels[networkingv1alpha1.LegacyLabelKubeIPAssigned]; got != "" {
		t.Errorf("kubip_assigned left behind: %q", got)
	}
	if a, _ := w.address(poolID(2)); a.AssociationID != "" {
		t.Errorf("the address is still associated after its NodeElasticIP went: %+v", a)
	}

	// A person's NodeElasticIP (another name) wins: none is translated.
	w.node(1, true, func(n *corev1.Node) { n.Labels["x"] = "y" })
	w.neip(1, func(n *networkingv1alpha1.NodeElasticIP) { n.Name = w.prefix + "-persons" })
	persons := &networkingv1alpha1.NodeElasticIP{}
	w.eventually("the person's NodeElasticIP Ready", func() (bool, string) {
		if err := w.c.Get(w.ctx, clientKey(w.prefix+"-persons"), persons); err != nil {
			return false, err.Error()
		}
		return persons.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue, describe(persons)
	})
	// The node was labelled before the person's object existed, so the
	// translator may have made one first: it must delete it once it sees
	// the person's, and the node keeps only the person's address.
	w.eventually("no translated NodeElasticIP next to the person's", func() (bool, string) {
		if n := w.get(1); n != nil {
			return false, "translated: " + describe(n)
		}
		return true, ""
	})
	w.wantOnNode(1, persons.Status.AllocationID)
}

// TestNodeDeletedWhileManagerStopped: the node (and its instance) go while
// the manager is down; once it is back the translator deletes the
// NodeElasticIP and its finalizer releases the address (EC2 disassociated
// it with the instance's primary interface).
func TestNodeDeletedWhileManagerStopped(t *testing.T) {
	w := newWorld(t, worldOpts{})
	node := w.node(0, true)
	id := w.waitReady(0).Status.AllocationID
	w.stop()
	if err := w.c.Delete(w.ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := w.sim.World().Remove(&core.Removals{EC2: core.EC2Removals{Instances: []string{instanceID(0)}}}); err != nil {
		t.Fatal(err)
	}
	if a, ok := w.address(id); !ok || a.AssociationID != "" {
		t.Fatalf("after the instance went: %+v (present %v); want allocated, disassociated", a, ok)
	}
	w.startManager()
	w.waitGone(0)
	if _, ok := w.address(id); ok {
		t.Errorf("address %s of a deleted node not released", id)
	}
	if got := w.calls("AllocateAddress", "OK"); got != 1 {
		t.Errorf("%d allocations, want 1", got)
	}
}

// TestOrphanSweep: in report mode the sweep lists this cluster's orphaned
// node addresses and changes nothing; in delete mode it releases the Auto
// one (disassociating it first) and gives the Pool one back; a live
// NodeElasticIP's address, another cluster's and another kind's are never
// touched; off lists nothing.
func TestOrphanSweep(t *testing.T) {
	tags := func(cluster, kind, mode string) map[string]string {
		return map[string]string{decide.TagCluster: cluster, decide.TagOwnerKind: kind, decide.TagOwnerUID: "gone-uid", decide.TagNode: "gone", decide.TagMode: mode}
	}
	w := newWorld(t, worldOpts{addresses: func(cluster string) []core.EC2AddressFixture {
		return []core.EC2AddressFixture{
			{AllocationID: poolID(0), Tags: tags(cluster, decide.OwnerKind, "Auto"), NetworkInterfaceID: eniID(5), PrivateIPAddress: primaryIP(5)},
			{AllocationID: poolID(1), Tags: func() map[string]string {
				m := tags(cluster, decide.OwnerKind, "Pool")
				m["kubeip"] = "reserved"
				return m
			}()},
			{AllocationID: poolID(2), Tags: tags("another-cluster", decide.OwnerKind, "Auto")},
			{AllocationID: poolID(3), Tags: tags(cluster, "PodElasticIP", "Auto")},
		}
	}})
	w.node(0, false)
	w.neip(0, nil)
	live := w.waitReady(0).Status.AllocationID

	sweep := func(mode orphan.Mode) orphan.Report {
		t.Helper()
		o := w.testOptions()
		o.OrphanMode, o.OrphanGracePeriod = mode, 0
		s, err := nodeelasticip.NewSweeper(env.Client, env.Client, o, w.cluster)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Sweep(w.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := sweep(orphan.ModeOff); rep.Listed != 0 {
		t.Errorf("off: listed %d", rep.Listed)
	}
	rep := sweep(orphan.ModeReport)
	if len(rep.Reported) != 2 || len(rep.Deleted) != 0 || len(w.addresses()) != 5 {
		t.Fatalf("report: reported %d deleted %d, %d addresses", len(rep.Reported), len(rep.Deleted), len(w.addresses()))
	}
	rep = sweep(orphan.ModeDelete)
	if len(rep.Deleted) != 2 || len(rep.Failed) != 0 {
		t.Fatalf("delete: deleted %+v failed %+v", rep.Deleted, rep.Failed)
	}
	if _, ok := w.address(poolID(0)); ok {
		t.Error("the orphaned Auto address was not released")
	}
	if a, ok := w.address(poolID(1)); !ok || tagMap(a.Tags)[decide.TagOwnerUID] != "" || tagMap(a.Tags)["kubeip"] != "reserved" {
		t.Errorf("the orphaned Pool address: %+v (present %v); want it kept without edgeplane's tags", a, ok)
	}
	for _, id := range []string{live, poolID(2), poolID(3)} {
		if _, ok := w.address(id); !ok {
			t.Errorf("address %s was removed", id)
		}
	}
}

// TestManagementPoliciesWithoutDelete: an address of a NodeElasticIP
// whose management policies leave out Delete is tagged deletion-policy
// Orphan, outlives it, and the sweep only reports it.
func TestManagementPoliciesWithoutDelete(t *testing.T) {
	w := newWorld(t, worldOpts{})
	w.node(0, false)
	w.neip(0, func(n *networkingv1alpha1.NodeElasticIP) {
		n.Spec.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate, xpv2.ManagementActionUpdate}
	})
	id := w.waitReady(0).Status.AllocationID
	if a, _ := w.address(id); tagMap(a.Tags)[decide.TagDeletionPolicy] != decide.DeletionPolicyOrphan {
		t.Fatalf("tags %v lack the deletion policy", tagMap(a.Tags))
	}
	w.delete(0)
	w.waitGone(0)
	if a, ok := w.address(id); !ok || a.NetworkInterfaceID != eniID(0) {
		t.Fatalf("the kept address: %+v (present %v)", a, ok)
	}
	o := w.testOptions()
	o.OrphanMode, o.OrphanGracePeriod = orphan.ModeDelete, 0
	s, err := nodeelasticip.NewSweeper(env.Client, env.Client, o, w.cluster)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Sweep(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Deleted) != 0 || len(rep.Reported) != 1 || !strings.Contains(rep.Reported[0].Decision.Reason, "keep") {
		t.Fatalf("sweep: deleted %+v reported %+v; want the kept address reported only", rep.Deleted, rep.Reported)
	}
	if _, ok := w.address(id); !ok {
		t.Fatal("the sweep released a kept address")
	}
}

// TestCredentialsRejected: when EC2 refuses the account's key every
// NodeElasticIP of it says CredentialsRejected, the account costs one
// call per backoff window (not one per object and retry), the
// ClusterProviderConfig says so too, and all recover once the key works.
func TestCredentialsRejected(t *testing.T) {
	clock := &steppedclock.Clock{}
	w := newWorld(t, worldOpts{configController: true, opts: func(o *nodeelasticip.Options) {
		o.Clock = clock
		o.CredentialBackoff = cloud.CredentialBackoff{Initial: time.Hour, Max: 4 * time.Hour}
	}})
	nodes := []int{0, 1, 2}
	for _, i := range nodes {
		w.node(i, false)
		w.neip(i, nil)
	}
	for _, i := range nodes {
		w.waitReady(i)
	}
	rejections := func() int64 {
		var sum int64
		for k, v := range w.sim.World().Stats() {
			if strings.HasPrefix(k, "ec2/") && strings.HasSuffix(k, "/"+core.EC2AuthFailure) {
				sum += v
			}
		}
		return sum
	}
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) { delete(s.EC2Credentials, core.DefaultEC2AccessKeyID) }); err != nil {
		t.Fatal(err)
	}
	// A new node makes the account call the cloud (the others are polled).
	w.node(3, false)
	w.neip(3, nil)
	w.waitReason(3, networkingv1alpha1.NodeElasticIPReasonCredentialsRejected)
	for _, i := range nodes {
		w.waitReason(i, networkingv1alpha1.NodeElasticIPReasonCredentialsRejected)
	}
	w.eventually("the config says CredentialsRejected", func() (bool, string) {
		cpc := &cloudv1alpha1.ClusterProviderConfig{}
		if err := w.c.Get(w.ctx, clientKey(w.cpc), cpc); err != nil {
			return false, err.Error()
		}
		c := cpc.GetCondition(xpv2.TypeReady)
		return c.Reason == cloudv1alpha1.ReasonCredentialsRejected, fmt.Sprintf("%s/%s", c.Status, c.Reason)
	})
	first := rejections()
	if first < 1 || first > 4 {
		t.Fatalf("%d rejected calls before the gate closed, want 1..4 (only calls in flight)", first)
	}
	// Polls and retries go on; none reaches the cloud in the window.
	start := cloud.CredentialHolds()
	w.eventually("retries held back", func() (bool, string) {
		return cloud.CredentialHolds() >= start+8, fmt.Sprint(cloud.CredentialHolds() - start)
	})
	if n := rejections(); n != first {
		t.Fatalf("%d rejected calls inside the backoff window, want %d", n, first)
	}
	// The key works again; after the window the next probe opens the
	// account and everything recovers.
	if err := w.sim.World().UpdateSettings(func(s *core.Settings) {
		s.EC2Credentials[core.DefaultEC2AccessKeyID] = core.EC2Credential{SecretAccessKey: core.DefaultEC2SecretAccessKey}
	}); err != nil {
		t.Fatal(err)
	}
	clock.Step(time.Hour)
	for _, i := range append(nodes, 3) {
		w.waitReady(i)
	}
}

// TestPoolContentionAcrossClusters: two clusters (two managers with their
// own identities) share one account's pool; every node gets a distinct
// address (EC2's association decides each race) and none is left tagged
// by a loser.
func TestPoolContentionAcrossClusters(t *testing.T) {
	a := newWorld(t, worldOpts{addresses: poolAddresses(8), instances: 8})
	b := newWorld(t, worldOpts{sharedSim: a.sim})
	for i := range 4 {
		a.node(i, false)
		b.node(i+4, false)
	}
	for i := range 4 {
		a.neip(i, pool("AllocationId"))
		b.neip(i+4, pool("AllocationId"))
	}
	got := map[string]string{}
	for i := range 4 {
		for _, w := range []*world{a, b} {
			n := w.waitReady(map[*world]int{a: i, b: i + 4}[w])
			if prev, dup := got[n.Status.AllocationID]; dup {
				t.Fatalf("%s and %s got the same address %s", prev, n.Name, n.Status.AllocationID)
			}
			got[n.Status.AllocationID] = n.Name
		}
	}
	for _, addr := range a.addresses() {
		tags := tagMap(addr.Tags)
		if addr.AssociationID == "" && tags[decide.TagOwnerUID] != "" {
			t.Errorf("unassociated %s left tagged by a lost claim: %v", addr.AllocationID, tags)
		}
	}
}
