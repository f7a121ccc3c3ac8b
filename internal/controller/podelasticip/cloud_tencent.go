package podelasticip

import (
	"context"
	"fmt"
	"maps"
	"slices"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
)

// tencentCloud is addressCloud on Tencent Cloud: every change is an
// asynchronous task (the address is CREATING, BINDING, UNBINDING or
// OFFLINING meanwhile, and takes no other change), allocations are
// idempotent by ClientToken, tags are written through the tag API, and a
// pod IP is bound as a private IP of its ENI (AssociateAddress with
// NetworkInterfaceId and PrivateIpAddress).
type tencentCloud struct {
	c *tencentcloud.Client
}

var _ addressCloud = (*tencentCloud)(nil)

// tencentPageSize is the most IDs, or values of one filter, one
// DescribeAddresses or DescribeNetworkInterfaces call takes.
const tencentPageSize = 100

func (t *tencentCloud) Provider() cloudv1alpha1.Provider { return cloudv1alpha1.ProviderTencentCloud }

func (t *tencentCloud) CredentialsRejected() *cloud.CredentialsRejectedError {
	return t.c.CredentialsRejected()
}

// fromTencent maps a Tencent address into the neutral model. Tencent has
// no association IDs: a bound address's association is named by its
// target, so a new association elsewhere has another ID, as on EC2.
func fromTencent(a tencentcloud.Address) decide.Address {
	out := decide.Address{AllocationID: a.ID, PublicIP: a.IP, Tags: a.Tags}
	switch {
	case a.Status == tencentcloud.StatusBind || a.Status == tencentcloud.StatusBindENI:
		out.AssociationID = associationID(a.NetworkInterfaceID, a.PrivateIP, a.InstanceID)
		out.NetworkInterfaceID, out.PrivateIPAddress = a.NetworkInterfaceID, a.PrivateIP
	case a.Status == tencentcloud.StatusBinding:
		// The target it is being bound to, not bound yet.
		out.Pending, out.NetworkInterfaceID, out.PrivateIPAddress = a.Status, a.NetworkInterfaceID, a.PrivateIP
	case tencentcloud.Transitional(a.Status):
		out.Pending = a.Status
	}
	return out
}

// associationID names a Tencent binding: "<ENI>/<private IP>", or the
// instance for an address bound to one without its ENI shown.
func associationID(eni, ip, instance string) string {
	if eni != "" && ip != "" {
		return eni + "/" + ip
	}
	return instance
}

func (t *tencentCloud) Allocate(ctx context.Context, req allocateRequest) (decide.Address, uint64, error) {
	s := req.Tencent
	res, err := t.c.AllocateAddress(ctx, tencentcloud.AllocateRequest{
		AddressType: string(s.AddressType), InternetChargeType: string(s.InternetChargeType), InternetMaxBandwidthOut: s.InternetMaxBandwidthOut,
		InternetServiceProvider: string(s.InternetServiceProvider), Tags: req.Tags, ClientToken: req.ClientToken,
	})
	if err != nil {
		return decide.Address{}, 0, err
	}
	if len(res.AddressIDs) != 1 {
		return decide.Address{}, 0, fmt.Errorf("AllocateAddresses returned %d addresses, want 1", len(res.AddressIDs))
	}
	return decide.Address{AllocationID: res.AddressIDs[0], Tags: maps.Clone(req.Tags), Pending: decide.PendingCreating}, res.TaskID, nil
}

func (t *tencentCloud) Describe(ctx context.Context, q addressQuery) ([]decide.Address, error) {
	got, err := t.c.DescribeAddresses(ctx, tencentcloud.AddressQuery{IDs: q.IDs, Tags: q.Tags, TagKeys: q.TagKeys})
	if err != nil {
		return nil, err
	}
	out := make([]decide.Address, 0, len(got))
	for _, g := range got {
		out = append(out, fromTencent(g))
	}
	return out, nil
}

// Associate binds an UNBIND address to ip on the ENI. Tencent refuses to
// bind an address that is not UNBIND (bound elsewhere, or a concurrent
// claimer's task running on it: errAddressTaken) and a private IP that
// carries another address (InvalidPrivateIpAddress.AlreadyBindEip:
// errPrivateIPInUse, naming the holder the ENI shows).
func (t *tencentCloud) Associate(ctx context.Context, a decide.Address, eniID, ip string) (decide.Address, uint64, error) {
	task, err := t.c.AssociateAddressWithPrivateIP(ctx, a.AllocationID, eniID, ip)
	switch {
	case tencentcloud.IsAlreadyBound(err):
		holder := "another address"
		if enis, derr := t.c.DescribeNetworkInterfaces(ctx, tencentcloud.NetworkInterfaceQuery{IDs: []string{eniID}}); derr == nil && len(enis) == 1 {
			if pub := enis[0].PublicIPs[ip]; pub != "" {
				holder = pub
			}
		}
		return a, 0, fmt.Errorf("%w: %s is bound to %s on %s; remove that binding and the PodElasticIP retries: %w", errPrivateIPInUse, holder, ip, eniID, err)
	case tencentcloud.IsBoundElsewhere(err), tencentcloud.IsInvalidState(err), tencentcloud.IsTaskRunning(err):
		return a, 0, fmt.Errorf("%w: %w", errAddressTaken, err)
	case err != nil:
		return a, 0, err
	}
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress, a.Pending = "", eniID, ip, decide.PendingBinding
	return a, task, nil
}

