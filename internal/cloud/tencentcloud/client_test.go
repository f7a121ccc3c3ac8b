package tencentcloud_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	tc "github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud/fake"
)

func TestClientRejectsMalformedResponses(t *testing.T) {
	ctx := context.Background()
	f := &fake.API{
		MockAllocateAddresses: func(context.Context, *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error) {
			r := vpc.NewAllocateAddressesResponse()
			r.Response = &vpc.AllocateAddressesResponseParams{AddressSet: common.StringPtrs([]string{"eip-1"}), TaskId: common.StringPtr("not-a-number")}
			return r, nil
		},
		MockAssociateAddress: func(context.Context, *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error) {
			return vpc.NewAssociateAddressResponse(), nil // no Response at all
		},
		MockDescribeTaskResult: func(_ context.Context, r *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error) {
			resp := vpc.NewDescribeTaskResultResponse()
			resp.Response = &vpc.DescribeTaskResultResponseParams{TaskId: r.TaskId, Result: common.StringPtr(tc.TaskFailed)}
			return resp, nil
		},
	}
	c := tc.NewWithAPIs(f.APIs())
	if _, err := c.AllocateAddress(ctx, tc.AllocateRequest{}); err == nil {
		t.Error("a non-numeric TaskId was accepted")
	}
	if _, err := c.AssociateAddress(ctx, "eip-1", "ins-1"); err == nil {
		t.Error("an empty response was accepted")
	}
	if err := c.WaitForTask(ctx, 7); !tc.IsTaskFailed(err) {
		t.Errorf("WaitForTask on a FAILED task = %v", err)
	}
	if _, err := c.FindResourcesByTags(ctx, nil, "eip"); err == nil {
		t.Error("a tag look-up without tags was accepted")
	}
	if _, err := c.DescribeInstances(ctx, "ins-1"); err == nil {
		t.Error("an unmocked call succeeded")
	}
}

// TestFindNetworkInterfaceByPrivateIPChecksWhatComesBack: the client keeps
// only ENIs that hold the IP exactly, whatever the server matched, and
// refuses to pick between ENIs of several VPCs.
func TestFindNetworkInterfaceByPrivateIPChecksWhatComesBack(t *testing.T) {
	ctx := context.Background()
	eni := func(id, vpcID string, ips ...string) *vpc.NetworkInterface {
		n := &vpc.NetworkInterface{NetworkInterfaceId: common.StringPtr(id), VpcId: common.StringPtr(vpcID)}
		for i, ip := range ips {
			n.PrivateIpAddressSet = append(n.PrivateIpAddressSet, &vpc.PrivateIpAddressSpecification{PrivateIpAddress: common.StringPtr(ip), Primary: common.BoolPtr(i == 0)})
		}
		return n
	}
	var answer []*vpc.NetworkInterface
	var sent []string
	f := &fake.API{MockDescribeNetworkInterfaces: func(_ context.Context, r *vpc.DescribeNetworkInterfacesRequest) (*vpc.DescribeNetworkInterfacesResponse, error) {
		sent = sent[:0]
		for _, fl := range r.Filters {
			sent = append(sent, *fl.Name+"="+*fl.Values[0])
		}
		resp := vpc.NewDescribeNetworkInterfacesResponse()
		resp.Response = &vpc.DescribeNetworkInterfacesResponseParams{NetworkInterfaceSet: answer, TotalCount: common.Uint64Ptr(uint64(len(answer)))}
		return resp, nil
	}}
	c := tc.NewWithAPIs(f.APIs())

	answer = []*vpc.NetworkInterface{eni("eni-a", "vpc-1", "10.0.1.20")}
	if _, err := c.FindNetworkInterfaceByPrivateIP(ctx, "vpc-1", "10.0.1.2"); !tc.IsNotFound(err) {
		t.Fatalf("an ENI holding only 10.0.1.20 for 10.0.1.2: %v, want NotFound", err)
	}
	if want := []string{"vpc-id=vpc-1", "address-ip=10.0.1.2", "ip-exact-match=true"}; !slices.Equal(sent, want) {
		t.Fatalf("filters sent = %v, want %v", sent, want)
	}
	answer = []*vpc.NetworkInterface{eni("eni-a", "vpc-1", "10.0.1.20"), eni("eni-b", "vpc-1", "10.0.0.5", "10.0.1.2")}
	if got, err := c.FindNetworkInterfaceByPrivateIP(ctx, "vpc-1", "10.0.1.2"); err != nil || got.ID != "eni-b" {
		t.Fatalf("FindNetworkInterfaceByPrivateIP = %+v, %v; want eni-b", got, err)
	}
	answer = []*vpc.NetworkInterface{eni("eni-a", "vpc-1", "10.0.1.2"), eni("eni-b", "vpc-2", "10.0.1.2")}
	if _, err := c.FindNetworkInterfaceByPrivateIP(ctx, "", "10.0.1.2"); err == nil || tc.IsNotFound(err) {
		t.Fatalf("an IP held in two VPCs: %v, want an ambiguity error", err)
	}
}
