package nodeelasticip

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// connector turns a NodeElasticIP's providerConfigRef into an EC2 client
// (crossplane's ExternalConnector). Clients, with their token buckets,
// credential gate and look-up batchers, are kept per account
// (runtime/clientcache), so every NodeElasticIP of an account shares them.
type connector struct {
	kube   client.Client
	reader client.Reader
	// nodeEvents records Events on nodes.
	nodeEvents events.EventRecorder
	opts       Options
	cluster    string
	// creds receives the accounts' credential refusals for the provider
	// configs' Ready conditions (nil: not reported).
	creds *credstatus.Board

	// accounts maps kind/name of a provider config to its account.
	accounts *clientcache.Cache[*account]
	// nodes are the nodes this process patched: the pass after a patch
	// starts from the patched node while the cache still shows the one
	// before (a patch computed from that would be refused).
	nodes *nodepatch.Written
}

// account is one cloud account as a set of shared clients.
type account struct {
	ref     xpv2.ProviderConfigReference
	aws     *aws.Client
	look    *lookup
	cluster string
}

func newConnector(kube client.Client, reader client.Reader, rec events.EventRecorder, o Options, cluster string, creds *credstatus.Board) *connector {
	return &connector{kube: kube, reader: reader, nodeEvents: rec, opts: o, cluster: cluster, creds: creds,
		accounts: clientcache.New[*account](clientcache.Config{ConfigTTL: o.clientCacheTTL(), Clock: o.clock()}),
		nodes:    nodepatch.NewWritten(patchedNodeTTL, maxRemembered, o.clock())}
}

// Connect resolves the NodeElasticIP's provider config and returns the
// external client of one pass (the reconciler records the config's usage
// meanwhile).
func (c *connector) Connect(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.TypedExternalClient[*networkingv1alpha1.NodeElasticIP], error) {
	ref := providerconfig.DefaultRef()
	if r := n.Spec.ProviderConfigReference; r != nil {
		ref = *r
	}
	acct, err := c.account(ctx, ref)
	if err != nil {
		setReady(n, decide.Unavailable(networkingv1alpha1.NodeElasticIPReasonProviderConfigError, err.Error()))
		return nil, err
	}
	// What the account's last calls found out about its credentials goes
	// to the provider config's Ready condition.
	c.creds.Report(credstatus.Ref{Kind: ref.Kind, Name: ref.Name}, acct.aws.CredentialsRejected())
	return &external{conn: c, acct: acct}, nil
}

// account resolves ref, reusing a recent resolution.
func (c *connector) account(ctx context.Context, ref xpv2.ProviderConfigReference) (*account, error) {
	return c.accounts.Get(ctx, ref.Kind+"/"+ref.Name, func(ctx context.Context) (clientcache.Account[*account], error) {
		return c.resolve(ctx, ref)
	})
}

// resolve reads the provider config and its Secret, and says how to build
// the account's client: an unchanged config keeps its client (its buckets
// and credential gate), changed keys get a new one.
func (c *connector) resolve(ctx context.Context, ref xpv2.ProviderConfigReference) (clientcache.Account[*account], error) {
	var none clientcache.Account[*account]
	cfg, opts, fingerprint, err := providerconfig.ResolveAWS(ctx, c.reader, &ref, "", c.cluster, func(o *aws.Options) {
		o.RateLimits = aws.Scaled(c.opts.AWSRateLimitScale)
		o.CredentialBackoff = c.opts.CredentialBackoff
		o.Clock = c.opts.Clock
		if c.opts.ClientOptions != nil {
			c.opts.ClientOptions(o)
		}
	})
	if err != nil {
		return none, fmt.Errorf("resolving %s %s: %w", ref.Kind, ref.Name, err)
	}
	if cfg.ClusterIdentity == "" {
		return none, fmt.Errorf("%s %s: no cluster identity (set --cluster-name or the config's clusterIdentity)", ref.Kind, ref.Name)
	}
	return clientcache.Account[*account]{
		Fingerprint: fingerprint,
		New: func(ctx context.Context) (*account, error) {
			cl, err := aws.New(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("building the EC2 client: %w", err)
			}
			return &account{ref: ref, aws: cl, cluster: cfg.ClusterIdentity,
				look: newLookup(cl, cfg.ClusterIdentity, c.opts.BatchWindow, c.opts.clock())}, nil
		},
	}, nil
}

// patchedNodeTTL is how long a patched node is remembered: well past the
// time an informer takes to catch up.
const patchedNodeTTL = time.Minute

// configError reports whether err is the provider config's fault (missing,
// for another cloud, without credentials) rather than the cloud's.
func configError(err error) bool {
	return errors.Is(err, providerconfig.ErrNotFound) || errors.Is(err, providerconfig.ErrWrongProvider) ||
		errors.Is(err, providerconfig.ErrCredentials) || errors.Is(err, providerconfig.ErrInvalidRef)
}

// clientCacheTTL is how long a resolved account (and a recorded usage) is
// reused.
func (o Options) clientCacheTTL() time.Duration {
	if o.ClientCacheTTL > 0 {
		return o.ClientCacheTTL
	}
	return 10 * time.Second
}
