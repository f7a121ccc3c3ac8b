package tencentcloud

import (
	"context"
	"fmt"
	"time"

	"github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/common"
	cvm "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/cvm/v20170312"
	vpc "github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc/v20170312"

	"github.com/edgeplane/edgeplane/internal/cloud"
)

// pageSize is the largest Limit DescribeAddresses and DescribeInstances
// accept, and the most IDs one call takes.
const pageSize = 100

// maxPages bounds a paging loop, so a misbehaving endpoint cannot keep a
// reconcile busy forever.
const maxPages = 1000

// Client is the typed Tencent Cloud client the AnycastIPBinding reconciler
// uses. It maps between edgeplane's types and the SDK; rate limits and
// retries happen in the SDK clients it wraps.
type Client struct {
	vpc          VPCAPI
	tag          TagAPI
	cvm          CVMAPI
	pollInterval time.Duration
	gate         *cloud.CredentialGate
	// region names addresses for the tag API.
	region string
}

// New builds a Client on configured SDK clients (see NewAPIs).
func New(opts Options) (*Client, error) {
	apis, err := NewAPIs(opts)
	if err != nil {
		return nil, err
	}
	c := NewWithAPIs(*apis)
	if opts.TaskPollInterval > 0 {
		c.pollInterval = opts.TaskPollInterval
	}
	return c, nil
}

// NewWithAPIs wraps any implementations, typically fakes in tests.
func NewWithAPIs(apis APIs) *Client {
	return &Client{vpc: apis.VPC, tag: apis.Tag, cvm: apis.CVM, pollInterval: time.Second, gate: apis.Gate, region: apis.Region}
}

// CredentialsRejected returns Tencent Cloud's last refusal of this client's
// credentials and when the next call may go out; nil while they are not
// known to be rejected.
func (c *Client) CredentialsRejected() *cloud.CredentialsRejectedError {
	if c.gate == nil {
		return nil
	}
	return c.gate.Rejected()
}

// AllocateAddress allocates one address with req's type, bandwidth and
// tags. With a ClientToken the call is idempotent: after an outcome-unknown
// failure, repeating it returns the address the first call created.
// The address is CREATING until the returned task succeeds.
func (c *Client) AllocateAddress(ctx context.Context, req AllocateRequest) (AllocateResult, error) {
	resp, err := c.vpc.AllocateAddressesWithContext(ctx, allocateAddressesRequest(req))
	if err != nil {
		return AllocateResult{}, fmt.Errorf("allocating a %s address: %w", req.AddressType, err)
	}
	if resp.Response == nil {
		return AllocateResult{}, fmt.Errorf("allocating a %s address: empty response", req.AddressType)
	}
	id, err := ParseTaskID(resp.Response.TaskId)
	if err != nil {
		return AllocateResult{}, fmt.Errorf("allocating a %s address: %w", req.AddressType, err)
	}
	return AllocateResult{AddressIDs: common.StringValues(resp.Response.AddressSet), TaskID: id}, nil
}

// AssociateAddress binds an UNBIND address to a CVM instance (its primary
// ENI's primary IP). The address is BINDING until the task succeeds.
func (c *Client) AssociateAddress(ctx context.Context, addressID, instanceID string) (uint64, error) {
	req := vpc.NewAssociateAddressRequest()
	req.AddressId = common.StringPtr(addressID)
	req.InstanceId = common.StringPtr(instanceID)
	resp, err := c.vpc.AssociateAddressWithContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("binding %s to %s: %w", addressID, instanceID, err)
	}
	return taskOf(resp.Response, func(r *vpc.AssociateAddressResponseParams) *string { return r.TaskId })
}

