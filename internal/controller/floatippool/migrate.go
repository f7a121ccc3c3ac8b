package floatippool

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/translate"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Galaxy's kinds, read as unstructured objects so that a cluster without
// galaxy's CRDs needs nothing.
var (
	galaxyPoolList = schema.GroupVersionKind{Group: "galaxy.k8s.io", Version: "v1alpha1", Kind: "PoolList"}
	galaxyFIPList  = schema.GroupVersionKind{Group: "galaxy.k8s.io", Version: "v1alpha1", Kind: "FloatingIPList"}
)

// Event reasons of the migration.
const (
	reasonInvalidConfig     = "InvalidFloatingIPConfig"
	reasonMigrationConflict = "MigrationConflict"
	reasonMigrated          = "Migrated"
)

// galaxy-ipam's ConfigMap and Pools live in kube-system; its FloatingIPs are
// cluster-scoped. All read-only. The FloatIPPools translated from them are
// created here, and deleted when their entry leaves the config.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=floatippools,verbs=create;delete
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,verbs=get
// +kubebuilder:rbac:groups=galaxy.k8s.io,namespace=kube-system,resources=pools,verbs=get;list
// +kubebuilder:rbac:groups=galaxy.k8s.io,resources=floatingips,verbs=get;list

// Migrator translates galaxy-ipam's configuration and allocations into
// FloatIPPools and FloatIPs (see package translate): the
// kube-system/floatingip-config ConfigMap, galaxy Pools and galaxy
// FloatingIPs. Like galaxy, it polls (every Interval); unlike galaxy, a pool
// removed from the config is deleted only through its finalizer, so IPs in
// use are kept and reported, never dropped.
type Migrator struct {
	// Client writes the CRs; Reader reads the ConfigMap and galaxy's objects
	// (default Client; the manager passes its API reader so no ConfigMap
	// informer is started).
	Client   client.Client
	Reader   client.Reader
	Recorder events.EventRecorder
	Interval time.Duration
}

// NeedLeaderElection: one replica migrates.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start syncs at once and then every Interval until ctx ends.
func (m *Migrator) Start(ctx context.Context) error {
	interval := m.Interval
	if interval <= 0 {
		interval = time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := m.Sync(ctx); err != nil {
			log.FromContext(ctx).Error(err, "Migrating galaxy-ipam objects failed; retrying at the next poll")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Sync runs one migration pass.
func (m *Migrator) Sync(ctx context.Context) error {
	pools, err := m.syncConfigMap(ctx)
	if err != nil {
		return err
	}
	if err := m.syncGalaxyPools(ctx); err != nil {
		return err
	}
	return m.syncGalaxyFloatingIPs(ctx, pools)
}

func (m *Migrator) reader() client.Reader {
	if m.Reader != nil {
		return m.Reader
	}
	return m.Client
}

func (m *Migrator) event(obj client.Object, typ, reason, note string, args ...any) {
	if m.Recorder != nil {
		m.Recorder.Eventf(obj, nil, typ, reason, "Migrate", note, args...)
	}
}

// syncConfigMap translates the config into pools and deletes the pools of
// entries that left it. It returns the config's pools (nil without config).
func (m *Migrator) syncConfigMap(ctx context.Context) ([]translate.Pool, error) {
	var cm corev1.ConfigMap
	err := m.reader().Get(ctx, client.ObjectKey{Namespace: translate.ConfigMapNamespace, Name: translate.ConfigMapName}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s/%s: %w", translate.ConfigMapNamespace, translate.ConfigMapName, err)
	}
	data, ok := cm.Data[translate.ConfigMapKey]
	if !ok {
		return nil, nil
	}
	pools, err := translate.PoolsFromConfig(data)
	if err != nil {
		// A bad edit changes nothing: the pools keep their last good spec.
		m.event(&cm, corev1.EventTypeWarning, reasonInvalidConfig, "Ignored the float-IP config: %v", err)
		return nil, nil
	}
	want := map[string]bool{}
	for _, p := range pools {
		want[p.Name] = true
		spec := p.Spec
		if _, err := translator.Ensure(ctx, m.Client, m.Recorder, &cm, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: p.Name}},
			func(o *networkingv1alpha1.FloatIPPool) error {
				// Keep what the config does not carry (size, policy, TTL, ...).
				o.Spec.Ranges, o.Spec.Subnet, o.Spec.Gateway, o.Spec.Vlan, o.Spec.NodeSubnets = spec.Ranges, spec.Subnet, spec.Gateway, spec.Vlan, spec.NodeSubnets
				if o.Spec.ReleasePolicy == "" {
					o.Spec.ReleasePolicy = networkingv1alpha1.ReleasePolicyDefault
				}
				return nil
			}); err != nil {
			return nil, err
		}
	}
	key, err := translator.SourceKey(m.Client.Scheme(), &cm)
	if err != nil {
		return nil, err
	}
	var existing networkingv1alpha1.FloatIPPoolList
	if err := m.Client.List(ctx, &existing, client.MatchingLabels{translator.LabelTranslatedFromKind: "ConfigMap"}); err != nil {
		return nil, fmt.Errorf("listing translated FloatIPPools: %w", err)
	}
	for i := range existing.Items {
		p := &existing.Items[i]
		if from, _ := translator.TranslatedFrom(p); from != key || want[p.Name] {
			continue
		}
		// Its finalizer keeps it while IPs are in use; its status says so.
		if _, err := translator.Delete(ctx, m.Client, m.Recorder, &cm, p); err != nil {
			return nil, err
		}
	}
	return pools, nil
}

// syncGalaxyPools translates galaxy Pools (kube-system) into sharing groups.
func (m *Migrator) syncGalaxyPools(ctx context.Context) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(galaxyPoolList)
	if err := m.reader().List(ctx, list, client.InNamespace(translate.ConfigMapNamespace)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil // galaxy's CRDs are not installed
		}
		return fmt.Errorf("listing galaxy Pools: %w", err)
	}
	for i := range list.Items {
		src := &list.Items[i]
		size, _, _ := unstructured.NestedInt64(src.Object, "size")
		pre, _, _ := unstructured.NestedBool(src.Object, "preAllocateIP")
		p := translate.PoolFromGalaxyPool(src.GetName(), int32(min(max(size, 0), 1<<30)), pre) //nolint:gosec // bounded
		if _, err := translator.Ensure(ctx, m.Client, m.Recorder, src, &networkingv1alpha1.FloatIPPool{ObjectMeta: metav1.ObjectMeta{Name: p.Name}},
			func(o *networkingv1alpha1.FloatIPPool) error {
				o.Spec.Size, o.Spec.PreAllocate = p.Spec.Size, p.Spec.PreAllocate
				return nil
			}); err != nil {
			return err
		}
	}
	return nil
}

