package podelasticip

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// connector turns a PodElasticIP's providerConfigRef into the client of
// the config's cloud: EC2 for an AWS config, Tencent Cloud's VPC and tag
// APIs for a Tencent Cloud one (cloud_aws.go, cloud_tencent.go). Clients
// (with their token buckets and look-up batchers) are kept per account
// (runtime/clientcache), so every PodElasticIP of one account shares one
// client and its client-side rate limits; the config itself is re-read
// after configTTL, and a client unused for an hour is dropped.
type connector struct {
	kube    client.Client
	reader  client.Reader
	rec     events.EventRecorder
	opts    Options
	cluster string
	// tenancy judges tenants' ProviderConfigs (--tenant-endpoints).
	tenancy tenancy.Policy
	// claims bounds what Pool and Static may claim
	// (--podelasticip-claimable-tags).
	claims  decide.ClaimPolicy
	started time.Time
	// creds receives the accounts' credential refusals for the provider
	// configs' Ready conditions (nil: not reported).
	creds *credstatus.Board

	// accounts maps namespace/kind/name of a provider config to its account.
	accounts *clientcache.Cache[*account]
	// marked remembers, by pod UID, the marks this process last wrote on a
	// pod and the pod's version after the write, so that a pass served a
	// cached pod from before that write neither writes the marks again nor
	// repeats the pod's Event (read-your-writes).
	marked *expect.Writes[types.UID, podMarks]
}

// account is one cloud account as a set of shared clients.
type account struct {
	cloud   addressCloud
	look    *lookup
	cluster string
	// tasks remembers, by address ID, the cloud task this process last
	// started on it (startedTask), so a pass can tell a task that FAILED
	// from one that ended as meant; nil on a cloud without tasks (EC2).
	tasks *cache.LRUExpireCache
}

// tasksTTL is how long a started task is remembered: far longer than a
// task runs.
const tasksTTL = 10 * time.Minute

const configTTL = 10 * time.Second

// markedTTL and maxMarked bound connector.marked: well past the informer's
// lag, and far above the pods one manager serves.
const (
	markedTTL = 5 * time.Minute
	maxMarked = 1 << 16
)

func newConnector(kube client.Client, reader client.Reader, rec events.EventRecorder, opts Options, sc setup.Config) *connector {
	return &connector{
		kube: kube, reader: reader, rec: rec, opts: opts, cluster: sc.ClusterName, tenancy: sc.Tenancy, started: opts.clock().Now(),
		creds:    sc.Credentials,
		accounts: clientcache.New[*account](clientcache.Config{ConfigTTL: configTTL}),
		marked:   expect.New[types.UID, podMarks](markedTTL, maxMarked, opts.clock()),
	}
}

// Connect resolves the PodElasticIP's provider config and returns a client
// (the reconciler records the config's usage meanwhile).
func (c *connector) Connect(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.TypedExternalClient[*networkingv1alpha1.PodElasticIP], error) {
	acct, err := c.account(ctx, cr.Spec.ProviderConfigReference, cr.Namespace)
	if err != nil {
		if errors.Is(err, providerconfig.ErrNotAllowed) {
			// The reconciler adds Synced=False and a CannotConnectToProvider
			// Event and retries with backoff; no cloud call is made.
			setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonProviderConfigNotAllowed, err.Error()))
		}
		return nil, err
	}
	// What the account's last calls found out about its credentials goes
	// to the provider config's Ready condition.
	c.creds.Report(configRef(cr.Spec.ProviderConfigReference, cr.Namespace), acct.cloud.CredentialsRejected())
	return &external{conn: c, acct: acct}, nil
}

// configRef names the provider config a PodElasticIP in namespace uses.
func configRef(ref *xpv2.ProviderConfigReference, namespace string) credstatus.Ref {
	use := providerconfig.DefaultRef()
	if ref != nil {
		use = *ref
	}
	r := credstatus.Ref{Kind: use.Kind, Name: use.Name}
	if use.Kind == cloudv1alpha1.ProviderConfigKind {
		r.Namespace = namespace
	}
	return r
}

