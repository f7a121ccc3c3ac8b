// Package anycastipbinding binds Tencent Cloud public addresses (anycast AIA
// addresses by default) to the CVM instances behind Kubernetes nodes, the
// way tkestack's aia-ip-controller did, as AnycastIPBinding managed
// resources:
//
//   - the binding reconciler (the cloud kinds' shared reconciler,
//     internal/runtime/reconciler, with an ExternalClient in external.go)
//     allocates with a client token and
//     ownership tags, waits for the asynchronous tasks, associates, confirms
//     BIND, and on deletion unbinds, waits for UNBIND and releases;
//   - the node side (node.go) taints the node until it is bound and writes
//     the legacy annotations, patching only what it owns;
//   - a mutating admission webhook on Node (webhook.go) taints a labelled
//     node from its registration, closing the scheduling race;
//   - the translator (translator.go) gives every node matching the selector
//     a binding named after it;
//   - the orphan sweep (sweep.go) releases addresses whose binding and node
//     are gone, and reports anything else.
//
// Pure decisions live in the decide subpackage.
package anycastipbinding

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
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
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/pcusage"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
)

// Why each grant: bindings are reconciled (finalizer, critical annotations,
// status) and created/deleted by the node translator.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=anycastipbindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=anycastipbindings/status,verbs=get;update;patch
// Which account to use, and the usage record that keeps it from deletion.
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=clusterproviderconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=clusterproviderconfigusages,verbs=get;list;watch;create;update;patch;delete
// Nodes: read, and patched with the taint and the legacy annotations it owns.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// aia-ip-controller's cluster-identity ConfigMap, in kube-system only, read-only.
// +kubebuilder:rbac:groups="",namespace=kube-system,resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Defaults.
const (
	// DefaultNodeSelector is aia-ip-controller's default node.labels.
	DefaultNodeSelector = networkingv1alpha1.LegacyLabelNeedAIAIP + "=true"
	// DefaultProviderConfig is the ClusterProviderConfig translated bindings use.
	DefaultProviderConfig = cloudv1alpha1.DefaultProviderConfigName
)

// Options are the AnycastIPBinding flags (and chart values).
type Options struct {
	// NodeSelector picks the nodes that get a translated binding.
	NodeSelector string
	// Translate turns the node translator on.
	Translate bool
	// Webhook serves the Node mutating webhook that taints selected nodes
	// at admission (the manager must serve webhooks).
	Webhook bool
	// Defaults of translated bindings (aia-ip-controller's aia.* config).
	ProviderConfig string
	AddressType    string
	AnycastZone    string
	Bandwidth      int64
	ChargeType     string
	Tags           string

	// PollInterval re-checks a bound address; TaskPollInterval a running
	// task; BlockedPollInterval a binding that cannot progress (node changes
	// re-trigger it at once).
	PollInterval        time.Duration
	TaskPollInterval    time.Duration
	BlockedPollInterval time.Duration
	// MaxConcurrentReconciles of the binding controller and of the node
	// translator.
	MaxConcurrentReconciles int
	// BatchWindow is how long DescribeAddresses look-ups wait to be
	// coalesced into one call (0 disables batching).
	BatchWindow time.Duration

	// Settings (OrphanMode, OrphanGracePeriod, OrphanInterval) configure
	// the orphan sweep.
	orphan.Settings

	// ClientOptions adjusts the Tencent client options after they are
	// resolved from the provider config (tests and benchmarks scale the
	// client-side rate limits with it). Not a flag.
	ClientOptions func(*tencentcloud.Options)
	// ClientCacheTTL is how long a resolved provider config and its client
	// are reused (default 30s). Not a flag.
	ClientCacheTTL time.Duration
	// CredentialBackoff bounds the calls of an account whose credentials
	// Tencent Cloud rejects: none until the window has passed, then one
	// probe, whatever the number of bindings using it.
	CredentialBackoff cloud.CredentialBackoff
	// ProgressWindow is how long a binding's transitional progress
	// (Creating → Binding) may go unwritten while the next step follows
	// (default: six TaskPollIntervals; negative: always written at once).
	// Errors and Ready are always written at once. Not a flag.
	ProgressWindow time.Duration
}

// progressWindowPolls is the default ProgressWindow in TaskPollIntervals:
// enough for a new binding's whole way to Ready — the allocation task,
// then the association task (each about two intervals: Tencent's tasks
// take a second or two) and a poll's slack after each — so that a
// binding that binds normally is written once, Ready, while one that
// stays in transition longer shows its progress within seconds.
const progressWindowPolls = 6

// progressWindow is ProgressWindow with its default.
func (o Options) progressWindow() time.Duration {
	switch {
	case o.ProgressWindow < 0:
		return 0
	case o.ProgressWindow == 0:
		return progressWindowPolls * o.TaskPollInterval
	}
	return o.ProgressWindow
}

