package podelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
)

// awsCloud is addressCloud on EC2: every call finishes before it answers,
// so no task is ever pending.
type awsCloud struct {
	c *aws.Client
	// prefix caches, by instance ID, the ENIs of node instances whose pods
	// take their IPs from delegated prefixes.
	prefix *cache.LRUExpireCache
	eniTTL time.Duration
}

var _ addressCloud = (*awsCloud)(nil)

func newAWSCloud(c *aws.Client, clk clock.PassiveClock) *awsCloud {
	return &awsCloud{c: c, prefix: cache.NewLRUExpireCacheWithClock(maxENIAddrs, clk), eniTTL: eniTTL}
}

func (a *awsCloud) Provider() cloudv1alpha1.Provider { return cloudv1alpha1.ProviderAWS }

func (a *awsCloud) CredentialsRejected() *cloud.CredentialsRejectedError {
	return a.c.CredentialsRejected()
}

// fromAWS maps an EC2 address into the neutral model.
func fromAWS(a aws.Address) decide.Address {
	return decide.Address{AllocationID: a.AllocationID, PublicIP: a.PublicIP, AssociationID: a.AssociationID,
		NetworkInterfaceID: a.NetworkInterfaceID, PrivateIPAddress: a.PrivateIPAddress, Tags: a.Tags}
}

func (a *awsCloud) Allocate(ctx context.Context, req allocateRequest) (decide.Address, uint64, error) {
	got, err := a.c.AllocateAddress(ctx, aws.AllocateRequest{PublicIPv4Pool: req.PublicIPv4Pool, Tags: req.Tags})
	return fromAWS(got), 0, err
}

func (a *awsCloud) Describe(ctx context.Context, q addressQuery) ([]decide.Address, error) {
	got, err := a.c.DescribeAddresses(ctx, aws.AddressQuery{AllocationIDs: q.IDs, Tags: q.Tags, TagKeys: q.TagKeys})
	if err != nil {
		return nil, err
	}
	out := make([]decide.Address, 0, len(got))
	for _, g := range got {
		out = append(out, fromAWS(g))
	}
	return out, nil
}

// Associate associates with AllowReassociation off: EC2 refuses with
// Resource.AlreadyAssociated when the address is associated elsewhere or
// the private IP carries another address; which one it was is found out
// from the ENI (errPrivateIPInUse names the holder).
func (a *awsCloud) Associate(ctx context.Context, addr decide.Address, eniID, ip string) (decide.Address, uint64, error) {
	id, err := a.c.AssociateAddress(ctx, addr.AllocationID, eniID, ip)
	if aws.IsAlreadyAssociated(err) {
		if inUse := a.targetInUse(ctx, addr, eniID, ip); inUse != nil {
			return addr, 0, inUse
		}
		return addr, 0, fmt.Errorf("%w: %w", errAddressTaken, err)
	}
	if err != nil {
		return addr, 0, err
	}
	addr.AssociationID, addr.NetworkInterfaceID, addr.PrivateIPAddress = id, eniID, ip
	return addr, 0, nil
}

// targetInUse, after EC2 refused to associate addr with ip on eniID
// because of an existing association, finds out whether another address
// sits on ip. It returns an errPrivateIPInUse error naming the holder, or
// nil when the refusal was about addr itself (or the look failed: the
// caller then treats the refusal as a taken address).
func (a *awsCloud) targetInUse(ctx context.Context, addr decide.Address, eniID, ip string) error {
	enis, err := a.c.DescribeNetworkInterfaces(ctx, "network-interface-id", []string{eniID})
	if err != nil {
		return nil
	}
	var eniPublic string
	if len(enis) == 1 {
		eniPublic = enis[0].PublicIPs[ip]
	}
	var visible []decide.Address
	if eniPublic == "" {
		// A pod IP from a delegated prefix is not among the ENI's listed
		// private IPs; the account's own addresses still show it.
		got, err := a.c.DescribeAddresses(ctx, aws.AddressQuery{NetworkInterfaceID: eniID, PrivateIPAddress: ip})
		if err != nil {
			return nil
		}
		for _, g := range got {
			visible = append(visible, fromAWS(g))
		}
	}
	holder := decide.ForeignHolder(eniPublic, visible, addr)
	if holder == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is associated with %s on %s; remove that association and the PodElasticIP retries", errPrivateIPInUse, holder, ip, eniID)
}