// syncGalaxyFloatingIPs creates a FloatIP for every galaxy FloatingIP that
// has none, with the same key, policy, node and pod UID, so no pod changes
// IP. FloatIPs are never deleted here: after migration galaxy goes away, its
// allocations stay.
func (m *Migrator) syncGalaxyFloatingIPs(ctx context.Context, pools []translate.Pool) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(galaxyFIPList)
	if err := m.reader().List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("listing galaxy FloatingIPs: %w", err)
	}
	if len(pools) == 0 {
		var all networkingv1alpha1.FloatIPPoolList
		if err := m.Client.List(ctx, &all); err != nil {
			return fmt.Errorf("listing FloatIPPools: %w", err)
		}
		for _, p := range all.Items {
			pools = append(pools, translate.Pool{Name: p.Name, Spec: p.Spec})
		}
	}
	slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int {
		return a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time)
	})
	for i := range list.Items {
		src := &list.Items[i]
		key, _, _ := unstructured.NestedString(src.Object, "spec", "key")
		attr, _, _ := unstructured.NestedString(src.Object, "spec", "attribute")
		policy, _, _ := unstructured.NestedInt64(src.Object, "spec", "policy")
		updated, _, _ := unstructured.NestedString(src.Object, "spec", "updateTime")
		ut, _ := time.Parse(time.RFC3339Nano, updated)
		_, reserved := src.GetLabels()[networkingv1alpha1.LabelFloatIPReserved]
		f, err := translate.FloatIPFromGalaxy(translate.GalaxyFloatingIP{
			Name: src.GetName(), Key: key, Attribute: attr, Policy: int(policy), UpdateTime: ut, Reserved: reserved,
		}, pools)
		if err != nil {
			m.event(src, corev1.EventTypeWarning, reasonMigrationConflict, "Not migrated: %v", err)
			continue
		}
		if err := m.ensureFloatIP(ctx, src, f); err != nil {
			return err
		}
	}
	return nil
}

func (m *Migrator) ensureFloatIP(ctx context.Context, src client.Object, f *networkingv1alpha1.FloatIP) error {
	var existing networkingv1alpha1.FloatIP
	err := m.Client.Get(ctx, client.ObjectKey{Name: f.Name}, &existing)
	if err == nil {
		if existing.Spec.Key != f.Spec.Key {
			m.event(src, corev1.EventTypeWarning, reasonMigrationConflict, "FloatIP %s already holds the IP for %s, not %s", f.Name, existing.Spec.Key, f.Spec.Key)
		}
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("getting FloatIP %s: %w", f.Name, err)
	}
	key, err := translator.SourceKey(m.Client.Scheme(), src)
	if err != nil {
		return err
	}
	f.Labels[translator.LabelManagedBy] = translator.ManagedByTranslator
	f.Labels[translator.LabelTranslatedFromKind] = src.GetObjectKind().GroupVersionKind().Kind
	f.Annotations = map[string]string{translator.AnnotationTranslatedFrom: key}
	stampFIPWrite(f) // the holder galaxy recorded, written with the IP
	if err := m.Client.Create(ctx, f); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // allocated meanwhile; the next poll reports a conflict if any
		}
		return fmt.Errorf("creating FloatIP %s: %w", f.Name, err)
	}
	m.event(src, corev1.EventTypeNormal, reasonMigrated, "Migrated to FloatIP %s", f.Name)
	return nil
}
