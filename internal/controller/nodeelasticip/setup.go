// Package nodeelasticip gives Kubernetes nodes on AWS an Elastic IP on the
// primary private IP of their instance's primary network interface — the
// job doitintl/kubeip does — as NodeElasticIP managed resources:
//
//   - the reconciler (the cloud kinds' shared one,
//     internal/runtime/reconciler, with the external client in
//     external.go) allocates (Auto), claims from a tag-filtered reserved
//     pool in a stated order (Pool) or takes one known address (Static),
//     adopts an address already on the node, associates it, and on
//     deletion releases it or gives it back;
//   - the node side (node.go) labels and annotates the node with the
//     address and keeps it tainted until the address is on it, patching
//     only those keys (internal/runtime/nodepatch);
//   - a mutating admission webhook on Node (webhook.go) taints a selected
//     node from its registration;
//   - the translator (translator.go) gives every node matching the
//     selector a NodeElasticIP named after it, with kubeip's FILTER,
//     ORDER_BY and TAINT_KEY read in kubeip's own syntax (./translate);
//   - the orphan sweep (sweep.go) releases or gives back addresses whose
//     NodeElasticIP is gone.
//
// Pure decisions live in ./decide.
package nodeelasticip

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/cloud/pcusage"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Why each grant: NodeElasticIPs are reconciled (finalizer, annotations,
// status) and created/deleted by the node translator.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=nodeelasticips,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=nodeelasticips/status,verbs=get;update;patch
// Which account to use, and the usage record that keeps it from deletion.
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=clusterproviderconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=clusterproviderconfigusages,verbs=get;list;watch;create;update;patch;delete
// Nodes: read, and patched with the taint, label and annotation this kind owns.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ControllerName is the reconciler's name (and its event source).
const ControllerName = "nodeelasticip"

// Options are the NodeElasticIP flags (and chart values).
type Options struct {
	// NodeSelector picks the nodes that get a translated NodeElasticIP.
	NodeSelector string
	// Translate turns the node translator on.
	Translate bool
	// Webhook serves the Node mutating webhook that taints selected nodes
	// at admission (the manager must serve webhooks).
	Webhook bool
	// Defaults of translated NodeElasticIPs. PoolFilter and PoolOrderBy are
	// kubeip's FILTER and ORDER_BY, in its syntax: a filter makes them Pool
	// ones, none Auto ones (from PublicIPv4Pool).
	ProviderConfig string
	PoolFilter     string
	PoolOrderBy    string
	PublicIPv4Pool string
	ReleasePolicy  string
	TaintKey       string
	Tags           string
	// KubeIPLabel also writes kubeip's kubip_assigned node label.
	KubeIPLabel bool

	// PollInterval re-checks an address on its node; BlockedPollInterval a
	// NodeElasticIP that cannot progress (node changes re-trigger it at
	// once).
	PollInterval        time.Duration
	BlockedPollInterval time.Duration
	// ListingMaxAge is how old an address listing a poll may use.
	ListingMaxAge time.Duration
	// BatchWindow is how long describe calls wait to be coalesced (0
	// disables batching).
	BatchWindow time.Duration
	// MaxConcurrentReconciles of the reconciler.
	MaxConcurrentReconciles int
	// MaxBackoff caps the per-object retry backoff.
	MaxBackoff time.Duration
	// AWSRateLimitScale multiplies the refill rates of the client-side EC2
	// buckets (raised account limits); bucket sizes stay.
	AWSRateLimitScale float64
	// CredentialBackoff bounds the calls of an account whose credentials
	// EC2 rejects.
	CredentialBackoff cloud.CredentialBackoff

	// Settings (OrphanMode, OrphanGracePeriod, OrphanInterval) configure
	// the orphan sweep.
	orphan.Settings

	// ClientOptions adjusts the EC2 client options after they are resolved
	// (tests and benchmarks). Not a flag.
	ClientOptions func(*aws.Options)
	// ClientCacheTTL is how long a resolved provider config and a recorded
	// usage are reused (default 10s). Not a flag.
	ClientCacheTTL time.Duration
	// Clock is the controller's time (nil: the real clock). Not a flag.
	Clock clock.PassiveClock
}

func (o Options) clock() clock.PassiveClock {
	if o.Clock == nil {
		return clock.RealClock{}
	}
	return o.Clock
}

