// Package podelasticip reconciles PodElasticIPs: elastic IPs for pods on AWS
// or Tencent Cloud (the provider config's cloud; cloud.go is the seam),
// allocated (Auto), claimed from a pool of pre-tagged addresses (Pool) or
// taken by tag value or ID (Static), associated with the pod's private IP on
// its ENI and followed when the pod is recreated. The reconciler is the
// cloud kinds' shared one (internal/runtime/reconciler); this package adds
// the external client (external.go) on either cloud's adapter (cloud_aws.go,
// cloud_tencent.go), batched cloud look-ups (lookup.go), the pod's labels,
// annotation and readiness condition (pod.go), the translator of
// aws-pod-eip-controller's annotations (translator.go) and the orphan sweep
// (sweep.go). Pure decisions live in ./decide, the annotation parser in
// ./translate.
package podelasticip

import (
	"context"
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/cloud/pcusage"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
)

// Why each grant: PodElasticIPs are reconciled (finalizer, critical
// annotations, status) and created/deleted by the annotation translator.
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=podelasticips,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.edgeplane.io,resources=podelasticips/status,verbs=get;update;patch
// Which account to use, and the usage record that keeps it from deletion.
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=providerconfigs;clusterproviderconfigs,verbs=get;list;watch
// +kubebuilder:rbac:groups=cloud.edgeplane.io,resources=providerconfigusages,verbs=get;list;watch;create;update;patch;delete
// Pods (any namespace) get the address's labels and annotation (patch) and
// the readiness-gate condition (pods/status patch).
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Options are the PodElasticIP flags.
type Options struct {
	// MaxConcurrentReconciles is the number of PodElasticIPs reconciled at
	// once. Calls wait on the client-side token buckets, so this is well
	// above the cloud's rate.
	MaxConcurrentReconciles int
	// PollInterval is how often an up-to-date PodElasticIP is re-checked.
	PollInterval time.Duration
	// CreationGracePeriod: after a successful allocation, "not found" is
	// taken as EC2's read-after-create lag for this long. Default 0: the
	// address just written is remembered (lookup.Remember), so Observe does
	// not depend on DescribeAddresses seeing it, and during deletion "not
	// found" (kept or given back) must not wait.
	CreationGracePeriod time.Duration
	// ListingMaxAge is how old an address listing may be for a poll.
	ListingMaxAge time.Duration
	// TranslateAnnotations translates aws-pod-eip-controller's pod
	// annotations into PodElasticIPs.
	TranslateAnnotations bool
	// AdoptLegacy adopts addresses the legacy controller tagged for a pod
	// instead of allocating new ones.
	AdoptLegacy bool
	// LegacyClusterName is the legacy controller's --cluster-name (empty:
	// this cluster's identity).
	LegacyClusterName string
	// ClaimableTags bounds what Pool and Static PodElasticIPs may claim:
	// comma-separated tags (key, or key=value; the value {namespace} is
	// the claimer's namespace), one of which an address must carry. Empty:
	// claims take nothing. A manager flag, so no tenant's object widens it.
	ClaimableTags string
	// Settings (OrphanMode, OrphanGracePeriod, OrphanInterval) configure
	// the orphan sweep of addresses whose PodElasticIP is gone.
	orphan.Settings
	// MaxBackoff caps the per-PodElasticIP retry backoff.
	MaxBackoff time.Duration
	// AWSRateLimitScale multiplies the refill rates of the client-side EC2
	// token buckets (bucket sizes stay): for an account with raised refill
	// rates, or an emulator whose rate limits run on a faster clock.
	AWSRateLimitScale float64
	// CredentialBackoff bounds the calls of an account whose credentials
	// EC2 rejects: none until the window has passed, then one probe,
	// whatever the number of PodElasticIPs using it.
	CredentialBackoff cloud.CredentialBackoff
	// TaskPollInterval is how often a running Tencent Cloud task (an
	// allocation, an association, a release) is checked.
	TaskPollInterval time.Duration
	// TencentRateLimitScale multiplies the client-side Tencent Cloud
	// limits, each a bucket of one second's worth (so its size scales with
	// its rate): for an account with raised limits, or an emulator whose
	// clock runs faster.
	TencentRateLimitScale float64
	// TencentRetryBaseDelay is the first step of the Tencent SDK's backoff
	// after a throttled call (0: the client's default, 500ms).
	TencentRetryBaseDelay time.Duration
	// Clock is the controller's time: the reconciler's, listing ages,
	// release delays, the orphan sweep's grace and the credential backoff
	// (nil: the real clock); tests set it.
	Clock clock.PassiveClock
}

