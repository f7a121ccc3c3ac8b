package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/status"
)

// PoolReconciler keeps a FloatIPPool's status (capacity, usage, conditions),
// pre-allocates its IPs, and holds its deletion while IPs are in use.
type PoolReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Metrics  *Metrics
	// Live lists FloatIPs before pre-allocating, so a lagging cache never
	// pre-allocates twice (default Client).
	Live client.Reader
}

// Reconcile reconciles one pool.
func (r *PoolReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var pool networkingv1alpha1.FloatIPPool
	if err := r.Client.Get(ctx, req.NamespacedName, &pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pool.DeletionTimestamp == nil && controllerutil.AddFinalizer(&pool, networkingv1alpha1.FloatIPPoolFinalizer) {
		if err := r.Client.Update(ctx, &pool); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer to FloatIPPool %s: %w", pool.Name, err)
		}
		return ctrl.Result{}, nil
	}
	before := pool.DeepCopy()

	views, err := loadPools(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	var v *poolView
	for _, x := range views {
		if x.name() == pool.Name {
			v = x
		}
	}
	if v == nil {
		v = parsePool(&pool)
	}
	// The pool's FloatIPs, plus (for a sharing group) the reservations keyed
	// to it; read-only, so not copied out of the cache.
	var fips networkingv1alpha1.FloatIPList
	if err := r.Client.List(ctx, &fips, client.MatchingFields{fieldPool: pool.Name}, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing FloatIPs: %w", err)
	}
	if len(pool.Spec.Ranges) == 0 || pool.DeletionTimestamp != nil {
		var all networkingv1alpha1.FloatIPList
		if err := r.Client.List(ctx, &all, client.UnsafeDisableDeepCopy); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing FloatIPs: %w", err)
		}
		fips.Items = fips.Items[:0]
		for _, f := range all.Items {
			if f.Spec.Pool == pool.Name || strings.HasPrefix(f.Spec.Key, ipam.PoolPrefix(pool.Name)) {
				fips.Items = append(fips.Items, f)
			}
		}
	}

	if pool.DeletionTimestamp != nil {
		return r.reconcileDelete(ctx, &pool, fips.Items)
	}
	if pool.Spec.PreAllocate && pool.Spec.Size != nil && v.err == nil {
		var live client.Reader = r.Client
		if r.Live != nil {
			live = r.Live
		}
		var current networkingv1alpha1.FloatIPList
		if err := live.List(ctx, &current); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing FloatIPs: %w", err)
		}
		if err := r.preAllocate(ctx, &pool, views, current.Items); err != nil {
			return ctrl.Result{}, err
		}
		fips = current
	}
	deadlocked, err := r.deadlockedDeployments(ctx, &pool, fips.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	status.MarkUnknownIfMissing(&pool, "Reconciling", "The pool has not been reconciled yet", networkingv1alpha1.FloatIPTypeReady)
	computePoolStatus(&pool, v, fips.Items, deadlocked)
	r.Metrics.setPool(pool.Name, pool.Status.Total, pool.Status.Allocated, pool.Status.Reserved, pool.Status.Available)
	status.ObserveGeneration(&pool)
	return status.Patch(ctx, r.Client, before, &pool)
}

// reconcileDelete frees the pool's unused reservations and removes the
// finalizer once no IP of the pool is allocated.
func (r *PoolReconciler) reconcileDelete(ctx context.Context, pool *networkingv1alpha1.FloatIPPool, fips []networkingv1alpha1.FloatIP) (ctrl.Result, error) {
	inUse := 0
	prefix := ipam.PoolPrefix(pool.Name)
	for i := range fips {
		f := &fips[i]
		if f.Spec.Pool != pool.Name && f.Spec.Key != prefix {
			continue
		}
		if f.Spec.Key == prefix || (f.Spec.Pool == pool.Name && f.Status.Phase == networkingv1alpha1.FloatIPReserved && f.Status.PodUID == "" && !isAdminReserved(f)) {
			if err := r.Client.Delete(ctx, f.DeepCopy()); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("releasing reserved FloatIP %s of deleted pool %s: %w", f.Name, pool.Name, err)
			}
			continue
		}
		if f.Spec.Pool == pool.Name {
			inUse++
		}
	}
	if inUse > 0 {
		before := pool.DeepCopy()
		v := parsePool(pool)
		computePoolStatus(pool, v, fips, nil)
		return status.Patch(ctx, r.Client, before, pool)
	}
	if controllerutil.RemoveFinalizer(pool, networkingv1alpha1.FloatIPPoolFinalizer) {
		if err := r.Client.Update(ctx, pool); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("removing finalizer from FloatIPPool %s: %w", pool.Name, err)
		}
	}
	return ctrl.Result{}, nil
}

