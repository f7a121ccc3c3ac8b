// Package fake has function-field fakes of the tencentcloud VPC, tag and
// CVM interfaces for unit tests (level-1 fakes; for stateful behaviour over
// the real SDK use the emulator, internal/cloudsim).
package fake

import (
	"context"
	"fmt"
	"sync"

	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	tag "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/tag/v20180813"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	tc "github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
)

// API fakes tencentcloud.VPCAPI, TagAPI and CVMAPI at once: each call runs
// the matching Mock function, or fails with an error naming the call if it
// is unset. Calls lists the actions called, in order. Use APIs() to plug it
// into tencentcloud.NewWithAPIs.
type API struct {
	MockAllocateAddresses         func(ctx context.Context, r *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error)
	MockAssociateAddress          func(ctx context.Context, r *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error)
	MockDisassociateAddress       func(ctx context.Context, r *vpc.DisassociateAddressRequest) (*vpc.DisassociateAddressResponse, error)
	MockReleaseAddresses          func(ctx context.Context, r *vpc.ReleaseAddressesRequest) (*vpc.ReleaseAddressesResponse, error)
	MockDescribeAddresses         func(ctx context.Context, r *vpc.DescribeAddressesRequest) (*vpc.DescribeAddressesResponse, error)
	MockDescribeTaskResult        func(ctx context.Context, r *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error)
	MockDescribeNetworkInterfaces func(ctx context.Context, r *vpc.DescribeNetworkInterfacesRequest) (*vpc.DescribeNetworkInterfacesResponse, error)
	MockDescribeResourcesByTags   func(r *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error)
	MockModifyResourceTags        func(r *tag.ModifyResourceTagsRequest) (*tag.ModifyResourceTagsResponse, error)
	MockDescribeInstances         func(ctx context.Context, r *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error)

	mu    sync.Mutex
	Calls []string
}

var (
	_ tc.VPCAPI = (*API)(nil)
	_ tc.TagAPI = (*API)(nil)
	_ tc.CVMAPI = (*API)(nil)
)

// APIs returns the fake as all three interfaces.
func (f *API) APIs() tc.APIs { return tc.APIs{VPC: f, Tag: f, CVM: f} }

func (f *API) record(op string) {
	f.mu.Lock()
	f.Calls = append(f.Calls, op)
	f.mu.Unlock()
}

func notMocked(op string) error { return fmt.Errorf("fake Tencent API: %s is not mocked", op) }

// AllocateAddressesWithContext calls MockAllocateAddresses.
func (f *API) AllocateAddressesWithContext(ctx context.Context, r *vpc.AllocateAddressesRequest) (*vpc.AllocateAddressesResponse, error) {
	f.record("AllocateAddresses")
	if f.MockAllocateAddresses == nil {
		return nil, notMocked("AllocateAddresses")
	}
	return f.MockAllocateAddresses(ctx, r)
}

// AssociateAddressWithContext calls MockAssociateAddress.
func (f *API) AssociateAddressWithContext(ctx context.Context, r *vpc.AssociateAddressRequest) (*vpc.AssociateAddressResponse, error) {
	f.record("AssociateAddress")
	if f.MockAssociateAddress == nil {
		return nil, notMocked("AssociateAddress")
	}
	return f.MockAssociateAddress(ctx, r)
}

// DisassociateAddressWithContext calls MockDisassociateAddress.
func (f *API) DisassociateAddressWithContext(ctx context.Context, r *vpc.DisassociateAddressRequest) (*vpc.DisassociateAddressResponse, error) {
	f.record("DisassociateAddress")
	if f.MockDisassociateAddress == nil {
		return nil, notMocked("DisassociateAddress")
	}
	return f.MockDisassociateAddress(ctx, r)
}

// ReleaseAddressesWithContext calls MockReleaseAddresses.
func (f *API) ReleaseAddressesWithContext(ctx context.Context, r *vpc.ReleaseAddressesRequest) (*vpc.ReleaseAddressesResponse, error) {
	f.record("ReleaseAddresses")
	if f.MockReleaseAddresses == nil {
		return nil, notMocked("ReleaseAddresses")
	}
	return f.MockReleaseAddresses(ctx, r)
}

// DescribeAddressesWithContext calls MockDescribeAddresses.
func (f *API) DescribeAddressesWithContext(ctx context.Context, r *vpc.DescribeAddressesRequest) (*vpc.DescribeAddressesResponse, error) {
	f.record("DescribeAddresses")
	if f.MockDescribeAddresses == nil {
		return nil, notMocked("DescribeAddresses")
	}
	return f.MockDescribeAddresses(ctx, r)
}

// DescribeTaskResultWithContext calls MockDescribeTaskResult.
func (f *API) DescribeTaskResultWithContext(ctx context.Context, r *vpc.DescribeTaskResultRequest) (*vpc.DescribeTaskResultResponse, error) {
	f.record("DescribeTaskResult")
	if f.MockDescribeTaskResult == nil {
		return nil, notMocked("DescribeTaskResult")
	}
	return f.MockDescribeTaskResult(ctx, r)
}

// DescribeResourcesByTags calls MockDescribeResourcesByTags.
func (f *API) DescribeResourcesByTags(r *tag.DescribeResourcesByTagsRequest) (*tag.DescribeResourcesByTagsResponse, error) {
	f.record("DescribeResourcesByTags")
	if f.MockDescribeResourcesByTags == nil {
		return nil, notMocked("DescribeResourcesByTags")
	}
	return f.MockDescribeResourcesByTags(r)
}

// ModifyResourceTags calls MockModifyResourceTags.
func (f *API) ModifyResourceTags(r *tag.ModifyResourceTagsRequest) (*tag.ModifyResourceTagsResponse, error) {
	f.record("ModifyResourceTags")
	if f.MockModifyResourceTags == nil {
		return nil, notMocked("ModifyResourceTags")
	}
	return f.MockModifyResourceTags(r)
}

// DescribeInstancesWithContext calls MockDescribeInstances.
func (f *API) DescribeInstancesWithContext(ctx context.Context, r *cvm.DescribeInstancesRequest) (*cvm.DescribeInstancesResponse, error) {
	f.record("DescribeInstances")
	if f.MockDescribeInstances == nil {
		return nil, notMocked("DescribeInstances")
	}
	return f.MockDescribeInstances(ctx, r)
}

// DescribeNetworkInterfacesWithContext calls MockDescribeNetworkInterfaces.
func (f *API) DescribeNetworkInterfacesWithContext(ctx context.Context, r *vpc.DescribeNetworkInterfacesRequest) (*vpc.DescribeNetworkInterfacesResponse, error) {
	f.record("DescribeNetworkInterfaces")
	if f.MockDescribeNetworkInterfaces == nil {
		return nil, notMocked("DescribeNetworkInterfaces")
	}
	return f.MockDescribeNetworkInterfaces(ctx, r)
}
