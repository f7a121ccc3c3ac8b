// Package aws is edgeplane's EC2 client: a narrow interface with exactly the
// aws-sdk-go-v2 calls edgeplane makes (EC2API), an SDK configuration that
// carries the client-side token buckets, retries and endpoint override
// (NewEC2API), pure mappers and error classifiers, and a small typed Client
// for the Elastic IP reconciler.
//
// Rate limits and retries live in the SDK configuration: callers never sleep
// and never retry by hand. AllocateAddress is the one call that is not
// retried after an ambiguous failure, because EC2 offers no idempotency token
// for it (see Client.AllocateAddress).
package aws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
)

// EC2API is the subset of *ec2.Client edgeplane uses, with the SDK's exact
// signatures, so tests can substitute a fake and reviewers can see every
// call edgeplane can make.
type EC2API interface {
	AllocateAddress(ctx context.Context, params *ec2.AllocateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AllocateAddressOutput, error)
	AssociateAddress(ctx context.Context, params *ec2.AssociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.AssociateAddressOutput, error)
	DisassociateAddress(ctx context.Context, params *ec2.DisassociateAddressInput, optFns ...func(*ec2.Options)) (*ec2.DisassociateAddressOutput, error)
	ReleaseAddress(ctx context.Context, params *ec2.ReleaseAddressInput, optFns ...func(*ec2.Options)) (*ec2.ReleaseAddressOutput, error)
	DescribeAddresses(ctx context.Context, params *ec2.DescribeAddressesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeAddressesOutput, error)
	DescribeNetworkInterfaces(ctx context.Context, params *ec2.DescribeNetworkInterfacesInput, optFns ...func(*ec2.Options)) (*ec2.DescribeNetworkInterfacesOutput, error)
	CreateTags(ctx context.Context, params *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	DeleteTags(ctx context.Context, params *ec2.DeleteTagsInput, optFns ...func(*ec2.Options)) (*ec2.DeleteTagsOutput, error)
}

var _ EC2API = (*ec2.Client)(nil)
