package ec2

import (
	"encoding/xml"

	"github.com/edgeplane/edgeplane/internal/cloudsim/core"
)

// Namespace is the XML namespace of every EC2 2016-11-15 response.
const Namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

// APIVersion is the only EC2 API version the emulator speaks.
const APIVersion = "2016-11-15"

type errorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []xmlError `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

type xmlError struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

type xmlTag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

type tagSet struct {
	Items []xmlTag `xml:"item"`
}

func tagsXML(tags []core.Tag) *tagSet {
	if len(tags) == 0 {
		return nil
	}
	s := &tagSet{}
	for _, t := range tags {
		s.Items = append(s.Items, xmlTag{Key: t.Key, Value: t.Value})
	}
	return s
}

type allocateAddressResponse struct {
	XMLName            xml.Name `xml:"AllocateAddressResponse"`
	Xmlns              string   `xml:"xmlns,attr"`
	RequestID          string   `xml:"requestId"`
	PublicIP           string   `xml:"publicIp"`
	Domain             string   `xml:"domain"`
	AllocationID       string   `xml:"allocationId"`
	PublicIPv4Pool     string   `xml:"publicIpv4Pool"`
	NetworkBorderGroup string   `xml:"networkBorderGroup"`
}

type associateAddressResponse struct {
	XMLName       xml.Name `xml:"AssociateAddressResponse"`
	Xmlns         string   `xml:"xmlns,attr"`
	RequestID     string   `xml:"requestId"`
	Return        bool     `xml:"return"`
	AssociationID string   `xml:"associationId"`
}

// returnResponse is the shape of every action that answers only "return".
type returnResponse struct {
	XMLName   xml.Name
	Xmlns     string `xml:"xmlns,attr"`
	RequestID string `xml:"requestId"`
	Return    bool   `xml:"return"`
}

type addressItem struct {
	PublicIP                string  `xml:"publicIp"`
	AllocationID            string  `xml:"allocationId"`
	Domain                  string  `xml:"domain"`
	InstanceID              string  `xml:"instanceId,omitempty"`
	AssociationID           string  `xml:"associationId,omitempty"`
	NetworkInterfaceID      string  `xml:"networkInterfaceId,omitempty"`
	NetworkInterfaceOwnerID string  `xml:"networkInterfaceOwnerId,omitempty"`
	PrivateIPAddress        string  `xml:"privateIpAddress,omitempty"`
	PublicIPv4Pool          string  `xml:"publicIpv4Pool"`
	NetworkBorderGroup      string  `xml:"networkBorderGroup"`
	TagSet                  *tagSet `xml:"tagSet"`
}

type describeAddressesResponse struct {
	XMLName   xml.Name      `xml:"DescribeAddressesResponse"`
	Xmlns     string        `xml:"xmlns,attr"`
	RequestID string        `xml:"requestId"`
	Addresses []addressItem `xml:"addressesSet>item"`
}

func addressXML(a core.EC2Address) addressItem {
	return addressItem{
		PublicIP:                a.PublicIP,
		AllocationID:            a.AllocationID,
		Domain:                  a.Domain,
		InstanceID:              a.InstanceID,
		AssociationID:           a.AssociationID,
		NetworkInterfaceID:      a.NetworkInterfaceID,
		NetworkInterfaceOwnerID: a.NetworkInterfaceOwnerID,
		PrivateIPAddress:        a.PrivateIPAddress,
		PublicIPv4Pool:          a.PublicIPv4Pool,
		NetworkBorderGroup:      a.NetworkBorderGroup,
		TagSet:                  tagsXML(a.Tags),
	}
}

type eniAssociation struct {
	PublicIP      string `xml:"publicIp"`
	IPOwnerID     string `xml:"ipOwnerId"`
	AllocationID  string `xml:"allocationId"`
	AssociationID string `xml:"associationId"`
}

type eniPrivateIP struct {
	PrivateIPAddress string          `xml:"privateIpAddress"`
	Primary          bool            `xml:"primary"`
	Association      *eniAssociation `xml:"association"`
}

type eniAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	InstanceID          string `xml:"instanceId"`
	InstanceOwnerID     string `xml:"instanceOwnerId"`
	DeviceIndex         int    `xml:"deviceIndex"`
	NetworkCardIndex    int    `xml:"networkCardIndex"`
	Status              string `xml:"status"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type ipv4PrefixItem struct {
	IPv4Prefix string `xml:"ipv4Prefix"`
}