// DefaultOptions are aia-ip-controller's defaults with edgeplane's safety
// nets on: the translator, the admission webhook, and the orphan sweep in
// delete mode (which only ever deletes addresses carrying this cluster's
// identity and a binding UID; everything else is reported).
func DefaultOptions() Options {
	return Options{
		NodeSelector:        DefaultNodeSelector,
		Translate:           true,
		Webhook:             true,
		ProviderConfig:      DefaultProviderConfig,
		AddressType:         string(networkingv1alpha1.AddressTypeAnycastEIP),
		PollInterval:        2 * time.Minute,
		TaskPollInterval:    time.Second,
		CredentialBackoff:   cloud.DefaultCredentialBackoff(),
		BlockedPollInterval: 30 * time.Second,
		// A pass mostly waits (on a cloud task, the client-side token
		// buckets, a batched DescribeAddresses, the API server), so the
		// workers are goroutines parked on I/O: with 10, 200 labelled
		// nodes queued behind ten parked passes, the translator created
		// their bindings ten at a time, and bindings whose task had ended
		// waited for a free worker while AssociateAddresses' bucket idled
		// (BenchmarkConverge200: 2.98× the bound at x10 with 10 workers,
		// 1.85× with 64). The client-side buckets, not the worker count,
		// keep the calls inside Tencent's limits. PodElasticIP and
		// NodeElasticIP default to 64 too.
		MaxConcurrentReconciles: 64,
		BatchWindow:             20 * time.Millisecond,
		Settings:                orphan.DefaultSettings(10 * time.Minute),
	}
}

// BindFlags registers the options' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.NodeSelector, "anycastipbinding-node-selector", o.NodeSelector, "Label selector of the nodes that get an AnycastIPBinding (aia-ip-controller's node.labels).")
	fs.BoolVar(&o.Translate, "anycastipbinding-translate-nodes", o.Translate, "Create an AnycastIPBinding for every node the selector picks, and delete it when the node stops matching.")
	fs.BoolVar(&o.Webhook, "anycastipbinding-node-webhook", o.Webhook, "Serve the Node mutating webhook that taints selected nodes at admission.")
	fs.StringVar(&o.ProviderConfig, "anycastipbinding-provider-config", o.ProviderConfig, "ClusterProviderConfig of translated AnycastIPBindings.")
	fs.StringVar(&o.AddressType, "anycastipbinding-address-type", o.AddressType, "Address type of translated bindings: AnycastEIP, HighQualityEIP or EIP.")
	fs.StringVar(&o.AnycastZone, "anycastipbinding-anycast-zone", o.AnycastZone, "AnycastZone of translated AnycastEIP bindings (ANYCAST_ZONE_OVERSEAS or ANYCAST_ZONE_GLOBAL); empty: the cloud's default.")
	fs.Int64Var(&o.Bandwidth, "anycastipbinding-bandwidth", o.Bandwidth, "InternetMaxBandwidthOut (Mbps) of translated bindings; 0: the cloud's default.")
	fs.StringVar(&o.ChargeType, "anycastipbinding-internet-charge-type", o.ChargeType, "InternetChargeType of translated bindings; empty: the cloud's default.")
	fs.StringVar(&o.Tags, "anycastipbinding-tags", o.Tags, "Extra tags of translated bindings' addresses, key=value,... (aia-ip-controller's aia.tags).")
	fs.DurationVar(&o.PollInterval, "anycastipbinding-poll-interval", o.PollInterval, "How often a bound address is checked again.")
	fs.DurationVar(&o.TaskPollInterval, "anycastipbinding-task-poll-interval", o.TaskPollInterval, "How often a running Tencent Cloud task is checked.")
	o.CredentialBackoff.BindFlags(fs, "anycastipbinding", "Tencent Cloud")
	fs.DurationVar(&o.BatchWindow, "anycastipbinding-describe-batch-window", o.BatchWindow, "How long address look-ups wait to be coalesced into one DescribeAddresses call (0 disables batching).")
	fs.IntVar(&o.MaxConcurrentReconciles, "anycastipbinding-max-concurrent-reconciles", o.MaxConcurrentReconciles, "AnycastIPBindings reconciled in parallel.")
	o.Settings.BindFlags(fs, "anycastipbinding", "addresses whose binding and node are gone")
}

// translatedSpec is what translated bindings get, validated once.
type translatedSpec struct {
	selector labels.Selector
	spec     networkingv1alpha1.AnycastIPBindingSpec
}

