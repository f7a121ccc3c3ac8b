package aws

import (
	"maps"
	"net/netip"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/edgeplane/edgeplane/internal/cloud"
)

// DefaultPublicIPv4Pool is the pool AllocateAddress uses when none is asked
// for (the legacy controller's default too).
const DefaultPublicIPv4Pool = "amazon"

// Address is an Elastic IP as edgeplane sees it.
type Address struct {
	AllocationID       string
	PublicIP           string
	PublicIPv4Pool     string
	AssociationID      string
	NetworkInterfaceID string
	PrivateIPAddress   string
	InstanceID         string
	Tags               map[string]string
}

// Associated reports whether the address is associated with anything.
func (a Address) Associated() bool { return a.AssociationID != "" }

// MissingTags returns the tags of want the address lacks or carries with
// another value; nil when it carries them all.
func (a Address) MissingTags(want map[string]string) map[string]string {
	return cloud.MissingTags(a.Tags, want)
}

// AllocateRequest is what edgeplane allocates: a public IPv4 pool (empty:
// "amazon") and the ownership tags, applied atomically at creation so a
// lost response can be recovered by looking the address up by tag.
type AllocateRequest struct {
	PublicIPv4Pool string
	Tags           map[string]string
}

// AddressQuery selects addresses. All set fields must match (AND);
// Tags match exact values (tag:K=V), TagKeys only require the key.
type AddressQuery struct {
	AllocationIDs      []string
	AssociationID      string
	NetworkInterfaceID string
	PrivateIPAddress   string
	// InstanceIDs match addresses associated with any of these instances
	// (through any of their ENIs).
	InstanceIDs []string
	TagKeys     []string
	Tags        map[string]string
	// Filters are further DescribeAddresses filters, as EC2 (and the
	// AWS CLI's --filters) spells them: a reserved pool's selection.
	Filters []Filter
}

// Filter is one EC2 filter: the field Name matches one of Values (* and ?
// are wildcards).
type Filter struct {
	Name   string
	Values []string
}

// NetworkInterface is an ENI as edgeplane sees it.
type NetworkInterface struct {
	ID         string
	VpcID      string
	SubnetID   string
	InstanceID string
	// DeviceIndex and NetworkCardIndex place an attached ENI on its
	// instance; the primary ENI is device 0 on network card 0.
	DeviceIndex      int32
	NetworkCardIndex int32
	PrivateIPs       []string
	IPv4Prefixes     []netip.Prefix
	Tags             map[string]string
	// PublicIPs maps a private IP to the Elastic IP associated with it,
	// whichever account owns that address.
	PublicIPs map[string]string
}

// tagsToSDK converts a tag map into SDK tags ordered by key, so requests are
// deterministic.
func tagsToSDK(tags map[string]string) []types.Tag {
	if len(tags) == 0 {
		return nil
	}
	out := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		out = append(out, types.Tag{Key: awssdk.String(k), Value: awssdk.String(tags[k])})
	}
	return out
}

// tagsFromSDK converts SDK tags into a map (nil keys are skipped).
func tagsFromSDK(tags []types.Tag) map[string]string {
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		if t.Key != nil {
			out[cloud.TagKey(*t.Key)] = awssdk.ToString(t.Value)
		}
	}
	return out
}

// allocateAddressInput maps an AllocateRequest: the pool and one
// elastic-ip TagSpecification.
func allocateAddressInput(r AllocateRequest) *ec2.AllocateAddressInput {
	pool := r.PublicIPv4Pool
	if pool == "" {
		pool = DefaultPublicIPv4Pool
	}
	in := &ec2.AllocateAddressInput{
		Domain:         types.DomainTypeVpc,
		PublicIpv4Pool: awssdk.String(pool),
	}
	if len(r.Tags) > 0 {
		in.TagSpecifications = []types.TagSpecification{{
			ResourceType: types.ResourceTypeElasticIp,
			Tags:         tagsToSDK(r.Tags),
		}}
	}
	return in
}

// associateAddressInput associates with one private IP of one ENI and never
// steals an address associated elsewhere (AllowReassociation=false).
func associateAddressInput(allocationID, networkInterfaceID, privateIP string) *ec2.AssociateAddressInput {
	return &ec2.AssociateAddressInput{
		AllocationId:       awssdk.String(allocationID),
		NetworkInterfaceId: awssdk.String(networkInterfaceID),
		PrivateIpAddress:   awssdk.String(privateIP),
		AllowReassociation: awssdk.Bool(false),
	}
}

func filter(name string, values ...string) types.Filter {
	return types.Filter{Name: awssdk.String(name), Values: values}
}

// describeAddressesInput maps a query to IDs and filters; filters are
// emitted in a fixed order.
func describeAddressesInput(q AddressQuery) *ec2.DescribeAddressesInput {
	in := &ec2.DescribeAddressesInput{}
	if len(q.AllocationIDs) > 0 {
		// A filter rather than AllocationIds: unknown IDs then yield an empty
		// result instead of InvalidAllocationID.NotFound for the whole call.
		in.Filters = append(in.Filters, filter("allocation-id", q.AllocationIDs...))
	}
	if q.AssociationID != "" {
		in.Filters = append(in.Filters, filter("association-id", q.AssociationID))
	}
	if q.NetworkInterfaceID != "" {
		in.Filters = append(in.Filters, filter("network-interface-id", q.NetworkInterfaceID))
	}
	if q.PrivateIPAddress != "" {
		in.Filters = append(in.Filters, filter("private-ip-address", q.PrivateIPAddress))
	}
	if len(q.InstanceIDs) > 0 {
		in.Filters = append(in.Filters, filter("instance-id", q.InstanceIDs...))
	}
	for _, k := range slices.Sorted(slices.Values(q.TagKeys)) {
		in.Filters = append(in.Filters, filter("tag-key", k))
	}
	for _, k := range slices.Sorted(maps.Keys(q.Tags)) {
		in.Filters = append(in.Filters, filter("tag:"+k, q.Tags[k]))
	}
	for _, f := range q.Filters {
		in.Filters = append(in.Filters, filter(f.Name, f.Values...))
	}
	return in
}

