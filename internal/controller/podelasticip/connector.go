package podelasticip

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// connector turns a PodElasticIP's providerConfigRef into an EC2 client.
// Clients (with their token buckets and look-up batchers) are kept per
// account (runtime/clientcache), so every PodElasticIP of one account
// shares one client and its client-side rate limits; the config itself is
// re-read after configTTL, and a client unused for an hour is dropped.
type connector struct {
	kube    client.Client
	reader  client.Reader
	rec     events.EventRecorder
	opts    Options
	cluster string
	// tenancy judges tenants' ProviderConfigs (--tenant-endpoints).
	tenancy tenancy.Policy
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
	aws     *aws.Client
	look    *lookup
	cluster string
}

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
	c.creds.Report(configRef(cr.Spec.ProviderConfigReference, cr.Namespace), acct.aws.CredentialsRejected())
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
// the account's client.
func (c *connector) resolve(ctx context.Context, use xpv2.ProviderConfigReference, namespace string) (clientcache.Account[*account], error) {
	cfg, err := providerconfig.Resolve(ctx, c.reader, &use, namespace, c.cluster, providerconfig.WithTenancy(c.tenancy))
	if err != nil {
		return clientcache.Account[*account]{}, fmt.Errorf("resolving the provider config: %w", err)
	}
	opts, err := cfg.AWS()
	if err != nil {
		return clientcache.Account[*account]{}, fmt.Errorf("configuring the EC2 client: %w", err)
	}
	opts.RateLimits = c.opts.rateLimits()
	opts.CredentialBackoff = c.opts.CredentialBackoff
	opts.Clock = c.opts.Clock
	cr := opts.Credentials
	return clientcache.Account[*account]{
		Fingerprint: clientcache.Fingerprint(opts.Region, opts.Endpoint, string(cr.Source), cr.AccessKeyID, cr.SecretAccessKey, cr.SessionToken, cfg.ClusterIdentity),
		New: func(ctx context.Context) (*account, error) {
			ec2c, err := aws.New(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("building the EC2 client: %w", err)
			}
			legacy := ""
			if c.opts.AdoptLegacy {
				legacy = c.opts.LegacyClusterName
				if legacy == "" {
					legacy = cfg.ClusterIdentity
				}
			}
			return &account{aws: ec2c, look: newLookup(ec2c, cfg.ClusterIdentity, legacy, c.opts.clock()), cluster: cfg.ClusterIdentity}, nil
		},
	}, nil
}