// AssociateAddressWithPrivateIP binds an UNBIND address to privateIP of
// an ENI (AssociateAddress with NetworkInterfaceId and PrivateIpAddress).
// The address is BINDING until the task succeeds, then BIND naming the
// ENI's instance (BIND_ENI for an ENI attached to no instance). It fails
// with InvalidPrivateIpAddress.AlreadyBindEip (IsAlreadyBound) when the
// private IP carries another EIP, InvalidNetworkInterfaceId.NotFound
// (IsNetworkInterfaceNotFound) when the ENI is gone or no longer holds the
// IP, and NetworkInterfaceIdNotMatch / PrivateIpAddressNotMatch
// (IsBoundElsewhere) when the address is bound to another target.
func (c *Client) AssociateAddressWithPrivateIP(ctx context.Context, addressID, networkInterfaceID, privateIP string) (uint64, error) {
	req := vpc.NewAssociateAddressRequest()
	req.AddressId = common.StringPtr(addressID)
	req.NetworkInterfaceId = common.StringPtr(networkInterfaceID)
	req.PrivateIpAddress = common.StringPtr(privateIP)
	resp, err := c.vpc.AssociateAddressWithContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("binding %s to %s on %s: %w", addressID, privateIP, networkInterfaceID, err)
	}
	return taskOf(resp.Response, func(r *vpc.AssociateAddressResponseParams) *string { return r.TaskId })
}

// DisassociateAddress unbinds a BIND address; UNBINDING until the task
// succeeds.
func (c *Client) DisassociateAddress(ctx context.Context, addressID string) (uint64, error) {
	req := vpc.NewDisassociateAddressRequest()
	req.AddressId = common.StringPtr(addressID)
	resp, err := c.vpc.DisassociateAddressWithContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("unbinding %s: %w", addressID, err)
	}
	return taskOf(resp.Response, func(r *vpc.DisassociateAddressResponseParams) *string { return r.TaskId })
}

// ReleaseAddresses releases UNBIND addresses; OFFLINING until the task
// succeeds.
func (c *Client) ReleaseAddresses(ctx context.Context, addressIDs ...string) (uint64, error) {
	req := vpc.NewReleaseAddressesRequest()
	req.AddressIds = common.StringPtrs(addressIDs)
	resp, err := c.vpc.ReleaseAddressesWithContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("releasing %v: %w", addressIDs, err)
	}
	return taskOf(resp.Response, func(r *vpc.ReleaseAddressesResponseParams) *string { return r.TaskId })
}

func taskOf[T any](resp *T, get func(*T) *string) (uint64, error) {
	if resp == nil {
		return 0, fmt.Errorf("empty response")
	}
	return ParseTaskID(get(resp))
}

// DescribeAddresses lists every address matching q, paging through the
// results (and batching IDs by 100).
func (c *Client) DescribeAddresses(ctx context.Context, q AddressQuery) ([]Address, error) {
	filters := describeAddressesFilters(q)
	if len(q.IDs) == 0 {
		return c.describeAddressPages(ctx, nil, filters)
	}
	var out []Address
	for _, batch := range chunks(q.IDs, pageSize) {
		addrs, err := c.describeAddressPages(ctx, batch, filters)
		if err != nil {
			return nil, err
		}
		out = append(out, addrs...)
	}
	return out, nil
}

func (c *Client) describeAddressPages(ctx context.Context, ids []string, filters []*vpc.Filter) ([]Address, error) {
	var out []Address
	for page := range maxPages {
		req := vpc.NewDescribeAddressesRequest()
		if len(ids) > 0 {
			req.AddressIds = common.StringPtrs(ids)
		}
		req.Filters = filters
		req.Offset = common.Int64Ptr(int64(page * pageSize))
		req.Limit = common.Int64Ptr(pageSize)
		resp, err := c.vpc.DescribeAddressesWithContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("describing addresses: %w", err)
		}
		if resp.Response == nil {
			return nil, fmt.Errorf("describing addresses: empty response")
		}
		for _, a := range resp.Response.AddressSet {
			if a != nil {
				out = append(out, addressFromSDK(a))
			}
		}
		total := int64(0)
		if resp.Response.TotalCount != nil {
			total = *resp.Response.TotalCount
		}
		if len(resp.Response.AddressSet) < pageSize || int64(len(out)) >= total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("describing addresses: more than %d pages", maxPages)
}

// TaskResult returns the state of an async task: RUNNING, SUCCESS or
// FAILED. Reconcilers call this and requeue while RUNNING.
func (c *Client) TaskResult(ctx context.Context, taskID uint64) (string, error) {
	req := vpc.NewDescribeTaskResultRequest()
	req.TaskId = common.Uint64Ptr(taskID)
	resp, err := c.vpc.DescribeTaskResultWithContext(ctx, req)
	if err != nil {
		return "", fmt.Errorf("reading task %d: %w", taskID, err)
	}
	if resp.Response == nil || resp.Response.Result == nil {
		return "", fmt.Errorf("reading task %d: the response carries no Result", taskID)
	}
	return *resp.Response.Result, nil
}

