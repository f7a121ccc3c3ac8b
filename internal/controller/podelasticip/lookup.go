package podelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"

	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/batch"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// lookup batches the read calls of every PodElasticIP that uses one cloud
// account (runtime/batch), so that describe calls grow with time rather
// than with pods:
//
//   - Address listings. One listing is DescribeAddresses by this cluster's
//     tag, plus (adoption on) by the legacy controller's cluster tag, plus
//     by the allocation IDs asked for that the tag listings may miss. A
//     caller says how fresh the listing must be (notBefore); a listing
//     that started later is shared, otherwise the caller joins the next
//     one, which starts after a short window collecting other callers.
//   - ENI look-ups. Pod IPs are resolved in one DescribeNetworkInterfaces
//     per window; every private IP of every ENI returned is cached, so a
//     node's ENIs are described once for all its pods. Prefix delegation
//     falls back to the node's instance and its ENIs' delegated prefixes.
//   - Addresses edgeplane just wrote (allocated, associated, tagged) are
//     remembered for a short time (runtime/expect), so the reconcile right
//     after a write needs no describe at all.
//
// Every cache is bounded and expires (LRUExpireCache), so pods and nodes
// that come and go leave nothing behind.
type lookup struct {
	c             *aws.Client
	cluster       string
	legacyCluster string
	eniTTL        time.Duration
	clock         clock.PassiveClock

	listings *batch.Batcher[struct{}, string, *listing]
	eniCalls *batch.Batcher[struct{}, podHost, map[string]aws.NetworkInterface]
	recent   *expect.Writes[string, aws.Address]
	enis     *cache.LRUExpireCache // pod IP -> aws.NetworkInterface
	prefix   *cache.LRUExpireCache // instance ID -> []aws.NetworkInterface

	mu     sync.Mutex
	latest *listing
}

// listing is one address listing.
type listing struct {
	started time.Time
	ids     map[string]bool
	addrs   []aws.Address
}

// podHost is a pod IP to find the ENI of, with its node's IP.
type podHost struct{ pod, host string }

// Bounds of the look-up caches: far above one account's addresses and
// ENI addresses, so only expiry drops entries in practice.
const (
	maxRecent   = 1 << 14
	maxENIAddrs = 1 << 16
)

// newLookup returns the look-ups of an account. clk is the controller's
// clock (listing ages are compared with its times); batch windows run on
// real timers.
func newLookup(c *aws.Client, cluster, legacyCluster string, clk clock.PassiveClock) *lookup {
	l := &lookup{
		c: c, cluster: cluster, legacyCluster: legacyCluster, eniTTL: time.Minute, clock: clk,
		recent: expect.New[string, aws.Address](30*time.Second, maxRecent, clk),
		enis:   cache.NewLRUExpireCacheWithClock(maxENIAddrs, clk),
		prefix: cache.NewLRUExpireCacheWithClock(maxENIAddrs, clk),
	}
	const window, timeout = 100 * time.Millisecond, 2 * time.Minute
	timers := clock.RealClock{}
	l.listings = batch.New(batch.Config[struct{}, string, *listing]{Window: window, Timeout: timeout, Clock: timers,
		Run: func(ctx context.Context, _ struct{}, ids []string) (*listing, error) { return l.list(ctx, ids) }})
	l.eniCalls = batch.New(batch.Config[struct{}, podHost, map[string]aws.NetworkInterface]{Window: window, Timeout: timeout, Clock: timers,
		Run: func(ctx context.Context, _ struct{}, ips []podHost) (map[string]aws.NetworkInterface, error) {
			return l.findENIs(ctx, ips)
		}})
	return l
}

// Addresses returns a listing of this cluster's addresses (and the legacy
// controller's, and ids) that started at or after notBefore.
func (l *lookup) Addresses(ctx context.Context, notBefore time.Time, ids ...string) ([]aws.Address, error) {
	l.mu.Lock()
	cur := l.latest
	l.mu.Unlock()
	if cur != nil && !cur.started.Before(notBefore) && covers(cur, ids) {
		return cur.addrs, nil
	}
	b, err := l.listings.Do(ctx, struct{}{}, slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == "" })...)
	if err != nil {
		return nil, err
	}
	return b.addrs, nil
}

// covers reports whether a listing answers for ids: it found them, or
// asked for them by ID.
func covers(l *listing, ids []string) bool {
	for _, id := range ids {
		if id == "" || l.ids[id] {
			continue
		}
		if !slices.ContainsFunc(l.addrs, func(a aws.Address) bool { return a.AllocationID == id }) {
			return false
		}
	}
	return true
}