func (t *tencentCloud) Disassociate(ctx context.Context, a decide.Address) (decide.Address, uint64, error) {
	task, err := t.c.DisassociateAddress(ctx, a.AllocationID)
	switch {
	case tencentcloud.IsNotFound(err):
		a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = "", "", ""
		return a, 0, nil
	case tencentcloud.IsInvalidState(err), tencentcloud.IsTaskRunning(err):
		return a, 0, fmt.Errorf("%w: %w", errBusy, err)
	case err != nil:
		return a, 0, err
	}
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress, a.Pending = "", "", "", decide.PendingUnbinding
	return a, task, nil
}

func (t *tencentCloud) Release(ctx context.Context, a decide.Address) (uint64, error) {
	task, err := t.c.ReleaseAddresses(ctx, a.AllocationID)
	switch {
	case tencentcloud.IsNotFound(err):
		return 0, nil
	case tencentcloud.IsInvalidState(err), tencentcloud.IsTaskRunning(err):
		return 0, fmt.Errorf("%w: %w", errBusy, err)
	}
	return task, err
}

func (t *tencentCloud) Tag(ctx context.Context, id string, tags map[string]string) error {
	return t.c.TagAddress(ctx, id, tags)
}

func (t *tencentCloud) Untag(ctx context.Context, id string, keys ...string) error {
	return t.c.TagAddress(ctx, id, nil, keys...)
}

// Withdraw: the tag API has no conditional removal, so the address is read
// first and only the keys that still carry this claimer's values are
// removed. A winner that re-asserted its claim in between loses those
// tags; its next pass writes them again (they are ownership tags its plan
// requires), and its external name keeps it the address's owner meanwhile.
func (t *tencentCloud) Withdraw(ctx context.Context, id string, tags map[string]string) error {
	got, err := t.c.DescribeAddresses(ctx, tencentcloud.AddressQuery{IDs: []string{id}})
	if err != nil || len(got) != 1 {
		return err
	}
	var del []string
	for _, k := range []string{decide.TagClaim, decide.TagOwnerUID, decide.TagPod} {
		if v, ok := tags[k]; ok && got[0].Tags[k] == v {
			del = append(del, k)
		}
	}
	return t.c.TagAddress(ctx, id, nil, del...)
}

// FindENIs asks for the ENIs holding the pod IPs and their nodes' IPs in
// one DescribeNetworkInterfaces per 100 IPs (address-ip matches several
// IPs exactly). A private IP is unique within its VPC only, so a pod IP
// found in several VPCs is resolved to the ENI in its node's VPC.
func (t *tencentCloud) FindENIs(ctx context.Context, asked []podHost) (eniAnswer, error) {
	want := map[string]bool{}
	for _, p := range asked {
		want[p.pod] = true
		if p.host != "" {
			want[p.host] = true
		}
	}
	holders := map[string][]tencentcloud.NetworkInterface{}
	for chunk := range slices.Chunk(slices.Sorted(maps.Keys(want)), tencentPageSize) {
		enis, err := t.c.DescribeNetworkInterfaces(ctx, tencentcloud.NetworkInterfaceQuery{PrivateIPs: chunk})
		if err != nil {
			return eniAnswer{}, fmt.Errorf("finding the ENIs of pod IPs: %w", err)
		}
		for _, e := range enis {
			for _, ip := range e.PrivateIPs {
				holders[ip] = append(holders[ip], e)
			}
		}
	}
	ans := eniAnswer{All: map[string]string{}, Found: map[string]string{}}
	for ip, hs := range holders {
		if len(hs) == 1 {
			ans.All[ip] = hs[0].ID
		}
	}
	for _, p := range asked {
		if id, ok := pickENI(holders[p.pod], holders[p.host]); ok {
			ans.Found[p.pod] = id
		}
	}
	return ans, nil
}

// pickENI picks the ENI of a pod IP among those holding it: the only one,
// or the one in the VPC of the ENI holding the node's IP. ok is false when
// none holds it, or several do and the node does not say which.
func pickENI(pod, host []tencentcloud.NetworkInterface) (string, bool) {
	switch {
	case len(pod) == 1:
		return pod[0].ID, true
	case len(pod) == 0 || len(host) != 1:
		return "", false
	}
	var in []string
	for _, e := range pod {
		if e.VpcID == host[0].VpcID {
			in = append(in, e.ID)
		}
	}
	if len(in) != 1 {
		return "", false
	}
	return in[0], true
}

func (t *tencentCloud) StaleENI(err error) bool { return tencentcloud.IsNetworkInterfaceNotFound(err) }

func (t *tencentCloud) TaskResult(ctx context.Context, task uint64) (string, error) {
	if task == 0 {
		return tencentcloud.TaskSuccess, nil
	}
	return t.c.TaskResult(ctx, task)
}

func (t *tencentCloud) WaitForTask(ctx context.Context, task uint64) error {
	if task == 0 {
		return nil
	}
	return t.c.WaitForTask(ctx, task)
}

func (t *tencentCloud) MaxIDs() int { return tencentPageSize }
