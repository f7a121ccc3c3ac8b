package aws

import (
	"context"
	"fmt"
	"maps"
	"slices"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// Client is the typed EC2 client the Elastic IP reconciler uses. It only
// maps between edgeplane's types and the SDK; throttling and retries happen
// inside the SDK client it wraps.
type Client struct {
	api  EC2API
	gate *cloud.CredentialGate
}

// New builds a Client on a configured SDK client (see NewEC2API).
func New(ctx context.Context, opts Options) (*Client, error) {
	if opts.Gate == nil {
		opts.Gate = cloud.NewCredentialGate(opts.CredentialBackoff, opts.Clock)
	}
	api, err := NewEC2API(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Client{api: api, gate: opts.Gate}, nil
}

// CredentialsRejected returns EC2's last refusal of this client's
// credentials and when the next call may go out; nil while they are not
// known to be rejected.
func (c *Client) CredentialsRejected() *cloud.CredentialsRejectedError {
	if c.gate == nil {
		return nil
	}
	return c.gate.Rejected()
}

// NewWithAPI wraps any EC2API, typically a fake in tests.
func NewWithAPI(api EC2API) *Client { return &Client{api: api} }

// API returns the underlying EC2API.
func (c *Client) API() EC2API { return c.api }

// AllocateAddress allocates an Elastic IP from req.PublicIPv4Pool with
// req.Tags applied at creation.
//
// EC2 has no ClientToken for AllocateAddress, so this call is retried only
// when EC2 throttled it (nothing happened). After a timeout, a dropped
// connection or a 5xx (IsOutcomeUnknown) the address may exist: find it with
// DescribeAddresses by its tags before allocating again.
func (c *Client) AllocateAddress(ctx context.Context, req AllocateRequest) (Address, error) {
	in := allocateAddressInput(req)
	out, err := c.api.AllocateAddress(ctx, in, retryOnlyThrottling)
	if err != nil {
		return Address{}, fmt.Errorf("allocating an Elastic IP from pool %q: %w", awssdk.ToString(in.PublicIpv4Pool), err)
	}
	return Address{
		AllocationID:   awssdk.ToString(out.AllocationId),
		PublicIP:       awssdk.ToString(out.PublicIp),
		PublicIPv4Pool: awssdk.ToString(out.PublicIpv4Pool),
		Tags:           maps.Clone(req.Tags),
	}, nil
}

// AssociateAddress associates the address with privateIP on the ENI and
// returns the association ID. It fails with Resource.AlreadyAssociated
// (IsAlreadyAssociated) rather than take an address from another resource;
// repeating it for the same target succeeds.
func (c *Client) AssociateAddress(ctx context.Context, allocationID, networkInterfaceID, privateIP string) (string, error) {
	out, err := c.api.AssociateAddress(ctx, associateAddressInput(allocationID, networkInterfaceID, privateIP))
	if err != nil {
		return "", fmt.Errorf("associating %s with %s on %s: %w", allocationID, privateIP, networkInterfaceID, err)
	}
	return awssdk.ToString(out.AssociationId), nil
}

// AssociateAddressWithInstance associates the address with an instance,
// which EC2 resolves to its primary ENI's primary private IP. EC2 accepts
// this only for an instance with exactly one ENI: with secondary ENIs (the
// VPC CNI attaches them to nodes) it fails with InvalidInstanceID
// (IsMultipleInterfaces); address such a node through
// FindPrimaryNetworkInterface and AssociateAddress instead. Like
// AssociateAddress it never takes an address from another resource.
func (c *Client) AssociateAddressWithInstance(ctx context.Context, allocationID, instanceID string) (string, error) {
	out, err := c.api.AssociateAddress(ctx, &ec2.AssociateAddressInput{
		AllocationId:       awssdk.String(allocationID),
		InstanceId:         awssdk.String(instanceID),
		AllowReassociation: awssdk.Bool(false),
	})
	if err != nil {
		return "", fmt.Errorf("associating %s with instance %s: %w", allocationID, instanceID, err)
	}
	return awssdk.ToString(out.AssociationId), nil
}

// DisassociateAddress removes an association (idempotent on EC2).
func (c *Client) DisassociateAddress(ctx context.Context, associationID string) error {
	if _, err := c.api.DisassociateAddress(ctx, &ec2.DisassociateAddressInput{AssociationId: awssdk.String(associationID)}); err != nil {
		return fmt.Errorf("disassociating %s: %w", associationID, err)
	}
	return nil
}

// ReleaseAddress releases an unassociated address (IsInUse if still
// associated; IsNotFound if already gone).
func (c *Client) ReleaseAddress(ctx context.Context, allocationID string) error {
	if _, err := c.api.ReleaseAddress(ctx, &ec2.ReleaseAddressInput{AllocationId: awssdk.String(allocationID)}); err != nil {
		return fmt.Errorf("releasing %s: %w", allocationID, err)
	}
	return nil
}

// DescribeAddresses lists the addresses matching q (DescribeAddresses is
// not paginated).
func (c *Client) DescribeAddresses(ctx context.Context, q AddressQuery) ([]Address, error) {
	out, err := c.api.DescribeAddresses(ctx, describeAddressesInput(q))
	if err != nil {
		return nil, fmt.Errorf("describing addresses: %w", err)
	}
	addrs := make([]Address, 0, len(out.Addresses))
	for _, a := range out.Addresses {
		addrs = append(addrs, addressFromSDK(a))
	}
	return addrs, nil
}

// CreateTags adds or overwrites tags on a resource.
func (c *Client) CreateTags(ctx context.Context, resourceID string, tags map[string]string) error {
	if len(tags) == 0 {
		return nil
	}
	_, err := c.api.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{resourceID}, Tags: tagsToSDK(tags)})
	if err != nil {
		return fmt.Errorf("tagging %s: %w", resourceID, err)
	}
	return nil
}

