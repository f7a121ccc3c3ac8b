package anycastipbinding

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/status"
)

// Cloud is the part of the Tencent Cloud client the controller uses.
type Cloud interface {
	AllocateAddress(ctx context.Context, req tencentcloud.AllocateRequest) (tencentcloud.AllocateResult, error)
	AssociateAddress(ctx context.Context, addressID, instanceID string) (uint64, error)
	DisassociateAddress(ctx context.Context, addressID string) (uint64, error)
	ReleaseAddresses(ctx context.Context, addressIDs ...string) (uint64, error)
	DescribeAddresses(ctx context.Context, q tencentcloud.AddressQuery) ([]tencentcloud.Address, error)
	TaskResult(ctx context.Context, taskID uint64) (string, error)
}

var _ Cloud = (*tencentcloud.Client)(nil)

// LegacyNamespace holds aia-ip-controller's cluster identity ConfigMap.
const LegacyNamespace = "kube-system"

// Connector turns a binding's providerConfigRef into a Cloud client
// (crossplane's ExternalConnector). Resolved configs and their clients are
// reused for ClientCacheTTL (runtime/clientcache), so a burst of reconciles
// costs one read of the config and its Secret, and one set of client-side
// rate-limit buckets is shared by all bindings of an account.
type Connector struct {
	kube        client.Client
	reader      client.Reader
	nodeEvents  events.EventRecorder
	clusterName string
	opts        Options
	// creds receives the accounts' credential refusals for the provider
	// configs' Ready conditions (nil: not reported).
	creds *credstatus.Board

	// accounts maps kind/name of a provider config to its account.
	accounts *clientcache.Cache[*account]

	// blocks remembers, per binding UID, an allocation that failed for a
	// reason retrying soon cannot fix (quota, anycast not enabled, bad
	// parameters), so Observe reports it instead of allocating again
	// until BlockedPollInterval has passed (each attempt would otherwise
	// cost an AllocateAddresses call and a status write).
	blocks sync.Map
	// clock is the time of task ages, allocation blocks and usage
	// tracking (tests move it with the emulator's).
	clock clock.PassiveClock
	// ownNodeWrites remembers the node patches the bindings made, by node
	// name, whose watch events bring no pass (notOwnNodeWrite).
	ownNodeWrites *expect.Writes[string, struct{}]
}

// ownNodeWritesTTL bounds how long a node patch's echo is recognised
// (the watch delivers it within seconds); maxOwnNodeWrites how many are
// remembered. A forgotten one costs one pass that finds nothing to do.
const (
	ownNodeWritesTTL = time.Minute
	maxOwnNodeWrites = 10000
)

// block is a remembered allocation failure.
type block struct {
	generation int64
	reason     string
	message    string
	until      time.Time
}

func (c *Connector) blockedAllocation(b *networkingv1alpha1.AnycastIPBinding) (block, bool) {
	v, ok := c.blocks.Load(b.UID)
	if !ok {
		return block{}, false
	}
	bl := v.(block)
	if bl.generation != b.Generation || c.clock.Now().After(bl.until) {
		c.blocks.Delete(b.UID)
		return block{}, false
	}
	return bl, true
}

// account is one resolved provider config.
type account struct {
	ref      xpv2.ProviderConfigReference
	cloud    Cloud
	identity string
	legacy   string
	// client is the account's Tencent client (its credential gate).
	client *tencentcloud.Client
}

// NewConnector builds a Connector. clusterName is the identity used when a
// provider config sets none.
func NewConnector(mgr ctrl.Manager, clusterName string, o Options) *Connector {
	return &Connector{
		kube:        mgr.GetClient(),
		reader:      mgr.GetAPIReader(),
		nodeEvents:  mgr.GetEventRecorder(ControllerName),
		clusterName: clusterName,
		opts:        o,
		accounts:    newAccounts(o),
		clock:       clock.RealClock{},
		// Wall time: like the reconciler's memos, the TTL bounds memory
		// and decides nothing.
		ownNodeWrites: expect.New[string, struct{}](ownNodeWritesTTL, maxOwnNodeWrites, clock.RealClock{}),
	}
}