func (o Options) validate() (translatedSpec, error) {
	var errs []error
	sel, err := decide.ParseNodeSelector(o.NodeSelector)
	if err != nil {
		errs = append(errs, fmt.Errorf("--anycastipbinding-node-selector: %w", err))
	}
	tags, err := decide.ParseTags(o.Tags)
	if err != nil {
		errs = append(errs, fmt.Errorf("--anycastipbinding-tags: %w", err))
	}
	switch networkingv1alpha1.AnycastAddressType(o.AddressType) {
	case networkingv1alpha1.AddressTypeAnycastEIP, networkingv1alpha1.AddressTypeHighQualityEIP, networkingv1alpha1.AddressTypeEIP:
	default:
		errs = append(errs, fmt.Errorf("--anycastipbinding-address-type %q: want AnycastEIP, HighQualityEIP or EIP", o.AddressType))
	}
	if o.AnycastZone != "" && o.AddressType != string(networkingv1alpha1.AddressTypeAnycastEIP) {
		errs = append(errs, fmt.Errorf("--anycastipbinding-anycast-zone is only valid with --anycastipbinding-address-type AnycastEIP"))
	}
	if o.Bandwidth < 0 || o.Bandwidth > 2000 {
		errs = append(errs, fmt.Errorf("--anycastipbinding-bandwidth %d: want 0 (cloud default) to 2000", o.Bandwidth))
	}
	if o.PollInterval <= 0 || o.TaskPollInterval <= 0 || o.BlockedPollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll intervals must be positive"))
	}
	if err := o.Settings.Validate("anycastipbinding"); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return translatedSpec{}, err
	}
	spec := networkingv1alpha1.AnycastIPBindingSpec{
		AddressType:        networkingv1alpha1.AnycastAddressType(o.AddressType),
		AnycastZone:        networkingv1alpha1.AnycastZone(o.AnycastZone),
		InternetChargeType: networkingv1alpha1.InternetChargeType(o.ChargeType),
	}
	spec.ProviderConfigReference = providerConfigRef(o.ProviderConfig)
	if o.Bandwidth > 0 {
		bw := o.Bandwidth
		spec.InternetMaxBandwidthOut = &bw
	}
	if len(tags) > 0 {
		spec.Tags = tags
	}
	return translatedSpec{selector: sel, spec: spec}, nil
}

// Setup returns the setup.Func registering the binding controller, the node
// translator, the Node webhook and the orphan sweep.
func (o Options) Setup() setup.Func {
	return func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
		return o.setup(ctx, mgr, cfg)
	}
}

// Setup registers everything with default options.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup()(ctx, mgr, cfg)
}

// indexNodeName indexes bindings by spec.nodeName.
const indexNodeName = "spec.nodeName"

// IndexFields registers the cache index this package lists bindings by.
func IndexFields(ctx context.Context, idx client.FieldIndexer) error {
	return setup.IndexField(ctx, idx, &networkingv1alpha1.AnycastIPBinding{}, indexNodeName,
		func(b *networkingv1alpha1.AnycastIPBinding) string { return b.Spec.NodeName })
}

// ControllerName is the binding controller's name (and its event source).
const ControllerName = "anycastipbinding"

func (o Options) setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	ts, err := o.validate()
	if err != nil {
		return fmt.Errorf("configuring AnycastIPBinding: %w", err)
	}
	if err := IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	// The provider config usages are read through the cache on every
	// binding's first pass; start their informer with the manager instead
	// of lazily, which would stall the first passes until it has synced.
	if _, err := mgr.GetCache().GetInformer(ctx, &cloudv1alpha1.ClusterProviderConfigUsage{}); err != nil {
		return fmt.Errorf("watching ClusterProviderConfigUsages: %w", err)
	}
	conn := NewConnector(mgr, cfg.ClusterName, o)
	conn.creds = cfg.Credentials
	if err := o.setupBindingController(mgr, conn); err != nil {
		return err
	}
	if o.Translate {
		t := &Translator{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder(ControllerName + "-translator"), Selector: ts.selector, Spec: ts.spec,
			MaxConcurrentReconciles: o.MaxConcurrentReconciles}
		if err := t.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if o.Webhook {
		mgr.GetWebhookServer().Register(NodeWebhookPath, &webhook.Admission{Handler: NodeTainter(ts.selector)})
	}
	sw, err := NewSweep(mgr, conn, o, cfg.Sweeps)
	if err != nil {
		return err
	}
	if err := mgr.Add(sw); err != nil {
		return fmt.Errorf("adding the AnycastIPBinding orphan sweep: %w", err)
	}
	return nil
}

// progressPriority is above the default priority (0) of watch events.
const progressPriority = 10

// NewReconciler builds the reconciler of AnycastIPBindings (tests drive
// it by hand).
func NewReconciler(mgr ctrl.Manager, conn *Connector) *reconciler.Reconciler[*networkingv1alpha1.AnycastIPBinding] {
	return newReconciler(mgr, conn, conn.clock)
}

