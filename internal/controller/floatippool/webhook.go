package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// failurePolicy=Fail: it guards edgeplane's own cluster-scoped FloatIPPools
// only (never a pod or node), and an unchecked overlapping pool would hand
// out an IP twice. timeoutSeconds=3, like the other webhooks.
// +kubebuilder:webhook:path=/validate-networking-edgeplane-io-v1alpha1-floatippool,mutating=false,failurePolicy=fail,sideEffects=None,groups=networking.edgeplane.io,resources=floatippools,verbs=create;update;delete,versions=v1alpha1,name=vfloatippool.networking.edgeplane.io,admissionReviewVersions=v1,timeoutSeconds=3

// PoolValidator rejects what CEL cannot see across objects: a pool whose
// IPs overlap another pool's, and an edit that drops IPs still in use.
//
// It reads the manager's cache: a live list of every pool per request cost
// hundreds of milliseconds under concurrent creations, and could not stop
// two overlapping pools created at the same moment anyway (neither exists
// when the other is checked). The webhook is the quick answer for the
// common case; what keeps overlapping pools from both handing out IPs,
// across replicas, is the FloatIPPoolLedger (package ledger and
// PoolReconciler.admit).
type PoolValidator struct {
	// Reader reads pools and FloatIPs (FloatIPs by the spec.pool field).
	Reader client.Reader
}

var _ admission.Validator[*networkingv1alpha1.FloatIPPool] = &PoolValidator{}

// SetupWebhook registers the FloatIPPool validating webhook.
func SetupWebhook(mgr ctrl.Manager) error {
	if err := ctrl.NewWebhookManagedBy(mgr, &networkingv1alpha1.FloatIPPool{}).
		WithValidator(&PoolValidator{Reader: mgr.GetClient()}).
		Complete(); err != nil {
		return fmt.Errorf("building the FloatIPPool webhook: %w", err)
	}
	return nil
}

// ValidateCreate rejects invalid or overlapping ranges.
func (v *PoolValidator) ValidateCreate(ctx context.Context, pool *networkingv1alpha1.FloatIPPool) (admission.Warnings, error) {
	return v.validate(ctx, nil, pool)
}

// ValidateUpdate also rejects dropping IPs that are in use.
func (v *PoolValidator) ValidateUpdate(ctx context.Context, old, pool *networkingv1alpha1.FloatIPPool) (admission.Warnings, error) {
	return v.validate(ctx, old, pool)
}

// ValidateDelete allows deletion and warns when IPs are in use (the
// finalizer holds the pool until they are released).
func (v *PoolValidator) ValidateDelete(ctx context.Context, pool *networkingv1alpha1.FloatIPPool) (admission.Warnings, error) {
	inUse, err := v.inUse(ctx, pool.Name)
	if err != nil {
		return nil, err
	}
	if len(inUse) > 0 {
		return admission.Warnings{fmt.Sprintf("FloatIPPool %s still has %d IPs in use; it is deleted once they are released", pool.Name, len(inUse))}, nil
	}
	return nil, nil
}

func (v *PoolValidator) validate(ctx context.Context, old, pool *networkingv1alpha1.FloatIPPool) (admission.Warnings, error) {
	view := parsePool(pool)
	if view.err != nil {
		return nil, fmt.Errorf("FloatIPPool %s: %w", pool.Name, view.err)
	}
	var warnings admission.Warnings
	if pool.Spec.Size != nil && len(pool.Spec.Ranges) > 0 && int64(*pool.Spec.Size) > view.set.Size() {
		warnings = append(warnings, fmt.Sprintf("size %d is larger than the pool's %d IPs", *pool.Spec.Size, view.set.Size()))
	}
	// An edit that keeps the pool's IPs (finalizers, labels, other fields)
	// cannot create an overlap: checking it would refuse the finalizer of
	// both pools of a pair that raced past the webhook.
	sameIPs := old != nil && slices.Equal(old.Spec.Ranges, pool.Spec.Ranges) && slices.Equal(old.Spec.ExcludeIPs, pool.Spec.ExcludeIPs)
	if view.hasRanges() && !sameIPs {
		var list networkingv1alpha1.FloatIPPoolList
		// Read-only: the pools are only parsed, so not copied out of the cache.
		if err := v.Reader.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing FloatIPPools: %w", err)
		}
		for i := range list.Items {
			other := &list.Items[i]
			if other.Name == pool.Name || len(other.Spec.Ranges) == 0 {
				continue
			}
			ov := parsePool(other)
			if ov.err != nil {
				continue
			}
			if r, ok := view.set.Overlap(ov.set); ok {
				return nil, fmt.Errorf("FloatIPPool %s overlaps FloatIPPool %s: IPs %s are in both", pool.Name, other.Name, r)
			}
		}
	}
	if old == nil {
		return warnings, nil
	}
	inUse, err := v.inUse(ctx, pool.Name)
	if err != nil {
		return nil, err
	}
	var dropped []string
	for _, ip := range inUse {
		if !view.hasRanges() || !view.set.Contains(ip) {
			dropped = append(dropped, ip.String())
		}
	}
	if len(dropped) > 0 {
		slices.Sort(dropped)
		return nil, fmt.Errorf("FloatIPPool %s: the new ranges drop IPs that are in use (%s); release them first (kubectl delete fip)", pool.Name, strings.Join(limit(dropped, 20), ", "))
	}
	return warnings, nil
}

// inUse lists the IPs that have a FloatIP in the pool.
func (v *PoolValidator) inUse(ctx context.Context, pool string) ([]netip.Addr, error) {
	var list networkingv1alpha1.FloatIPList
	if err := v.Reader.List(ctx, &list, client.MatchingFields{fieldPool: pool}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing FloatIPs of pool %s: %w", pool, err)
	}
	var out []netip.Addr
	for i := range list.Items {
		if ip, ok := fipIP(&list.Items[i]); ok {
			out = append(out, ip)
		}
	}
	return out, nil
}