// notOwnNodeWrite drops the node update events that are the echo of a
// binding's own node patch (the untaint and the legacy annotations): the
// pass that patched has acted on it, and the binding's next pass would
// find the node as it left it. Someone else's change of the node's marks
// passes (expect.NotEcho: only an exact version change of ours is
// dropped).
func (c *Connector) notOwnNodeWrite() predicate.Predicate {
	return expect.NotEcho(c.ownNodeWrites, client.Object.GetName)
}

func providerConfigRef(name string) *xpv2.ProviderConfigReference {
	if name == "" {
		name = DefaultProviderConfig
	}
	return &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: name}
}

// Connect resolves the binding's provider config and returns the external
// client of one pass (the reconciler records the config's usage meanwhile).
func (c *Connector) Connect(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.TypedExternalClient[*networkingv1alpha1.AnycastIPBinding], error) {
	if b.Spec.ProviderConfigReference == nil {
		b.Spec.ProviderConfigReference = providerConfigRef("")
	}
	acct, err := c.account(ctx, *b.Spec.ProviderConfigReference)
	if err != nil {
		setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonProviderConfigError, err.Error())
		return nil, err
	}
	// What the account's last calls found out about its credentials goes
	// to the provider config's Ready condition.
	if acct.client != nil {
		ref := *b.Spec.ProviderConfigReference
		c.creds.Report(credstatus.Ref{Kind: ref.Kind, Name: ref.Name}, acct.client.CredentialsRejected())
	}
	return &external{c: c, acct: acct}, nil
}

// newAccounts is the account cache of a Connector with options o.
func newAccounts(o Options) *clientcache.Cache[*account] {
	return clientcache.New[*account](clientcache.Config{ConfigTTL: cacheTTL(o)})
}

// account resolves ref, reusing a recent resolution.
func (c *Connector) account(ctx context.Context, ref xpv2.ProviderConfigReference) (*account, error) {
	return c.accounts.Get(ctx, ref.Kind+"/"+ref.Name, func(ctx context.Context) (clientcache.Account[*account], error) {
		return c.resolve(ctx, ref)
	})
}

// resolve reads ref, its Secret and the legacy cluster identity, and says
// how to build the account's client. An unchanged config keeps its client
// (and its rate-limit buckets and credential gate); changed keys (rotated,
// or fixed after a rejection) get a new client.
func (c *Connector) resolve(ctx context.Context, ref xpv2.ProviderConfigReference) (clientcache.Account[*account], error) {
	var none clientcache.Account[*account]
	// The legacy identity does not depend on the config: read it beside
	// the config, not after it. A resolution stalls every pass that needs
	// the account (the first passes of a burst of new bindings, which
	// wait for it before their first allocation), so each round trip
	// saved moves the burst's first allocation, and the allocation
	// bucket's refill, earlier.
	type legacyRead struct {
		uuid string
		err  error
	}
	legacyDone := make(chan legacyRead, 1)
	go func() {
		uuid, err := c.legacyUUID(ctx)
		legacyDone <- legacyRead{uuid, err}
	}()
	cfg, err := providerconfig.Resolve(ctx, c.reader, &ref, "", c.clusterName)
	lr := <-legacyDone
	if err != nil {
		return none, fmt.Errorf("resolving %s %s: %w", ref.Kind, ref.Name, err)
	}
	topts, err := cfg.Tencent()
	if err != nil {
		return none, fmt.Errorf("configuring the Tencent Cloud client: %w", err)
	}
	topts.TaskPollInterval = c.opts.TaskPollInterval
	topts.CredentialBackoff = c.opts.CredentialBackoff
	if c.opts.ClientOptions != nil {
		c.opts.ClientOptions(&topts)
	}
	legacy, err := lr.uuid, lr.err
	if err != nil {
		return none, err
	}
	if cfg.ClusterIdentity == "" {
		return none, fmt.Errorf("%s %s: no cluster identity (set --cluster-name or the config's clusterIdentity)", ref.Kind, ref.Name)
	}
	cr := topts.Credentials
	return clientcache.Account[*account]{
		// One client per config, as its name is part of the key.
		Fingerprint: clientcache.Fingerprint(ref.Kind, ref.Name, topts.Region, topts.Endpoint, string(cr.Source), cr.SecretID, cr.SecretKey, cr.Token,
			cfg.ClusterIdentity, legacy),
		New: func(context.Context) (*account, error) {
			cl, err := tencentcloud.New(topts)
			if err != nil {
				return nil, fmt.Errorf("creating the Tencent Cloud client: %w", err)
			}
			return &account{ref: ref, cloud: newBatchingCloud(cl, batchWindow(c.opts.BatchWindow, topts.RateLimits)), identity: cfg.ClusterIdentity, legacy: legacy, client: cl}, nil
		},
	}, nil
}

