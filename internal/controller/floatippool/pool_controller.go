package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ledger"
	"github.com/edgeplane/edgeplane/internal/status"
)

// PoolReconciler admits pools into the FloatIPPoolLedger, keeps a
// FloatIPPool's status (capacity, usage, conditions), pre-allocates its IPs,
// and holds its deletion while IPs are in use.
type PoolReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Metrics  *Metrics
	// Live lists FloatIPs before pre-allocating, so a lagging cache never
	// pre-allocates twice, confirms that a pool is gone before its claim is
	// dropped, and reads the ledger again after a conflicting write
	// (default Client).
	Live client.Reader
	// Clock stamps the nudges of pods waiting for a newly admitted pool; nil
	// is the real clock.
	Clock clock.PassiveClock
	// Limits bound the ledger; the zero value is the CRD's own
	// (ledger.DefaultLimits). Tests set lower ones.
	Limits ledger.Limits
}

// Reconcile reconciles one pool, and the ledger for every pool: a pool's
// admission may wait for another pool to go.
func (r *PoolReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var pool networkingv1alpha1.FloatIPPool
	err := r.Client.Get(ctx, req.NamespacedName, &pool)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	gone := err != nil
	if !gone && pool.DeletionTimestamp == nil && controllerutil.AddFinalizer(&pool, networkingv1alpha1.FloatIPPoolFinalizer) {
		if err := r.Client.Update(ctx, &pool); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer to FloatIPPool %s: %w", pool.Name, err)
		}
		return ctrl.Result{}, nil
	}

	// Read-only: the pools are parsed and admitted, never modified.
	var pools networkingv1alpha1.FloatIPPoolList
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing FloatIPPools: %w", err)
	}
	book, admitted, err := r.admit(ctx, pools.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	if admitted {
		// A pod that asked for an IP before its pool was admitted was
		// refused; the scheduler retries it at once when nudged.
		nudgeWaitingPods(ctx, r.Client, r.now(), "")
	}
	if gone {
		return ctrl.Result{}, nil
	}
	before := pool.DeepCopy()
	views := parsePools(pools.Items, book)
	var v *poolView
	for _, x := range views {
		if x.name() == pool.Name {
			v = x
		}
	}
	if v == nil { // not in the cache's list yet
		v = parsePools([]networkingv1alpha1.FloatIPPool{pool}, book)[0]
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
	if ready := status.Get(&pool, networkingv1alpha1.FloatIPTypeReady); refusedAdmission(ready.Reason) && r.Recorder != nil {
		if was := status.Get(before, networkingv1alpha1.FloatIPTypeReady); was == nil || was.Reason != ready.Reason {
			r.Recorder.Eventf(&pool, nil, corev1.EventTypeWarning, ready.Reason, "Admit", "%s", ready.Message)
		}
	}
	r.Metrics.setPool(pool.Name, pool.Status.Total, pool.Status.Allocated, pool.Status.Reserved, pool.Status.Available)
	status.ObserveGeneration(&pool)
	return status.Patch(ctx, r.Client, before, &pool)
}

// refusedAdmission reports a Ready reason that says the ledger refused the
// pool, which its author must act on (a Warning Event when it starts).
func refusedAdmission(reason string) bool {
	return reason == networkingv1alpha1.FloatIPReasonOverlap || reason == networkingv1alpha1.FloatIPReasonLedgerFull
}

func (r *PoolReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
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
			f.Status.Phase = networkingv1alpha1.FloatIPReserved
			stampFIPWrite(f)
			if err := r.Client.Create(ctx, f); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return true
				}
				cerr = fmt.Errorf("pre-allocating %s for pool %s: %w", ip, pool.Name, err)
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
	// Read-only: not copied out of the cache.
	if err := r.Client.List(ctx, &deps, client.UnsafeDisableDeepCopy); err != nil {
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
