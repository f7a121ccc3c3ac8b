// Package fake has a function-field fake of aws.EC2API for unit tests of
// code that uses the EC2 client (level-1 fakes; for stateful behaviour over
// the real SDK use the emulator, internal/cloudsim).
package fake

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	epaws "github.com/edgeplane/edgeplane/internal/cloud/aws"
)

// EC2API fakes aws.EC2API: each call runs the matching Mock function, or
// fails with an error naming the call if it is unset. Calls lists the
// operations called, in order.
type EC2API struct {
	MockAllocateAddress           func(ctx context.Context, in *ec2.AllocateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AllocateAddressOutput, error)
	MockAssociateAddress          func(ctx context.Context, in *ec2.AssociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AssociateAddressOutput, error)
	MockDisassociateAddress       func(ctx context.Context, in *ec2.DisassociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.DisassociateAddressOutput, error)
	MockReleaseAddress            func(ctx context.Context, in *ec2.ReleaseAddressInput, optFns ...func(*ec2.Options)) (*ec2.ReleaseAddressOutput, error)
	MockDescribeAddresses         func(ctx context.Context, in *ec2.DescribeAddressesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeAddressesOutput, error)
	MockDescribeNetworkInterfaces func(ctx context.Context, in *ec2.DescribeNetworkInterfacesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error)
	MockCreateTags                func(ctx context.Context, in *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	MockDeleteTags                func(ctx context.Context, in *ec2.DeleteTagsInput, optFns ...func(*ec2.Options)) (*ec2.DeleteTagsOutput, error)

	mu    sync.Mutex
	Calls []string
}

var _ epaws.EC2API = (*EC2API)(nil)

func (f *EC2API) record(op string) {
	f.mu.Lock()
	f.Calls = append(f.Calls, op)
	f.mu.Unlock()
}

func notMocked(op string) error { return fmt.Errorf("fake EC2API: %s is not mocked", op) }

// AllocateAddress calls MockAllocateAddress.
func (f *EC2API) AllocateAddress(ctx context.Context, in *ec2.AllocateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AllocateAddressOutput, error) {
	f.record("AllocateAddress")
	if f.MockAllocateAddress == nil {
		return nil, notMocked("AllocateAddress")
	}
	return f.MockAllocateAddress(ctx, in, optFns...)
}

// AssociateAddress calls MockAssociateAddress.
func (f *EC2API) AssociateAddress(ctx context.Context, in *ec2.AssociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AssociateAddressOutput, error) {
	f.record("AssociateAddress")
	if f.MockAssociateAddress == nil {
		return nil, notMocked("AssociateAddress")
	}
	return f.MockAssociateAddress(ctx, in, optFns...)
}

// DisassociateAddress calls MockDisassociateAddress.
func (f *EC2API) DisassociateAddress(ctx context.Context, in *ec2.DisassociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.DisassociateAddressOutput, error) {
	f.record("DisassociateAddress")
	if f.MockDisassociateAddress == nil {
		return nil, notMocked("DisassociateAddress")
	}
	return f.MockDisassociateAddress(ctx, in, optFns...)
}

// ReleaseAddress calls MockReleaseAddress.
func (f *EC2API) ReleaseAddress(ctx context.Context, in *ec2.ReleaseAddressInput, optFns ...func(*ec2.Options)) (*ec2.ReleaseAddressOutput, error) {
	f.record("ReleaseAddress")
	if f.MockReleaseAddress == nil {
		return nil, notMocked("ReleaseAddress")
	}
	return f.MockReleaseAddress(ctx, in, optFns...)
}

// DescribeAddresses calls MockDescribeAddresses.
func (f *EC2API) DescribeAddresses(ctx context.Context, in *ec2.DescribeAddressesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeAddressesOutput, error) {
	f.record("DescribeAddresses")
	if f.MockDescribeAddresses == nil {
		return nil, notMocked("DescribeAddresses")
	}
	return f.MockDescribeAddresses(ctx, in, optFns...)
}

// DescribeNetworkInterfaces calls MockDescribeNetworkInterfaces.
func (f *EC2API) DescribeNetworkInterfaces(ctx context.Context, in *ec2.DescribeNetworkInterfacesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error) {
	f.record("DescribeNetworkInterfaces")
	if f.MockDescribeNetworkInterfaces == nil {
		return nil, notMocked("DescribeNetworkInterfaces")
	}
	return f.MockDescribeNetworkInterfaces(ctx, in, optFns...)
}

// CreateTags calls MockCreateTags.
func (f *EC2API) CreateTags(ctx context.Context, in *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	f.record("CreateTags")
	if f.MockCreateTags == nil {
		return nil, notMocked("CreateTags")
	}
	return f.MockCreateTags(ctx, in, optFns...)
}

// DeleteTags calls MockDeleteTags.
func (f *EC2API) DeleteTags(ctx context.Context, in *ec2.DeleteTagsInput, optFns ...func(*ec2.Options)) (*ec2.DeleteTagsOutput, error) {
	f.record("DeleteTags")
	if f.MockDeleteTags == nil {
		return nil, notMocked("DeleteTags")
	}
	return f.MockDeleteTags(ctx, in, optFns...)
}