// DefaultOptions: the translator on the default selector label, Auto
// addresses released with their node, the taint and its webhook on, and
// the orphan sweep in delete mode (which only ever touches addresses
// carrying this cluster's identity and a NodeElasticIP's UID).
func DefaultOptions() Options {
	return Options{
		NodeSelector:            networkingv1alpha1.LabelWantElasticIP + "=true",
		Translate:               true,
		Webhook:                 true,
		ProviderConfig:          cloudv1alpha1.DefaultProviderConfigName,
		TaintKey:                networkingv1alpha1.DefaultNodeElasticIPTaintKey,
		PollInterval:            2 * time.Minute,
		BlockedPollInterval:     30 * time.Second,
		ListingMaxAge:           10 * time.Second,
		BatchWindow:             20 * time.Millisecond,
		MaxConcurrentReconciles: 64,
		MaxBackoff:              time.Minute,
		AWSRateLimitScale:       1,
		CredentialBackoff:       cloud.DefaultCredentialBackoff(),
		Settings:                orphan.DefaultSettings(10 * time.Minute),
	}
}

// BindFlags registers the options' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.NodeSelector, "nodeelasticip-node-selector", o.NodeSelector, "Label selector of the nodes that get a NodeElasticIP (kubeip's DaemonSet nodeSelector).")
	fs.BoolVar(&o.Translate, "nodeelasticip-translate-nodes", o.Translate, "Create a NodeElasticIP for every node the selector picks, and delete it when the node stops matching or goes away.")
	fs.BoolVar(&o.Webhook, "nodeelasticip-node-webhook", o.Webhook, "Serve the Node mutating webhook that taints selected nodes at admission.")
	fs.StringVar(&o.ProviderConfig, "nodeelasticip-provider-config", o.ProviderConfig, "ClusterProviderConfig of translated NodeElasticIPs.")
	fs.StringVar(&o.PoolFilter, "nodeelasticip-pool-filter", o.PoolFilter, "Reserved pool of translated NodeElasticIPs in kubeip's FILTER syntax (Name=tag:env,Values=dev;Name=tag-key,Values=kubeip); empty: allocate (Auto).")
	fs.StringVar(&o.PoolOrderBy, "nodeelasticip-pool-order-by", o.PoolOrderBy, "Order in which pool addresses are claimed, kubeip's ORDER_BY: PublicIp (default), AllocationId, PublicIpv4Pool or Tag:<key>; a leading - reverses it.")
	fs.StringVar(&o.PublicIPv4Pool, "nodeelasticip-public-ipv4-pool", o.PublicIPv4Pool, "Public IPv4 pool Auto NodeElasticIPs allocate from; empty: amazon.")
	fs.StringVar(&o.ReleasePolicy, "nodeelasticip-release-policy", o.ReleasePolicy, "Release policy of translated NodeElasticIPs: Delete (Auto only) or Retain; empty: the mode's default.")
	fs.StringVar(&o.TaintKey, "nodeelasticip-taint-key", o.TaintKey, "NoSchedule taint a node carries until its Elastic IP is on it (kubeip's TAINT_KEY); empty: none.")
	fs.StringVar(&o.Tags, "nodeelasticip-tags", o.Tags, "Extra tags of translated NodeElasticIPs' addresses, key=value,...")
	fs.BoolVar(&o.KubeIPLabel, "nodeelasticip-kubeip-label", o.KubeIPLabel, "Also label nodes kubip_assigned=<ip with _ for .>, as kubeip does.")
	fs.DurationVar(&o.PollInterval, "nodeelasticip-poll-interval", o.PollInterval, "How often an address on its node is checked again.")
	fs.DurationVar(&o.BlockedPollInterval, "nodeelasticip-blocked-poll-interval", o.BlockedPollInterval, "How often a NodeElasticIP that cannot progress is looked at again (node changes re-trigger it at once).")
	fs.DurationVar(&o.ListingMaxAge, "nodeelasticip-listing-max-age", o.ListingMaxAge, "How old an address listing a poll may use.")
	fs.DurationVar(&o.BatchWindow, "nodeelasticip-describe-batch-window", o.BatchWindow, "How long describe calls wait to be coalesced into one (0 disables batching).")
	fs.IntVar(&o.MaxConcurrentReconciles, "nodeelasticip-max-concurrent-reconciles", o.MaxConcurrentReconciles, "NodeElasticIPs reconciled at once.")
	fs.DurationVar(&o.MaxBackoff, "nodeelasticip-max-backoff", o.MaxBackoff, "Longest wait before a failed NodeElasticIP is retried.")
	fs.Float64Var(&o.AWSRateLimitScale, "nodeelasticip-aws-rate-limit-scale", o.AWSRateLimitScale, "Multiplier for the refill rates of the client-side EC2 token buckets (raised account limits); bucket sizes stay.")
	o.CredentialBackoff.BindFlags(fs, "nodeelasticip", "EC2")
	o.Settings.BindFlags(fs, "nodeelasticip", "this cluster's node addresses whose NodeElasticIP is gone")
}

