// Package tencentcloud is edgeplane's Tencent Cloud client: narrow
// interfaces with exactly the tencentcloud-sdk-go calls edgeplane makes
// (VPCAPI, TagAPI, CVMAPI), an SDK configuration that carries the per-action
// client-side rate limits, the SDK's own retries and the endpoint override
// (NewAPIs), pure mappers and error classifiers, and a typed Client for the
// AnycastIPBinding reconciler.
//
// Rate limiting and retries live in the SDK configuration: callers never
// sleep and never retry by hand. AllocateAddresses is made idempotent with a
// ClientToken, so a retried allocation never creates a second address.
package tencentcloud

import (
	"context"
	"time"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tag "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// VPCAPI is the subset of the VPC client edgeplane uses, with the SDK's
// exact signatures.
type VPCAPI interface {
	AllocateAddressesWithContext(ctx context.Context, request *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error)
	AssociateAddressWithContext(ctx context.Context, request *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error)
	DisassociateAddressWithContext(ctx context.Context, request *vpc.DisassociateAddressRequest) (*vpc.DisassociateAddressResponse, error)
	ReleaseAddressesWithContext(ctx context.Context, request *vpc.ReleaseAddressesRequest) (*vpc.ReleaseAddressesResponse, error)
	DescribeAddressesWithContext(ctx context.Context, request *vpc.DescribeAddressesRequest) (*vpc.DescribeAddressesResponse, error)
	DescribeTaskResultWithContext(ctx context.Context, request *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error)
}

// TagAPI is the subset of the tag client edgeplane uses. The tag module
// edgeplane can build with (v1.0.240) predates the WithContext methods; the
// context travels on the request (SetContext).
type TagAPI interface {
	DescribeResourcesByTags(request *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error)
}

// CVMAPI is the subset of the CVM client edgeplane uses.
type CVMAPI interface {
	DescribeInstancesWithContext(ctx context.Context, request *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)
}

var (
	_ VPCAPI = (*vpc.Client)(nil)
	_ TagAPI = (*tag.Client)(nil)
	_ CVMAPI = (*cvm.Client)(nil)
)

// Instrumented wrappers record every call (after the SDK's retries) in the
// cloud API metrics, whichever way the API is used.

type instrumentedVPC struct{ api VPCAPI }

func observe[T any](action string, start time.Time, resp T, err error) (T, error) {
	cloud.ObserveCall(cloud.ProviderTencentCloud, action, resultCode(err), time.Since(start))
	return resp, err
}

func (v instrumentedVPC) AllocateAddressesWithContext(ctx context.Context, r *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error) {
	start := time.Now()
	resp, err := v.api.AllocateAddressesWithContext(ctx, r)
	return observe("AllocateAddresses", start, resp, err)
}

func (v instrumentedVPC) AssociateAddressWithContext(ctx context.Context, r *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error) {
	start := time.Now()
	resp, err := v.api.AssociateAddressWithContext(ctx, r)
	return observe("AssociateAddress", start, resp, err)
}

func (v instrumentedVPC) DisassociateAddressWithContext(ctx context.Context, r *vpc.DisassociateAddressRequest) (*vpc.DisassociateAddressResponse, error) {
	start := time.Now()
	resp, err := v.api.DisassociateAddressWithContext(ctx, r)
	return observe("DisassociateAddress", start, resp, err)
}

func (v instrumentedVPC) ReleaseAddressesWithContext(ctx context.Context, r *vpc.ReleaseAddressesRequest) (*vpc.ReleaseAddressesResponse, error) {
	start := time.Now()
	resp, err := v.api.ReleaseAddressesWithContext(ctx, r)
	return observe("ReleaseAddresses", start, resp, err)
}

func (v instrumentedVPC) DescribeAddressesWithContext(ctx context.Context, r *vpc.DescribeAddressesRequest) (*vpc.DescribeAddressesResponse, error) {
	start := time.Now()
	resp, err := v.api.DescribeAddressesWithContext(ctx, r)
	return observe("DescribeAddresses", start, resp, err)
}

func (v instrumentedVPC) DescribeTaskResultWithContext(ctx context.Context, r *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error) {
	start := time.Now()
	resp, err := v.api.DescribeTaskResultWithContext(ctx, r)
	return observe("DescribeTaskResult", start, resp, err)
}

type instrumentedTag struct{ api TagAPI }

func (t instrumentedTag) DescribeResourcesByTags(r *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error) {
	start := time.Now()
	resp, err := t.api.DescribeResourcesByTags(r)
	return observe("DescribeResourcesByTags", start, resp, err)
}

type instrumentedCVM struct{ api CVMAPI }

func (c instrumentedCVM) DescribeInstancesWithContext(ctx context.Context, r *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	start := time.Now()
	resp, err := c.api.DescribeInstancesWithContext(ctx, r)
	return observe("DescribeInstances", start, resp, err)
}
