package floatippool

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/translate"
	"github.com/edgeplane/edgeplane/internal/testsupport/testenv"
	"github.com/edgeplane/edgeplane/internal/translator"
)

const migrationConfig = `[
 {"routableSubnet":"192.168.1.0/24","ips":["10.49.27.205","10.49.27.216~10.49.27.218"],"subnet":"10.49.27.0/24","gateway":"10.49.27.1","vlan":2},
 {"nodeSubnets":["192.168.1.0/24"],"ips":["10.49.28.15~10.49.28.20"],"subnet":"10.49.28.0/24","gateway":"10.49.28.1"}
]`

// TestMigrationFromGalaxy: the ConfigMap, a galaxy Pool and a galaxy
// FloatingIP become FloatIPPools and a FloatIP; the StatefulSet pod keeps
// its IP; an entry in use that leaves the config is kept, not dropped.
func TestMigrationFromGalaxy(t *testing.T) {
	ctx := testenv.Context(t)
	c := env.Client
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "galaxy-crds.yaml")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	ensureNodes(t, ctx)
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mig"}}))
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: translate.ConfigMapNamespace, Name: translate.ConfigMapName},
		Data:       map[string]string{translate.ConfigMapKey: migrationConfig},
	}
	must(t, c.Create(ctx, cm))
	gpool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "galaxy.k8s.io/v1alpha1", "kind": "Pool",
		"metadata": map[string]any{"name": "gpool", "namespace": "kube-system"},
		"size":     int64(2), "preAllocateIP": false,
	}}
	must(t, c.Create(ctx, gpool))
	gfip := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "galaxy.k8s.io/v1alpha1", "kind": "FloatingIP",
		"metadata": map[string]any{"name": "10.49.27.216"},
		"spec": map[string]any{"key": "sts_mig_web_web-0", "attribute": `{"NodeName":"n1","Uid":"old-uid"}`,
			"policy": int64(1), "updateTime": "2026-01-02T03:04:05Z"},
	}}
	must(t, c.Create(ctx, gfip))
	t.Cleanup(func() {
		_ = c.Delete(ctx, cm)
		var pools networkingv1alpha1.FloatIPPoolList
		_ = c.List(ctx, &pools)
		for i := range pools.Items {
			p := &pools.Items[i]
			if strings.HasPrefix(p.Name, "galaxy-") || p.Name == "gpool" {
				p.Finalizers = nil
				_ = c.Update(ctx, p)
				_ = c.Delete(ctx, p)
			}
		}
		var fips networkingv1alpha1.FloatIPList
		_ = c.List(ctx, &fips)
		for i := range fips.Items {
			if strings.HasPrefix(fips.Items[i].Spec.IP, "10.49.") {
				_ = c.Delete(ctx, &fips.Items[i])
			}
		}
	})

	m := &Migrator{Client: c}
	must(t, m.Sync(ctx))

	var pool networkingv1alpha1.FloatIPPool
	must(t, c.Get(ctx, client.ObjectKey{Name: "galaxy-10-49-27-0-24-10-49-27-205"}, &pool))
	if pool.Labels[translator.LabelManagedBy] != translator.ManagedByTranslator || pool.Spec.Vlan != 2 || pool.Spec.NodeSubnets[0] != "192.168.1.0/24" {
		t.Fatalf("translated pool = %+v %+v", pool.ObjectMeta, pool.Spec)
	}
	var group networkingv1alpha1.FloatIPPool
	must(t, c.Get(ctx, client.ObjectKey{Name: "gpool"}, &group))
	if group.Spec.Size == nil || *group.Spec.Size != 2 || len(group.Spec.Ranges) != 0 {
		t.Fatalf("galaxy Pool translated to %+v", group.Spec)
	}
	var fip networkingv1alpha1.FloatIP
	must(t, c.Get(ctx, client.ObjectKey{Name: "10-49-27-216"}, &fip))
	if fip.Spec.Key != "sts_mig_web_web-0" || fip.Spec.ReleasePolicy != networkingv1alpha1.ReleasePolicyImmutable ||
		fip.Status.Phase != networkingv1alpha1.FloatIPAllocated || fip.Status.PodUID != "old-uid" || fip.Status.NodeName != "n1" || fip.Spec.Pool != pool.Name {
		t.Fatalf("migrated FloatIP = %+v %+v", fip.Spec, fip.Status)
	}
	must(t, m.Sync(ctx)) // idempotent
	admitPools(t, ctx)   // as the pool reconciler does in the manager

	// The StatefulSet pod, recreated under edgeplane, keeps its IP.
	f := &fixture{t: t, ctx: ctx, ns: "mig", ext: &Extender{Allocator: &Allocator{Reader: c, Live: c, Client: c}, Nodes: c}}
	pod := f.pod("web-0", stsOwner("web"), map[string]string{networkingv1alpha1.AnnotationReleasePolicy: "immutable"})
	if msg := f.bind(pod, "n1"); msg != "" {
		t.Fatalf("bind: %s", msg)
	}
	if a := f.annotation(pod); a != `{"common":{"ipinfos":[{"ip":"10.49.27.216/24","vlan":2,"gateway":"10.49.27.1"}]}}` {
		t.Fatalf("migrated pod got %s", a)
	}

	// The entry holding 10.49.27.216 leaves the config: the pool is deleted
	// only once the IP is free, and the FloatIP stays.
	pr := &PoolReconciler{Client: c}
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: pool.Name}}
	for range 2 {
		if _, err := pr.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	must(t, c.Get(ctx, client.ObjectKeyFromObject(cm), cm))
	cm.Data[translate.ConfigMapKey] = `[{"nodeSubnets":["192.168.1.0/24"],"ips":["10.49.28.15~10.49.28.20"],"subnet":"10.49.28.0/24","gateway":"10.49.28.1"}]`
	must(t, c.Update(ctx, cm))
	must(t, m.Sync(ctx))
	if _, err := pr.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	must(t, c.Get(ctx, client.ObjectKey{Name: pool.Name}, &pool))
	if pool.DeletionTimestamp == nil || pool.Status.Allocated != 1 {
		t.Fatalf("removed pool: deleting=%v status=%+v", pool.DeletionTimestamp != nil, pool.Status)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "10-49-27-216"}, &fip); err != nil {
		t.Fatalf("allocation dropped with the config entry: %v", err)
	}

	// A bad edit changes nothing.
	cm.Data[translate.ConfigMapKey] = `[{"ips":`
	must(t, c.Update(ctx, cm))
	must(t, m.Sync(ctx))
	if err := c.Get(ctx, client.ObjectKey{Name: "galaxy-10-49-28-0-24-10-49-28-15"}, &networkingv1alpha1.FloatIPPool{}); apierrors.IsNotFound(err) {
		t.Fatalf("a bad config edit deleted a pool")
	}
}
