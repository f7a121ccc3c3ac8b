package podelasticip_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/tenancy"
	"github.com/edgeplane/edgeplane/internal/tenancy/tenancytest"
)

// TestTenantSweepTouchesOnlyItsNamespace is issue 17's test. One tenant
// account (an emulator no ClusterProviderConfig points at) holds, besides
// this tenant's own orphan, orphans of another cluster, of another tenant
// of this cluster, one this tenant's PodElasticIPs allocated before
// addresses carried their namespace, and a person's untagged address. The
// tenant's ProviderConfig is the only config of this cluster's own for
// that account; a second tenant's config, stored before the CRD refused
// clusterIdentity, names the other cluster to steer the sweep onto its
// addresses. In every mode (off, report, delete) the sweep handles the
// tenant's own orphan per mode and never changes any other address.
func TestTenantSweepTouchesOnlyItsNamespace(t *testing.T) {
	const (
		own          = "eipalloc-0000000000000c01"
		otherCluster = "eipalloc-0000000000000c02"
		otherTenant  = "eipalloc-0000000000000c03"
		beforeTags   = "eipalloc-0000000000000c04"
		persons      = "eipalloc-0000000000000c05"
		otherTenantB = "tenant-b"
	)
	// The world's own ClusterProviderConfig points at another emulator: the
	// admin's account, which holds nothing here.
	w := newWorld(t, worldOpts{noManager: true})
	orphaned := func(cluster, namespace string) map[string]string {
		tags := map[string]string{decide.TagCluster: cluster, decide.TagOwnerKind: decide.OwnerKind, decide.TagOwnerUID: "gone-" + cluster + "-" + namespace,
			decide.TagPod: cmp.Or(namespace, w.ns) + "/web-0", decide.TagMode: string(networkingv1alpha1.PodElasticIPModeAuto)}
		if namespace != "" {
			tags[decide.TagNamespace] = namespace
		}
		return tags
	}
	account := cloudsimtest.Start(t, cloudsim.Options{Seed: 7, Settings: core.Settings{EC2AddressQuota: 100, RateLimitsDisabled: true},
		Fixtures: &core.Fixtures{EC2: core.EC2Fixtures{Addresses: []core.EC2AddressFixture{
			{AllocationID: own, Tags: orphaned(w.cluster, w.ns)},
			{AllocationID: otherCluster, Tags: orphaned(tenancytest.OtherCluster, w.ns)},
			{AllocationID: otherTenant, Tags: orphaned(w.cluster, otherTenantB)},
			{AllocationID: beforeTags, Tags: orphaned(w.cluster, "")},
			{AllocationID: persons, Tags: map[string]string{"Name": "a person's"}},
		}}}})
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, a := range account.World().Snapshot().EC2.Addresses {
			out[a.AllocationID] = fmt.Sprintf("%s %v %s", a.PublicIP, tagMap(a.Tags), a.AssociationID)
		}
		return out
	}
	before := snapshot()

	// The tenant's config; a second tenant's, stored before the CRD refused
	// clusterIdentity, names the other cluster to steer the sweep.
	atAccount := func(s *cloudv1alpha1.ProviderConfigSpec) {
		s.Endpoint, s.Credentials = account.URL(), cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
	}
	tenant := tenancytest.AWSConfig(w.ns, "account", atAccount)
	if err := w.c.Create(w.ctx, tenant); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), tenant) })
	steering := w.ns + "-steer"
	if err := w.c.Create(w.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: steering}}); err != nil {
		t.Fatal(err)
	}
	steer := tenancytest.AWSConfig(steering, "account", func(s *cloudv1alpha1.ProviderConfigSpec) {
		atAccount(s)
		s.ClusterIdentity = tenancytest.OtherCluster
	})
	env.CreateBypassingRules(t, steer, "clusterIdentity")
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), steer) })

	allowAccount, err := tenancy.NewPolicy([]string{account.URL()})
	if err != nil {
		t.Fatal(err)
	}
	sweep := func(mode orphan.Mode) orphan.Report {
		t.Helper()
		o := testOptions()
		o.OrphanGracePeriod = 0
		o.OrphanMode = mode
		s, err := podelasticip.NewSweeper(env.Client, env.Client, o, setup.Config{ClusterName: w.cluster, Tenancy: allowAccount})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Sweep(w.ctx)
		if err != nil {
			t.Fatalf("sweep in mode %s: %v", mode, err)
		}
		return rep
	}
	ids := func(fs []orphan.Finding) string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Object.ID)
		}
		return strings.Join(out, ",")
	}
	unchanged := func(mode orphan.Mode, except ...string) {
		t.Helper()
		after := snapshot()
		for id, was := range before {
			if slices.Contains(except, id) {
				continue
			}
			if now, ok := after[id]; !ok || now != was {
				t.Errorf("mode %s changed %s: was %s, now %s (present %v)", mode, id, was, now, ok)
			}
		}
	}

	rep := sweep(orphan.ModeOff)
	if len(rep.Found()) != 0 {
		t.Errorf("mode off found %s", ids(rep.Found()))
	}
	unchanged(orphan.ModeOff)

	rep = sweep(orphan.ModeReport)
	if got := ids(rep.Reported); got != own || len(rep.Deleted) != 0 || len(rep.Failed) != 0 {
		t.Errorf("mode report: reported %q, deleted %q, failed %q; want only %s reported", got, ids(rep.Deleted), ids(rep.Failed), own)
	}
	unchanged(orphan.ModeReport)

	rep = sweep(orphan.ModeDelete)
	if got := ids(rep.Deleted); got != own || len(rep.Reported) != 0 || len(rep.Failed) != 0 {
		t.Errorf("mode delete: deleted %q, reported %q, failed %q; want only %s deleted", got, ids(rep.Reported), ids(rep.Failed), own)
	}
	if _, ok := snapshot()[own]; ok {
		t.Errorf("the tenant's own orphan %s was not released", own)
	}
	unchanged(orphan.ModeDelete, own)
}