// DeleteTags removes the given tag keys (whatever their values) from a
// resource. With no keys it does nothing: EC2 would delete every tag.
func (c *Client) DeleteTags(ctx context.Context, resourceID string, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	tags := make([]types.Tag, 0, len(keys))
	for _, k := range slices.Sorted(slices.Values(keys)) {
		tags = append(tags, types.Tag{Key: awssdk.String(k)})
	}
	if _, err := c.api.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{resourceID}, Tags: tags}); err != nil {
		return fmt.Errorf("removing tags from %s: %w", resourceID, err)
	}
	return nil
}

// describeNetworkInterfaces runs a DescribeNetworkInterfaces query through
// all pages.
func (c *Client) describeNetworkInterfaces(ctx context.Context, in *ec2.DescribeNetworkInterfacesInput) ([]NetworkInterface, error) {
	in.MaxResults = awssdk.Int32(1000)
	var out []NetworkInterface
	p := ec2.NewDescribeNetworkInterfacesPaginator(c.api, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, n := range page.NetworkInterfaces {
			out = append(out, networkInterfaceFromSDK(n))
		}
	}
	return out, nil
}

// DescribeNetworkInterfaces lists, through all pages, the ENIs that match
// one filter (an EC2 filter name such as "addresses.private-ip-address" or
// "attachment.instance-id", with at most 200 values).
func (c *Client) DescribeNetworkInterfaces(ctx context.Context, filterName string, values []string) ([]NetworkInterface, error) {
	return c.describeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{Filters: []types.Filter{{Name: awssdk.String(filterName), Values: values}}})
}

