package tencentcloud_test

import (
	"context"
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
