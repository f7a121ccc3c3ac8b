package tencentcloud

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tag "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// Address types edgeplane allocates.
const (
	AddressTypeAnycastEIP     = "AnycastEIP"
	AddressTypeHighQualityEIP = "HighQualityEIP"
	AddressTypeEIP            = "EIP"
)

// Anycast zones.
const (
	AnycastZoneOverseas = "ANYCAST_ZONE_OVERSEAS"
	AnycastZoneGlobal   = "ANYCAST_ZONE_GLOBAL"
)

// Address states (Address.AddressStatus).
const (
	StatusCreating  = "CREATING"
	StatusUnbind    = "UNBIND"
	StatusBinding   = "BINDING"
	StatusBind      = "BIND"
	StatusBindENI   = "BIND_ENI"
	StatusUnbinding = "UNBINDING"
	StatusOffline   = "OFFLINING"
)

// Transitional reports whether an address in status has a task running on
// it (allocation, binding, unbinding, release): it takes no other change
// until the task ends.
func Transitional(status string) bool {
	switch status {
	case StatusCreating, StatusBinding, StatusUnbinding, StatusOffline:
		return true
	}
	return false
}

// Task results (DescribeTaskResult.Result).
const (
	TaskRunning = "RUNNING"
	TaskSuccess = "SUCCESS"
	TaskFailed  = "FAILED"
)

// AllocateRequest is one address to allocate. Empty fields are not sent,
// so the cloud's defaults apply (as the legacy controller relied on).
type AllocateRequest struct {
	// AddressType: AnycastEIP, HighQualityEIP or EIP ("" is EIP).
	AddressType string
	// AnycastZone is sent only for AnycastEIP.
	AnycastZone string
	// InternetMaxBandwidthOut in Mbps; 0 is not sent.
	InternetMaxBandwidthOut int64
	InternetChargeType      string
	AddressName             string
	// Tags are applied at creation.
	Tags map[string]string
	// InternetServiceProvider is the line (BGP, CMCC, CTCC, CUCC); "" is
	// not sent.
	InternetServiceProvider string
	// ClientToken makes the call idempotent: derive it from the owning
	// object's UID so every retry, by the SDK or by a later reconcile,
	// returns the same address. At most 64 ASCII characters.
	ClientToken string
}

// AllocateResult is what AllocateAddresses answered.
type AllocateResult struct {
	AddressIDs []string
	TaskID     uint64
}

// Address is an EIP as edgeplane sees it.
type Address struct {
	ID                 string
	Name               string
	IP                 string
	Type               string
	Status             string
	InstanceID         string
	NetworkInterfaceID string
	PrivateIP          string
	ChargeType         string
	Bandwidth          uint64
	Tags               map[string]string
	CreatedTime        string
}

// AddressQuery selects addresses; set fields are ANDed.
type AddressQuery struct {
	IDs        []string
	InstanceID string
	// Types filters address-type (WanIP, EIP, AnycastEIP, HighQualityEIP…).
	Types    []string
	Statuses []string
	// Tags match exact values (tag:K=V); TagKeys only need the key.
	Tags    map[string]string
	TagKeys []string
	// InstanceIDs match any of these instances (with InstanceID), and
	// TagValues any of a tag's values, so that one call answers many
	// look-ups (at most 100 values per filter).
	InstanceIDs []string
	TagValues   map[string][]string
}

// TaggedResource is one tag API row.
type TaggedResource struct {
	ID          string
	Prefix      string
	ServiceType string
	Region      string
	Tags        map[string]string
}

// Instance is a CVM instance as edgeplane sees it.
type Instance struct {
	ID         string
	Name       string
	Zone       string
	VpcID      string
	SubnetID   string
	State      string
	PrivateIPs []string
	PublicIPs  []string
	Tags       map[string]string
}

// NetworkInterface is a VPC ENI as edgeplane sees it.
type NetworkInterface struct {
	ID       string
	Name     string
	VpcID    string
	SubnetID string
	Zone     string
	// Primary is the instance's primary ENI (created with it).
	Primary bool
	// InstanceID is the CVM the ENI is attached to ("" when it is not).
	InstanceID  string
	DeviceIndex uint64
	// PrivateIPs lists the ENI's private IPs, its primary IP first.
	PrivateIPs []string
	// PublicIPs and AddressIDs map a private IP to the EIP bound to it.
	PublicIPs  map[string]string
	AddressIDs map[string]string
	State      string
	Tags       map[string]string
}

