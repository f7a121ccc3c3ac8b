// Package ledger decides which FloatIPPools may hand out which IPs, from the
// claims of the FloatIPPoolLedger: a pool with ranges is usable only while
// its claim matches its spec, and a claim is added only if it shares no IP
// with another. Every function is pure; the pool reconciler reads and
// writes the ledger (optimistic concurrency on the one object makes the
// claims disjoint in every version, whoever writes), the allocator and the
// status read it.
package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// Pool is what the ledger needs of a FloatIPPool with ranges.
type Pool struct {
	Name       string
	UID        types.UID
	Created    time.Time
	Ranges     []string
	ExcludeIPs []string
}

// FromPool returns p's Pool.
func FromPool(p *networkingv1alpha1.FloatIPPool) Pool {
	return Pool{Name: p.Name, UID: p.UID, Created: p.CreationTimestamp.Time, Ranges: p.Spec.Ranges, ExcludeIPs: p.Spec.ExcludeIPs}
}

// ErrNotAdmitted: the pool has no claim for its current ranges yet; the pool
// reconciler adds it unless it overlaps another claim.
var ErrNotAdmitted = errors.New("the pool is not admitted yet: the ledger has no claim for its current ranges")

// ConflictError: the pool's ranges share IPs with another pool's claim, so
// it cannot be admitted while that claim stands.
type ConflictError struct {
	// Other is the pool holding the claim.
	Other string
	// Overlap is the first shared range.
	Overlap ipam.Range
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("IPs %s are also in pool %s, admitted first", e.Overlap, e.Other)
}

// Limits bound the ledger (see networkingv1alpha1.MaxFloatIPPoolClaims).
type Limits struct {
	// MaxClaims is the most pools with ranges the ledger admits.
	MaxClaims int
	// MaxEntries is the most ranges and excludeIPs entries of all claims
	// together.
	MaxEntries int
}

// DefaultLimits are the FloatIPPoolLedger CRD's own bounds.
var DefaultLimits = Limits{MaxClaims: networkingv1alpha1.MaxFloatIPPoolClaims, MaxEntries: networkingv1alpha1.MaxFloatIPPoolClaimEntries}

// FullError: admitting the pool would take the ledger past its limits, so
// it waits until other pools go or shrink.
type FullError struct {
	// Claims and Entries are what the ledger would hold with the pool.
	Claims, Entries int
	Limits          Limits
}

func (e *FullError) Error() string {
	return fmt.Sprintf("the FloatIPPoolLedger is full: admitting this pool would make it %d pools with %d ranges and excludeIPs entries, over its limit of %d pools and %d entries; delete unused pools or merge their ranges",
		e.Claims, e.Entries, e.Limits.MaxClaims, e.Limits.MaxEntries)
}

// Book is the ledger's claims, indexed by pool, with their parsed sets.
type Book struct {
	claims []networkingv1alpha1.FloatIPPoolClaim
	byPool map[string]int
	sets   []ipam.Set // parsed on first use
	parsed []bool
	limits Limits
}

// NewBook indexes claims (it keeps its own copy), with the default limits.
func NewBook(claims []networkingv1alpha1.FloatIPPoolClaim) *Book {
	b := &Book{claims: slices.Clone(claims), byPool: make(map[string]int, len(claims)), limits: DefaultLimits}
	for i, c := range b.claims {
		b.byPool[c.Pool] = i
	}
	b.sets, b.parsed = make([]ipam.Set, len(b.claims)), make([]bool, len(b.claims))
	return b
}

// SetLimits replaces the limits (tests: a ledger that is full at once);
// they must not exceed DefaultLimits, which the API server enforces.
func (b *Book) SetLimits(l Limits) { b.limits = l }

// Claims returns the claims, sorted by pool.
func (b *Book) Claims() []networkingv1alpha1.FloatIPPoolClaim {
	out := slices.Clone(b.claims)
	slices.SortFunc(out, func(a, b networkingv1alpha1.FloatIPPoolClaim) int { return strings.Compare(a.Pool, b.Pool) })
	return out
}

// Check reports whether pool may hand out its IPs: nil when the book holds
// a claim of the same pool (same UID) for exactly its ranges and
// excludeIPs, a *ConflictError when its ranges overlap another pool's
// claim, a *FullError when its claim would not fit the book's limits, else
// ErrNotAdmitted. set is the pool's parsed spec.
func (b *Book) Check(pool Pool, set ipam.Set) error {
	if i, ok := b.byPool[pool.Name]; ok && b.claims[i].UID == string(pool.UID) && matches(&b.claims[i], pool) {
		return nil
	}
	if err := b.conflict(pool.Name, set); err != nil {
		return err
	}
	if i, ok := b.byPool[pool.Name]; !ok || b.claims[i].UID == string(pool.UID) {
		if err := b.room(pool); err != nil {
			return err
		}
	}
	return ErrNotAdmitted
}

