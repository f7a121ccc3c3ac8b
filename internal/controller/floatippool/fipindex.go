package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// fipLookup answers what the allocator asks of the existing FloatIPs on
// every filter and bind. The FloatIPs it returns are shared (a cache's own
// objects): read them, copy them before changing them.
type fipLookup interface {
	// taken reports whether a FloatIP holds ip.
	taken(ip netip.Addr) bool
	// withKey returns the FloatIPs whose key is key.
	withKey(key string) []*networkingv1alpha1.FloatIP
	// withKeyPrefix returns the FloatIPs whose key starts with prefix, which
	// ends in "_" (a reservation key: every key of its workload or pool
	// starts with it).
	withKeyPrefix(prefix string) []*networkingv1alpha1.FloatIP
	// lowWater returns an offset into v's set below which every IP is
	// taken (0 when unknown), and a token for setLowWater.
	lowWater(v *poolView) (offset int64, token uint64)
	// setLowWater records that every IP of v's set below offset is taken,
	// as of token (from lowWater): a FloatIP deleted since may have freed
	// one, and then the mark is not kept.
	setLowWater(v *poolView, offset int64, token uint64)
}

// scanPool calls fn, in the pool's order (lowest first), with each IP of
// v's set and whether fips shows it taken, until fn returns false. It
// starts at the pool's low-water mark and moves the mark past the IPs it
// found taken: each filter and bind looks for the lowest free IP, and
// scanning from the first IP every time made a wave of N allocations cost
// N²/2 lookups.
func scanPool(v *poolView, fips fipLookup, fn func(ip netip.Addr, taken bool) bool) {
	start, token := fips.lowWater(v)
	size := v.set.Size()
	if start >= size {
		start = 0
	}
	mark, visited := start, int64(0)
	counting := true
	v.set.EachFrom(start, func(ip netip.Addr) bool {
		taken := fips.taken(ip)
		// Count the taken IPs from the mark up to the end of the set (not
		// past it: the scan wraps around to the first IP).
		if counting && taken && start+visited < size {
			mark++
		} else {
			counting = false
		}
		visited++
		return fn(ip, taken)
	})
	if mark > start {
		fips.setLowWater(v, mark, token)
	}
}

// Index names of the informer's indexer.
const (
	indexerIP        = "floatip.ip"
	indexerKey       = "floatip.key"
	indexerKeyPrefix = "floatip.keyprefix"
)

// FloatIPIndex answers the allocator from the manager's FloatIP informer:
// by IP, key and key prefix, each an index of the informer's store, so a
// filter or bind costs what the pod's own FloatIPs cost, not a copy of
// every FloatIP (which made each call O(allocated IPs) and the extender's
// work over a wave of pods quadratic). It sees exactly what the cache's
// List shows. It also keeps each pool's low-water mark (see scanPool).
type FloatIPIndex struct {
	indexer toolscache.Indexer
	// deletes counts the FloatIPs the informer saw deleted: a mark set
	// before a delete may hide a free IP.
	deletes atomic.Uint64
	mu      sync.Mutex
	low     map[string]lowMark // by pool name
}

// lowMark is a pool's low-water mark: every IP below offset of the pool's
// set (as of that UID and generation) was taken after deletes deletes.
type lowMark struct {
	uid        types.UID
	generation int64
	offset     int64
	deletes    uint64
}

// NewFloatIPIndex adds the indexes to c's FloatIP informer (before or after
// it started). It fails when the informer does not expose its store. freed,
// if set, is called after the store shows a change that frees an IP, with
// the namespace whose pods may take it ("": any; see freedBy).
func NewFloatIPIndex(ctx context.Context, c cache.Cache, freed func(namespace string)) (*FloatIPIndex, error) {
	inf, err := c.GetInformer(ctx, &networkingv1alpha1.FloatIP{})
	if err != nil {
		return nil, fmt.Errorf("getting the FloatIP informer: %w", err)
	}
	withStore, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the FloatIP informer (%T) does not expose its store", inf)
	}
	if err := inf.AddIndexers(fipIndexers()); err != nil {
		return nil, fmt.Errorf("indexing FloatIPs: %w", err)
	}
	x := &FloatIPIndex{indexer: withStore.GetIndexer()}
	if _, err := inf.AddEventHandler(x.handler(freed)); err != nil {
		return nil, fmt.Errorf("watching FloatIP changes: %w", err)
	}
	return x, nil
}

// handler follows the informer's changes: deletions move the low-water
// marks, and freed hears of every change that frees an IP.
func (x *FloatIPIndex) handler(freed func(namespace string)) toolscache.ResourceEventHandlerFuncs {
	if freed == nil {
		freed = func(string) {}
	}
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(oldObj, newObj any) {
			old, _ := oldObj.(*networkingv1alpha1.FloatIP)
			cur, _ := newObj.(*networkingv1alpha1.FloatIP)
			if ns, ok := freedBy(old, cur); ok {
				freed(ns)
			}
		},
		DeleteFunc: func(any) {
			x.deleted()
			freed("")
		},
	}
}

