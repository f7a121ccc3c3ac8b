package podelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
)

// lookup batches the read calls of every PodElasticIP that uses one cloud
// account, so that describe calls grow with time rather than with pods:
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
//     remembered for a short time, so the reconcile right after a write
//     needs no describe at all.
type lookup struct {
	c             *aws.Client
	cluster       string
	legacyCluster string
	window        time.Duration
	recentTTL     time.Duration
	eniTTL        time.Duration
	now           func() time.Time

	mu      sync.Mutex
	latest  *listing
	next    *listing
	recent  map[string]recentAddr
	enis    map[string]eniEntry    // by private IP
	prefix  map[string]prefixEntry // by instance ID
	eniNext *eniBatch
}

type listing struct {
	started time.Time
	ids     map[string]bool
	done    chan struct{}
	addrs   []aws.Address
	err     error
}

type recentAddr struct {
	addr aws.Address
	at   time.Time
}

type eniEntry struct {
	eni aws.NetworkInterface
	at  time.Time
}

type prefixEntry struct {
	enis []aws.NetworkInterface
	at   time.Time
}

type eniBatch struct {
	ips   map[string]string // pod IP -> host IP
	done  chan struct{}
	found map[string]aws.NetworkInterface
	err   error
}

func newLookup(c *aws.Client, cluster, legacyCluster string) *lookup {
	return &lookup{
		c: c, cluster: cluster, legacyCluster: legacyCluster,
		window: 100 * time.Millisecond, recentTTL: 30 * time.Second, eniTTL: time.Minute,
		now:    time.Now,
		recent: map[string]recentAddr{}, enis: map[string]eniEntry{}, prefix: map[string]prefixEntry{},
	}
}

// Addresses returns a listing of this cluster's addresses (and the legacy
// controller's, and ids) that started at or after notBefore.
func (l *lookup) Addresses(ctx context.Context, notBefore time.Time, ids ...string) ([]aws.Address, error) {
	l.mu.Lock()
	if cur := l.latest; cur != nil && !cur.started.Before(notBefore) && covers(cur, ids) {
		l.mu.Unlock()
		return cur.addrs, nil
	}
	b := l.next
	if b == nil {
		b = &listing{ids: map[string]bool{}, done: make(chan struct{})}
		l.next = b
		go l.run(b)
	}
	for _, id := range ids {
		if id != "" {
			b.ids[id] = true
		}
	}
	l.mu.Unlock()
	select {
	case <-b.done:
		return b.addrs, b.err
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the address listing: %w", ctx.Err())
	}
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

func (l *lookup) run(b *listing) {
	time.Sleep(l.window)
	l.mu.Lock()
	l.next = nil
	b.started = l.now()
	ids := slices.Sorted(maps.Keys(b.ids))
	l.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
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
	b.err = add(aws.AddressQuery{Tags: map[string]string{decide.TagCluster: l.cluster}})
	if b.err == nil && l.legacyCluster != "" {
		b.err = add(aws.AddressQuery{Tags: map[string]string{decide.LegacyTagCluster: l.legacyCluster}})
	}
	var missing []string
	for _, id := range ids {
		if !seen[id] {
			missing = append(missing, id)
		}
	}
	for chunk := range slices.Chunk(missing, 200) {
		if b.err == nil {
			b.err = add(aws.AddressQuery{AllocationIDs: chunk})
		}
	}
	l.mu.Lock()
	if b.err == nil && (l.latest == nil || b.started.After(l.latest.started)) {
		l.latest = b
	}
	l.mu.Unlock()
	close(b.done)
}

// Remember records an address edgeplane just wrote.
func (l *lookup) Remember(a aws.Address) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent[a.AllocationID] = recentAddr{addr: a, at: l.now()}
	// Drop expired entries now and then.
	if len(l.recent) > 64 && len(l.recent)%64 == 0 {
		for id, r := range l.recent {
			if l.now().Sub(r.at) > l.recentTTL {
				delete(l.recent, id)
			}
		}
	}
}