// list makes one listing: by the cluster tags, then by the IDs the tag
// listings missed.
func (l *lookup) list(ctx context.Context, ids []string) (*listing, error) {
	b := &listing{started: l.clock.Now(), ids: map[string]bool{}}
	for _, id := range ids {
		b.ids[id] = true
	}
	seen := map[string]bool{}
	add := func(q aws.AddressQuery) error {
		got, err := l.c.DescribeAddresses(ctx, q)
		for _, a := range got {
			if !seen[a.AllocationID] {
				seen[a.AllocationID] = true
				b.addrs = append(b.addrs, a)
			}
		}
		return err
	}
	err := add(aws.AddressQuery{Tags: map[string]string{decide.TagCluster: l.cluster}})
	if err == nil && l.legacyCluster != "" {
		err = add(aws.AddressQuery{Tags: map[string]string{decide.LegacyTagCluster: l.legacyCluster}})
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(b.ids)) {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	for chunk := range slices.Chunk(missing, 200) {
		if err == nil {
			err = add(aws.AddressQuery{AllocationIDs: chunk})
		}
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	if l.latest == nil || b.started.After(l.latest.started) {
		l.latest = b
	}
	l.mu.Unlock()
	return b, nil
}

// Remember records an address edgeplane just wrote.
func (l *lookup) Remember(a aws.Address) {
	l.recent.Record(a.AllocationID, a, "")
}

// Recent returns a remembered address still within its TTL.
func (l *lookup) Recent(id string) (aws.Address, bool) {
	a, ok := l.recent.Get(id)
	if !ok {
		return aws.Address{}, false
	}
	a.Tags = maps.Clone(a.Tags)
	return a, true
}

// Forget drops a remembered address (released, or a write that failed).
func (l *lookup) Forget(id string) { l.recent.Forget(id) }

// ForgetENI drops the cached ENI of a pod IP (an association said it is
// not there).
func (l *lookup) ForgetENI(ip string) { l.enis.Remove(ip) }

// ENI returns the ENI holding podIP, as a private address or in a
// delegated prefix of an ENI of the instance that holds hostIP. It fails
// with an error IsNotFound recognises when there is none.
func (l *lookup) ENI(ctx context.Context, podIP, hostIP string) (aws.NetworkInterface, error) {
	if e, ok := l.enis.Get(podIP); ok {
		return e.(aws.NetworkInterface), nil
	}
	found, err := l.eniCalls.Do(ctx, struct{}{}, podHost{pod: podIP, host: hostIP})
	if err != nil {
		return aws.NetworkInterface{}, err
	}
	if e, ok := found[podIP]; ok {
		return e, nil
	}
	return aws.NetworkInterface{}, fmt.Errorf("no ENI holds pod IP %s, neither as a private address nor in a delegated prefix of the node's instance (host IP %q): %w",
		podIP, hostIP, aws.ErrNotFound)
}

// findENIs finds the ENIs of pod IPs in one DescribeNetworkInterfaces
// (plus one for the node instances of pod IPs in delegated prefixes).
func (l *lookup) findENIs(ctx context.Context, asked []podHost) (map[string]aws.NetworkInterface, error) {
	ips := map[string]string{}
	for _, p := range asked {
		ips[p.pod] = p.host
	}
	found := map[string]aws.NetworkInterface{}

	// Pod IPs and host IPs in one call: the host IPs serve the prefix
	// delegation fallback.
	want := map[string]bool{}
	for pod, host := range ips {
		want[pod] = true
		if host != "" {
			want[host] = true
		}
	}
	byIP := map[string]aws.NetworkInterface{}
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(want)), 200) {
		enis, err := l.c.DescribeNetworkInterfaces(ctx, "addresses.private-ip-address", chunk)
		if err != nil {
			return nil, fmt.Errorf("finding the ENIs of pod IPs: %w", err)
		}
		for _, e := range enis {
			for _, ip := range e.PrivateIPs {
				byIP[ip] = e
			}
		}
	}
	for ip, e := range byIP {
		l.enis.Add(ip, e, l.eniTTL)
	}

	// Prefix delegation: the pod IP is in a /28 delegated to one of the
	// node instance's ENIs.
	instances := map[string]bool{}
	for pod, host := range ips {
		if e, ok := byIP[pod]; ok {
			found[pod] = e
			continue
		}
		if n, ok := byIP[host]; ok && n.InstanceID != "" {
			instances[n.InstanceID] = true
		}
	}
	var ask []string
	cached := map[string][]aws.NetworkInterface{}
	for id := range instances {
		if p, ok := l.prefix.Get(id); ok {
			cached[id] = p.([]aws.NetworkInterface)
		} else {
			ask = append(ask, id)
		}
	}
	slices.Sort(ask)
	for chunk := range slices.Chunk(ask, 200) {
		enis, err := l.c.DescribeNetworkInterfaces(ctx, "attachment.instance-id", chunk)
		if err != nil {
			return nil, fmt.Errorf("listing the ENIs of node instances: %w", err)
		}
		for _, e := range enis {
			cached[e.InstanceID] = append(cached[e.InstanceID], e)
		}
	}
	for _, id := range ask {
		l.prefix.Add(id, cached[id], l.eniTTL)
	}
	for pod, host := range ips {
		if _, ok := found[pod]; ok {
			continue
		}
		n, ok := byIP[host]
		if !ok {
			continue
		}
		if e, ok := aws.ENIWithPrefixFor(cached[n.InstanceID], pod); ok {
			found[pod] = e
		}
	}
	return found, nil
}
