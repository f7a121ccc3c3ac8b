package core

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// tcENI is a Tencent VPC elastic network interface. A CVM instance has one
// primary ENI (device index 0, created with it) and may have secondary ENIs
// attached; an ENI may also exist attached to nothing ("dangling"). Its
// private IPs are unique within the VPC.
type tcENI struct {
	ID          string
	Name        string
	Description string
	VpcID       string
	SubnetID    string
	Zone        string
	// InstanceID is the CVM the ENI is attached to ("" when dangling).
	InstanceID  string
	Primary     bool
	DeviceIndex int
	// PrivateIPs: the first is the ENI's primary IP.
	PrivateIPs []string
	Tags       map[string]string
	CreatedAt  time.Time
	seq        int64
}

// macAddress derives a stable, locally administered MAC from the ENI ID
// (no draw from the seeded source, so adding ENIs to a fixture never shifts
// the IDs generated after it). Tencent writes MACs upper-case.
func (e *tcENI) macAddress() string {
	h := sha256.Sum256([]byte(e.ID))
	return fmt.Sprintf("02:%02X:%02X:%02X:%02X:%02X", h[0], h[1], h[2], h[3], h[4])
}

// TCPrivateIP is one private IPv4 address of a Tencent ENI and the EIP bound
// to it, if any (vpc.PrivateIpAddressSpecification).
type TCPrivateIP struct {
	PrivateIPAddress string `json:"privateIpAddress"`
	Primary          bool   `json:"primary"`
	PublicIPAddress  string `json:"publicIpAddress,omitempty"`
	AddressID        string `json:"addressId,omitempty"`
}

// TCNetworkInterface is the public view of a Tencent ENI (fields as in
// vpc.NetworkInterface).
type TCNetworkInterface struct {
	NetworkInterfaceID string        `json:"networkInterfaceId"`
	Name               string        `json:"networkInterfaceName,omitempty"`
	Description        string        `json:"networkInterfaceDescription,omitempty"`
	VpcID              string        `json:"vpcId"`
	SubnetID           string        `json:"subnetId"`
	Zone               string        `json:"zone"`
	Primary            bool          `json:"primary"`
	MacAddress         string        `json:"macAddress"`
	InstanceID         string        `json:"instanceId,omitempty"`
	DeviceIndex        int           `json:"deviceIndex"`
	PrivateIPAddresses []TCPrivateIP `json:"privateIpAddresses"`
	Tags               []Tag         `json:"tags,omitempty"`
	CreatedTime        time.Time     `json:"createdTime"`
}

func (w *World) tcENIView(e *tcENI) TCNetworkInterface {
	v := TCNetworkInterface{
		NetworkInterfaceID: e.ID,
		Name:               e.Name,
		Description:        e.Description,
		VpcID:              e.VpcID,
		SubnetID:           e.SubnetID,
		Zone:               e.Zone,
		Primary:            e.Primary,
		MacAddress:         e.macAddress(),
		InstanceID:         e.InstanceID,
		DeviceIndex:        e.DeviceIndex,
		PrivateIPAddresses: []TCPrivateIP{},
		Tags:               sortedTags(e.Tags),
		CreatedTime:        e.CreatedAt,
	}
	for i, ip := range e.PrivateIPs {
		p := TCPrivateIP{PrivateIPAddress: ip, Primary: i == 0}
		if a := w.tcAddressOn(e.ID, ip); a != nil && a.Status != TCStatusBinding {
			p.PublicIPAddress, p.AddressID = a.IP.String(), a.ID
		}
		v.PrivateIPAddresses = append(v.PrivateIPAddresses, p)
	}
	return v
}

// TCDescribeNetworkInterfacesInput is DescribeNetworkInterfaces' parameters.
type TCDescribeNetworkInterfacesInput struct {
	NetworkInterfaceIDs []string
	Filters             []Filter
	Offset              *uint64
	Limit               *uint64
}

// tcENIFilters are DescribeNetworkInterfaces' filters
// (https://www.tencentcloud.com/document/api/215/15817). Values match
// exactly, except address-ip (see tcAddressIPMatches). The emulator models
// no security groups, IPv6 addresses or QoS tiers, so groups.security-group-id,
// address-ipv6 and address-type match nothing and eni-qos only DEFAULT.
var tcENIFilters = map[string]func(w *World, e *tcENI, f Filter, all []Filter) bool{
	"vpc-id":                        func(_ *World, e *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, e.VpcID) },
	"subnet-id":                     func(_ *World, e *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, e.SubnetID) },
	"network-interface-id":          func(_ *World, e *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, e.ID) },
	"network-interface-name":        func(_ *World, e *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, e.Name) },
	"network-interface-description": func(_ *World, e *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, e.Description) },
	"attachment.instance-id": func(_ *World, e *tcENI, f Filter, _ []Filter) bool {
		return e.InstanceID != "" && anyEqual(f.Values, e.InstanceID)
	},
	"address-ip": func(_ *World, e *tcENI, f Filter, all []Filter) bool {
		return slices.ContainsFunc(e.PrivateIPs, func(ip string) bool { return tcAddressIPMatches(f.Values, all, ip) })
	},
	// ip-exact-match only changes how address-ip matches.
	"ip-exact-match": func(*World, *tcENI, Filter, []Filter) bool { return true },
	"public-address-ip": func(w *World, e *tcENI, f Filter, _ []Filter) bool {
		for _, ip := range e.PrivateIPs {
			if a := w.tcAddressOn(e.ID, ip); a != nil && a.Status != TCStatusBinding && anyEqual(f.Values, a.IP.String()) {
				return true
			}
		}
		return false
	},
	"is-primary": func(_ *World, e *tcENI, f Filter, _ []Filter) bool {
		return slices.ContainsFunc(f.Values, func(v string) bool { return strings.EqualFold(v, strconv.FormatBool(e.Primary)) })
	},
	"eni-type": func(_ *World, e *tcENI, f Filter, _ []Filter) bool {
		return anyEqual(f.Values, strconv.Itoa(e.eniType()))
	},
	"eni-qos":                  func(_ *World, _ *tcENI, f Filter, _ []Filter) bool { return anyEqual(f.Values, "DEFAULT") },
	"groups.security-group-id": func(*World, *tcENI, Filter, []Filter) bool { return false },
	"address-ipv6":             func(*World, *tcENI, Filter, []Filter) bool { return false },
	"address-type":             func(*World, *tcENI, Filter, []Filter) bool { return false },
	"tag-key": func(_ *World, e *tcENI, f Filter, _ []Filter) bool {
		return slices.ContainsFunc(f.Values, func(k string) bool { _, ok := e.Tags[k]; return ok })
	},
}

