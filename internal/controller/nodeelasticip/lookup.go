package nodeelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/batch"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// lookup batches the reads of every NodeElasticIP of one account
// (runtime/batch), so that describe calls grow with time rather than with
// nodes, and remembers what this process wrote (runtime/expect):
//
//   - listings: DescribeAddresses by this cluster's and the kind's tags,
//     plus by the allocation IDs asked for that the tag listing missed (an
//     address given back, an adopted one not re-tagged yet). A pass that
//     may use an older listing (a poll) reuses one younger than its
//     maximum age;
//   - the addresses on nodes' instances (DescribeAddresses by instance-id,
//     up to 200 instances a call), to adopt one or to see the node's
//     primary IP is taken;
//   - the primary network interfaces of instances, one filtered
//     DescribeNetworkInterfaces for up to 200 instances, kept for
//     eniTTL (an instance's primary interface never changes);
//   - addresses just allocated, claimed or associated, by allocation ID
//     and by owner, so the pass after a write needs no describe, and a
//     listing that does not show an address yet never causes a second
//     allocation;
//   - pool addresses being claimed, so two workers of this process never
//     try the same one.
type lookup struct {
	c       *aws.Client
	cluster string
	clock   clock.PassiveClock

	listings *batch.Batcher[struct{}, string, *listing]
	onNodes  *batch.Batcher[struct{}, string, []aws.Address]
	enis     *batch.Batcher[struct{}, string, map[string]aws.NetworkInterface]
	eniCache *cache.LRUExpireCache // instance ID -> aws.NetworkInterface

	recent  *expect.Writes[string, aws.Address]
	byOwner *expect.Writes[types.UID, string]
	claims  *expect.Writes[string, types.UID]

	mu     sync.Mutex
	latest *listing
}

// listing is one address listing.
type listing struct {
	started time.Time
	// asked are the allocation IDs it looked up beyond the tag listing.
	asked map[string]bool
	addrs []aws.Address
}

// covers reports whether l answers for ids.
func (l *listing) covers(ids []string) bool {
	for _, id := range ids {
		if id != "" && !l.asked[id] && !slices.ContainsFunc(l.addrs, func(a aws.Address) bool { return a.AllocationID == id }) {
			return false
		}
	}
	return true
}

// Bounds: far above one account's addresses and nodes, so only expiry
// drops entries in practice.
const (
	maxRemembered = 1 << 14
	eniTTL        = 10 * time.Minute
	recentTTL     = 30 * time.Second
	claimTTL      = time.Minute
	// maxFilterValues is the most values one EC2 filter carries.
	maxFilterValues = 200
)

func newLookup(c *aws.Client, cluster string, window time.Duration, clk clock.PassiveClock) *lookup {
	l := &lookup{
		c: c, cluster: cluster, clock: clk,
		eniCache: cache.NewLRUExpireCacheWithClock(maxRemembered, clk),
		recent:   expect.New[string, aws.Address](recentTTL, maxRemembered, clk),
		byOwner:  expect.New[types.UID, string](recentTTL, maxRemembered, clk),
		claims:   expect.New[string, types.UID](claimTTL, maxRemembered, clk),
	}
	l.listings = batch.New(batch.Config[struct{}, string, *listing]{Window: window,
		Run: func(ctx context.Context, _ struct{}, ids []string) (*listing, error) { return l.list(ctx, ids) }})
	l.onNodes = batch.New(batch.Config[struct{}, string, []aws.Address]{Window: window, Max: maxFilterValues,
		Run: func(ctx context.Context, _ struct{}, instances []string) ([]aws.Address, error) {
			addrs, err := c.DescribeAddresses(ctx, aws.AddressQuery{InstanceIDs: instances})
			if err != nil {
				return nil, fmt.Errorf("listing the addresses of %d instances: %w", len(instances), err)
			}
			return addrs, nil
		}})
	l.enis = batch.New(batch.Config[struct{}, string, map[string]aws.NetworkInterface]{Window: window, Max: maxFilterValues,
		Run: func(ctx context.Context, _ struct{}, instances []string) (map[string]aws.NetworkInterface, error) {
			return c.FindPrimaryNetworkInterfaces(ctx, instances)
		}})
	return l
}