// NetworkInterfaceQuery selects ENIs. IDs cannot be combined with the other
// fields (DescribeNetworkInterfaces takes NetworkInterfaceIds or Filters);
// set fields are ANDed.
type NetworkInterfaceQuery struct {
	IDs         []string
	VpcID       string
	SubnetID    string
	InstanceIDs []string
	// PrivateIPs match ENIs holding any of these private IPs exactly (an
	// ip-exact-match is added for a single IP; see addressIPFilters).
	PrivateIPs []string
	// Primary, when set, selects primary (true) or secondary (false) ENIs.
	Primary *bool
	Tags    map[string]string
}

func (q NetworkInterfaceQuery) hasFilters() bool {
	return q.VpcID != "" || q.SubnetID != "" || len(q.InstanceIDs) > 0 || len(q.PrivateIPs) > 0 || q.Primary != nil || len(q.Tags) > 0
}

// describeNetworkInterfacesFilters maps a query (without IDs) to filters in
// a fixed order.
func describeNetworkInterfacesFilters(q NetworkInterfaceQuery) []*vpc.Filter {
	var fs []*vpc.Filter
	if q.VpcID != "" {
		fs = append(fs, vpcFilter("vpc-id", q.VpcID))
	}
	if q.SubnetID != "" {
		fs = append(fs, vpcFilter("subnet-id", q.SubnetID))
	}
	if len(q.InstanceIDs) > 0 {
		fs = append(fs, vpcFilter("attachment.instance-id", q.InstanceIDs...))
	}
	fs = append(fs, addressIPFilters(q.PrivateIPs)...)
	if q.Primary != nil {
		fs = append(fs, vpcFilter("is-primary", strconv.FormatBool(*q.Primary)))
	}
	for _, k := range sortedKeys(q.Tags) {
		fs = append(fs, vpcFilter("tag:"+k, q.Tags[k]))
	}
	return fs
}

// addressIPFilters asks for ENIs holding exactly these private IPs. The
// address-ip filter matches "a single IP fuzzily on its suffix, several IPs
// exactly; ip-exact-match makes a single IP exact"
// (https://www.tencentcloud.com/document/api/215/15817): without it,
// looking up 10.0.1.2 would also return the ENIs of 10.0.1.20-29.
func addressIPFilters(ips []string) []*vpc.Filter {
	switch len(ips) {
	case 0:
		return nil
	case 1:
		return []*vpc.Filter{vpcFilter("address-ip", ips[0]), vpcFilter("ip-exact-match", "true")}
	default:
		return []*vpc.Filter{vpcFilter("address-ip", ips...)}
	}
}

func networkInterfaceFromSDK(n *vpc.NetworkInterface) NetworkInterface {
	out := NetworkInterface{
		ID:       deref(n.NetworkInterfaceId),
		Name:     deref(n.NetworkInterfaceName),
		VpcID:    deref(n.VpcId),
		SubnetID: deref(n.SubnetId),
		Zone:     deref(n.Zone),
		State:    deref(n.State),
		Tags:     map[string]string{},
	}
	if n.Primary != nil {
		out.Primary = *n.Primary
	}
	if n.Attachment != nil {
		out.InstanceID = deref(n.Attachment.InstanceId)
		if n.Attachment.DeviceIndex != nil {
			out.DeviceIndex = *n.Attachment.DeviceIndex
		}
	}
	for _, p := range n.PrivateIpAddressSet {
		if p == nil || p.PrivateIpAddress == nil {
			continue
		}
		ip := *p.PrivateIpAddress
		if p.Primary != nil && *p.Primary {
			out.PrivateIPs = append([]string{ip}, out.PrivateIPs...)
		} else {
			out.PrivateIPs = append(out.PrivateIPs, ip)
		}
		if pub := deref(p.PublicIpAddress); pub != "" {
			if out.PublicIPs == nil {
				out.PublicIPs = map[string]string{}
			}
			out.PublicIPs[ip] = pub
		}
		if id := deref(p.AddressId); id != "" {
			if out.AddressIDs == nil {
				out.AddressIDs = map[string]string{}
			}
			out.AddressIDs[ip] = id
		}
	}
	for _, t := range n.TagSet {
		if t != nil && t.Key != nil {
			out.Tags[cloud.TagKey(*t.Key)] = deref(t.Value)
		}
	}
	return out
}