// clock is Clock or the real clock.
func (o Options) clock() clock.PassiveClock {
	if o.Clock == nil {
		return clock.RealClock{}
	}
	return o.Clock
}

// DefaultOptions are the defaults of the flags.
func DefaultOptions() Options {
	return Options{
		MaxConcurrentReconciles: 64,
		PollInterval:            time.Minute,
		CreationGracePeriod:     0,
		ListingMaxAge:           10 * time.Second,
		TranslateAnnotations:    true,
		AdoptLegacy:             true,
		Settings:                orphan.DefaultSettings(5 * time.Minute),
		MaxBackoff:              time.Minute,
		AWSRateLimitScale:       1,
		TaskPollInterval:        time.Second,
		TencentRateLimitScale:   1,
		CredentialBackoff:       cloud.DefaultCredentialBackoff(),
	}
}

// BindFlags registers the options' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.MaxConcurrentReconciles, "podelasticip-max-concurrent-reconciles", o.MaxConcurrentReconciles, "PodElasticIPs reconciled at once.")
	fs.DurationVar(&o.PollInterval, "podelasticip-poll-interval", o.PollInterval, "How often an up-to-date PodElasticIP is checked against EC2.")
	fs.DurationVar(&o.CreationGracePeriod, "podelasticip-creation-grace-period", o.CreationGracePeriod, "How long a just-allocated address may be invisible to DescribeAddresses.")
	fs.BoolVar(&o.TranslateAnnotations, "podelasticip-translate-annotations", o.TranslateAnnotations, "Translate aws-pod-eip-controller's pod annotations into PodElasticIPs.")
	fs.BoolVar(&o.AdoptLegacy, "podelasticip-adopt-legacy", o.AdoptLegacy, "Adopt addresses aws-pod-eip-controller tagged for a pod instead of allocating new ones.")
	fs.StringVar(&o.LegacyClusterName, "podelasticip-legacy-cluster-name", o.LegacyClusterName, "aws-pod-eip-controller's --cluster-name, for adoption; empty: this cluster's identity.")
	fs.StringVar(&o.ClaimableTags, "podelasticip-claimable-tags", o.ClaimableTags,
		"Tags one of which an address must carry for Pool and Static PodElasticIPs to claim it: comma-separated key or key=value ({namespace} as the value: the claimer's namespace). Empty: they claim nothing.")
	o.Settings.BindFlags(fs, "podelasticip", "this cluster's addresses whose PodElasticIP is gone")
	fs.DurationVar(&o.MaxBackoff, "podelasticip-max-backoff", o.MaxBackoff, "Longest wait before a failed PodElasticIP is retried.")
	o.CredentialBackoff.BindFlags(fs, "podelasticip", "EC2")
	fs.Float64Var(&o.AWSRateLimitScale, "podelasticip-aws-rate-limit-scale", o.AWSRateLimitScale, "Multiplier for the refill rates of the client-side EC2 token buckets (raised account limits); bucket sizes stay.")
	fs.DurationVar(&o.TaskPollInterval, "podelasticip-task-poll-interval", o.TaskPollInterval, "How often a running Tencent Cloud task (allocation, association, release) is checked.")
	fs.Float64Var(&o.TencentRateLimitScale, "podelasticip-tencent-rate-limit-scale", o.TencentRateLimitScale, "Multiplier for the client-side Tencent Cloud limits (raised account limits); each bucket holds one second's worth.")
}

// taskPollInterval is TaskPollInterval or its default.
func (o Options) taskPollInterval() time.Duration {
	if o.TaskPollInterval <= 0 {
		return time.Second
	}
	return o.TaskPollInterval
}

// Setup registers the reconciler with default options.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup()(ctx, mgr, cfg)
}