// deleted notes that a FloatIP was deleted (or an IP counted as taken is
// free after all): an IP below a mark may be free.
func (x *FloatIPIndex) deleted() { x.deletes.Add(1) }

func (x *FloatIPIndex) lowWater(v *poolView) (int64, uint64) {
	token := x.deletes.Load()
	x.mu.Lock()
	defer x.mu.Unlock()
	m, ok := x.low[v.name()]
	if !ok || m.uid != v.pool.UID || m.generation != v.pool.Generation || m.deletes != token {
		return 0, token
	}
	return m.offset, token
}

func (x *FloatIPIndex) setLowWater(v *poolView, offset int64, token uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.deletes.Load() != token {
		return
	}
	if x.low == nil {
		x.low = map[string]lowMark{}
	}
	m := x.low[v.name()]
	if m.uid == v.pool.UID && m.generation == v.pool.Generation && m.deletes == token && m.offset >= offset {
		return // a concurrent scan got further
	}
	x.low[v.name()] = lowMark{uid: v.pool.UID, generation: v.pool.Generation, offset: offset, deletes: token}
}

// fipIndexers are the indexes FloatIPIndex reads.
func fipIndexers() toolscache.Indexers {
	return toolscache.Indexers{
		indexerIP:        fipIndexFunc(ipIndexValues),
		indexerKey:       fipIndexFunc(func(f *networkingv1alpha1.FloatIP) []string { return []string{f.Spec.Key} }),
		indexerKeyPrefix: fipIndexFunc(func(f *networkingv1alpha1.FloatIP) []string { return keyPrefixes(f.Spec.Key) }),
	}
}

func fipIndexFunc(fn func(*networkingv1alpha1.FloatIP) []string) toolscache.IndexFunc {
	return func(obj any) ([]string, error) {
		f, ok := obj.(*networkingv1alpha1.FloatIP)
		if !ok {
			return nil, nil
		}
		return fn(f), nil
	}
}

// ipIndexValues is the FloatIP's address in canonical form (the name
// derives from it only for IPv4).
func ipIndexValues(f *networkingv1alpha1.FloatIP) []string {
	if ip, ok := fipIP(f); ok {
		return []string{ip.String()}
	}
	return nil
}

// keyPrefixes are the prefixes of key that end in "_", key itself included
// when it does: a FloatIP is found under the reservation key of its
// workload and of its pool.
func keyPrefixes(key string) []string {
	var out []string
	for i := range len(key) {
		if key[i] == '_' {
			out = append(out, key[:i+1])
		}
	}
	return out
}

func (x *FloatIPIndex) taken(ip netip.Addr) bool {
	objs, err := x.indexer.ByIndex(indexerIP, ip.String())
	return err == nil && len(objs) > 0
}

func (x *FloatIPIndex) withKey(key string) []*networkingv1alpha1.FloatIP {
	return x.byIndex(indexerKey, key)
}

func (x *FloatIPIndex) withKeyPrefix(prefix string) []*networkingv1alpha1.FloatIP {
	return x.byIndex(indexerKeyPrefix, prefix)
}

func (x *FloatIPIndex) byIndex(index, value string) []*networkingv1alpha1.FloatIP {
	objs, err := x.indexer.ByIndex(index, value)
	if err != nil {
		return nil
	}
	out := make([]*networkingv1alpha1.FloatIP, 0, len(objs))
	for _, o := range objs {
		if f, ok := o.(*networkingv1alpha1.FloatIP); ok {
			out = append(out, f)
		}
	}
	return out
}

// listedFIPs answers from one list of every FloatIP: what an allocator
// without an index (a test's, over a direct client) reads per call.
type listedFIPs struct {
	items []networkingv1alpha1.FloatIP
	used  map[netip.Addr]bool // built on first use
}

// listFIPs lists every FloatIP through r (read-only, not copied out of a cache).
func listFIPs(ctx context.Context, r client.Reader) (*listedFIPs, error) {
	var list networkingv1alpha1.FloatIPList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing FloatIPs: %w", err)
	}
	return &listedFIPs{items: list.Items}, nil
}

func (l *listedFIPs) taken(ip netip.Addr) bool {
	if l.used == nil {
		l.used = usedIPs(l.items)
	}
	return l.used[ip]
}

func (l *listedFIPs) withKey(key string) []*networkingv1alpha1.FloatIP {
	var out []*networkingv1alpha1.FloatIP
	for i := range l.items {
		if l.items[i].Spec.Key == key {
			out = append(out, &l.items[i])
		}
	}
	return out
}

// lowWater is unknown: a list is read once per call.
func (l *listedFIPs) lowWater(*poolView) (int64, uint64) { return 0, 0 }

func (l *listedFIPs) setLowWater(*poolView, int64, uint64) {}

func (l *listedFIPs) withKeyPrefix(prefix string) []*networkingv1alpha1.FloatIP {
	var out []*networkingv1alpha1.FloatIP
	for i := range l.items {
		if strings.HasPrefix(l.items[i].Spec.Key, prefix) {
			out = append(out, &l.items[i])
		}
	}
	return out
}
