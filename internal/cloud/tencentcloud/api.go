// Package tencentcloud is edgeplane's Tencent Cloud client: narrow
// interfaces with exactly the tencentcloud-sdk-go calls edgeplane makes
// (VPCAPI, TagAPI, CVMAPI), an SDK configuration that carries the per-action
// client-side rate limits, the SDK's own retries and the endpoint override
// (NewAPIs), pure mappers and error classifiers, and a typed Client for the
// AnycastIPBinding and PodElasticIP reconcilers.
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
	DescribeNetworkInterfacesWithContext(ctx context.Context, request *vpc.DescribeNetworkInterfacesRequest) (*vpc.DescribeNetworkInterfacesResponse, error)
}

// TagAPI is the subset of the tag client edgeplane uses. The tag module
// edgeplane can build with (v1.0.240) predates the WithContext methods; the
// context travels on the request (SetContext).
type TagAPI interface {
	DescribeResourcesByTags(request *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error)
	ModifyResourceTags(request *tag.ModifyResourceTagsRequest) (*tag.ModifyResourceTagsResponse, error)
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
// cloud API metrics, whichever way the API is used, and keep calls away
// from the cloud while the account's credentials are rejected (the gate;
// nil: no gate).

type instrumentedVPC struct {
	api  VPCAPI
	gate *cloud.CredentialGate
}

// call runs one SDK call through the credential gate and the metrics.
func call[T any](gate *cloud.CredentialGate, action string, do func() (T, error)) (T, error) {
	start := time.Now()
	probe := false
	if gate != nil {
		var err error
		if probe, err = gate.Admit(); err != nil {
			var zero T
			return zero, err
		}
	}
	resp, err := do()
	if gate != nil {
		var rejected error
		if IsCredentialsRejected(err) {
			rejected = err
		}
		gate.Done(probe, rejected)
	}
	cloud.ObserveCall(cloud.ProviderTencentCloud, action, resultCode(err), time.Since(start))
	return resp, err
}

func (v instrumentedVPC) AllocateAddressesWithContext(ctx context.Context, r *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error) {
	return call(v.gate, "AllocateAddresses", func() (*vpc.AllocateAddressesResponse, error) { return v.api.AllocateAddressesWithContext(ctx, r) })
}

func (v instrumentedVPC) AssociateAddressWithContext(ctx context.Context, r *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error) {
	return call(v.gate, "AssociateAddress", func() (*vpc.AssociateAddressResponse, error) { return v.api.AssociateAddressWithContext(ctx, r) })
}

func (v instrumentedVPC) DisassociateAddressWithContext(ctx context.Context, r *vpc.DisassociateAddressRequest) (*vpc.DisassociateAddressResponse, error) {
	return call(v.gate, "DisassociateAddress", func() (*vpc.DisassociateAddressResponse, error) { return v.api.DisassociateAddressWithContext(ctx, r) })
}

func (v instrumentedVPC) ReleaseAddressesWithContext(ctx context.Context, r *vpc.ReleaseAddressesRequest) (*vpc.ReleaseAddressesResponse, error) {
	return call(v.gate, "ReleaseAddresses", func() (*vpc.ReleaseAddressesResponse, error) { return v.api.ReleaseAddressesWithContext(ctx, r) })
}

func (v instrumentedVPC) DescribeAddressesWithContext(ctx context.Context, r *vpc.DescribeAddressesRequest) (*vpc.DescribeAddressesResponse, error) {
	return call(v.gate, "DescribeAddresses", func() (*vpc.DescribeAddressesResponse, error) { return v.api.DescribeAddressesWithContext(ctx, r) })
}

func (v instrumentedVPC) DescribeTaskResultWithContext(ctx context.Context, r *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error) {
	return call(v.gate, "DescribeTaskResult", func() (*vpc.DescribeTaskResultResponse, error) { return v.api.DescribeTaskResultWithContext(ctx, r) })
}

func (v instrumentedVPC) DescribeNetworkInterfacesWithContext(ctx context.Context, r *vpc.DescribeNetworkInterfacesRequest) (*vpc.DescribeNetworkInterfacesResponse, error) {
	return call(v.gate, "DescribeNetworkInterfaces", func() (*vpc.DescribeNetworkInterfacesResponse, error) {
		return v.api.DescribeNetworkInterfacesWithContext(ctx, r)
	})
}

type instrumentedTag struct {
	api  TagAPI
	gate *cloud.CredentialGate
}

func (t instrumentedTag) DescribeResourcesByTags(r *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error) {
	return call(t.gate, "DescribeResourcesByTags", func() (*tag.DescribeResourcesByTagsResponse, error) { return t.api.DescribeResourcesByTags(r) })
}

func (t instrumentedTag) ModifyResourceTags(r *tag.ModifyResourceTagsRequest) (*tag.ModifyResourceTagsResponse, error) {
	return call(t.gate, "ModifyResourceTags", func() (*tag.ModifyResourceTagsResponse, error) { return t.api.ModifyResourceTags(r) })
}

type instrumentedCVM struct {
	api  CVMAPI
	gate *cloud.CredentialGate
}

func (c instrumentedCVM) DescribeInstancesWithContext(ctx context.Context, r *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	return call(c.gate, "DescribeInstances", func() (*cvm.DescribeInstancesResponse, error) { return c.api.DescribeInstancesWithContext(ctx, r) })
}