// preAllocate creates size - held FloatIPs keyed pool__<pool>_ (policy
// Never), from the pool's own ranges, or for a sharing group from every
// pool with ranges in turn.
func (r *PoolReconciler) preAllocate(ctx context.Context, pool *networkingv1alpha1.FloatIPPool, views []*poolView, fips []networkingv1alpha1.FloatIP) error {
	prefix := ipam.PoolPrefix(pool.Name)
	var held int64
	for _, f := range fips {
		if len(f.Spec.Key) >= len(prefix) && f.Spec.Key[:len(prefix)] == prefix {
			held++
		}
	}
	need := int64(*pool.Spec.Size) - held
	if need <= 0 {
		return nil
	}
	used := usedIPs(fips)
	for _, v := range views {
		if need == 0 {
			break
		}
		if v.err != nil || !v.hasRanges() || (len(pool.Spec.Ranges) > 0 && v.name() != pool.Name) {
			continue
		}
		// A sharing group draws from the pools that serve the same
		// namespaces: those without a selector, or with its selector.
		if len(pool.Spec.Ranges) == 0 && v.pool.Spec.NamespaceSelector != nil &&
			!equality.Semantic.DeepEqual(v.pool.Spec.NamespaceSelector, pool.Spec.NamespaceSelector) {
			continue
		}
		var cerr error
		v.set.Each(func(ip netip.Addr) bool {
			if used[ip] {
				return true
			}
			used[ip] = true
			f := newFloatIP(ip, v, prefix, networkingv1alpha1.ReleasePolicyNever)
			if err := r.Client.Create(ctx, f); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return true
				}
				cerr = fmt.Errorf("pre-allocating %s for pool %s: %w", ip, pool.Name, err)
				return false
			}
			before := f.DeepCopy()
			f.Status.Phase = networkingv1alpha1.FloatIPReserved
			setFIPReady(f)
			if err := r.Client.Status().Patch(ctx, f, client.MergeFrom(before)); err != nil {
				cerr = fmt.Errorf("marking pre-allocated %s reserved: %w", ip, err)
				return false
			}
			need--
			return need > 0
		})
		if cerr != nil {
			return cerr
		}
	}
	if need > 0 {
		log.FromContext(ctx).Info("Not enough free IPs to pre-allocate the pool", "pool", pool.Name, "missing", need)
	}
	return nil
}

// deadlockedDeployments lists Deployments that use the pool with a retaining
// policy and would deadlock on their rolling update.
func (r *PoolReconciler) deadlockedDeployments(ctx context.Context, pool *networkingv1alpha1.FloatIPPool, fips []networkingv1alpha1.FloatIP) ([]string, error) {
	users := map[string]bool{} // ns/name of Deployments holding IPs of this pool
	for _, f := range fips {
		if f.Spec.Pool != pool.Name {
			continue
		}
		k, err := ipam.ParseKey(f.Spec.Key)
		if err != nil || k.AppType() != ipam.AppDeployment {
			continue
		}
		users[k.Namespace+"/"+k.AppName] = true
	}
	var deps appsv1.DeploymentList
	if err := r.Client.List(ctx, &deps); err != nil {
		return nil, fmt.Errorf("listing deployments: %w", err)
	}
	var out []string
	for i := range deps.Items {
		d := &deps.Items[i]
		a := d.Spec.Template.Annotations
		named := a[networkingv1alpha1.AnnotationENIIPPool] == pool.Name
		if !named && !users[d.Namespace+"/"+d.Name] {
			continue
		}
		p := a[networkingv1alpha1.AnnotationReleasePolicy]
		retaining := named || p == "immutable" || p == "never" ||
			(p == "" && pool.Spec.ReleasePolicy != "" && pool.Spec.ReleasePolicy != networkingv1alpha1.ReleasePolicyDefault)
		if RolloutDeadlocks(d, retaining) {
			out = append(out, d.Namespace+"/"+d.Name)
		}
	}
	return out, nil
}