type eniItem struct {
	NetworkInterfaceID string           `xml:"networkInterfaceId"`
	SubnetID           string           `xml:"subnetId"`
	VpcID              string           `xml:"vpcId"`
	AvailabilityZone   string           `xml:"availabilityZone"`
	Description        string           `xml:"description"`
	OwnerID            string           `xml:"ownerId"`
	RequesterManaged   bool             `xml:"requesterManaged"`
	Status             string           `xml:"status"`
	MacAddress         string           `xml:"macAddress"`
	PrivateIPAddress   string           `xml:"privateIpAddress,omitempty"`
	SourceDestCheck    bool             `xml:"sourceDestCheck"`
	InterfaceType      string           `xml:"interfaceType"`
	Attachment         *eniAttachment   `xml:"attachment"`
	Association        *eniAssociation  `xml:"association"`
	TagSet             *tagSet          `xml:"tagSet"`
	PrivateIPAddresses []eniPrivateIP   `xml:"privateIpAddressesSet>item"`
	IPv4Prefixes       []ipv4PrefixItem `xml:"ipv4PrefixSet>item"`
}

type describeNetworkInterfacesResponse struct {
	XMLName           xml.Name  `xml:"DescribeNetworkInterfacesResponse"`
	Xmlns             string    `xml:"xmlns,attr"`
	RequestID         string    `xml:"requestId"`
	NetworkInterfaces []eniItem `xml:"networkInterfaceSet>item"`
	NextToken         string    `xml:"nextToken,omitempty"`
}

func eniXML(e core.EC2NetworkInterface, owner string) eniItem {
	it := eniItem{
		NetworkInterfaceID: e.NetworkInterfaceID,
		SubnetID:           e.SubnetID,
		VpcID:              e.VpcID,
		AvailabilityZone:   e.AvailabilityZone,
		Description:        e.Description,
		OwnerID:            e.OwnerID,
		Status:             e.Status,
		MacAddress:         e.MacAddress,
		SourceDestCheck:    true,
		InterfaceType:      e.InterfaceType,
		TagSet:             tagsXML(e.Tags),
	}
	if e.Attachment != nil {
		it.Attachment = &eniAttachment{
			AttachmentID:        e.Attachment.AttachmentID,
			InstanceID:          e.Attachment.InstanceID,
			InstanceOwnerID:     owner,
			DeviceIndex:         e.Attachment.DeviceIndex,
			NetworkCardIndex:    e.Attachment.NetworkCardIndex,
			Status:              e.Attachment.Status,
			DeleteOnTermination: e.Attachment.DeviceIndex == 0,
		}
	}
	for _, p := range e.PrivateIPAddresses {
		item := eniPrivateIP{PrivateIPAddress: p.PrivateIPAddress, Primary: p.Primary}
		if p.AssociationID != "" {
			item.Association = &eniAssociation{PublicIP: p.PublicIP, IPOwnerID: owner, AllocationID: p.AllocationID, AssociationID: p.AssociationID}
		}
		if p.Primary {
			it.PrivateIPAddress = p.PrivateIPAddress
			it.Association = item.Association
		}
		it.PrivateIPAddresses = append(it.PrivateIPAddresses, item)
	}
	for _, p := range e.IPv4Prefixes {
		it.IPv4Prefixes = append(it.IPv4Prefixes, ipv4PrefixItem{IPv4Prefix: p})
	}
	return it
}