// Recent returns a remembered address still within its TTL.
func (l *lookup) Recent(id string) (aws.Address, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.recent[id]
	if !ok || l.now().Sub(r.at) > l.recentTTL {
		return aws.Address{}, false
	}
	a := r.addr
	a.Tags = maps.Clone(a.Tags)
	return a, true
}

// Forget drops a remembered address (released, or a write that failed).
func (l *lookup) Forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.recent, id)
}

// ForgetENI drops the cached ENI of a pod IP (an association said it is
// not there).
func (l *lookup) ForgetENI(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.enis, ip)
}

// ENI returns the ENI holding podIP, as a private address or in a
// delegated prefix of an ENI of the instance that holds hostIP. It fails
// with an error IsNotFound recognises when there is none.
func (l *lookup) ENI(ctx context.Context, podIP, hostIP string) (aws.NetworkInterface, error) {
	l.mu.Lock()
	if e, ok := l.enis[podIP]; ok && l.now().Sub(e.at) < l.eniTTL {
		l.mu.Unlock()
		return e.eni, nil
	}
	b := l.eniNext
	if b == nil {
		b = &eniBatch{ips: map[string]string{}, done: make(chan struct{})}
		l.eniNext = b
		go l.runENI(b)
	}
	b.ips[podIP] = hostIP
	l.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return aws.NetworkInterface{}, fmt.Errorf("waiting for the ENI look-up: %w", ctx.Err())
	}
	if b.err != nil {
		return aws.NetworkInterface{}, b.err
	}
	if e, ok := b.found[podIP]; ok {
		return e, nil
	}
	return aws.NetworkInterface{}, fmt.Errorf("no ENI holds pod IP %s, neither as a private address nor in a delegated prefix of the node's instance (host IP %q): %w",
		podIP, hostIP, aws.ErrNotFound)
}

func (l *lookup) runENI(b *eniBatch) {
	time.Sleep(l.window)
	l.mu.Lock()
	l.eniNext = nil
	ips := map[string]string{}
	maps.Copy(ips, b.ips)
	l.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b.found = map[string]aws.NetworkInterface{}
	defer close(b.done)

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
			b.err = fmt.Errorf("finding the ENIs of pod IPs: %w", err)
			return
		}
		for _, e := range enis {
			for _, ip := range e.PrivateIPs {
				byIP[ip] = e
			}
		}
	}
	now := l.now()
	l.mu.Lock()
	for ip, e := range byIP {
		l.enis[ip] = eniEntry{eni: e, at: now}
	}
	l.mu.Unlock()

	// Prefix delegation: the pod IP is in a /28 delegated to one of the
	// node instance's ENIs.
	instances := map[string]bool{}
	for pod, host := range ips {
		if e, ok := byIP[pod]; ok {
			b.found[pod] = e
			continue
		}
		if n, ok := byIP[host]; ok && n.InstanceID != "" {
			instances[n.InstanceID] = true
		}
	}
	var ask []string
	l.mu.Lock()
	cached := map[string][]aws.NetworkInterface{}
	for id := range instances {
		if p, ok := l.prefix[id]; ok && now.Sub(p.at) < l.eniTTL {
			cached[id] = p.enis
		} else {
			ask = append(ask, id)
		}
	}
	l.mu.Unlock()
	slices.Sort(ask)
	for chunk := range slices.Chunk(ask, 200) {
		enis, err := l.c.DescribeNetworkInterfaces(ctx, "attachment.instance-id", chunk)
		if err != nil {
			b.err = fmt.Errorf("listing the ENIs of node instances: %w", err)
			return
		}
		for _, e := range enis {
			cached[e.InstanceID] = append(cached[e.InstanceID], e)
		}
	}
	l.mu.Lock()
	for _, id := range ask {
		l.prefix[id] = prefixEntry{enis: cached[id], at: now}
	}
	l.mu.Unlock()
	for pod, host := range ips {
		if _, ok := b.found[pod]; ok {
			continue
		}
		n, ok := byIP[host]
		if !ok {
			continue
		}
		if e, ok := aws.ENIWithPrefixFor(cached[n.InstanceID], pod); ok {
			b.found[pod] = e
		}
	}
}