// FindNetworkInterfaceByPrivateIP returns the ENI in vpcID (empty: any VPC)
// that holds ip as one of its private addresses, or an ErrNotFound error.
func (c *Client) FindNetworkInterfaceByPrivateIP(ctx context.Context, vpcID, ip string) (NetworkInterface, error) {
	enis, err := c.describeNetworkInterfaces(ctx, enisByPrivateIPInput(vpcID, ip))
	if err != nil {
		return NetworkInterface{}, fmt.Errorf("finding the ENI holding %s: %w", ip, err)
	}
	if len(enis) == 0 {
		return NetworkInterface{}, fmt.Errorf("no ENI holds %s: %w", ip, ErrNotFound)
	}
	return enis[0], nil
}

// FindNetworkInterfaceForPodIP returns the ENI a pod IP lives on. With
// secondary IPs the pod IP is a private address of an ENI; with prefix
// delegation it is not, so the fallback finds the node's instance through
// the ENI holding hostIP and then the instance's ENI whose delegated
// prefix contains the pod IP.
func (c *Client) FindNetworkInterfaceForPodIP(ctx context.Context, vpcID, podIP, hostIP string) (NetworkInterface, error) {
	eni, err := c.FindNetworkInterfaceByPrivateIP(ctx, vpcID, podIP)
	if err == nil || !IsNotFound(err) || hostIP == "" {
		return eni, err
	}
	node, err := c.FindNetworkInterfaceByPrivateIP(ctx, vpcID, hostIP)
	if err != nil {
		return NetworkInterface{}, fmt.Errorf("finding the node ENI for pod IP %s: %w", podIP, err)
	}
	if node.InstanceID == "" {
		return NetworkInterface{}, fmt.Errorf("the ENI %s holding node IP %s is not attached to an instance: %w", node.ID, hostIP, ErrNotFound)
	}
	enis, err := c.describeNetworkInterfaces(ctx, enisByInstanceInput(vpcID, node.InstanceID))
	if err != nil {
		return NetworkInterface{}, fmt.Errorf("listing the ENIs of instance %s: %w", node.InstanceID, err)
	}
	if e, ok := ENIWithPrefixFor(enis, podIP); ok {
		return e, nil
	}
	return NetworkInterface{}, fmt.Errorf("no ENI of instance %s holds pod IP %s in a delegated prefix: %w", node.InstanceID, podIP, ErrNotFound)
}

// maxFilterValues is the most values one DescribeNetworkInterfaces filter
// carries per call.
const maxFilterValues = 200

// FindPrimaryNetworkInterfaces returns the primary ENI (device index 0,
// network card 0) of each instance, in as few filtered
// DescribeNetworkInterfaces calls as the 200-value filter limit allows
// (filtered calls draw from the larger non-mutating bucket). Instances
// that do not exist, or no longer have their primary ENI, are absent.
func (c *Client) FindPrimaryNetworkInterfaces(ctx context.Context, instanceIDs []string) (map[string]NetworkInterface, error) {
	out := map[string]NetworkInterface{}
	ids := slices.Compact(slices.Sorted(slices.Values(instanceIDs)))
	for batch := range slices.Chunk(ids, maxFilterValues) {
		enis, err := c.describeNetworkInterfaces(ctx, primaryENIsInput(batch))
		if err != nil {
			return nil, fmt.Errorf("finding the primary ENIs of %d instances: %w", len(batch), err)
		}
		maps.Copy(out, PrimaryENIs(enis))
	}
	return out, nil
}

// FindPrimaryNetworkInterface returns an instance's primary ENI, or an
// ErrNotFound error when the instance has none (unknown or terminated).
func (c *Client) FindPrimaryNetworkInterface(ctx context.Context, instanceID string) (NetworkInterface, error) {
	found, err := c.FindPrimaryNetworkInterfaces(ctx, []string{instanceID})
	if err != nil {
		return NetworkInterface{}, err
	}
	eni, ok := found[instanceID]
	if !ok {
		return NetworkInterface{}, fmt.Errorf("instance %s has no primary ENI: %w", instanceID, ErrNotFound)
	}
	return eni, nil
}
