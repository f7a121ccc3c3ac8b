package orphans

import (
	"context"
	"fmt"
	"time"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
)

// A command line waits less than a controller: a few quick retries, then
// the error.
const (
	cliAttempts   = 3
	cliBaseDelay  = 200 * time.Millisecond
	cliMaxBackoff = 2 * time.Second
)

// ListAddresses lists the addresses that carry TagCluster = identity in the
// cloud the config points at, through the provider's client. It only reads.
func ListAddresses(ctx context.Context, cfg providerconfig.Config, identity string) ([]Address, error) {
	switch cfg.Provider {
	case cloudv1alpha1.ProviderAWS:
		return listAWS(ctx, cfg, identity)
	case cloudv1alpha1.ProviderTencentCloud:
		return listTencent(ctx, cfg, identity)
	default:
		return nil, fmt.Errorf("provider %q is not supported", cfg.Provider)
	}
}

func listAWS(ctx context.Context, cfg providerconfig.Config, identity string) ([]Address, error) {
	opts, err := cfg.AWS()
	if err != nil {
		return nil, err
	}
	opts.Retry = aws.RetryOptions{MaxAttempts: cliAttempts, BaseDelay: cliBaseDelay, MaxBackoff: cliMaxBackoff}
	c, err := aws.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to AWS: %w", err)
	}
	addrs, err := c.DescribeAddresses(ctx, aws.AddressQuery{Tags: map[string]string{TagCluster: identity}})
	if err != nil {
		return nil, fmt.Errorf("listing Elastic IPs: %w", err)
	}
	out := make([]Address, 0, len(addrs))
	for _, a := range addrs {
		attached := a.InstanceID
		if attached == "" {
			attached = a.NetworkInterfaceID
		}
		if attached == "" && a.Associated() {
			attached = a.AssociationID
		}
		out = append(out, Address{ID: a.AllocationID, PublicIP: a.PublicIP, Tags: a.Tags, AttachedTo: attached})
	}
	return out, nil
}

func listTencent(ctx context.Context, cfg providerconfig.Config, identity string) ([]Address, error) {
	opts, err := cfg.Tencent()
	if err != nil {
		return nil, err
	}
	opts.Retry = tencentcloud.RetryOptions{RateLimitMaxRetries: cliAttempts - 1, NetworkFailureMaxRetries: -1, BaseDelay: cliBaseDelay, MaxBackoff: cliMaxBackoff}
	c, err := tencentcloud.New(opts)
	if err != nil {
		return nil, fmt.Errorf("connecting to Tencent Cloud: %w", err)
	}
	addrs, err := c.DescribeAddresses(ctx, tencentcloud.AddressQuery{Tags: map[string]string{TagCluster: identity}})
	if err != nil {
		return nil, fmt.Errorf("listing addresses: %w", err)
	}
	out := make([]Address, 0, len(addrs))
	for _, a := range addrs {
		attached := a.InstanceID
		if attached == "" {
			attached = a.NetworkInterfaceID
		}
		out = append(out, Address{ID: a.ID, PublicIP: a.IP, Tags: a.Tags, Created: parseTencentTime(a.CreatedTime), AttachedTo: attached})
	}
	return out, nil
}

// parseTencentTime reads CreatedTime ("2006-01-02T15:04:05Z", or with a
// space and no zone in older API versions: then it is Beijing time).
func parseTencentTime(s string) time.Time {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	if t, err := time.ParseInLocation(time.DateTime, s, time.FixedZone("CST", 8*3600)); err == nil {
		return t
	}
	return time.Time{}
}
