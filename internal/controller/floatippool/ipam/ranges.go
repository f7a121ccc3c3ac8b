// Package ipam holds the pure parts of float-IP management: IP ranges and
// pools, FloatIP object names, galaxy's allocation keys, the pod annotations
// galaxy defined, and the release-policy decision. Nothing here talks to the
// API server, so every function is table-tested.
package ipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"
)

// Range is an inclusive range of IP addresses of one family.
type Range struct {
	First, Last netip.Addr
}

// String formats r the way galaxy does: "first~last", or a single IP.
func (r Range) String() string {
	if r.First == r.Last {
		return r.First.String()
	}
	return r.First.String() + "~" + r.Last.String()
}

// Contains reports whether ip is in r.
func (r Range) Contains(ip netip.Addr) bool {
	return ip.BitLen() == r.First.BitLen() && r.First.Compare(ip) <= 0 && ip.Compare(r.Last) <= 0
}

// Size is the number of addresses in r (saturating at MaxInt64).
func (r Range) Size() int64 {
	a, b := new(big.Int).SetBytes(r.First.AsSlice()), new(big.Int).SetBytes(r.Last.AsSlice())
	n := b.Sub(b, a)
	n.Add(n, big.NewInt(1))
	if !n.IsInt64() {
		return int64(^uint64(0) >> 1)
	}
	return n.Int64()
}

// overlaps reports whether r and o share an address.
func (r Range) overlaps(o Range) bool {
	return r.First.BitLen() == o.First.BitLen() && r.First.Compare(o.Last) <= 0 && o.First.Compare(r.Last) <= 0
}

// ParseRange parses "a.b.c.d", "a.b.c.d~e.f.g.h" or a CIDR. A CIDR covers
// every address of its prefix. IPv4-mapped IPv6 addresses are unmapped.
func ParseRange(s string) (Range, error) {
	s = strings.TrimSpace(s)
	if first, last, ok := strings.Cut(s, "~"); ok {
		a, err := parseAddr(first)
		if err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
		b, err := parseAddr(last)
		if err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
		if a.BitLen() != b.BitLen() {
			return Range{}, fmt.Errorf("range %q mixes IPv4 and IPv6", s)
		}
		if b.Less(a) {
			return Range{}, fmt.Errorf("range %q ends before it starts", s)
		}
		return Range{First: a, Last: b}, nil
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
		p = p.Masked()
		return Range{First: p.Addr().Unmap(), Last: lastAddr(p)}, nil
	}
	a, err := parseAddr(s)
	if err != nil {
		return Range{}, fmt.Errorf("range %q: %w", s, err)
	}
	return Range{First: a, Last: a}, nil
}

func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("not an IP address: %w", err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, errors.New("IP address with a zone")
	}
	return a.Unmap(), nil
}

