package podelasticip

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/tenancy"
)

// connector turns a PodElasticIP's providerConfigRef into an EC2 client.
// Clients (with their token buckets and look-up batchers) are kept per
// resolved config, so every PodElasticIP of one account shares one client
// and its client-side rate limits; the config itself is re-read after
// configTTL.
type connector struct {
	kube    client.Client
	reader  client.Reader
	usage   *resource.ProviderConfigUsageTracker
	rec     events.EventRecorder
	opts    Options
	cluster string
	// tenancy judges tenants' ProviderConfigs (--tenant-endpoints).
	tenancy tenancy.Policy
	started time.Time
	// creds receives the accounts' credential refusals for the provider
	// configs' Ready conditions (nil: not reported).
	creds *credstatus.Board

	mu      sync.Mutex
	configs map[string]resolved // by namespace/kind/name
	clients map[string]*account // by options fingerprint
}

type resolved struct {
	acct *account
	at   time.Time
}

// account is one cloud account as a set of shared clients.
type account struct {
	aws     *aws.Client
	look    *lookup
	cluster string
}

const configTTL = 10 * time.Second

func newConnector(kube client.Client, reader client.Reader, rec events.EventRecorder, opts Options, sc setup.Config) *connector {
	return &connector{
		kube: kube, reader: reader, rec: rec, opts: opts, cluster: sc.ClusterName, tenancy: sc.Tenancy, started: time.Now(),
		creds:   sc.Credentials,
		usage:   resource.NewProviderConfigUsageTracker(kube, newUsage()),
		configs: map[string]resolved{}, clients: map[string]*account{},
	}
}

// Connect tracks the config's usage, resolves it and returns a client.
func (c *connector) Connect(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.TypedExternalClient[*networkingv1alpha1.PodElasticIP], error) {
	// The tracker names the usage's resource by the object's kind, which a
	// typed client leaves empty.
	cr.SetGroupVersionKind(networkingv1alpha1.PodElasticIPGroupVersionKind)
	if err := c.usage.Track(ctx, cr); err != nil {
		return nil, fmt.Errorf("tracking the provider config usage: %w", err)
	}
	acct, err := c.account(ctx, cr.Spec.ProviderConfigReference, cr.Namespace)
	if err != nil {
		if errors.Is(err, providerconfig.ErrNotAllowed) {
			// The managed reconciler keeps this Ready through its status
			// write, adds Synced=False and a CannotConnectToProvider Event,
			// and retries with backoff; no cloud call is made.
			cr.HoldReady(decide.Unavailable(networkingv1alpha1.PodElasticIPReasonProviderConfigNotAllowed, err.Error()))
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
	key := namespace + "/" + use.Kind + "/" + use.Name
	c.mu.Lock()
	if r, ok := c.configs[key]; ok && time.Since(r.at) < configTTL {
		c.mu.Unlock()
		return r.acct, nil
	}
	c.mu.Unlock()

	cfg, err := providerconfig.Resolve(ctx, c.reader, &use, namespace, c.cluster, providerconfig.WithTenancy(c.tenancy))
	if err != nil {
		return nil, fmt.Errorf("resolving the provider config: %w", err)
	}
	opts, err := cfg.AWS()
	if err != nil {
		return nil, fmt.Errorf("configuring the EC2 client: %w", err)
	}
	opts.RateLimits = c.opts.rateLimits()
	opts.CredentialBackoff = c.opts.CredentialBackoff
	opts.Clock = c.opts.Clock
	fp := fingerprint(opts, cfg.ClusterIdentity)

	c.mu.Lock()
	defer c.mu.Unlock()
	acct, ok := c.clients[fp]
	if !ok {
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
		acct = &account{aws: ec2c, look: newLookup(ec2c, cfg.ClusterIdentity, legacy), cluster: cfg.ClusterIdentity}
		c.clients[fp] = acct
	}
	c.configs[key] = resolved{acct: acct, at: time.Now()}
	return acct, nil
}

// fingerprint identifies client options, credentials included (hashed).
func fingerprint(o aws.Options, cluster string) string {
	h := sha256.New()
	_, _ = fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", o.Region, o.Endpoint, o.Credentials.Source,
		o.Credentials.AccessKeyID, o.Credentials.SecretAccessKey, o.Credentials.SessionToken, cluster)
	return hex.EncodeToString(h.Sum(nil))
}