// WaitForTask polls TaskResult until the task ends: nil on SUCCESS,
// ErrTaskFailed on FAILED, the context's error when it is done first. For
// tools and tests; a reconciler should requeue instead of blocking.
func (c *Client) WaitForTask(ctx context.Context, taskID uint64) error {
	t := time.NewTicker(c.pollInterval)
	defer t.Stop()
	for {
		res, err := c.TaskResult(ctx, taskID)
		if err != nil {
			return err
		}
		switch res {
		case TaskSuccess:
			return nil
		case TaskFailed:
			return fmt.Errorf("task %d: %w", taskID, ErrTaskFailed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for task %d: %w", taskID, ctx.Err())
		case <-t.C:
		}
	}
}

// FindResourcesByTags lists resources carrying all the given tags (exact
// values) through the tag API, paging through the results. resourcePrefix
// narrows the kind ("eip", "instance"); empty means all.
func (c *Client) FindResourcesByTags(ctx context.Context, tags map[string]string, resourcePrefix string) ([]TaggedResource, error) {
	if len(tags) == 0 {
		return nil, fmt.Errorf("looking resources up by tags: at least one tag is required")
	}
	var out []TaggedResource
	for page := range maxPages {
		req := describeResourcesByTagsRequest(tags, resourcePrefix, uint64(page*pageSize), pageSize)
		req.SetContext(ctx)
		resp, err := c.tag.DescribeResourcesByTags(req)
		if err != nil {
			return nil, fmt.Errorf("looking resources up by tags: %w", err)
		}
		if resp.Response == nil {
			return nil, fmt.Errorf("looking resources up by tags: empty response")
		}
		for _, r := range resp.Response.Rows {
			if r != nil {
				out = append(out, taggedResourceFromSDK(r))
			}
		}
		total := uint64(0)
		if resp.Response.TotalCount != nil {
			total = *resp.Response.TotalCount
		}
		if len(resp.Response.Rows) < pageSize || uint64(len(out)) >= total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("looking resources up by tags: more than %d pages", maxPages)
}

// TagAddress sets tags on an address and removes the keys in remove, in
// one tag API ModifyResourceTags call (an address's tags after its
// allocation: AllocateAddresses takes tags only at creation). A key may
// not be in both; removing a key the address does not carry is not an
// error. With nothing to set or remove it calls nothing.
func (c *Client) TagAddress(ctx context.Context, addressID string, tags map[string]string, remove ...string) error {
	if len(tags) == 0 && len(remove) == 0 {
		return nil
	}
	req := modifyResourceTagsRequest(EIPResourceName(c.region, addressID), tags, remove)
	req.SetContext(ctx)
	if _, err := c.tag.ModifyResourceTags(req); err != nil {
		return fmt.Errorf("tagging address %s: %w", addressID, err)
	}
	return nil
}

// DescribeInstances returns the CVM instances with the given IDs (unknown
// IDs are simply absent).
func (c *Client) DescribeInstances(ctx context.Context, instanceIDs ...string) ([]Instance, error) {
	var out []Instance
	for _, batch := range chunks(instanceIDs, pageSize) {
		req := cvm.NewDescribeInstancesRequest()
		req.InstanceIds = common.StringPtrs(batch)
		req.Limit = common.Int64Ptr(pageSize)
		insts, err := c.describeInstances(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, insts...)
	}
	return out, nil
}

// FindInstanceByPrivateIP returns the instance holding ip, or an
// ErrNotFound error.
func (c *Client) FindInstanceByPrivateIP(ctx context.Context, ip string) (Instance, error) {
	req := cvm.NewDescribeInstancesRequest()
	req.Filters = []*cvm.Filter{{Name: common.StringPtr("private-ip-address"), Values: common.StringPtrs([]string{ip})}}
	req.Limit = common.Int64Ptr(pageSize)
	insts, err := c.describeInstances(ctx, req)
	if err != nil {
		return Instance{}, err
	}
	if len(insts) == 0 {
		return Instance{}, fmt.Errorf("no instance holds %s: %w", ip, ErrNotFound)
	}
	return insts[0], nil
}

func (c *Client) describeInstances(ctx context.Context, req *cvm.DescribeInstancesRequest) ([]Instance, error) {
	var out []Instance
	for page := range maxPages {
		req.Offset = common.Int64Ptr(int64(page * pageSize))
		resp, err := c.cvm.DescribeInstancesWithContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("describing instances: %w", err)
		}
		if resp.Response == nil {
			return nil, fmt.Errorf("describing instances: empty response")
		}
		for _, in := range resp.Response.InstanceSet {
			if in != nil {
				out = append(out, instanceFromSDK(in))
			}
		}
		total := int64(0)
		if resp.Response.TotalCount != nil {
			total = *resp.Response.TotalCount
		}
		if len(resp.Response.InstanceSet) < pageSize || int64(len(out)) >= total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("describing instances: more than %d pages", maxPages)
}

// DescribeNetworkInterfaces lists every ENI matching q, paging through the
// results (and batching IDs by 100). Asking for an ID that does not exist
// fails with ResourceNotFound (IsNotFound), as the API does.
func (c *Client) DescribeNetworkInterfaces(ctx context.Context, q NetworkInterfaceQuery) ([]NetworkInterface, error) {
	if len(q.IDs) > 0 && q.hasFilters() {
		return nil, fmt.Errorf("describing network interfaces: IDs cannot be combined with filters")
	}
	if len(q.IDs) == 0 {
		return c.describeNetworkInterfacePages(ctx, nil, describeNetworkInterfacesFilters(q))
	}
	var out []NetworkInterface
	for _, batch := range chunks(q.IDs, pageSize) {
		enis, err := c.describeNetworkInterfacePages(ctx, batch, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, enis...)
	}
	return out, nil
}

func (c *Client) describeNetworkInterfacePages(ctx context.Context, ids []string, filters []*vpc.Filter) ([]NetworkInterface, error) {
	var out []NetworkInterface
	for page := range maxPages {
		req := vpc.NewDescribeNetworkInterfacesRequest()
		if len(ids) > 0 {
			req.NetworkInterfaceIds = common.StringPtrs(ids)
		}
		req.Filters = filters
		req.Offset = common.Uint64Ptr(uint64(page * pageSize))
		req.Limit = common.Uint64Ptr(pageSize)
		resp, err := c.vpc.DescribeNetworkInterfacesWithContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("describing network interfaces: %w", err)
		}
		if resp.Response == nil {
			return nil, fmt.Errorf("describing network interfaces: empty response")
		}
		for _, n := range resp.Response.NetworkInterfaceSet {
			if n != nil {
				out = append(out, networkInterfaceFromSDK(n))
			}
		}
		total := uint64(0)
		if resp.Response.TotalCount != nil {
			total = *resp.Response.TotalCount
		}
		if len(resp.Response.NetworkInterfaceSet) < pageSize || uint64(len(out)) >= total {
			return out, nil
		}
	}
	return nil, fmt.Errorf("describing network interfaces: more than %d pages", maxPages)
}

// FindNetworkInterfaceByPrivateIP returns the ENI in vpcID that holds ip
// (a pod IP on a secondary ENI, or a node IP), or an ErrNotFound error. An
// empty vpcID searches every VPC and fails when ENIs of several VPCs hold
// the IP. The ENI is checked to hold ip exactly, whatever the server's
// address-ip matching does.
func (c *Client) FindNetworkInterfaceByPrivateIP(ctx context.Context, vpcID, ip string) (NetworkInterface, error) {
	enis, err := c.DescribeNetworkInterfaces(ctx, NetworkInterfaceQuery{VpcID: vpcID, PrivateIPs: []string{ip}})
	if err != nil {
		return NetworkInterface{}, fmt.Errorf("finding the ENI holding %s: %w", ip, err)
	}
	switch held := ENIsHolding(enis, ip); len(held) {
	case 0:
		return NetworkInterface{}, fmt.Errorf("no ENI holds %s: %w", ip, ErrNotFound)
	case 1:
		return held[0], nil
	default:
		return NetworkInterface{}, fmt.Errorf("%d ENIs in different VPCs hold %s (%s, %s, …); name the VPC", len(held), ip, held[0].ID, held[1].ID)
	}
}