// batchWindow is how long DescribeAddresses look-ups wait to be coalesced:
// the configured window, but at least one token interval of the client's
// DescribeAddresses bucket, so that each batch of look-ups (most are by
// address ID, of bindings waiting for a task) costs at most one call per
// token and polls never queue behind the bucket (Tencent's 20/s: 50 ms). 0
// keeps batching off.
func batchWindow(configured time.Duration, limits tencentcloud.RateLimits) time.Duration {
	if configured <= 0 || limits.Disabled {
		return configured
	}
	rl := limits.PerAction["DescribeAddresses"].Or(tencentcloud.DefaultRateLimits().PerAction["DescribeAddresses"])
	if rl.QPS <= 0 {
		return configured
	}
	return max(configured, time.Duration(float64(time.Second)/rl.QPS))
}

// cacheTTL is how long a resolved account or a recorded usage is reused.
func (c *Connector) cacheTTL() time.Duration { return cacheTTL(c.opts) }

func cacheTTL(o Options) time.Duration {
	if o.ClientCacheTTL > 0 {
		return o.ClientCacheTTL
	}
	return 30 * time.Second
}

// legacyUUID reads aia-ip-controller's cluster identity ("" when the
// cluster never ran it).
func (c *Connector) legacyUUID(ctx context.Context) (string, error) {
	cm := &corev1.ConfigMap{}
	err := c.reader.Get(ctx, client.ObjectKey{Namespace: LegacyNamespace, Name: networkingv1alpha1.LegacyClusterUUIDConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", LegacyNamespace, networkingv1alpha1.LegacyClusterUUIDConfigMap, err)
	}
	return cm.Data[networkingv1alpha1.LegacyTagClusterUUID], nil
}

// setReady sets the Ready condition and the kstatus conditions that go with
// it (Stalled for what only a person can fix).
func setReady(b *networkingv1alpha1.AnycastIPBinding, st corev1.ConditionStatus, reason, message string) {
	ready := xpv2.Condition{
		Type:               xpv2.TypeReady,
		Status:             st,
		Reason:             xpv2.ConditionReason(reason),
		Message:            message,
		LastTransitionTime: metav1.Now(),
		ObservedGeneration: b.Generation,
	}
	b.SetConditions(ready)
	b.SetConditions(status.ManagedKstatus(ready, stalledReasons[reason])...)
}

// stalledReasons are the Ready reasons no retry can fix: the spec or the
// account must change.
var stalledReasons = map[string]bool{
	networkingv1alpha1.AnycastReasonInstanceIDChanged:   true,
	networkingv1alpha1.AnycastReasonInstanceHasPublicIP: true,
	networkingv1alpha1.AnycastReasonAddressTypeMismatch: true,
	networkingv1alpha1.AnycastReasonAnycastNotEnabled:   true,
	networkingv1alpha1.AnycastReasonInvalidParameter:    true,
}
