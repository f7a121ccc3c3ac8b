package anycastipbinding

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/credstatus"
	"github.com/edgeplane/edgeplane/internal/cloud/providerconfig"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/clientcache"
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
	usage       *resource.ProviderConfigUsageTracker
	clusterName string
	opts        Options
	// creds receives the accounts' credential refusals for the provider
	// configs' Ready conditions (nil: not reported).
	creds *credstatus.Board

	// accounts maps kind/name of a provider config to its account.
	accounts *clientcache.Cache[*account]

	mu sync.Mutex
	// tracked holds the bindings (UID and provider config) whose usage
	// exists.
	tracked map[string]time.Time
	// polls carries the requeue interval Observe chose to the poll hook.
	polls sync.Map
	// blocks remembers, per binding UID, an allocation that failed for a
	// reason retrying soon cannot fix (quota, anycast not enabled, bad
	// parameters), so Observe reports it instead of allocating again
	// until BlockedPollInterval has passed. The managed reconciler would
	// otherwise overwrite the reason with Creating on every attempt.
	blocks sync.Map
	// writes is the managed reconciler's client (set by NewReconciler);
	// Observe tells it when the next Update is the create-pending one.
	writes *noopStatusClient
	// clock is the time of task ages, allocation blocks and usage
	// tracking (tests move it with the emulator's).
	clock clock.PassiveClock
}

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
		usage:       resource.NewProviderConfigUsageTracker(mgr.GetClient(), &cloudv1alpha1.ClusterProviderConfigUsage{}),
		clusterName: clusterName,
		opts:        o,
		accounts:    newAccounts(o),
		tracked:     map[string]time.Time{},
		clock:       clock.RealClock{},
	}
}

func providerConfigRef(name string) *xpv2.ProviderConfigReference {
	if name == "" {
		name = DefaultProviderConfig
	}
	return &xpv2.ProviderConfigReference{Kind: cloudv1alpha1.ClusterProviderConfigKind, Name: name}
}

// Connect implements managed.ExternalConnector. The provider config usage
// is recorded while Observe runs (Observe, which changes nothing in the
// cloud, waits for it before it returns, so no cloud write precedes it),
// and a binding about to be allocated for has the read of the
// create-pending check started at once (see noopStatusClient.prefetch):
// on a binding's first pass both would otherwise be API round trips one
// after the other.
func (c *Connector) Connect(ctx context.Context, mg resource.Managed) (managed.ExternalClient, error) {
	b, ok := mg.(*networkingv1alpha1.AnycastIPBinding)
	if !ok {
		return nil, fmt.Errorf("managed resource is a %T, not an AnycastIPBinding", mg)
	}
	if c.writes != nil {
		c.writes.dropPrefetch(b.UID)
	}
	if b.Spec.ProviderConfigReference == nil {
		b.Spec.ProviderConfigReference = providerConfigRef("")
	}
	// Objects read through a typed client carry no kind; the usage's
	// owner reference needs it.
	b.SetGroupVersionKind(networkingv1alpha1.GroupVersion.WithKind("AnycastIPBinding"))
	if c.writes != nil && decide.LikelyAllocation(meta.GetExternalName(b), meta.WasDeleted(b), string(b.GetCondition(xpv2.TypeReady).Reason)) {
		c.writes.prefetch(ctx, b)
	}
	// A usage recorded recently is not looked at again (see track): most
	// passes start no goroutine and copy nothing.
	var tracked chan error
	if !c.trackedRecently(usageKey(b)) {
		tracked = make(chan error, 1)
		usage := b.DeepCopy()
		go func() { tracked <- c.track(ctx, usage) }()
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
	return &external{c: c, acct: acct, tracked: tracked}, nil
}

// track records that b uses its provider config (crossplane's
// ProviderConfigUsage). A usage this process has already created or
// confirmed for the same config within ClientCacheTTL is not looked at
// again: the tracker reads it through the cache, and a pass that comes
// right after the one that created it would not find it there yet, try to
// create it again and fail on AlreadyExists (which, here, means the usage
// exists).
func (c *Connector) track(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) error {
	key := usageKey(b)
	if c.trackedRecently(key) {
		return nil
	}
	err := c.usage.Track(ctx, b)
	if err != nil && !apierrors.IsAlreadyExists(errors.Cause(err)) {
		return err
	}
	c.mu.Lock()
	if len(c.tracked) >= maxTracked {
		clear(c.tracked)
	}
	c.tracked[key] = c.clock.Now().Add(c.cacheTTL())
	c.mu.Unlock()
	return nil
}

// usageKey is the key of b's usage in Connector.tracked.
func usageKey(b *networkingv1alpha1.AnycastIPBinding) string {
	return string(b.UID) + "|" + b.Spec.ProviderConfigReference.Kind + "/" + b.Spec.ProviderConfigReference.Name
}

// trackedRecently reports whether the usage of key was created or
// confirmed within ClientCacheTTL.
func (c *Connector) trackedRecently(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, done := c.tracked[key]
	return done && c.clock.Now().Before(until)
}

// maxTracked bounds Connector.tracked.
const maxTracked = 20000

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
	cfg, err := providerconfig.Resolve(ctx, c.reader, &ref, "", c.clusterName)
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
	legacy, err := c.legacyUUID(ctx)
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
			return &account{ref: ref, cloud: newBatchingCloud(cl, c.opts.BatchWindow), identity: cfg.ClusterIdentity, legacy: legacy, client: cl}, nil
		},
	}, nil
}

// cacheTTL is how long a resolved account or a tracked usage is reused.
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

// pollInterval is the managed reconciler's poll hook: the interval Observe
// chose for this pass, or the default.
func (c *Connector) pollInterval(mg resource.Managed, d time.Duration) time.Duration {
	if v, ok := c.polls.LoadAndDelete(mg.GetUID()); ok {
		return v.(time.Duration)
	}
	return d
}

func (c *Connector) setPoll(uid types.UID, d time.Duration) { c.polls.Store(uid, d) }

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
	networkingv1alpha1.AnycastReasonInstanceHasPublicIP: true,
	networkingv1alpha1.AnycastReasonAddressTypeMismatch: true,
	networkingv1alpha1.AnycastReasonAnycastNotEnabled:   true,
	networkingv1alpha1.AnycastReasonInvalidParameter:    true,
}