// newReconciler is NewReconciler on clk.
func newReconciler(mgr ctrl.Manager, conn *Connector, clk clock.PassiveClock) *reconciler.Reconciler[*networkingv1alpha1.AnycastIPBinding] {
	// A new binding costs the API server seven writes and one read, each
	// kept for a reason:
	//   - POST binding (translator), finalizer included (no second write);
	//   - POST usage: the ClusterProviderConfigUsage keeps the provider
	//     config — whose credentials release the address — from deletion
	//     while the binding may own an address, so it is stored before the
	//     first cloud write (it is sent beside Observe, so it delays the
	//     allocation only when it is slower than the look-ups);
	//   - GET binding (the create guard, started once the pass connected, beside
	//     Observe): proves the pass's copy is the stored one before it
	//     allocates. The ClientToken and the ownership tags make a second
	//     address unlikely, but the token carries the allocation attempt,
	//     which another writer (a previous leader during a hand-over) may
	//     have moved on since the cached copy; a read costs no write;
	//   - PATCH binding annotations: the address ID and the allocation task,
	//     recorded before the next step, so a restart finds the address
	//     without searching by tags and waits for its task;
	//   - PUT status, once (Ready; transitional progress is deferred);
	//   - PATCH node (taint and legacy annotations, what the binding is for);
	//   - two Events on the node: the translator's and AnycastIPBound.
	o := reconciler.Options[*networkingv1alpha1.AnycastIPBinding]{
		Name:      ControllerName,
		New:       func() *networkingv1alpha1.AnycastIPBinding { return &networkingv1alpha1.AnycastIPBinding{} },
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Connector: conn,
		Finalizer: networkingv1alpha1.AnycastIPBindingFinalizer,
		Usage:     pcusage.New(mgr.GetClient(), mgr.GetAPIReader(), &cloudv1alpha1.ClusterProviderConfigUsage{}),
		UsageTTL:  conn.cacheTTL(),
		// The binding's conditions and the node's Events say more than
		// the reconciler's generic Normal Events, which would be two to
		// three more API writes per binding.
		Recorder:     mgr.GetEventRecorder(ControllerName),
		PollInterval: conn.opts.PollInterval,
		// A binding whose allocation or association is under way (polled
		// every task poll interval) goes before bindings still waiting for
		// their allocation, so associations keep their bucket busy while
		// allocations drain theirs.
		ProgressPriority: progressPriority,
		// The allocation task takes a second or two: the pass after
		// AllocateAddresses comes a task poll interval later (Create
		// chooses it), not at once to find the address still CREATING.
		PollAfterCreate: true,
		// The allocation is idempotent (a ClientToken derived from the
		// UID returns the first call's address) and Observe finds the
		// address by its ownership tags, so the check before allocating is
		// a read, started with a pass that will likely allocate.
		PrefetchCreate: func(b *networkingv1alpha1.AnycastIPBinding) bool {
			return decide.LikelyAllocation(meta.GetExternalName(b), meta.WasDeleted(b), string(b.GetCondition(xpv2.TypeReady).Reason))
		},
		Clock: clk,
	}
	if window := conn.opts.progressWindow(); window > 0 {
		// Transitional progress (Creating → Binding) stays unwritten
		// within the window while the next step follows, so a binding that
		// binds normally is written once, Ready (decide.DeferStatus).
		o.DeferStatus = func(written, next *networkingv1alpha1.AnycastIPBinding, age time.Duration) bool {
			return decide.DeferStatus(decide.StatusWrite{Written: written.Status, Next: next.Status,
				ExternalName: meta.GetExternalName(next), Age: age, Window: window})
		}
	}
	return reconciler.New(o)
}

func (o Options) setupBindingController(mgr ctrl.Manager, conn *Connector) error {
	r := NewReconciler(mgr, conn)
	c := mgr.GetClient()
	nodeToBindings := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
		var list networkingv1alpha1.AnycastIPBindingList
		if err := c.List(ctx, &list, client.MatchingFields{indexNodeName: obj.GetName()}); err != nil {
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, b := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: b.Name}})
		}
		return out
	})
	if err := ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.AnycastIPBinding{}, builder.WithPredicates(reconciler.Changes(), r.OwnWrites())).
		Watches(&corev1.Node{}, nodeToBindings, builder.WithPredicates(nodepatch.Changed, conn.notOwnNodeWrite())).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: max(o.MaxConcurrentReconciles, 1),
			// The reconciler asks for rate-limited requeues after a step and
			// after a failure; keep them short and bounded.
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](50*time.Millisecond, 30*time.Second),
		}).
		Complete(r); err != nil {
		return fmt.Errorf("building the %s controller: %w", ControllerName, err)
	}
	return nil
}