// Addresses returns a listing of this cluster's NodeElasticIP addresses
// and of ids: one that started at most maxAge ago (0: one that starts
// after this call).
func (l *lookup) Addresses(ctx context.Context, maxAge time.Duration, ids ...string) ([]aws.Address, error) {
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "" })
	if maxAge > 0 {
		l.mu.Lock()
		latest := l.latest
		l.mu.Unlock()
		if latest != nil && l.clock.Since(latest.started) <= maxAge && latest.covers(ids) {
			return latest.addrs, nil
		}
	}
	got, err := l.listings.Do(ctx, struct{}{}, ids...)
	if err != nil {
		return nil, err
	}
	return got.addrs, nil
}

// list makes one listing: by the tags, then by the IDs the tags missed.
func (l *lookup) list(ctx context.Context, ids []string) (*listing, error) {
	out := &listing{started: l.clock.Now(), asked: map[string]bool{}}
	got, err := l.c.DescribeAddresses(ctx, aws.AddressQuery{Tags: decide.SweepTags(l.cluster)})
	if err != nil {
		return nil, fmt.Errorf("listing this cluster's node addresses: %w", err)
	}
	out.addrs = got
	var missing []string
	for _, id := range ids {
		out.asked[id] = true
		if !slices.ContainsFunc(got, func(a aws.Address) bool { return a.AllocationID == id }) {
			missing = append(missing, id)
		}
	}
	for chunk := range slices.Chunk(missing, maxFilterValues) {
		more, err := l.c.DescribeAddresses(ctx, aws.AddressQuery{AllocationIDs: chunk})
		if err != nil {
			return nil, fmt.Errorf("describing %d addresses: %w", len(chunk), err)
		}
		out.addrs = append(out.addrs, more...)
	}
	l.mu.Lock()
	if l.latest == nil || out.started.After(l.latest.started) {
		l.latest = out
	}
	l.mu.Unlock()
	return out, nil
}

// OnInstance returns the addresses associated with the instance (a
// listing that starts after this call).
func (l *lookup) OnInstance(ctx context.Context, instance string) ([]aws.Address, error) {
	all, err := l.onNodes.Do(ctx, struct{}{}, instance)
	if err != nil {
		return nil, err
	}
	var out []aws.Address
	for _, a := range all {
		if a.InstanceID == instance {
			out = append(out, a)
		}
	}
	return out, nil
}

// PrimaryENI returns the instance's primary network interface, or an
// error aws.IsNotFound recognises.
func (l *lookup) PrimaryENI(ctx context.Context, instance string) (aws.NetworkInterface, error) {
	if e, ok := l.eniCache.Get(instance); ok {
		return e.(aws.NetworkInterface), nil
	}
	found, err := l.enis.Do(ctx, struct{}{}, instance)
	if err != nil {
		return aws.NetworkInterface{}, fmt.Errorf("finding the primary network interface of %s: %w", instance, err)
	}
	e, ok := found[instance]
	if !ok || len(e.PrivateIPs) == 0 {
		return aws.NetworkInterface{}, fmt.Errorf("instance %s has no primary network interface: %w", instance, aws.ErrNotFound)
	}
	l.eniCache.Add(instance, e, eniTTL)
	return e, nil
}

// ForgetENI drops the cached interface of an instance (EC2 said it is
// gone).
func (l *lookup) ForgetENI(instance string) { l.eniCache.Remove(instance) }

// Remember records an address this process just wrote, for its owner.
func (l *lookup) Remember(owner types.UID, a aws.Address) {
	a.Tags = maps.Clone(a.Tags)
	l.recent.Record(a.AllocationID, a, "")
	if owner != "" {
		l.byOwner.Record(owner, a.AllocationID, "")
	}
}

// Recent returns a remembered address of the allocation ID, or of the
// owner when id is empty.
func (l *lookup) Recent(owner types.UID, id string) (aws.Address, bool) {
	if id == "" {
		var ok bool
		if id, ok = l.byOwner.Get(owner); !ok {
			return aws.Address{}, false
		}
	}
	a, ok := l.recent.Get(id)
	if !ok {
		return aws.Address{}, false
	}
	a.Tags = maps.Clone(a.Tags)
	return a, true
}

// Forget drops a remembered address (released, given back, or a write
// that failed).
func (l *lookup) Forget(owner types.UID, id string) {
	l.recent.Forget(id)
	if got, ok := l.byOwner.Get(owner); ok && got == id {
		l.byOwner.Forget(owner)
	}
}

// Claim reserves a pool address for owner within this process; Unclaim
// gives it up.
func (l *lookup) Claim(id string, owner types.UID) bool {
	if l.claims.Claim(id, owner) {
		return true
	}
	got, _ := l.claims.Get(id)
	return got == owner
}

func (l *lookup) Unclaim(id string) { l.claims.Forget(id) }
