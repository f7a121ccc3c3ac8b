package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/edgeplane/edgeplane/internal/cloudsim"
	"github.com/edgeplane/edgeplane/internal/cloudsim/cloudsimtest"
	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
	"github.com/edgeplane/edgeplane/internal/plugin/orphans"
)

func ownerTags(cluster, kind, uid string) map[string]string {
	return map[string]string{orphans.TagCluster: cluster, orphans.TagOwnerKind: kind, orphans.TagOwnerUID: uid}
}

func namespaced(tags map[string]string, namespace string) map[string]string {
	tags[orphans.TagNamespace] = namespace
	return tags
}

func providerConfig(kind, namespace, name, provider, region, endpoint, identity string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cloud.edgeplane.io/v1alpha1", "kind": kind,
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"provider": provider, "region": region, "endpoint": endpoint,
			"credentials": map[string]any{"source": "None"},
		},
	}}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	if identity != "" {
		_ = unstructured.SetNestedField(u.Object, identity, "spec", "clusterIdentity")
	}
	return u
}

// TestOrphans seeds the emulator with tagged addresses (no kind creates
// cloud objects on main yet), points provider configs at it, and runs
// `orphans` through the command entry point. It never deletes anything.
func TestOrphans(t *testing.T) {
	var ks corev1.Namespace
	if err := env.Client.Get(ctx(t), client.ObjectKey{Name: metav1.NamespaceSystem}, &ks); err != nil {
		t.Fatal(err)
	}
	kubeSystemUID := string(ks.UID)

	// A live CR that owns a cloud address, for the registry test below: any
	// served kind stands in for a cloud-backed one.
	owner := providerConfig("ClusterProviderConfig", "", "orphans-owner", "aws", "us-east-1", "http://127.0.0.1:1", "nobody")
	apply(t, false, []*unstructured.Unstructured{owner})
	deleteOnCleanup(t, []*unstructured.Unstructured{owner})
	if err := env.Client.Get(ctx(t), client.ObjectKeyFromObject(owner), owner); err != nil {
		t.Fatal(err)
	}
	ownerUID := string(owner.GetUID())

	emu := cloudsimtest.Start(t, cloudsim.Options{Seed: 9, Settings: core.Settings{EC2AddressQuota: 20}, Fixtures: &core.Fixtures{
		EC2: core.EC2Fixtures{Addresses: []core.EC2AddressFixture{
			{AllocationID: "eipalloc-000000000a1", PublicIP: "54.0.0.1", Tags: ownerTags("plugin-test", "PodElasticIP", "uid-gone")},
			{AllocationID: "eipalloc-000000000a2", PublicIP: "54.0.0.2", Tags: ownerTags("plugin-test", "ClusterProviderConfig", ownerUID)},
			{AllocationID: "eipalloc-000000000a3", PublicIP: "54.0.0.3", Tags: ownerTags("another-cluster", "PodElasticIP", "uid-other")},
			{AllocationID: "eipalloc-000000000a4", PublicIP: "54.0.0.4", Tags: ownerTags("plugin-test", "ClusterProviderConfig", "uid-gone-2")},
			{AllocationID: "eipalloc-000000000a5", PublicIP: "54.0.0.5", Tags: ownerTags(kubeSystemUID, "PodElasticIP", "uid-gone-3")},
			{AllocationID: "eipalloc-000000000a6", PublicIP: "54.0.0.6", Tags: ownerTags("flag-identity", "PodElasticIP", "uid-gone-4")},
			{AllocationID: "eipalloc-000000000a7", PublicIP: "54.0.0.7"},
			{AllocationID: "eipalloc-000000000a8", PublicIP: "54.0.0.8", Tags: namespaced(ownerTags(kubeSystemUID, "PodElasticIP", "uid-gone-6"), "orphans-a")},
			{AllocationID: "eipalloc-000000000a9", PublicIP: "54.0.0.9", Tags: namespaced(ownerTags(kubeSystemUID, "PodElasticIP", "uid-gone-7"), "orphans-b")},
		}},
		Tencent: core.TencentFixtures{Addresses: []core.TCAddressFixture{
			{AddressID: "eip-tc000001", AddressIP: "43.0.0.1", AddressType: "AnycastEIP", Tags: ownerTags("plugin-test-tc", "AnycastIPBinding", "uid-gone-5")},
			{AddressID: "eip-tc000002", AddressIP: "43.0.0.2", AddressType: "AnycastEIP", Tags: map[string]string{orphans.TagCluster: "plugin-test-tc"}},
			{AddressID: "eip-tc000003", AddressIP: "43.0.0.3", AddressType: "EIP"},
		}},
	}})
	before := emu.World().Snapshot()

	for _, ns := range []string{"orphans-a"} {
		if err := env.Client.Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	configs := []*unstructured.Unstructured{
		providerConfig("ClusterProviderConfig", "", "orphans-aws", "aws", "us-east-1", emu.URL(), "plugin-test"),
		providerConfig("ClusterProviderConfig", "", "orphans-tc", "tencentcloud", "ap-guangzhou", emu.URL(), "plugin-test-tc"),
		// No clusterIdentity: the kube-system UID, or --cluster-name.
		providerConfig("ProviderConfig", "orphans-a", "tenant", "aws", "us-east-1", emu.URL(), ""),
	}
	apply(t, false, configs)
	deleteOnCleanup(t, configs)

	rows := func(t *testing.T, out string) map[string]string {
		t.Helper()
		got := map[string]string{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			if len(f) > 3 && (strings.HasPrefix(f[2], "eip")) {
				got[f[2]] = f[0] + " " + strings.Join(f[3:], " ")
			}
		}
		return got
	}

	// The tenant's config points at the emulator: the manager's
	// --tenant-endpoints must allow it, here as there.
	allow := "--tenant-endpoints=" + emu.URL()
	t.Run("all namespaces", func(t *testing.T) {
		// orphans-owner points at a closed port: reported as an error, the
		// other configs are still listed.
		r := run(t, "", "orphans", "-A", allow)
		if r.code != ExitError || !strings.Contains(r.errOut, "ClusterProviderConfig/orphans-owner:") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and an error about orphans-owner", r.code, r.errOut)
		}
		got := rows(t, r.out)
		want := map[string]string{
			"eipalloc-000000000a1": "ClusterProviderConfig/orphans-aws 54.0.0.1 PodElasticIP/uid-gone orphaned: no object with UID uid-gone exists (mode report) <unknown>",
			"eipalloc-000000000a2": "ClusterProviderConfig/orphans-aws 54.0.0.2 ClusterProviderConfig/" + ownerUID + " orphaned, but not deletable: owner kind ClusterProviderConfig is not a cloud-backed kind this plugin knows <unknown>",
			"eipalloc-000000000a4": "ClusterProviderConfig/orphans-aws 54.0.0.4 ClusterProviderConfig/uid-gone-2 orphaned, but not deletable: owner kind ClusterProviderConfig is not a cloud-backed kind this plugin knows <unknown>",
			"eip-tc000001":         "ClusterProviderConfig/orphans-tc 43.0.0.1 AnycastIPBinding/uid-gone-5 orphaned: no object with UID uid-gone-5 exists (mode report)",
			"eip-tc000002":         "ClusterProviderConfig/orphans-tc 43.0.0.2 <none> orphaned, but lacks an owner UID tag, so it is never deleted",
			// In a tenant's account only its namespace's addresses may be
			// deleted: one without a namespace tag, or another tenant's, is
			// only reported.
			"eipalloc-000000000a5": "ProviderConfig/orphans-a/tenant 54.0.0.5 PodElasticIP/uid-gone-3 orphaned, but not deletable: not tagged edgeplane.io/namespace=orphans-a: the sweep of this tenant's account never touches it <unknown>",
			"eipalloc-000000000a8": "ProviderConfig/orphans-a/tenant 54.0.0.8 PodElasticIP/uid-gone-6 orphaned: no object with UID uid-gone-6 exists (mode report) <unknown>",
			"eipalloc-000000000a9": "ProviderConfig/orphans-a/tenant 54.0.0.9 PodElasticIP/uid-gone-7 orphaned, but not deletable: not tagged edgeplane.io/namespace=orphans-a: the sweep of this tenant's account never touches it <unknown>",
		}
		// Tencent ages vary with the clock: compare without the AGE column.
		for id, row := range got {
			if strings.HasPrefix(id, "eip-tc") {
				got[id] = row[:strings.LastIndex(row, " ")]
			}
		}
		if diff := cmpDiff(want, got); diff != "" {
			t.Errorf("rows (-want +got):\n%s\noutput:\n%s", diff, r.out)
		}
		if !strings.Contains(r.out, "8 orphaned, 0 unowned within the grace period") {
			t.Errorf("summary missing:\n%s", r.out)
		}
	})
	t.Run("namespace and cluster name", func(t *testing.T) {
		r := run(t, "", "orphans", "-n", "orphans-a", "--cluster-name", "flag-identity", "-o", "wide", allow)
		got := rows(t, r.out)
		if _, ok := got["eipalloc-000000000a6"]; !ok || len(got) != 6 {
			t.Errorf("with --cluster-name the tenant's config uses that identity; rows %v\n%s", got, r.out)
		}
		if !strings.Contains(r.out, "ACTION") || !strings.Contains(r.out, "Report") {
			t.Errorf("-o wide lacks the ACTION column:\n%s", r.out)
		}
		r = run(t, "", "orphans", allow)
		if strings.Contains(r.out, "ProviderConfig/orphans-a/tenant") {
			t.Errorf("without -A or -n orphans-a, the tenant's ProviderConfig is listed:\n%s", r.out)
		}
	})
	t.Run("tenant endpoint not allowed", func(t *testing.T) {
		// As in the manager, a tenant's config at an endpoint the admin
		// does not allow is never used: an error, its account not listed.
		r := run(t, "", "orphans", "-n", "orphans-a")
		if r.code != ExitError || !strings.Contains(r.errOut, "ProviderConfig/orphans-a/tenant:") || !strings.Contains(r.errOut, "not allowed for a tenant") {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and the tenant's config refused", r.code, r.errOut)
		}
		if strings.Contains(r.out, "ProviderConfig/orphans-a/tenant") {
			t.Errorf("the refused config's account was listed:\n%s", r.out)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := run(t, "", "orphans", "-A", "--grace-period", "1h", "-o", "json", allow)
		var doc struct {
			Items []orphans.Finding `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.out)
		}
		actions := map[string]string{}
		for _, f := range doc.Items {
			actions[f.AddressID] = f.Action
		}
		// AWS gives no creation time: within the grace period; Tencent's
		// addresses were created just now: within it too.
		for _, id := range []string{"eipalloc-000000000a1", "eip-tc000001"} {
			if actions[id] != "Keep" {
				t.Errorf("%s: action %q with a 1h grace period, want Keep (%v)", id, actions[id], actions)
			}
		}
	})
	t.Run("owner registry", func(t *testing.T) {
		dyn, err := dynamic.NewForConfig(env.Config)
		if err != nil {
			t.Fatal(err)
		}
		reg := append(orphans.OwnerKinds(), orphans.OwnerKind{Kind: "ClusterProviderConfig", Resource: cpcGVK.GroupVersion().WithResource("clusterproviderconfigs")})
		found, err := orphans.Report(ctx(t), orphans.Options{Client: env.Client, Dynamic: dyn, OwnerKinds: reg, Namespace: "orphans-a"})
		if err == nil {
			t.Error("want the error of the unreachable config")
		}
		got := map[string]string{}
		for _, f := range found {
			got[f.AddressID] = f.Reason
		}
		if _, listed := got["eipalloc-000000000a2"]; listed {
			t.Errorf("an address whose owner exists is listed: %v", got)
		}
		if want := "orphaned: no object with UID uid-gone-2 exists (mode report)"; got["eipalloc-000000000a4"] != want {
			t.Errorf("eipalloc-000000000a4: %q, want %q", got["eipalloc-000000000a4"], want)
		}
	})

	// Read-only: the cloud is exactly as seeded.
	after := emu.World().Snapshot()
	if diff := cmpDiff(before.EC2.Addresses, after.EC2.Addresses); diff != "" {
		t.Errorf("EC2 addresses changed:\n%s", diff)
	}
	if diff := cmpDiff(before.Tencent.Addresses, after.Tencent.Addresses); diff != "" {
		t.Errorf("Tencent addresses changed:\n%s", diff)
	}
}
