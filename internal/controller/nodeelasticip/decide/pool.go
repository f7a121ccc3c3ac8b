package decide

import (
	"cmp"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
)

// Matches reports whether addr passes every filter, as EC2's
// DescribeAddresses judges them (the pool's filters are sent to EC2 as
// they are; this is the same judgement for an address found another way,
// such as the one already on a node).
func Matches(addr aws.Address, filters []networkingv1alpha1.AddressFilter) bool {
	for _, f := range filters {
		if !matches(addr, f) {
			return false
		}
	}
	return true
}

func matches(addr aws.Address, f networkingv1alpha1.AddressFilter) bool {
	anyOf := func(s string) bool {
		return slices.ContainsFunc(f.Values, func(p string) bool { return Glob(p, s) })
	}
	switch {
	case strings.HasPrefix(f.Name, "tag:"):
		v, ok := addr.Tags[strings.TrimPrefix(f.Name, "tag:")]
		return ok && anyOf(v)
	case f.Name == "tag-key":
		for k := range addr.Tags {
			if anyOf(k) {
				return true
			}
		}
		return false
	case f.Name == "public-ip":
		return anyOf(addr.PublicIP)
	case f.Name == "allocation-id":
		return anyOf(addr.AllocationID)
	}
	// The API refuses other names; an unknown one matches nothing.
	return false
}

// Glob matches s against an EC2 filter value: * is any run of characters,
// ? one character, and a backslash makes the next character literal.
func Glob(pattern, s string) bool {
	p, v := []rune(pattern), []rune(s)
	// star is where the last * was seen in p, and the position in v it
	// was tried from.
	star, from := -1, 0
	i, j := 0, 0
	for j < len(v) {
		switch {
		case i < len(p) && p[i] == '*':
			star, from = i, j
			i++
		case i < len(p) && p[i] == '\\' && i+1 < len(p) && p[i+1] == v[j]:
			i, j = i+2, j+1
		case i < len(p) && p[i] != '\\' && (p[i] == '?' || p[i] == v[j]):
			i, j = i+1, j+1
		case star >= 0:
			from++
			i, j = star+1, from
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// Free reports whether a pool address may be claimed by o: not
// associated with anything, and owned by nobody (or by o itself).
func Free(addr aws.Address, o Owner) bool {
	if addr.Associated() {
		return false
	}
	u := addr.Tags[TagOwnerUID]
	return u == "" || u == string(o.UID)
}

// Order is a pool's claiming order (spec.allocation.pool.orderBy).
type Order struct {
	// Field is PublicIp, AllocationId, PublicIpv4Pool or Tag.
	Field string
	// TagKey is the tag of Field Tag.
	TagKey string
	// Descending reverses the order of Field (ties still go to the lower
	// allocation ID).
	Descending bool
}

// ParseOrder parses orderBy ("" is PublicIp).
func ParseOrder(orderBy string) Order {
	var o Order
	o.Field, o.Descending = strings.CutPrefix(orderBy, "-")
	if k, ok := strings.CutPrefix(o.Field, "Tag:"); ok {
		o.Field, o.TagKey = "Tag", k
	}
	if o.Field == "" {
		o.Field = "PublicIp"
	}
	return o
}

// Compare orders two addresses: by the order's field (an address without
// the tag, or without a parseable IP, after every one with it, whichever
// the direction), then by allocation ID.
func (o Order) Compare(a, b aws.Address) int {
	primary := func() int {
		switch o.Field {
		case "AllocationId":
			return cmp.Compare(a.AllocationID, b.AllocationID)
		case "PublicIpv4Pool":
			return cmp.Compare(a.PublicIPv4Pool, b.PublicIPv4Pool)
		case "Tag":
			return compareValues(a.Tags[o.TagKey], b.Tags[o.TagKey])
		default:
			x, _ := netip.ParseAddr(a.PublicIP)
			y, _ := netip.ParseAddr(b.PublicIP)
			return x.Compare(y)
		}
	}
	if c := cmp.Compare(missing(o, a), missing(o, b)); c != 0 {
		return c
	}
	c := primary()
	if o.Descending {
		c = -c
	}
	return cmp.Or(c, cmp.Compare(a.AllocationID, b.AllocationID))
}

// missing is 1 for an address that lacks the order's field.
func missing(o Order, a aws.Address) int {
	switch o.Field {
	case "Tag":
		if _, ok := a.Tags[o.TagKey]; !ok {
			return 1
		}
	case "PublicIp":
		if _, err := netip.ParseAddr(a.PublicIP); err != nil {
			return 1
		}
	}
	return 0
}

// compareValues compares two tag values as integers when both are, as
// strings otherwise (a priority tag of 2 comes before 10).
func compareValues(a, b string) int {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}

// Candidates are the addresses o may claim, in the order to try them:
// those passing the pool's filters that are free, sorted by the pool's
// order.
func Candidates(addrs []aws.Address, o Owner) []aws.Address {
	if o.Pool == nil {
		return nil
	}
	var out []aws.Address
	for _, a := range addrs {
		if Matches(a, o.Pool.Filters) && Free(a, o) {
			out = append(out, a)
		}
	}
	order := ParseOrder(o.Pool.OrderBy)
	slices.SortFunc(out, order.Compare)
	return out
}
