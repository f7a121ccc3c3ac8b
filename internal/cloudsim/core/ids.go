package core

import (
	"fmt"
	"math/big"
	"net/netip"
)

const (
	hexDigits   = "0123456789abcdef"
	lowerAlnums = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// randomString draws n characters from alphabet with the world's seeded
// source. Called with w.mu held.
func (w *World) randomString(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[w.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// ec2ID returns an EC2-style long ID: prefix + "-" + 17 hex digits.
func (w *World) ec2ID(prefix string) string {
	return prefix + "-" + w.randomString(hexDigits, 17)
}

// tcID returns a Tencent-style ID: prefix + "-" + 8 lower-case alphanumerics.
func (w *World) tcID(prefix string) string {
	return prefix + "-" + w.randomString(lowerAlnums, 8)
}

// requestID returns a UUID-shaped request ID, as both clouds use.
func (w *World) requestID() string {
	s := w.randomString(hexDigits, 32)
	return fmt.Sprintf("%s-%s-4%s-a%s-%s", s[0:8], s[8:12], s[13:16], s[17:20], s[20:32])
}

// ipPool hands out host addresses of a prefix in order, skipping ones in
// use, wrapping around when it reaches the end.
type ipPool struct {
	prefix netip.Prefix
	next   netip.Addr
	used   map[netip.Addr]bool
}

func newIPPool(cidr string) (*ipPool, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("parsing address pool %q: %w", cidr, err)
	}
	p = p.Masked()
	return &ipPool{prefix: p, next: p.Addr().Next(), used: map[netip.Addr]bool{}}, nil
}

// size is the number of host addresses the pool can hand out (network and
// broadcast excluded), saturated at a large value for huge prefixes.
func (p *ipPool) size() int {
	hostBits := p.prefix.Addr().BitLen() - p.prefix.Bits()
	if hostBits > 30 {
		return 1 << 30
	}
	n := new(big.Int).Lsh(big.NewInt(1), uint(hostBits)).Int64() - 2
	return int(max(n, 0))
}

// take returns the next free address, or false when the pool is exhausted.
func (p *ipPool) take() (netip.Addr, bool) {
	if len(p.used) >= p.size() {
		return netip.Addr{}, false
	}
	for range p.size() + 2 {
		a := p.next
		p.next = p.next.Next()
		if !p.prefix.Contains(p.next) || isBroadcast(p.prefix, p.next) {
			p.next = p.prefix.Addr().Next()
		}
		if !p.prefix.Contains(a) || a == p.prefix.Addr() || isBroadcast(p.prefix, a) || p.used[a] {
			continue
		}
		p.used[a] = true
		return a, true
	}
	return netip.Addr{}, false
}

// claim marks an address (from fixtures) as in use; addresses outside the
// prefix are accepted and simply not tracked.
func (p *ipPool) claim(a netip.Addr) {
	if p.prefix.Contains(a) {
		p.used[a] = true
	}
}

func (p *ipPool) release(a netip.Addr) { delete(p.used, a) }

func isBroadcast(p netip.Prefix, a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	b := a.As4()
	base := p.Addr().As4()
	hostBits := 32 - p.Bits()
	if hostBits == 0 {
		return false
	}
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	bv := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	mask := uint32(1)<<hostBits - 1
	return v == bv|mask
}