// translated is what translated NodeElasticIPs get, validated once.
type translated struct {
	selector labels.Selector
	spec     networkingv1alpha1.NodeElasticIPSpec
}

func (o Options) validate() (translated, error) {
	var errs []error
	sel, err := translator.ParseNodeSelector(o.NodeSelector)
	if err != nil {
		errs = append(errs, fmt.Errorf("--nodeelasticip-node-selector: %w", err))
	}
	alloc, err := translate.Pool(o.PoolFilter, o.PoolOrderBy)
	if err != nil {
		errs = append(errs, fmt.Errorf("--nodeelasticip-pool-filter/--nodeelasticip-pool-order-by: %w", err))
	}
	if o.PublicIPv4Pool != "" {
		if alloc.Mode != networkingv1alpha1.NodeElasticIPModeAuto {
			errs = append(errs, errors.New("--nodeelasticip-public-ipv4-pool is for allocating (no --nodeelasticip-pool-filter)"))
		}
		alloc.PublicIPv4Pool = o.PublicIPv4Pool
	}
	policy := networkingv1alpha1.NodeElasticIPReleasePolicy(o.ReleasePolicy)
	switch {
	case policy == "" || policy == networkingv1alpha1.NodeElasticIPReleaseRetain:
	case policy == networkingv1alpha1.NodeElasticIPReleaseDelete && alloc.Mode == networkingv1alpha1.NodeElasticIPModeAuto:
	default:
		errs = append(errs, fmt.Errorf("--nodeelasticip-release-policy %q: want Retain, or Delete when allocating", o.ReleasePolicy))
	}
	tags, err := parseTags(o.Tags)
	if err != nil {
		errs = append(errs, fmt.Errorf("--nodeelasticip-tags: %w", err))
	}
	if o.PollInterval <= 0 || o.BlockedPollInterval <= 0 || o.MaxConcurrentReconciles < 1 {
		errs = append(errs, errors.New("--nodeelasticip poll intervals and max-concurrent-reconciles must be positive"))
	}
	if err := o.Settings.Validate("nodeelasticip"); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return translated{}, err
	}
	spec := networkingv1alpha1.NodeElasticIPSpec{Allocation: alloc, ReleasePolicy: policy, TaintKey: o.TaintKey}
	ref := providerConfigRef(o.ProviderConfig)
	spec.ProviderConfigReference = &ref
	if len(tags) > 0 {
		spec.Tags = tags
	}
	return translated{selector: sel, spec: spec}, nil
}

// Setup registers everything with default options.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup()(ctx, mgr, cfg)
}

// Setup returns the setup.Func registering the reconciler, the node
// translator, the Node webhook and the orphan sweep.
func (o Options) Setup() setup.Func {
	return func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
		ts, err := o.validate()
		if err != nil {
			return fmt.Errorf("configuring NodeElasticIP: %w", err)
		}
		if err := IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		// The provider config usages are read through the cache on every
		// NodeElasticIP's first pass (the usage tracker looks before it
		// creates); start their informer with the manager, as
		// AnycastIPBinding does, instead of lazily by the first pass, which
		// would hold every first pass — and so the first allocation — until
		// a list of usages, queued behind a burst of labels and translated
		// objects at the API server, has come back.
		if _, err := mgr.GetCache().GetInformer(ctx, &cloudv1alpha1.ClusterProviderConfigUsage{}); err != nil {
			return fmt.Errorf("watching ClusterProviderConfigUsages: %w", err)
		}
		conn := newConnector(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorder(ControllerName), o, cfg.ClusterName, cfg.Credentials)
		if err := o.setupController(mgr, conn); err != nil {
			return err
		}
		if o.Translate {
			if err := newTranslator(mgr, ts, o.MaxConcurrentReconciles).SetupWithManager(mgr); err != nil {
				return err
			}
		}
		if o.Webhook {
			registerWebhook(mgr, ts.selector, o.TaintKey)
		}
		sw, err := newSweep(mgr.GetAPIReader(), conn, o, cfg.Sweeps)
		if err != nil {
			return err
		}
		if err := mgr.Add(sw); err != nil {
			return fmt.Errorf("adding the NodeElasticIP orphan sweep: %w", err)
		}
		return nil
	}
}