func (a *awsCloud) Disassociate(ctx context.Context, addr decide.Address) (decide.Address, uint64, error) {
	if err := a.c.DisassociateAddress(ctx, addr.AssociationID); ignoreNotFound(err) != nil {
		return addr, 0, err
	}
	addr.AssociationID, addr.NetworkInterfaceID, addr.PrivateIPAddress = "", "", ""
	return addr, 0, nil
}

func (a *awsCloud) Release(ctx context.Context, addr decide.Address) (uint64, error) {
	return 0, ignoreNotFound(a.c.ReleaseAddress(ctx, addr.AllocationID))
}

func (a *awsCloud) Tag(ctx context.Context, id string, tags map[string]string) error {
	return a.c.CreateTags(ctx, id, tags)
}

func (a *awsCloud) Untag(ctx context.Context, id string, keys ...string) error {
	return a.c.DeleteTags(ctx, id, keys...)
}

// Withdraw uses EC2's value-conditional DeleteTags: a tag with another
// value (the winner's) stays.
func (a *awsCloud) Withdraw(ctx context.Context, id string, tags map[string]string) error {
	var del []ec2types.Tag
	for _, k := range []string{decide.TagClaim, decide.TagOwnerUID, decide.TagPod} {
		if v, ok := tags[k]; ok {
			del = append(del, ec2types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
		}
	}
	_, err := a.c.API().DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: del})
	return err
}

// FindENIs finds the ENIs of pod IPs in one DescribeNetworkInterfaces
// (plus one for the node instances of pod IPs in delegated prefixes):
// pod IPs and host IPs in one call, the host IPs serving the prefix
// delegation fallback.
func (a *awsCloud) FindENIs(ctx context.Context, asked []podHost) (eniAnswer, error) {
	ips := map[string]string{}
	for _, p := range asked {
		ips[p.pod] = p.host
	}
	ans := eniAnswer{All: map[string]string{}, Found: map[string]string{}}
	want := map[string]bool{}
	for pod, host := range ips {
		want[pod] = true
		if host != "" {
			want[host] = true
		}
	}
	byIP := map[string]aws.NetworkInterface{}
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(want)), 200) {
		enis, err := a.c.DescribeNetworkInterfaces(ctx, "addresses.private-ip-address", chunk)
		if err != nil {
			return eniAnswer{}, fmt.Errorf("finding the ENIs of pod IPs: %w", err)
		}
		for _, e := range enis {
			for _, ip := range e.PrivateIPs {
				byIP[ip] = e
			}
		}
	}
	for ip, e := range byIP {
		ans.All[ip] = e.ID
	}

	// Prefix delegation: the pod IP is in a /28 delegated to one of the
	// node instance's ENIs.
	instances := map[string]bool{}
	for pod, host := range ips {
		if e, ok := byIP[pod]; ok {
			ans.Found[pod] = e.ID
			continue
		}
		if n, ok := byIP[host]; ok && n.InstanceID != "" {
			instances[n.InstanceID] = true
		}
	}
	var ask []string
	cached := map[string][]aws.NetworkInterface{}
	for id := range instances {
		if p, ok := a.prefix.Get(id); ok {
			cached[id] = p.([]aws.NetworkInterface)
		} else {
			ask = append(ask, id)
		}
	}
	slices.Sort(ask)
	for chunk := range slices.Chunk(ask, 200) {
		enis, err := a.c.DescribeNetworkInterfaces(ctx, "attachment.instance-id", chunk)
		if err != nil {
			return eniAnswer{}, fmt.Errorf("listing the ENIs of node instances: %w", err)
		}
		for _, e := range enis {
			cached[e.InstanceID] = append(cached[e.InstanceID], e)
		}
	}
	for _, id := range ask {
		a.prefix.Add(id, cached[id], a.eniTTL)
	}
	for pod, host := range ips {
		if _, ok := ans.Found[pod]; ok {
			continue
		}
		n, ok := byIP[host]
		if !ok {
			continue
		}
		if e, ok := aws.ENIWithPrefixFor(cached[n.InstanceID], pod); ok {
			ans.Found[pod] = e.ID
		}
	}
	return ans, nil
}

func (a *awsCloud) StaleENI(err error) bool {
	return aws.IsInvalidParameter(err) || aws.IsNotFound(err)
}

func (a *awsCloud) TaskResult(context.Context, uint64) (string, error) {
	return tencentcloud.TaskSuccess, nil
}

func (a *awsCloud) WaitForTask(context.Context, uint64) error { return nil }

func (a *awsCloud) MaxIDs() int { return 200 }
