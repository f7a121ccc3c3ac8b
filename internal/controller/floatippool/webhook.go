package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
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

	// sets holds the other pools' parsed IP sets: each request checks a
	// pool against every pool there is, and parsing them all again per
	// request was most of its cost under 200 concurrent creations.
	sets parsedSets
}

// parsedSets caches the IP set of every pool the validator has checked
// against, by name, for the resourceVersion it was parsed from (a stored
// object of one resourceVersion never changes).
type parsedSets struct {
	mu     sync.Mutex
	byName map[string]parsedSet
}

type parsedSet struct {
	resourceVersion string
	set             ipam.Set
	bad             bool // the pool does not parse: it is skipped, as parsePool's error says
}

// of returns the parsed set of each of pools, in order, parsing only the
// ones it has not seen at their resourceVersion, and forgets the pools that
// are gone.
func (c *parsedSets) of(pools []networkingv1alpha1.FloatIPPool) []parsedSet {
	out := make([]parsedSet, len(pools))
	var missing []int
	c.mu.Lock()
	for i := range pools {
		p := &pools[i]
		if e, ok := c.byName[p.Name]; ok && e.resourceVersion == p.ResourceVersion && p.ResourceVersion != "" {
			out[i] = e
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out
	}
	for _, i := range missing {
		p := &pools[i]
		e := parsedSet{resourceVersion: p.ResourceVersion}
		if len(p.Spec.Ranges) > 0 {
			v := parsePool(p)
			e.set, e.bad = v.set, v.err != nil
		}
		out[i] = e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil || len(c.byName) > 2*len(pools)+16 {
		// Rebuilt now and then, so that deleted pools do not stay.
		c.byName = make(map[string]parsedSet, len(pools))
		for i := range pools {
			if out[i].resourceVersion != "" {
				c.byName[pools[i].Name] = out[i]
			}
		}
		return out
	}
	for _, i := range missing {
		if out[i].resourceVersion != "" {
			c.byName[pools[i].Name] = out[i]
		}
	}
	return out
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
		sets := v.sets.of(list.Items)
		for i := range list.Items {
			other := &list.Items[i]
			if other.Name == pool.Name || len(other.Spec.Ranges) == 0 || sets[i].bad {
				continue
			}
			if r, ok := view.set.Overlap(sets[i].set); ok {
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
