package floatippool

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ledger"
)

// Field names of FloatIP that are selectable on the API server and indexed
// in the manager's cache under the same names.
const (
	fieldKey  = "spec.key"
	fieldPool = "spec.pool"
)

// poolView is a FloatIPPool with its spec parsed.
type poolView struct {
	pool     *networkingv1alpha1.FloatIPPool
	set      ipam.Set // nil for a sharing group
	subnet   netip.Prefix
	nodeNets []netip.Prefix
	nsSel    labels.Selector // nil: every namespace
	err      error           // why the pool cannot hand out IPs
}

func (p *poolView) name() string { return p.pool.Name }

// hasRanges: the pool hands out IPs (not a sharing group).
func (p *poolView) hasRanges() bool { return len(p.pool.Spec.Ranges) > 0 }

// hostsNode reports whether a node with this InternalIP may host the pool's IPs.
func (p *poolView) hostsNode(nodeIP netip.Addr) bool {
	for _, n := range p.nodeNets {
		if n.Contains(nodeIP) {
			return true
		}
	}
	return false
}

// allowsNamespace reports whether pods of a namespace with these labels may use the pool.
func (p *poolView) allowsNamespace(nsLabels map[string]string) bool {
	return p.nsSel == nil || p.nsSel.Matches(labels.Set(nsLabels))
}

// parsePool parses a pool's spec; err is set when it cannot be used.
func parsePool(pool *networkingv1alpha1.FloatIPPool) *poolView {
	v := &poolView{pool: pool}
	if pool.Spec.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pool.Spec.NamespaceSelector)
		if err != nil {
			v.err = fmt.Errorf("namespaceSelector: %w", err)
			return v
		}
		v.nsSel = sel
	}
	if !v.hasRanges() {
		return v
	}
	set, err := ipam.ParseSet(pool.Spec.Ranges, pool.Spec.ExcludeIPs)
	if err != nil {
		v.err = err
		return v
	}
	v.set = set
	subnet, err := netip.ParsePrefix(pool.Spec.Subnet)
	if err != nil {
		v.err = fmt.Errorf("subnet: %w", err)
		return v
	}
	v.subnet = subnet.Masked()
	for _, n := range pool.Spec.NodeSubnets {
		p, err := netip.ParsePrefix(n)
		if err != nil {
			v.err = fmt.Errorf("nodeSubnets: %w", err)
			return v
		}
		v.nodeNets = append(v.nodeNets, p.Masked())
	}
	return v
}

// olderFirst orders pools by creation, then name.
func olderFirst(a, b *networkingv1alpha1.FloatIPPool) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// parsePools parses every pool, oldest first, and marks a pool with ranges
// unusable unless the ledger's claims admit it for exactly its spec (see
// package ledger): of two overlapping pools, only the one whose claim the
// ledger holds hands out IPs, whichever replica asks.
func parsePools(pools []networkingv1alpha1.FloatIPPool, claims *ledger.Book) []*poolView {
	sorted := make([]*networkingv1alpha1.FloatIPPool, len(pools))
	for i := range pools {
		sorted[i] = &pools[i]
	}
	slices.SortFunc(sorted, olderFirst)
	out := make([]*poolView, 0, len(sorted))
	for _, p := range sorted {
		v := parsePool(p)
		if v.err == nil && v.hasRanges() {
			v.err = claims.Check(ledger.FromPool(p), v.set)
		}
		out = append(out, v)
	}
	return out
}

// loadPools lists and parses every pool and reads the ledger, from the same
// reader.
func loadPools(ctx context.Context, c client.Reader) ([]*poolView, error) {
	return (*poolMemo)(nil).load(ctx, c)
}

// poolMemo keeps the last parse of the pools and the ledger and hands it out
// again while neither changed (the same pools, by UID and resourceVersion,
// and the same ledger version): every filter and every bind parsed each
// pool's ranges and the ledger's claims anew. The views are read-only and
// shared by concurrent requests. A nil memo parses every time.
type poolMemo struct {
	mu    sync.Mutex
	key   string
	views []*poolView
}

// load is loadPools through the memo.
func (m *poolMemo) load(ctx context.Context, c client.Reader) ([]*poolView, error) {
	var list networkingv1alpha1.FloatIPPoolList
	// Read-only: pool views never modify the pools.
	if err := c.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing FloatIPPools: %w", err)
	}
	book, l, err := readLedger(ctx, c)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return parsePools(list.Items, book), nil
	}
	key := poolsVersion(list.Items, l)
	m.mu.Lock()
	if m.views != nil && m.key == key {
		views := m.views
		m.mu.Unlock()
		return views, nil
	}
	m.mu.Unlock()
	views := parsePools(list.Items, book)
	m.mu.Lock()
	m.key, m.views = key, views
	m.mu.Unlock()
	return views, nil
}

// poolsVersion names the version of the pools and the ledger (nil: none) a
// parse reflects: what any change to them changes.
func poolsVersion(pools []networkingv1alpha1.FloatIPPool, l *networkingv1alpha1.FloatIPPoolLedger) string {
	var b strings.Builder
	if l != nil {
		b.WriteString(string(l.UID) + "/" + l.ResourceVersion)
	}
	for i := range pools {
		b.WriteString(";" + string(pools[i].UID) + "/" + pools[i].ResourceVersion)
	}
	return b.String()
}

// readLedger returns the ledger's claims and the object (nil when it does
// not exist yet: no pool is admitted). The object is the reader's own (a
// cache's is shared): copy it before changing it.
func readLedger(ctx context.Context, c client.Reader) (*ledger.Book, *networkingv1alpha1.FloatIPPoolLedger, error) {
	// A list, not a get: a cache hands it out without copying it (read on
	// every filter and bind).
	var list networkingv1alpha1.FloatIPPoolLedgerList
	if err := c.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("reading the FloatIPPoolLedger: %w", err)
	}
	for i := range list.Items {
		if l := &list.Items[i]; l.Name == networkingv1alpha1.FloatIPPoolLedgerName {
			return ledger.NewBook(l.Spec.Claims), l, nil
		}
	}
	return ledger.NewBook(nil), nil, nil
}

// nodeInternalIP returns the node's first InternalIP.
func nodeInternalIP(node *corev1.Node) (netip.Addr, bool) {
	for _, a := range node.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err == nil {
			return ip.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// fipIP returns the FloatIP's address.
func fipIP(f *networkingv1alpha1.FloatIP) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(f.Spec.IP)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

// isAdminReserved reports whether a FloatIP carries galaxy's reserved label
// (or has no key): such an IP is never handed out nor collected.
func isAdminReserved(f *networkingv1alpha1.FloatIP) bool {
	_, ok := f.Labels[networkingv1alpha1.LabelFloatIPReserved]
	return ok || f.Spec.Key == ""
}