// eniType is NetworkInterface.EniType: 1 for a primary ENI, 0 for a
// secondary one (2, a trunk ENI, is not modelled).
func (e *tcENI) eniType() int {
	if e.Primary {
		return 1
	}
	return 0
}

// tcAddressIPMatches applies the address-ip filter: "a single IP will be
// fuzzily matched with the suffix, while multiple IPs will be exactly
// matched; use ip-exact-match to match a single IP exactly" (the first
// ip-exact-match value counts). The emulator reads the fuzzy match as "the
// address starts with the value" (10.0.1.2 also finds 10.0.1.20-29), so a
// client looking up one pod IP must ask for an exact match or check what
// comes back.
func tcAddressIPMatches(values []string, all []Filter, ip string) bool {
	if len(values) != 1 {
		return anyEqual(values, ip)
	}
	for _, f := range all {
		if f.Name == "ip-exact-match" && len(f.Values) > 0 && strings.EqualFold(f.Values[0], "true") {
			return values[0] == ip
		}
	}
	return strings.HasPrefix(ip, values[0])
}

// TCDescribeNetworkInterfaces lists ENIs with Tencent's paging (Offset,
// Limit default 20, at most 100) and its rules
// (https://www.tencentcloud.com/document/api/215/15817): NetworkInterfaceIds
// (at most 100) and Filters cannot be combined (InvalidParameter.Coexist);
// an unknown filter is InvalidParameter.FilterInvalidKey; an ID that does
// not exist is ResourceNotFound, which the Tencent Terraform provider
// reads as "deleted".
func (w *World) TCDescribeNetworkInterfaces(in TCDescribeNetworkInterfacesInput) ([]TCNetworkInterface, int, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tcAdvance()
	if len(in.NetworkInterfaceIDs) > 0 && len(in.Filters) > 0 {
		return nil, 0, badRequest(TCInvalidParameterCoexist, "NetworkInterfaceIds and Filters cannot be specified together")
	}
	if len(in.NetworkInterfaceIDs) > 100 {
		return nil, 0, badRequest(TCParameterValueLimitExceeded, "at most 100 NetworkInterfaceIds are allowed")
	}
	for _, id := range in.NetworkInterfaceIDs {
		if !tcENIIDPattern.MatchString(id) {
			return nil, 0, badRequest(TCParameterMalformed, "NetworkInterfaceId %q is malformed", id)
		}
	}
	for _, f := range in.Filters {
		if _, ok := tcENIFilters[f.Name]; !ok && !strings.HasPrefix(f.Name, "tag:") {
			return nil, 0, badRequest(TCFilterInvalidKey, "the filter %q is not supported", f.Name)
		}
	}
	offset, limit := uint64(0), uint64(20)
	if in.Offset != nil {
		offset = *in.Offset
	}
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit > 100 {
		return nil, 0, badRequest(TCParameterValueRange, "Limit %d is out of range [0, 100]", limit)
	}
	if limit == 0 {
		limit = 20
	}
	for _, id := range in.NetworkInterfaceIDs {
		if w.tc.enis[id] == nil {
			return nil, 0, badRequest(TCResourceNotFound, "the network interface %s does not exist", id)
		}
	}
	var all []*tcENI
	for _, e := range w.tc.enis {
		if len(in.NetworkInterfaceIDs) > 0 && !slices.Contains(in.NetworkInterfaceIDs, e.ID) {
			continue
		}
		if w.tcENIMatches(e, in.Filters) {
			all = append(all, e)
		}
	}
	slices.SortFunc(all, func(x, y *tcENI) int { return cmp.Compare(x.seq, y.seq) })
	total := len(all)
	start := min(offset, uint64(total))
	end := start + min(limit, uint64(total)-start)
	out := make([]TCNetworkInterface, 0, end-start)
	for _, e := range all[start:end] {
		out = append(out, w.tcENIView(e))
	}
	return out, total, nil
}

func (w *World) tcENIMatches(e *tcENI, filters []Filter) bool {
	for _, f := range filters {
		if m, isTag := tcMatchTagFilter(f.Name, e.Tags, f.Values); isTag {
			if !m {
				return false
			}
			continue
		}
		if !tcENIFilters[f.Name](w, e, f, filters) {
			return false
		}
	}
	return true
}
