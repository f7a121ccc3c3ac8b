package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

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
// List shows.
type FloatIPIndex struct {
	indexer toolscache.Indexer
}

// NewFloatIPIndex adds the indexes to c's FloatIP informer (before or after
// it started). It fails when the informer does not expose its store.
func NewFloatIPIndex(ctx context.Context, c cache.Cache) (*FloatIPIndex, error) {
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
	return &FloatIPIndex{indexer: withStore.GetIndexer()}, nil
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

func (l *listedFIPs) withKeyPrefix(prefix string) []*networkingv1alpha1.FloatIP {
	var out []*networkingv1alpha1.FloatIP
	for i := range l.items {
		if strings.HasPrefix(l.items[i].Spec.Key, prefix) {
			out = append(out, &l.items[i])
		}
	}
	return out
}

// takenOr is lookup's taken IPs plus those of more (IPs a bind has
// picked or tried).
type takenOr struct {
	lookup fipLookup
	more   map[netip.Addr]bool
}

func (t takenOr) taken(ip netip.Addr) bool { return t.more[ip] || t.lookup.taken(ip) }