func (c *connector) account(ctx context.Context, ref *xpv2.ProviderConfigReference, namespace string) (*account, error) {
	use := providerconfig.DefaultRef()
	if ref != nil {
		use = *ref
	}
	return c.accounts.Get(ctx, namespace+"/"+use.Kind+"/"+use.Name, func(ctx context.Context) (clientcache.Account[*account], error) {
		return c.resolve(ctx, use, namespace)
	})
}

// resolve reads the provider config and its Secret, and says how to build
// the account's client for the config's cloud.
func (c *connector) resolve(ctx context.Context, use xpv2.ProviderConfigReference, namespace string) (clientcache.Account[*account], error) {
	cfg, err := providerconfig.Resolve(ctx, c.reader, &use, namespace, c.cluster, providerconfig.WithTenancy(c.tenancy))
	if err != nil {
		return clientcache.Account[*account]{}, fmt.Errorf("resolving the provider config: %w", err)
	}
	legacy := ""
	if c.opts.AdoptLegacy {
		legacy = cmp.Or(c.opts.LegacyClusterName, cfg.ClusterIdentity)
	}
	switch cfg.Provider {
	case cloudv1alpha1.ProviderTencentCloud:
		return c.resolveTencent(cfg, legacy)
	case cloudv1alpha1.ProviderAWS:
	default:
		return clientcache.Account[*account]{}, fmt.Errorf("provider config %s is for %q, a cloud PodElasticIP does not serve", use.Name, cfg.Provider)
	}
	opts, fingerprint, err := cfg.AWSClient(func(o *aws.Options) {
		o.RateLimits = aws.Scaled(c.opts.AWSRateLimitScale)
		o.CredentialBackoff = c.opts.CredentialBackoff
		o.Clock = c.opts.Clock
	})
	if err != nil {
		return clientcache.Account[*account]{}, err
	}
	return clientcache.Account[*account]{
		Fingerprint: fingerprint,
		New: func(ctx context.Context) (*account, error) {
			ec2c, err := aws.New(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("building the EC2 client: %w", err)
			}
			cl := newAWSCloud(ec2c, c.opts.clock())
			return &account{cloud: cl, look: newLookup(cl, cfg.ClusterIdentity, legacy, c.opts.clock(), 0), cluster: cfg.ClusterIdentity}, nil
		},
	}, nil
}

// resolveTencent says how to build a Tencent Cloud account's client.
func (c *connector) resolveTencent(cfg providerconfig.Config, legacy string) (clientcache.Account[*account], error) {
	opts, fingerprint, err := cfg.TencentClient(func(o *tencentcloud.Options) {
		o.RateLimits = tencentcloud.Scaled(c.opts.TencentRateLimitScale)
		o.Retry.BaseDelay = c.opts.TencentRetryBaseDelay
		o.TaskPollInterval = c.opts.taskPollInterval()
		o.CredentialBackoff = c.opts.CredentialBackoff
		o.Clock = c.opts.Clock
	})
	if err != nil {
		return clientcache.Account[*account]{}, err
	}
	return clientcache.Account[*account]{
		Fingerprint: fingerprint,
		New: func(context.Context) (*account, error) {
			tc, err := tencentcloud.New(opts)
			if err != nil {
				return nil, fmt.Errorf("building the Tencent Cloud client: %w", err)
			}
			cl := &tencentCloud{c: tc}
			// Describes by ID (the polls of addresses a task runs on) are
			// collected for two tokens of DescribeAddresses' bucket, so they
			// take at most half of it and listings keep the rest.
			window := max(minByIDWindow, 2*opts.RateLimits.Interval("DescribeAddresses"))
			return &account{cloud: cl, look: newLookup(cl, cfg.ClusterIdentity, legacy, c.opts.clock(), window), cluster: cfg.ClusterIdentity,
				tasks: cache.NewLRUExpireCacheWithClock(maxRecent, c.opts.clock())}, nil
		},
	}, nil
}

// minByIDWindow is the shortest window describes by ID are collected in.
const minByIDWindow = 20 * time.Millisecond