// ENIsHolding keeps the ENIs that hold ip as one of their private IPs
// exactly (a guard against address-ip's fuzzy matching).
func ENIsHolding(enis []NetworkInterface, ip string) []NetworkInterface {
	var out []NetworkInterface
	for _, e := range enis {
		if slices.Contains(e.PrivateIPs, ip) {
			out = append(out, e)
		}
	}
	return out
}

// ParseTaskID converts the TaskId async actions return (a string) into the
// integer DescribeTaskResult takes.
func ParseTaskID(s *string) (uint64, error) {
	if s == nil || *s == "" {
		return 0, fmt.Errorf("the response carries no TaskId")
	}
	id, err := strconv.ParseUint(*s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("TaskId %q is not an unsigned integer: %w", *s, err)
	}
	return id, nil
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func allocateAddressesRequest(r AllocateRequest) *vpc.AllocateAddressesRequest {
	req := vpc.NewAllocateAddressesRequest()
	req.AddressCount = common.Int64Ptr(1)
	if r.AddressType != "" {
		req.AddressType = common.StringPtr(r.AddressType)
	}
	if r.AddressType == AddressTypeAnycastEIP && r.AnycastZone != "" {
		req.AnycastZone = common.StringPtr(r.AnycastZone)
	}
	if r.InternetMaxBandwidthOut > 0 {
		req.InternetMaxBandwidthOut = common.Int64Ptr(r.InternetMaxBandwidthOut)
	}
	if r.InternetChargeType != "" {
		req.InternetChargeType = common.StringPtr(r.InternetChargeType)
	}
	if r.InternetServiceProvider != "" {
		req.InternetServiceProvider = common.StringPtr(r.InternetServiceProvider)
	}
	if r.AddressName != "" {
		req.AddressName = common.StringPtr(r.AddressName)
	}
	for _, k := range sortedKeys(r.Tags) {
		req.Tags = append(req.Tags, &vpc.Tag{Key: common.StringPtr(k), Value: common.StringPtr(r.Tags[k])})
	}
	if r.ClientToken != "" {
		req.ClientToken = common.StringPtr(r.ClientToken)
	}
	return req
}

func vpcFilter(name string, values ...string) *vpc.Filter {
	return &vpc.Filter{Name: common.StringPtr(name), Values: common.StringPtrs(values)}
}

// describeAddressesFilters maps a query to filters in a fixed order
// (AddressIds are sent separately, in batches).
func describeAddressesFilters(q AddressQuery) []*vpc.Filter {
	var fs []*vpc.Filter
	if q.InstanceID != "" || len(q.InstanceIDs) > 0 {
		var ids []string
		if q.InstanceID != "" {
			ids = append(ids, q.InstanceID)
		}
		fs = append(fs, vpcFilter("instance-id", append(ids, q.InstanceIDs...)...))
	}
	if len(q.Types) > 0 {
		fs = append(fs, vpcFilter("address-type", q.Types...))
	}
	if len(q.Statuses) > 0 {
		fs = append(fs, vpcFilter("address-status", q.Statuses...))
	}
	if len(q.TagKeys) > 0 {
		fs = append(fs, vpcFilter("tag-key", slices.Sorted(slices.Values(q.TagKeys))...))
	}
	for _, k := range sortedKeys(q.Tags) {
		fs = append(fs, vpcFilter("tag:"+k, q.Tags[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(q.TagValues)) {
		fs = append(fs, vpcFilter("tag:"+k, q.TagValues[k]...))
	}
	return fs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func addressFromSDK(a *vpc.Address) Address {
	out := Address{
		ID:                 deref(a.AddressId),
		Name:               deref(a.AddressName),
		IP:                 deref(a.AddressIp),
		Type:               deref(a.AddressType),
		Status:             deref(a.AddressStatus),
		InstanceID:         deref(a.InstanceId),
		NetworkInterfaceID: deref(a.NetworkInterfaceId),
		PrivateIP:          deref(a.PrivateAddressIp),
		ChargeType:         deref(a.InternetChargeType),
		CreatedTime:        deref(a.CreatedTime),
		Tags:               map[string]string{},
	}
	if a.Bandwidth != nil {
		out.Bandwidth = *a.Bandwidth
	}
	for _, t := range a.TagSet {
		if t != nil && t.Key != nil {
			out.Tags[cloud.TagKey(*t.Key)] = deref(t.Value)
		}
	}
	return out
}

// EIPResourceName is an address's six-segment resource description, as
// the tag API names resources: qcs::cvm:<region>:uin/:eip/<id> (addresses
// are filed under service type cvm with prefix eip; an empty uin is the
// caller's account, as Tencent's Terraform provider writes it).
func EIPResourceName(region, addressID string) string {
	return "qcs::cvm:" + region + ":uin/:eip/" + addressID
}

func modifyResourceTagsRequest(resource string, replace map[string]string, remove []string) *tag.ModifyResourceTagsRequest {
	req := tag.NewModifyResourceTagsRequest()
	req.Resource = common.StringPtr(resource)
	for _, k := range sortedKeys(replace) {
		req.ReplaceTags = append(req.ReplaceTags, &tag.Tag{TagKey: common.StringPtr(k), TagValue: common.StringPtr(replace[k])})
	}
	for _, k := range slices.Sorted(slices.Values(remove)) {
		req.DeleteTags = append(req.DeleteTags, &tag.TagKeyObject{TagKey: common.StringPtr(k)})
	}
	return req
}

func describeResourcesByTagsRequest(tags map[string]string, resourcePrefix string, offset, limit uint64) *tag.DescribeResourcesByTagsRequest {
	req := tag.NewDescribeResourcesByTagsRequest()
	for _, k := range sortedKeys(tags) {
		req.TagFilters = append(req.TagFilters, &tag.TagFilter{TagKey: common.StringPtr(k), TagValue: common.StringPtrs([]string{tags[k]})})
	}
	if resourcePrefix != "" {
		req.ResourcePrefix = common.StringPtr(resourcePrefix)
	}
	req.Offset = common.Uint64Ptr(offset)
	req.Limit = common.Uint64Ptr(limit)
	return req
}

func taggedResourceFromSDK(r *tag.ResourceTag) TaggedResource {
	out := TaggedResource{
		ID:          deref(r.ResourceId),
		Prefix:      deref(r.ResourcePrefix),
		ServiceType: deref(r.ServiceType),
		Region:      deref(r.ResourceRegion),
		Tags:        map[string]string{},
	}
	for _, t := range r.Tags {
		if t != nil && t.TagKey != nil {
			out.Tags[cloud.TagKey(*t.TagKey)] = deref(t.TagValue)
		}
	}
	return out
}

func instanceFromSDK(in *cvm.Instance) Instance {
	out := Instance{
		ID:         deref(in.InstanceId),
		Name:       deref(in.InstanceName),
		State:      deref(in.InstanceState),
		PrivateIPs: derefAll(in.PrivateIpAddresses),
		PublicIPs:  derefAll(in.PublicIpAddresses),
		Tags:       map[string]string{},
	}
	if in.Placement != nil {
		out.Zone = deref(in.Placement.Zone)
	}
	if in.VirtualPrivateCloud != nil {
		out.VpcID = deref(in.VirtualPrivateCloud.VpcId)
		out.SubnetID = deref(in.VirtualPrivateCloud.SubnetId)
	}
	for _, t := range in.Tags {
		if t != nil && t.Key != nil {
			out.Tags[cloud.TagKey(*t.Key)] = deref(t.Value)
		}
	}
	return out
}

func derefAll(in []*string) []string {
	var out []string
	for _, s := range in {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// chunks splits ids into batches of at most n (API list limits).
func chunks(ids []string, n int) [][]string {
	var out [][]string
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	if len(ids) > 0 {
		out = append(out, ids)
	}
	return out
}