// addressFromSDK maps an SDK address.
func addressFromSDK(a types.Address) Address {
	return Address{
		AllocationID:       awssdk.ToString(a.AllocationId),
		PublicIP:           awssdk.ToString(a.PublicIp),
		PublicIPv4Pool:     awssdk.ToString(a.PublicIpv4Pool),
		AssociationID:      awssdk.ToString(a.AssociationId),
		NetworkInterfaceID: awssdk.ToString(a.NetworkInterfaceId),
		PrivateIPAddress:   awssdk.ToString(a.PrivateIpAddress),
		InstanceID:         awssdk.ToString(a.InstanceId),
		Tags:               tagsFromSDK(a.Tags),
	}
}

// networkInterfaceFromSDK maps an SDK ENI; malformed prefixes are skipped
// (nil-safe, unlike the legacy controller before its PR #229).
func networkInterfaceFromSDK(n types.NetworkInterface) NetworkInterface {
	out := NetworkInterface{
		ID:       awssdk.ToString(n.NetworkInterfaceId),
		VpcID:    awssdk.ToString(n.VpcId),
		SubnetID: awssdk.ToString(n.SubnetId),
		Tags:     tagsFromSDK(n.TagSet),
	}
	if n.Attachment != nil {
		out.InstanceID = awssdk.ToString(n.Attachment.InstanceId)
		out.DeviceIndex = awssdk.ToInt32(n.Attachment.DeviceIndex)
		out.NetworkCardIndex = awssdk.ToInt32(n.Attachment.NetworkCardIndex)
	}
	for _, p := range n.PrivateIpAddresses {
		if p.PrivateIpAddress == nil {
			continue
		}
		if p.Association != nil && awssdk.ToString(p.Association.PublicIp) != "" {
			if out.PublicIPs == nil {
				out.PublicIPs = map[string]string{}
			}
			out.PublicIPs[*p.PrivateIpAddress] = *p.Association.PublicIp
		}
		if awssdk.ToBool(p.Primary) {
			out.PrivateIPs = append([]string{*p.PrivateIpAddress}, out.PrivateIPs...)
		} else {
			out.PrivateIPs = append(out.PrivateIPs, *p.PrivateIpAddress)
		}
	}
	if len(out.PrivateIPs) == 0 && n.PrivateIpAddress != nil {
		out.PrivateIPs = []string{*n.PrivateIpAddress}
	}
	for _, p := range n.Ipv4Prefixes {
		if pp, err := netip.ParsePrefix(awssdk.ToString(p.Ipv4Prefix)); err == nil {
			out.IPv4Prefixes = append(out.IPv4Prefixes, pp)
		}
	}
	return out
}

// enisByPrivateIPInput finds the ENI that holds ip as a private address.
func enisByPrivateIPInput(vpcID, ip string) *ec2.DescribeNetworkInterfacesInput {
	in := &ec2.DescribeNetworkInterfacesInput{
		Filters: []types.Filter{filter("addresses.private-ip-address", ip)},
	}
	if vpcID != "" {
		in.Filters = append(in.Filters, filter("vpc-id", vpcID))
	}
	return in
}

// enisByInstanceInput lists the ENIs attached to an instance.
func enisByInstanceInput(vpcID, instanceID string) *ec2.DescribeNetworkInterfacesInput {
	in := &ec2.DescribeNetworkInterfacesInput{
		Filters: []types.Filter{filter("attachment.instance-id", instanceID)},
	}
	if vpcID != "" {
		in.Filters = append(in.Filters, filter("vpc-id", vpcID))
	}
	return in
}

// primaryENIsInput lists the ENIs at device index 0 of the instances (one
// per network card; PrimaryENIs keeps card 0's).
func primaryENIsInput(instanceIDs []string) *ec2.DescribeNetworkInterfacesInput {
	return &ec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{
		filter("attachment.instance-id", instanceIDs...),
		filter("attachment.device-index", "0"),
	}}
}

// PrimaryENIs picks each instance's primary ENI from enis: the one
// attached at device index 0 on network card 0 ("the primary network
// interface must be assigned to network card index 0", EC2 API reference,
// AttachNetworkInterface). Instances without one are absent.
func PrimaryENIs(enis []NetworkInterface) map[string]NetworkInterface {
	out := map[string]NetworkInterface{}
	for _, e := range enis {
		if e.InstanceID != "" && e.DeviceIndex == 0 && e.NetworkCardIndex == 0 {
			out[e.InstanceID] = e
		}
	}
	return out
}

// ENIWithPrefixFor returns the first ENI one of whose delegated IPv4
// prefixes contains ip (prefix-delegation mode: pod IPs are not listed as
// private addresses).
func ENIWithPrefixFor(enis []NetworkInterface, ip string) (NetworkInterface, bool) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return NetworkInterface{}, false
	}
	for _, e := range enis {
		for _, p := range e.IPv4Prefixes {
			if p.Contains(addr) {
				return e, true
			}
		}
	}
	return NetworkInterface{}, false
}