// indexNodeName indexes NodeElasticIPs by spec.nodeName.
const indexNodeName = "spec.nodeName"

// IndexFields registers the cache index this package lists by.
func IndexFields(ctx context.Context, idx client.FieldIndexer) error {
	return setup.IndexField(ctx, idx, &networkingv1alpha1.NodeElasticIP{}, indexNodeName,
		func(n *networkingv1alpha1.NodeElasticIP) string { return n.Spec.NodeName })
}

// progressPriority is above the default priority (0) of watch events: a
// NodeElasticIP that just got its address goes before those still waiting
// for their first, so allocations and associations overlap.
const progressPriority = 10

// newReconciler builds the reconciler of NodeElasticIPs.
func newReconciler(mgr ctrl.Manager, conn *connector) *reconciler.Reconciler[*networkingv1alpha1.NodeElasticIP] {
	o := conn.opts
	return reconciler.New(reconciler.Options[*networkingv1alpha1.NodeElasticIP]{
		Name:      ControllerName,
		New:       func() *networkingv1alpha1.NodeElasticIP { return &networkingv1alpha1.NodeElasticIP{} },
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Connector: conn,
		Finalizer: networkingv1alpha1.NodeElasticIPFinalizer,
		Usage:     pcusage.New(mgr.GetClient(), mgr.GetAPIReader(), &cloudv1alpha1.ClusterProviderConfigUsage{}),
		UsageTTL:  o.clientCacheTTL(),
		// The NodeElasticIP's and the node's own Events say more than the
		// reconciler's generic Normal ones, which would be one more write
		// per step.
		Recorder:         mgr.GetEventRecorder(ControllerName),
		PollInterval:     o.PollInterval,
		Timeout:          2 * time.Minute,
		ProgressPriority: progressPriority,
		// The allocation is found again by its owner UID after a crash, so
		// the check before it is a read, started with a pass that will
		// likely allocate (no address recorded yet).
		PrefetchCreate: func(n *networkingv1alpha1.NodeElasticIP) bool {
			return meta.GetExternalName(n) == "" && !meta.WasDeleted(n)
		},
		// The node patch after an allocation and association goes out
		// beside the external-name record: SyncCluster only reads the
		// NodeElasticIP, and the node's marks say what EC2 holds (the
		// address is on the node), which a lost record does not change —
		// the next pass finds the address by its owner UID.
		SyncBesideCreateRecord: true,
		Clock:                  o.Clock,
	})
}

func (o Options) setupController(mgr ctrl.Manager, conn *connector) error {
	c := mgr.GetClient()
	nodeToObjects := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list networkingv1alpha1.NodeElasticIPList
		if err := c.List(ctx, &list, client.MatchingFields{indexNodeName: obj.GetName()}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, n := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: n.Name}})
		}
		return out
	})
	err := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.NodeElasticIP{}, builder.WithPredicates(reconciler.Changes())).
		Watches(&corev1.Node{}, nodeToObjects, builder.WithPredicates(nodepatch.Changed)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: o.MaxConcurrentReconciles,
			// Per-object backoff only: a global bucket would pace every
			// requeue of a large batch.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](20*time.Millisecond, max(o.MaxBackoff, 20*time.Millisecond)),
		}).
		Complete(newReconciler(mgr, conn))
	if err != nil {
		return fmt.Errorf("building the %s controller: %w", ControllerName, err)
	}
	return nil
}

// parseTags parses key=value,... : keys 1-127 characters, unique and not
// reserved, values at most 255 characters (EC2's tag limits).
func parseTags(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch _, dup := out[k]; {
		case !ok:
			return nil, fmt.Errorf("tag %q: want key=value", pair)
		case k == "" || len(k) > 127 || len(v) > 255:
			return nil, fmt.Errorf("tag %q: keys are 1-127 and values at most 255 characters", pair)
		case decide.IsReservedTagKey(k):
			return nil, fmt.Errorf("tag %q: keys starting with aws:, edgeplane.io/ or networking.edgeplane.io/ are reserved", k)
		case dup:
			return nil, fmt.Errorf("tag %q appears twice", k)
		}
		out[k] = v
	}
	return out, nil
}
