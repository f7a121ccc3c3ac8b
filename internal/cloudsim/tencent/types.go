package tencent

import (
	"encoding/json"
	"time"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Request parameter structs. Field names are the API's; every field the SDK
// models is accepted (so the real clients never hit UnknownParameter), and
// the ones the emulator does not model are ignored.

type tcTag struct {
	Key   *string `json:"Key"`
	Value *string `json:"Value"`
}

type tcFilter struct {
	Name   *string  `json:"Name"`
	Values []string `json:"Values"`
}

type allocateAddressesParams struct {
	AddressCount            *int64          `json:"AddressCount"`
	InternetServiceProvider *string         `json:"InternetServiceProvider"`
	InternetChargeType      *string         `json:"InternetChargeType"`
	IPChargeType            *string         `json:"IPChargeType"`
	InternetMaxBandwidthOut *int64          `json:"InternetMaxBandwidthOut"`
	AddressChargePrepaid    json.RawMessage `json:"AddressChargePrepaid"`
	AddressType             *string         `json:"AddressType"`
	AnycastZone             *string         `json:"AnycastZone"`
	VipCluster              []string        `json:"VipCluster"`
	ApplicableForCLB        *bool           `json:"ApplicableForCLB"`
	Tags                    []tcTag         `json:"Tags"`
	BandwidthPackageID      *string         `json:"BandwidthPackageId"`
	AddressName             *string         `json:"AddressName"`
	DedicatedClusterID      *string         `json:"DedicatedClusterId"`
	IsDedicatedAddressPool  *bool           `json:"IsDedicatedAddressPool"`
	Egress                  *string         `json:"Egress"`
	AntiDDoSPackageID       *string         `json:"AntiDDoSPackageId"`
	ClientToken             *string         `json:"ClientToken"`
}

type associateAddressParams struct {
	AddressID           *string `json:"AddressId"`
	InstanceID          *string `json:"InstanceId"`
	NetworkInterfaceID  *string `json:"NetworkInterfaceId"`
	PrivateIPAddress    *string `json:"PrivateIpAddress"`
	EipDirectConnection *bool   `json:"EipDirectConnection"`
	InstanceRegion      *string `json:"InstanceRegion"`
}

type disassociateAddressParams struct {
	AddressID                *string `json:"AddressId"`
	ReallocateNormalPublicIP *bool   `json:"ReallocateNormalPublicIp"`
}

type releaseAddressesParams struct {
	AddressIDs []string `json:"AddressIds"`
}

type describeAddressesParams struct {
	AddressIDs []string   `json:"AddressIds"`
	Filters    []tcFilter `json:"Filters"`
	Offset     *int64     `json:"Offset"`
	Limit      *int64     `json:"Limit"`
}

type describeNetworkInterfacesParams struct {
	NetworkInterfaceIDs []string   `json:"NetworkInterfaceIds"`
	Filters             []tcFilter `json:"Filters"`
	Offset              *uint64    `json:"Offset"`
	Limit               *uint64    `json:"Limit"`
}

type describeTaskResultParams struct {
	// TaskId is an integer here although async actions return it as a
	// string; a string is rejected as an invalid parameter.
	TaskID   *uint64 `json:"TaskId"`
	DealName *string `json:"DealName"`
}

type describeInstancesParams struct {
	InstanceIDs []string   `json:"InstanceIds"`
	Filters     []tcFilter `json:"Filters"`
	Offset      *int64     `json:"Offset"`
	Limit       *int64     `json:"Limit"`
}

// modifyResourceTagsParams: the lists are pointers, as leaving one out
// is allowed and sending it empty is not.
type modifyResourceTagsParams struct {
	Resource    *string         `json:"Resource"`
	ReplaceTags *[]tagPair      `json:"ReplaceTags"`
	DeleteTags  *[]tagKeyObject `json:"DeleteTags"`
}

type tagPair struct {
	TagKey   *string `json:"TagKey"`
	TagValue *string `json:"TagValue"`
}

type tagKeyObject struct {
	TagKey *string `json:"TagKey"`
}

type tagFilter struct {
	TagKey   *string  `json:"TagKey"`
	TagValue []string `json:"TagValue"`
}

type describeResourcesByTagsParams struct {
	TagFilters     []tagFilter `json:"TagFilters"`
	CreateUin      *uint64     `json:"CreateUin"`
	Offset         *uint64     `json:"Offset"`
	Limit          *uint64     `json:"Limit"`
	ResourcePrefix *string     `json:"ResourcePrefix"`
	ResourceID     *string     `json:"ResourceId"`
	ResourceRegion *string     `json:"ResourceRegion"`
	ServiceType    *string     `json:"ServiceType"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func filters(in []tcFilter) ([]core.Filter, *core.APIError) {
	out := make([]core.Filter, 0, len(in))
	for _, f := range in {
		if f.Name == nil || *f.Name == "" {
			return nil, tcErr(core.TCInvalidFilter, "Filters.Name must not be empty")
		}
		out = append(out, core.Filter{Name: *f.Name, Values: f.Values})
	}
	return out, nil
}

func tags(in []tcTag) []core.Tag {
	out := make([]core.Tag, 0, len(in))
	for _, t := range in {
		out = append(out, core.Tag{Key: str(t.Key), Value: str(t.Value)})
	}
	return out
}

// Response shapes, with the field names and types of the real API (a
// missing value is null, as Tencent returns it).

type respTag struct {
	Key   string `json:"Key"`
	Value string `json:"Value"`
}

type algType struct {
	Ftp bool `json:"Ftp"`
	Sip bool `json:"Sip"`
}

type respAddress struct {
	AddressID             string    `json:"AddressId"`
	AddressName           *string   `json:"AddressName"`
	AddressStatus         string    `json:"AddressStatus"`
	AddressIP             string    `json:"AddressIp"`
	InstanceID            *string   `json:"InstanceId"`
	CreatedTime           string    `json:"CreatedTime"`
	NetworkInterfaceID    *string   `json:"NetworkInterfaceId"`
	PrivateAddressIP      *string   `json:"PrivateAddressIp"`
	IsArrears             bool      `json:"IsArrears"`
	IsBlocked             bool      `json:"IsBlocked"`
	IsEipDirectConnection bool      `json:"IsEipDirectConnection"`
	AddressType           string    `json:"AddressType"`
	CascadeRelease        bool      `json:"CascadeRelease"`
	EipAlgType            algType   `json:"EipAlgType"`
	ISP                   string    `json:"InternetServiceProvider"`
	LocalBgp              bool      `json:"LocalBgp"`
	Bandwidth             uint64    `json:"Bandwidth"`
	InternetChargeType    string    `json:"InternetChargeType"`
	TagSet                []respTag `json:"TagSet"`
	DeadlineDate          *string   `json:"DeadlineDate"`
	InstanceType          *string   `json:"InstanceType"`
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

func addressJSON(a core.TCAddress) respAddress {
	r := respAddress{
		AddressID:          a.AddressID,
		AddressName:        nullable(a.AddressName),
		AddressStatus:      a.AddressStatus,
		AddressIP:          a.AddressIP,
		InstanceID:         nullable(a.InstanceID),
		CreatedTime:        isoTime(a.CreatedTime),
		NetworkInterfaceID: nullable(a.NetworkInterfaceID),
		PrivateAddressIP:   nullable(a.PrivateAddressIP),
		AddressType:        a.AddressType,
		ISP:                a.ISP,
		Bandwidth:          uint64(max(a.Bandwidth, 0)),
		InternetChargeType: a.InternetChargeType,
		TagSet:             []respTag{},
	}
	r.InstanceType = nullable(a.InstanceType)
	for _, t := range a.Tags {
		r.TagSet = append(r.TagSet, respTag{Key: t.Key, Value: t.Value})
	}
	return r
}

type respPlacement struct {
	Zone      string `json:"Zone"`
	ProjectID int64  `json:"ProjectId"`
}

type respVPC struct {
	VpcID        string `json:"VpcId"`
	SubnetID     string `json:"SubnetId"`
	AsVpcGateway bool   `json:"AsVpcGateway"`
}

type respInstance struct {
	Placement           respPlacement `json:"Placement"`
	InstanceID          string        `json:"InstanceId"`
	InstanceType        string        `json:"InstanceType"`
	CPU                 int64         `json:"CPU"`
	Memory              int64         `json:"Memory"`
	InstanceName        string        `json:"InstanceName"`
	InstanceChargeType  string        `json:"InstanceChargeType"`
	PrivateIPAddresses  []string      `json:"PrivateIpAddresses"`
	PublicIPAddresses   []string      `json:"PublicIpAddresses"`
	VirtualPrivateCloud respVPC       `json:"VirtualPrivateCloud"`
	InstanceState       string        `json:"InstanceState"`
	Tags                []respTag     `json:"Tags"`
	CreatedTime         string        `json:"CreatedTime"`
}

func instanceJSON(in core.TCInstance) respInstance {
	r := respInstance{
		Placement:           respPlacement{Zone: in.Zone},
		InstanceID:          in.InstanceID,
		InstanceType:        "S5.MEDIUM2",
		CPU:                 2,
		Memory:              2,
		InstanceName:        in.InstanceName,
		InstanceChargeType:  "POSTPAID_BY_HOUR",
		PrivateIPAddresses:  in.PrivateIPAddresses,
		PublicIPAddresses:   in.PublicIPAddresses,
		VirtualPrivateCloud: respVPC{VpcID: in.VpcID, SubnetID: in.SubnetID},
		InstanceState:       in.InstanceState,
		Tags:                []respTag{},
		CreatedTime:         isoTime(in.CreatedTime),
	}
	for _, t := range in.Tags {
		r.Tags = append(r.Tags, respTag{Key: t.Key, Value: t.Value})
	}
	return r
}

type respTagPair struct {
	TagKey   string `json:"TagKey"`
	TagValue string `json:"TagValue"`
}

type respResourceTag struct {
	ResourceRegion string        `json:"ResourceRegion"`
	ServiceType    string        `json:"ServiceType"`
	ResourcePrefix string        `json:"ResourcePrefix"`
	ResourceID     string        `json:"ResourceId"`
	Tags           []respTagPair `json:"Tags"`
}

// tcDateTime is the "YYYY-MM-DD hh:mm:ss" format of ENI timestamps (unlike
// the ISO 8601 of addresses).
func tcDateTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

type respPrivateIP struct {
	PrivateIPAddress string `json:"PrivateIpAddress"`
	Primary          bool   `json:"Primary"`
	PublicIPAddress  string `json:"PublicIpAddress"`
	AddressID        string `json:"AddressId"`
	Description      string `json:"Description"`
	IsWanIPBlocked   bool   `json:"IsWanIpBlocked"`
	State            string `json:"State"`
	QosLevel         string `json:"QosLevel"`
}

type respENIAttachment struct {
	InstanceID        string `json:"InstanceId"`
	DeviceIndex       uint64 `json:"DeviceIndex"`
	InstanceAccountID string `json:"InstanceAccountId"`
	AttachTime        string `json:"AttachTime"`
}

// respNetworkInterface is vpc.NetworkInterface: State is AVAILABLE once
// the ENI is usable, NetworkInterfaceState INUSE when attached.
type respNetworkInterface struct {
	NetworkInterfaceID          string             `json:"NetworkInterfaceId"`
	NetworkInterfaceName        string             `json:"NetworkInterfaceName"`
	NetworkInterfaceDescription string             `json:"NetworkInterfaceDescription"`
	SubnetID                    string             `json:"SubnetId"`
	VpcID                       string             `json:"VpcId"`
	GroupSet                    []string           `json:"GroupSet"`
	Primary                     bool               `json:"Primary"`
	MacAddress                  string             `json:"MacAddress"`
	State                       string             `json:"State"`
	NetworkInterfaceState       string             `json:"NetworkInterfaceState"`
	PrivateIPAddressSet         []respPrivateIP    `json:"PrivateIpAddressSet"`
	Attachment                  *respENIAttachment `json:"Attachment"`
	Zone                        string             `json:"Zone"`
	CreatedTime                 string             `json:"CreatedTime"`
	Ipv6AddressSet              []any              `json:"Ipv6AddressSet"`
	TagSet                      []respTag          `json:"TagSet"`
	EniType                     uint64             `json:"EniType"`
	Business                    string             `json:"Business"`
	CdcID                       string             `json:"CdcId"`
	AttachType                  uint64             `json:"AttachType"`
	ResourceID                  string             `json:"ResourceId"`
	QosLevel                    string             `json:"QosLevel"`
}

func networkInterfaceJSON(e core.TCNetworkInterface) respNetworkInterface {
	r := respNetworkInterface{
		NetworkInterfaceID:          e.NetworkInterfaceID,
		NetworkInterfaceName:        e.Name,
		NetworkInterfaceDescription: e.Description,
		SubnetID:                    e.SubnetID,
		VpcID:                       e.VpcID,
		GroupSet:                    []string{},
		Primary:                     e.Primary,
		MacAddress:                  e.MacAddress,
		State:                       "AVAILABLE",
		NetworkInterfaceState:       "AVAILABLE",
		PrivateIPAddressSet:         []respPrivateIP{},
		Zone:                        e.Zone,
		CreatedTime:                 tcDateTime(e.CreatedTime),
		Ipv6AddressSet:              []any{},
		TagSet:                      []respTag{},
		Business:                    "cvm",
		QosLevel:                    "DEFAULT",
	}
	if e.Primary {
		r.EniType = 1
	}
	if e.InstanceID != "" {
		r.NetworkInterfaceState = "INUSE"
		r.Attachment = &respENIAttachment{InstanceID: e.InstanceID, DeviceIndex: uint64(max(e.DeviceIndex, 0)), AttachTime: tcDateTime(e.CreatedTime)}
	}
	for _, p := range e.PrivateIPAddresses {
		r.PrivateIPAddressSet = append(r.PrivateIPAddressSet, respPrivateIP{
			PrivateIPAddress: p.PrivateIPAddress, Primary: p.Primary, PublicIPAddress: p.PublicIPAddress,
			AddressID: p.AddressID, State: "AVAILABLE", QosLevel: "DEFAULT",
		})
	}
	for _, t := range e.Tags {
		r.TagSet = append(r.TagSet, respTag{Key: t.Key, Value: t.Value})
	}
	return r
}