// Admit admits every pool of pools that it can, oldest first (by creation,
// then name), and reports whether the claims changed. A pool is admitted
// when its claim already matches its spec; when it has no claim, or one for
// other ranges (its spec changed), it gets a claim for its spec unless that
// overlaps another pool's claim or takes the book past its limits. A claim whose pool has another UID
// (deleted and created again) is left for Orphans; its pool waits. sets[i]
// is pools[i]'s parsed spec; pools must not be deleting: a deleting pool
// keeps its claim until it is gone.
func (b *Book) Admit(pools []Pool, sets []ipam.Set) bool {
	order := make([]int, len(pools))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(pools[x].Created.Compare(pools[y].Created), strings.Compare(pools[x].Name, pools[y].Name))
	})
	changed := false
	for _, i := range order {
		p := pools[i]
		at, ok := b.byPool[p.Name]
		if ok && (b.claims[at].UID != string(p.UID) || matches(&b.claims[at], p)) {
			continue
		}
		if b.conflict(p.Name, sets[i]) != nil || b.room(p) != nil {
			continue
		}
		c := networkingv1alpha1.FloatIPPoolClaim{Pool: p.Name, UID: string(p.UID), Ranges: slices.Clone(p.Ranges), ExcludeIPs: slices.Clone(p.ExcludeIPs)}
		if !ok {
			at = len(b.claims)
			b.claims = append(b.claims, c)
			b.sets, b.parsed = append(b.sets, nil), append(b.parsed, false)
			b.byPool[p.Name] = at
		}
		b.claims[at], b.sets[at], b.parsed[at] = c, sets[i], true
		changed = true
	}
	return changed
}

// Orphans returns the names of the claims whose pool (same name and UID) is
// not among existing, sorted. The caller confirms with a fresh read before
// dropping them: a cache that has not seen a pool yet must not free its IPs.
func (b *Book) Orphans(existing map[string]types.UID) []string {
	var out []string
	for _, c := range b.claims {
		if uid, ok := existing[c.Pool]; !ok || string(uid) != c.UID {
			out = append(out, c.Pool)
		}
	}
	slices.Sort(out)
	return out
}

// Drop removes the claims of the named pools.
func (b *Book) Drop(pools []string) {
	keep := slices.DeleteFunc(b.Claims(), func(c networkingv1alpha1.FloatIPPoolClaim) bool { return slices.Contains(pools, c.Pool) })
	limits := b.limits
	*b = *NewBook(keep)
	b.limits = limits
}

// conflict returns a *ConflictError for the first claim of another pool
// that shares IPs with set. A claim that does not parse (the spec it was
// copied from did) conflicts with everything: it may hold any IP.
func (b *Book) conflict(pool string, set ipam.Set) error {
	for i := range b.claims {
		c := &b.claims[i]
		if c.Pool == pool {
			continue
		}
		if !b.parsed[i] {
			set, err := ipam.ParseSet(c.Ranges, c.ExcludeIPs)
			if err != nil {
				return &ConflictError{Other: c.Pool}
			}
			b.sets[i], b.parsed[i] = set, true
		}
		if r, ok := set.Overlap(b.sets[i]); ok {
			return &ConflictError{Other: c.Pool, Overlap: r}
		}
	}
	return nil
}

// room returns a *FullError when a claim for pool's spec (replacing the
// pool's own claim, if it has one) would take the book past its limits.
func (b *Book) room(pool Pool) error {
	claims, entries := len(b.claims), 0
	for i := range b.claims {
		entries += len(b.claims[i].Ranges) + len(b.claims[i].ExcludeIPs)
	}
	if i, ok := b.byPool[pool.Name]; ok {
		entries -= len(b.claims[i].Ranges) + len(b.claims[i].ExcludeIPs)
	} else {
		claims++
	}
	entries += len(pool.Ranges) + len(pool.ExcludeIPs)
	if claims > b.limits.MaxClaims || entries > b.limits.MaxEntries {
		return &FullError{Claims: claims, Entries: entries, Limits: b.limits}
	}
	return nil
}

func matches(c *networkingv1alpha1.FloatIPPoolClaim, p Pool) bool {
	return slices.Equal(c.Ranges, p.Ranges) && slices.Equal(c.ExcludeIPs, p.ExcludeIPs)
}