// Setup returns the setup.Func registering the reconciler, the translator
// and the orphan sweep.
func (o Options) Setup() setup.Func {
	return func(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
		if o.MaxConcurrentReconciles < 1 || o.PollInterval <= 0 {
			return fmt.Errorf("--podelasticip-max-concurrent-reconciles (%d) and --podelasticip-poll-interval (%s) must be positive",
				o.MaxConcurrentReconciles, o.PollInterval)
		}
		if o.OrphanMode == "" {
			o.OrphanMode = orphan.ModeDelete
		}
		if err := o.Settings.Validate("podelasticip"); err != nil {
			return err
		}
		claims, err := decide.ParseClaimPolicy(o.ClaimableTags)
		if err != nil {
			return fmt.Errorf("--podelasticip-claimable-tags: %w", err)
		}
		if err := IndexFields(ctx, mgr.GetFieldIndexer()); err != nil {
			return err
		}
		rec := mgr.GetEventRecorder("podelasticip")
		conn := newConnector(mgr.GetClient(), mgr.GetAPIReader(), rec, o, cfg)
		conn.claims = claims
		r := reconciler.New(reconciler.Options[*networkingv1alpha1.PodElasticIP]{
			Name:      "podelasticip",
			New:       func() *networkingv1alpha1.PodElasticIP { return &networkingv1alpha1.PodElasticIP{} },
			Client:    mgr.GetClient(),
			Reader:    mgr.GetAPIReader(),
			Connector: conn,
			Finalizer: networkingv1alpha1.PodElasticIPFinalizer,
			Usage:     pcusage.New(mgr.GetClient(), mgr.GetAPIReader(), newUsage()),
			// The kind's own Events (Allocated, Associated, Released, ...)
			// say what each step did; the reconciler's generic Normal ones
			// (CreatedExternalResource, ...) would be two more API writes
			// per PodElasticIP. Its Warnings are recorded.
			Recorder:            rec,
			PollInterval:        o.PollInterval,
			CreationGracePeriod: o.CreationGracePeriod,
			Timeout:             2 * time.Minute,
			// A PodElasticIP that just got its address (or took a deletion
			// step) goes before those still waiting for their first
			// allocation, so with hundreds created at once allocations and
			// associations overlap instead of running one after the other.
			ProgressPriority: progressPriority,
			Clock:            o.Clock,
		})
		podToCRs := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
			var list networkingv1alpha1.PodElasticIPList
			if err := mgr.GetClient().List(ctx, &list, client.InNamespace(obj.GetNamespace()), client.MatchingFields{indexPodName: obj.GetName()}); err != nil {
				return nil
			}
			out := make([]reconcile.Request, 0, len(list.Items))
			for _, p := range list.Items {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&p)})
			}
			return out
		})
		if err := ctrl.NewControllerManagedBy(mgr).Named("podelasticip").
			For(&networkingv1alpha1.PodElasticIP{}, builder.WithPredicates(reconciler.Changes())).
			Watches(&corev1.Pod{}, podToCRs, builder.WithPredicates(podChanged())).
			WithOptions(controller.Options{
				MaxConcurrentReconciles: o.MaxConcurrentReconciles,
				// Per-item backoff only: the default limiter's global 10/s
				// bucket would pace every requeue of a large batch.
				RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](20*time.Millisecond, max(o.MaxBackoff, 20*time.Millisecond)),
			}).
			Complete(r); err != nil {
			return fmt.Errorf("building the podelasticip controller: %w", err)
		}
		if o.TranslateAnnotations {
			if err := setupTranslator(mgr); err != nil {
				return err
			}
		}
		return setupSweep(mgr, conn, o, cfg.Sweeps)
	}
}

// indexPodName indexes PodElasticIPs by spec.podName.
const indexPodName = "spec.podName"

// IndexFields registers the cache index this package lists by.
func IndexFields(ctx context.Context, idx client.FieldIndexer) error {
	return setup.IndexField(ctx, idx, &networkingv1alpha1.PodElasticIP{}, indexPodName,
		func(p *networkingv1alpha1.PodElasticIP) string { return p.Spec.PodName })
}

// podChanged passes pod events that matter to an address: creation,
// deletion, and changes of IP, phase, node, deletion timestamp or gates.
func podChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Pod)
			n, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return true
			}
			return o.Status.PodIP != n.Status.PodIP || o.Status.Phase != n.Status.Phase || o.Spec.NodeName != n.Spec.NodeName ||
				(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) || o.UID != n.UID ||
				len(o.Spec.ReadinessGates) != len(n.Spec.ReadinessGates)
		},
	}
}

// progressPriority is above the default priority (0) of watch events.
const progressPriority = 10

func newUsage() *cloudv1alpha1.ProviderConfigUsage { return &cloudv1alpha1.ProviderConfigUsage{} }
