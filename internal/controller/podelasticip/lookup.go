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
//     node's ENIs are described once for all its pods. (On EC2, prefix
//     delegation falls back to the node's instance and its ENIs'
//     delegated prefixes: cloud_aws.go.)
//   - Addresses by ID (clouds with tasks): a recorded address whose task
//     is awaited is described with every other one awaited in the same
//     window, up to 100 IDs per DescribeAddresses.
//   - Addresses edgeplane just wrote (allocated, associated, tagged) are
//     remembered for a short time (runtime/expect), so the reconcile right
//     after a write needs no describe at all.
//
// Every cache is bounded and expires (LRUExpireCache), so pods and nodes
// that come and go leave nothing behind.
type lookup struct {
	c             addressCloud
	cluster       string
	legacyCluster string
	eniTTL        time.Duration
	clock         clock.PassiveClock

	listings *batch.Batcher[struct{}, string, *listing]
	eniCalls *batch.Batcher[struct{}, podHost, map[string]string]
	byID     *batch.Batcher[struct{}, string, map[string]decide.Address]
	recent   *expect.Writes[string, decide.Address]
	enis     *cache.LRUExpireCache // pod IP -> ENI ID

	mu     sync.Mutex
	latest *listing
}

// listing is one address listing.
type listing struct {
	started time.Time
	ids     map[string]bool
	addrs   []decide.Address
}

// podHost is a pod IP to find the ENI of, with its node's IP.
type podHost struct{ pod, host string }

// Bounds of the look-up caches: far above one account's addresses and
// ENI addresses, so only expiry drops entries in practice. eniTTL is how
// long a pod IP's ENI is trusted.
const (
	maxRecent   = 1 << 14
	maxENIAddrs = 1 << 16
	eniTTL      = time.Minute
)

// newLookup returns the look-ups of an account. clk is the controller's
// clock (listing ages are compared with its times); batch windows run on
// real timers. byIDWindow is how long describes by ID are collected (0:
// each runs alone).
func newLookup(c addressCloud, cluster, legacyCluster string, clk clock.PassiveClock, byIDWindow time.Duration) *lookup {
	l := &lookup{
		c: c, cluster: cluster, legacyCluster: legacyCluster, eniTTL: eniTTL, clock: clk,
		recent: expect.New[string, decide.Address](30*time.Second, maxRecent, clk),
		enis:   cache.NewLRUExpireCacheWithClock(maxENIAddrs, clk),
	}
	const window, timeout = 100 * time.Millisecond, 2 * time.Minute
	timers := clock.RealClock{}
	l.listings = batch.New(batch.Config[struct{}, string, *listing]{Window: window, Timeout: timeout, Clock: timers,
		Run: func(ctx context.Context, _ struct{}, ids []string) (*listing, error) { return l.list(ctx, ids) }})
	l.eniCalls = batch.New(batch.Config[struct{}, podHost, map[string]string]{Window: window, Timeout: timeout, Clock: timers,
		Run: func(ctx context.Context, _ struct{}, ips []podHost) (map[string]string, error) {
			return l.findENIs(ctx, ips)
		}})
	l.byID = batch.New(batch.Config[struct{}, string, map[string]decide.Address]{Window: byIDWindow, Max: c.MaxIDs(), Timeout: timeout, Clock: timers,
		Run: func(ctx context.Context, _ struct{}, ids []string) (map[string]decide.Address, error) {
			got, err := c.Describe(ctx, addressQuery{IDs: ids})
			if err != nil {
				return nil, err
			}
			out := make(map[string]decide.Address, len(got))
			for _, a := range got {
				out[a.AllocationID] = a
			}
			return out, nil
		}})
	return l
}

// ByID describes the address id now, batched with the other describes by
// ID of the window; ok is false when it does not exist.
func (l *lookup) ByID(ctx context.Context, id string) (decide.Address, bool, error) {
	got, err := l.byID.Do(ctx, struct{}{}, id)
	if err != nil {
		return decide.Address{}, false, err
	}
	a, ok := got[id]
	if ok {
		a.Tags = maps.Clone(a.Tags)
	}
	return a, ok, nil
}

// Addresses returns a listing of this cluster's addresses (and the legacy
// controller's, and ids) that started at or after notBefore.
func (l *lookup) Addresses(ctx context.Context, notBefore time.Time, ids ...string) ([]decide.Address, error) {
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
		if !slices.ContainsFunc(l.addrs, func(a decide.Address) bool { return a.AllocationID == id }) {
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
	add := func(q addressQuery) error {
		got, err := l.c.Describe(ctx, q)
		for _, a := range got {
			if !seen[a.AllocationID] {
				seen[a.AllocationID] = true
				b.addrs = append(b.addrs, a)
			}
		}
		return err
	}
	err := add(addressQuery{Tags: map[string]string{decide.TagCluster: l.cluster}})
	if err == nil && l.legacyCluster != "" {
		err = add(addressQuery{Tags: map[string]string{decide.LegacyTagCluster: l.legacyCluster}})
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(b.ids)) {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	for chunk := range slices.Chunk(missing, l.c.MaxIDs()) {
		if err == nil {
			err = add(addressQuery{IDs: chunk})
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
func (l *lookup) Remember(a decide.Address) {
	l.recent.Record(a.AllocationID, a, "")
}

// Recent returns a remembered address still within its TTL.
func (l *lookup) Recent(id string) (decide.Address, bool) {
	a, ok := l.recent.Get(id)
	if !ok {
		return decide.Address{}, false
	}
	a.Tags = maps.Clone(a.Tags)
	return a, true
}

// Forget drops a remembered address (released, or a write that failed).
func (l *lookup) Forget(id string) { l.recent.Forget(id) }

// ForgetENI drops the cached ENI of a pod IP (an association said it is
// not there).
func (l *lookup) ForgetENI(ip string) { l.enis.Remove(ip) }

// ENI returns the ID of the ENI holding podIP (as a private address, or on
// EC2 in a delegated prefix of an ENI of the instance that holds hostIP).
// It fails with errNoENI when there is none.
func (l *lookup) ENI(ctx context.Context, podIP, hostIP string) (string, error) {
	if e, ok := l.enis.Get(podIP); ok {
		return e.(string), nil
	}
	found, err := l.eniCalls.Do(ctx, struct{}{}, podHost{pod: podIP, host: hostIP})
	if err != nil {
		return "", err
	}
	if e, ok := found[podIP]; ok {
		return e, nil
	}
	return "", fmt.Errorf("%w: %s, neither as a private address nor in a delegated prefix of the node's instance (host IP %q)",
		errNoENI, podIP, hostIP)
}

// findENIs resolves the pod IPs of one window and caches every private IP
// the cloud's answer showed.
func (l *lookup) findENIs(ctx context.Context, asked []podHost) (map[string]string, error) {
	ans, err := l.c.FindENIs(ctx, asked)
	if err != nil {
		return nil, err
	}
	for ip, e := range ans.All {
		l.enis.Add(ip, e, l.eniTTL)
	}
	return ans.Found, nil
}