// lastAddr is the highest address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().Unmap().AsSlice()
	bits := p.Bits()
	if p.Addr().Is4In6() {
		bits -= 96
	}
	for i := range b {
		for j := 0; j < 8; j++ {
			if i*8+j >= bits {
				b[i] |= 0x80 >> j
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Set is a sorted list of disjoint ranges.
type Set []Range

// ParseSet parses ranges, subtracts excludes, and returns the sorted result.
// Ranges that overlap each other are an error (a typo that would otherwise
// hide IPs); excludes may overlap anything.
func ParseSet(ranges, excludes []string) (Set, error) {
	var s Set
	for _, r := range ranges {
		pr, err := ParseRange(r)
		if err != nil {
			return nil, err
		}
		s = append(s, pr)
	}
	slices.SortFunc(s, func(a, b Range) int { return a.First.Compare(b.First) })
	for i := 1; i < len(s); i++ {
		if s[i-1].overlaps(s[i]) {
			return nil, fmt.Errorf("ranges %s and %s overlap", s[i-1], s[i])
		}
	}
	for _, e := range excludes {
		ex, err := ParseRange(e)
		if err != nil {
			return nil, fmt.Errorf("excludeIPs: %w", err)
		}
		s = s.subtract(ex)
	}
	return s, nil
}

// subtract removes ex from s.
func (s Set) subtract(ex Range) Set {
	var out Set
	for _, r := range s {
		if !r.overlaps(ex) {
			out = append(out, r)
			continue
		}
		if r.First.Less(ex.First) {
			out = append(out, Range{First: r.First, Last: ex.First.Prev()})
		}
		if ex.Last.Less(r.Last) {
			out = append(out, Range{First: ex.Last.Next(), Last: r.Last})
		}
	}
	return out
}

// Contains reports whether ip is in s.
func (s Set) Contains(ip netip.Addr) bool {
	ip = ip.Unmap()
	i, _ := slices.BinarySearchFunc(s, ip, func(r Range, ip netip.Addr) int {
		switch {
		case r.Last.Less(ip):
			return -1
		case ip.Less(r.First):
			return 1
		}
		return 0
	})
	return i < len(s) && s[i].Contains(ip)
}

// Size is the number of addresses in s (saturating).
func (s Set) Size() int64 {
	var n int64
	for _, r := range s {
		m := r.Size()
		if n+m < n {
			return int64(^uint64(0) >> 1)
		}
		n += m
	}
	return n
}

// Overlap returns the first range of addresses s and o share, if any.
func (s Set) Overlap(o Set) (Range, bool) {
	for _, a := range s {
		for _, b := range o {
			if a.overlaps(b) {
				first, last := a.First, a.Last
				if first.Less(b.First) {
					first = b.First
				}
				if b.Last.Less(last) {
					last = b.Last
				}
				return Range{First: first, Last: last}, true
			}
		}
	}
	return Range{}, false
}

// Each calls fn for every address of s in order until fn returns false.
func (s Set) Each(fn func(netip.Addr) bool) {
	for _, r := range s {
		for a := r.First; ; a = a.Next() {
			if !fn(a) {
				return
			}
			if a == r.Last {
				break
			}
		}
	}
}

// EachFrom calls fn for every address of s, starting at the offset-th
// address and wrapping around, until fn returns false.
func (s Set) EachFrom(offset int64, fn func(netip.Addr) bool) {
	if offset <= 0 {
		s.Each(fn)
		return
	}
	// Find the range holding the offset-th address.
	start := -1
	var first netip.Addr
	for i, r := range s {
		n := r.Size()
		if offset < n {
			start, first = i, addOffset(r.First, offset)
			break
		}
		offset -= n
	}
	if start < 0 {
		s.Each(fn)
		return
	}
	stopped := false
	visit := func(r Range) bool {
		for a := r.First; ; a = a.Next() {
			if !fn(a) {
				stopped = true
				return false
			}
			if a == r.Last {
				return true
			}
		}
	}
	order := []Range{{First: first, Last: s[start].Last}}
	order = append(order, s[start+1:]...)
	order = append(order, s[:start]...)
	if first != s[start].First {
		order = append(order, Range{First: s[start].First, Last: first.Prev()})
	}
	for _, r := range order {
		if !visit(r) || stopped {
			return
		}
	}
}

// addOffset returns a + n.
func addOffset(a netip.Addr, n int64) netip.Addr {
	b := new(big.Int).SetBytes(a.AsSlice())
	b.Add(b, big.NewInt(n))
	out := make([]byte, len(a.AsSlice()))
	b.FillBytes(out)
	r, _ := netip.AddrFromSlice(out)
	return r
}

// Intersect returns the addresses of s that are also in r.
func (s Set) Intersect(r Range) Set {
	var out Set
	for _, x := range s {
		if !x.overlaps(r) {
			continue
		}
		first, last := x.First, x.Last
		if first.Less(r.First) {
			first = r.First
		}
		if r.Last.Less(last) {
			last = r.Last
		}
		out = append(out, Range{First: first, Last: last})
	}
	return out
}

// NameForIP is the FloatIP object name of ip: the IPv4 address with dots
// replaced by dashes (10-0-0-5), or the fully expanded IPv6 address with
// colons replaced by dashes, so that every name is a valid DNS subdomain and
// one IP has exactly one name.
func NameForIP(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is4() {
		return strings.ReplaceAll(ip.String(), ".", "-")
	}
	return strings.ReplaceAll(ip.StringExpanded(), ":", "-")
}

// IPForName reverses NameForIP.
func IPForName(name string) (netip.Addr, error) {
	var s string
	switch strings.Count(name, "-") {
	case 3:
		s = strings.ReplaceAll(name, "-", ".")
	case 7:
		s = strings.ReplaceAll(name, "-", ":")
	default:
		return netip.Addr{}, fmt.Errorf("%q is not a FloatIP name", name)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not a FloatIP name: %w", name, err)
	}
	if NameForIP(a) != name {
		return netip.Addr{}, fmt.Errorf("%q is not the canonical FloatIP name of %s", name, a)
	}
	return a, nil
}