// TestProviderConfigNotAllowedForTenant: a PodElasticIP whose ProviderConfig
// sets an endpoint the manager does not allow tenants is Ready=False
// ProviderConfigNotAllowed, with a CannotConnectToProvider Event, and the
// emulator behind that endpoint never sees a request.
func TestProviderConfigNotAllowedForTenant(t *testing.T) {
	w := newWorld(t, worldOpts{}) // no --tenant-endpoints
	pc := tenancytest.AWSConfig(w.ns, "tenant", func(s *cloudv1alpha1.ProviderConfigSpec) {
		s.Endpoint, s.Credentials = w.sim.URL(), cloudv1alpha1.ProviderConfigCredentials{Source: cloudv1alpha1.CredentialsNone}
	})
	if err := w.c.Create(w.ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), pc) })
	w.pod("tenant-0", "10.0.1.95", hostIP1, nil)
	w.peip("tenant-0", "tenant-0", func(p *networkingv1alpha1.PodElasticIP) {
		p.Spec.ProviderConfigReference = &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ProviderConfigKind, Name: "tenant"}
	})
	p := w.waitReason("tenant-0", networkingv1alpha1.PodElasticIPReasonProviderConfigNotAllowed)
	if c := p.GetCondition(xpv2.TypeReady); c.Status != corev1.ConditionFalse || !strings.Contains(c.Message, "is not one the cluster admin allows") {
		t.Errorf("Ready = %s %q; want False naming the endpoint rule", c.Status, c.Message)
	}
	w.eventually("a CannotConnectToProvider Event", func() (bool, string) {
		var evs eventsv1.EventList
		if err := w.c.List(w.ctx, &evs, client.InNamespace(w.ns)); err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "tenant-0" && e.Reason == "CannotConnectToProvider" && strings.Contains(e.Note, "not allowed for a tenant") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})
	var calls int64
	for k, n := range w.sim.World().Stats() {
		if strings.HasPrefix(k, "ec2/") {
			calls += n
		}
	}
	if calls != 0 {
		t.Errorf("the emulator behind the refused endpoint saw %d EC2 calls: %v", calls, w.sim.World().Stats())
	}
}
