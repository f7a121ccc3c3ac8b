// Package burstpolicy reconciles BurstPolicies: it keeps the first
// localReplicas replicas of a workload on local nodes and bursts the others
// onto cloud virtual nodes by adding the virtual-node tolerations to their
// pending pods, and it gives pods on virtual nodes a lower
// pod-deletion-cost so scale-in removes them first. It works with the stock
// kube-scheduler. See docs/burstpolicy.md for the mechanism and its limits.
//
// Files: controller.go (Setup, Reconcile), target.go (resolving the governed
// pods), pods.go (per-pod state and the plan's writes), writer.go (the
// background pod writer), fresh.go (write expectations), rebalance.go
// (moving burst pods home), cleanup.go (reverting the marks of pods no
// policy governs), status.go (pure status), defaults.go (the
// ClusterBurstPolicy's status and switch table), clusterwide.go (its
// governs: AllPods), webhook.go and gate.go (the pod webhook and its safety
// net), schedulername.go (the Event of the tke-scheduler rewrite). The pure
// decisions live in decide/, the legacy translators in translate/.
package burstpolicy

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/translate"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/runtime/informerstore"
	"github.com/edgeplane/edgeplane/internal/status"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// Options configure the BurstPolicy controllers.
type Options struct {
	// EKSConfigNamespace is where the legacy eks-config ConfigMap lives.
	EKSConfigNamespace string
	// FloorHandoff: see decide.Params.FloorHandoff.
	FloorHandoff time.Duration
	// PodPassInterval: see Reconciler.PodPassInterval.
	PodPassInterval time.Duration
	// MaxConcurrentReconciles of the BurstPolicy controller.
	MaxConcurrentReconciles int
	// DisableTranslators turns off the legacy translators.
	DisableTranslators bool
	// DisablePodGate turns off the pod-gating webhook and its safety net.
	DisablePodGate bool
	// GateTimeout is how long a pod may stay gated before it is released.
	GateTimeout time.Duration
	// LegacySwitchTable is the legacy switch table applied when the
	// ClusterBurstPolicy names none (or there is none).
	LegacySwitchTable schedulingv1alpha1.LegacySwitchTable
	// RewriteTKEScheduler moves new pods naming the legacy tke-scheduler to
	// the default scheduler.
	RewriteTKEScheduler bool
}

// DefaultOptions returns the defaults of the flags.
func DefaultOptions() Options {
	return Options{
		EKSConfigNamespace:      translate.DefaultEKSConfigNamespace,
		FloorHandoff:            time.Minute,
		PodPassInterval:         DefaultPodPassInterval,
		MaxConcurrentReconciles: 4,
		GateTimeout:             30 * time.Second,
		LegacySwitchTable:       schedulingv1alpha1.SwitchTableLocalOptIn,
		RewriteTKEScheduler:     true,
	}
}

// BindFlags registers the options' flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.EKSConfigNamespace, "burstpolicy-eks-config-namespace", o.EKSConfigNamespace,
		"Namespace of the legacy eks-config ConfigMap whose AUTO_SCALE_EKS becomes the ClusterBurstPolicy \"default\".")
	fs.DurationVar(&o.FloorHandoff, "burstpolicy-floor-handoff", o.FloorHandoff,
		"How long a replica of a new revision that the local floor holds back waits before it may burst while older revisions keep the floor local.")
	fs.DurationVar(&o.PodPassInterval, "burstpolicy-pod-pass-interval", o.PodPassInterval,
		"Least time between the starts of two passes of a BurstPolicy that its pods' events bring (a wave of pod events brings one pass per interval, each reading every governed pod; 0 disables the pacing).")
	fs.IntVar(&o.MaxConcurrentReconciles, "burstpolicy-max-concurrent-reconciles", o.MaxConcurrentReconciles,
		"Number of BurstPolicies reconciled in parallel.")
	fs.BoolVar(&o.DisableTranslators, "burstpolicy-disable-translators", o.DisableTranslators,
		"Do not translate the legacy AUTO_SCALE_EKS/LOCAL_REPLICAS annotations and the eks-config ConfigMap.")
	fs.BoolVar(&o.DisablePodGate, "burstpolicy-disable-pod-gate", o.DisablePodGate,
		"Do not serve the pod webhook that gates new pods of BurstPolicies with trigger Pending (burst pods then get tolerations only and are not pinned to virtual nodes).")
	fs.DurationVar(&o.GateTimeout, "burstpolicy-gate-timeout", o.GateTimeout,
		"How long a pod may wait at the burst-decision scheduling gate before it is released as a local pod.")
	fs.BoolVar(&o.RewriteTKEScheduler, "burstpolicy-rewrite-tke-scheduler", o.RewriteTKEScheduler,
		"Move new pods whose schedulerName is the legacy tke-scheduler to the default scheduler (no tke-scheduler runs once the TKE resilience chart is gone, and such pods would stay Pending).")
	fs.Var(&switchTableFlag{&o.LegacySwitchTable}, "burstpolicy-legacy-switch-table",
		"Switch table of the legacy AUTO_SCALE_EKS annotations when the ClusterBurstPolicy names none: LocalOptIn (the TKE resilience documentation: a workload's false does not opt out) or LocalOverride (chart v1.0.0: the workload's switch wins).")
}

// switchTableFlag is a flag.Value accepting only the known switch tables.
type switchTableFlag struct {
	v *schedulingv1alpha1.LegacySwitchTable
}

func (f *switchTableFlag) String() string {
	if f.v == nil {
		return ""
	}
	return string(*f.v)
}

func (f *switchTableFlag) Set(s string) error {
	switch t := schedulingv1alpha1.LegacySwitchTable(s); t {
	case schedulingv1alpha1.SwitchTableLocalOptIn, schedulingv1alpha1.SwitchTableLocalOverride:
		*f.v = t
		return nil
	}
	return fmt.Errorf("%q is neither %s nor %s", s, schedulingv1alpha1.SwitchTableLocalOptIn, schedulingv1alpha1.SwitchTableLocalOverride)
}

// Setup registers the BurstPolicy and ClusterBurstPolicy controllers and the
// legacy translators with the default options.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup(ctx, mgr, cfg)
}

// Why each grant: policies are read and report status.
// +kubebuilder:rbac:groups=scheduling.edgeplane.io,resources=burstpolicies;clusterburstpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.edgeplane.io,resources=burstpolicies/status;clusterburstpolicies/status,verbs=get;update;patch
// Pods a policy selects (any namespace): read, and patched (scheduling-gate
// removal, the burst labels and annotations).
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// Rebalancing moves a burst pod home through the Eviction API, so
// PodDisruptionBudgets are honoured (never a plain delete).
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// The fit check reads nodes, and a pending pod's volumes (claims, volumes,
// storage classes) for their zone and node affinity; all read-only.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get
// A policy's local-replica count is read through the owner's scale subresource.
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get
// +kubebuilder:rbac:groups="",resources=replicationcontrollers,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=replicationcontrollers/scale,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Setup registers the controllers with o.
func (o Options) Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	r := &Reconciler{
		Client:            mgr.GetClient(),
		Cache:             mgr.GetCache(),
		Reader:            mgr.GetAPIReader(),
		Recorder:          mgr.GetEventRecorder("burstpolicy"),
		FloorHandoff:      o.FloorHandoff,
		LegacySwitchTable: o.LegacySwitchTable,
		PodPassInterval:   o.PodPassInterval,
	}
	if err := r.SetupWithManager(mgr, o.MaxConcurrentReconciles); err != nil {
		return err
	}
	cleanup := &CleanupReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy")}
	if err := cleanup.SetupWithManager(mgr); err != nil {
		return err
	}
	d := &DefaultsReconciler{Client: mgr.GetClient(), LegacySwitchTable: o.LegacySwitchTable}
	if err := d.SetupWithManager(mgr); err != nil {
		return err
	}
	var kinds *translate.Kinds
	if !o.DisableTranslators {
		var err error
		if kinds, err = translate.SetupWorkloads(ctx, mgr, cfg); err != nil {
			return err
		}
		if err := translate.SetupEKSConfig(mgr, o.EKSConfigNamespace); err != nil {
			return err
		}
	}
	cw := &ClusterWideReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("burstpolicy"),
		LegacySwitchTable: o.LegacySwitchTable, Translated: kinds.TranslatesPodsOf}
	if err := cw.SetupWithManager(mgr); err != nil {
		return err
	}
	if !o.DisablePodGate || o.RewriteTKEScheduler {
		mgr.GetWebhookServer().Register(PodWebhookPath, &webhook.Admission{Handler: &PodGater{
			Reader:      mgr.GetClient(),
			DisableGate: o.DisablePodGate, RewriteTKEScheduler: o.RewriteTKEScheduler,
			Legacy: LegacyTranslation{Table: o.LegacySwitchTable, Translated: kinds.TranslatesPodsOf},
		}})
	}
	if !o.DisablePodGate {
		g := &GateReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy"), Timeout: o.GateTimeout}
		if err := g.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	if o.RewriteTKEScheduler {
		rep := &SchedulerNameReporter{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("burstpolicy")}
		if err := rep.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}

// Reconciler reconciles BurstPolicies.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// Cache is the manager's cache, whose pod store a pass reads the
	// governed pods from without copying them (informerstore); nil: Client
	// lists them.
	Cache cache.Informers
	// Reader reads uncached: scale subresources, claims, volumes, classes.
	Reader client.Reader
	// Recorder emits Events on policies and pods; nil emits none.
	Recorder events.EventRecorder
	// FloorHandoff: see decide.Params.
	FloorHandoff time.Duration
	// LegacySwitchTable applies when the ClusterBurstPolicy names none;
	// empty means LocalOptIn.
	LegacySwitchTable schedulingv1alpha1.LegacySwitchTable
	// Clock is the time decisions are made at; nil means the real clock.
	Clock clock.PassiveClock
	// PodPassInterval is the least time between the starts of two passes
	// of a policy that pod events bring (DefaultPodPassInterval; 0: none).
	PodPassInterval time.Duration

	// fresh remembers pods written until the cache has them (see
	// freshPods).
	fresh expect.Lazy[types.UID, *corev1.Pod]
	// evicted remembers the evictions of rebalancing in flight (see
	// evictions).
	evicted expect.Lazy[types.NamespacedName, eviction]
	// pacer paces the passes pod events bring (SetupWithManager sets it).
	pacer *passPacer
	// pods reads the governed pods from Cache's pod store, without copying
	// them (a List copies every pod's struct, even with
	// UnsafeDisableDeepCopy).
	pods informerstore.Lazy[*corev1.Pod]
	// writer writes pods in the background (SetupWithManager sets it).
	writer *podWriter
}

// statusHold says how long to hold the status write of this pass back: while
// pod writes of the policy are in flight, so that a status never runs ahead
// of the pods it describes. The last write to land wakes the policy; the
// returned requeue is only a backstop.
func (r *Reconciler) statusHold(key types.NamespacedName) time.Duration {
	if r.writer.inFlight(key) == 0 {
		return 0
	}
	return time.Second
}

// SetupWithManager registers r and its watches.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	r.writer = newPodWriter()
	r.pacer = newPassPacer(r.PodPassInterval, time.Now) // real time: it paces CPU, not decisions
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { return r.writer.Start(ctx, r) })); err != nil {
		return fmt.Errorf("adding the burst pod writer: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("burstpolicy").
		For(&schedulingv1alpha1.BurstPolicy{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Pod{}, pacedPolicies{toPolicies: r.podToPolicies, p: r.pacer}, builder.WithPredicates(podChanged())).
		WatchesRawSource(source.Channel(r.writer.wake, &handler.EnqueueRequestForObject{})).
		Watches(&schedulingv1alpha1.ClusterBurstPolicy{}, handler.EnqueueRequestsFromMapFunc(r.allPolicies)).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(workers, 1)}).
		Complete(r); err != nil {
		return fmt.Errorf("building the burstpolicy controller: %w", err)
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

// scope carries what one reconcile pass learns.
type scope struct {
	// policy is the object being reconciled; before is it as read.
	policy, before *schedulingv1alpha1.BurstPolicy
	// target is set once the governed pods are resolved.
	target resolvedTarget
	// targetErr says why the governed pods could not be resolved.
	targetErr *targetError
	// table is the switch table the policy follows.
	table schedulingv1alpha1.LegacySwitchTable
	// sw is the switch table's outcome.
	sw decide.Switch
	// plan is set once the pods were planned.
	plan *decide.Plan
}

// Reconcile resolves the governed pods, bursts those the plan says, keeps the
// deletion costs, and writes the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res ctrl.Result, retErr error) {
	policy := &schedulingv1alpha1.BurstPolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, policy); err != nil {
		if apierrors.IsNotFound(err) {
			r.pacer.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !policy.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	r.pacer.started(req.NamespacedName)
	s := &scope{policy: policy, before: policy.DeepCopy()}
	defer func() {
		computeStatus(s)
		if wait := r.statusHold(req.NamespacedName); wait > 0 {
			// Pods are being written: the status waits for them (it would
			// run ahead of the pods otherwise, and each status write is an
			// API write that the pod writes would wait behind).
			if res.RequeueAfter == 0 || wait < res.RequeueAfter {
				res.RequeueAfter = wait
			}
			return
		}
		pres, err := status.Patch(ctx, r.Client, s.before, s.policy)
		if err != nil {
			retErr = errors.Join(retErr, err)
		}
		if pres.RequeueAfter > 0 && (res.RequeueAfter == 0 || pres.RequeueAfter < res.RequeueAfter) {
			res.RequeueAfter = pres.RequeueAfter
		}
	}()

	// Writes of an earlier pass that failed: reported (and backed off) now.
	if err := r.writer.takeErrors(req.NamespacedName); err != nil {
		defer func() { retErr = errors.Join(retErr, err) }()
	}

	defaults, err := r.clusterDefaults(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.table = policyTable(policy, &defaults.Spec, r.LegacySwitchTable)
	s.sw = decide.DecideSwitch(s.table, defaults.Spec.Enabled, policy.Spec.Enabled)

	target, terr := r.resolveTarget(ctx, policy)
	if terr != nil {
		if terr.transient != nil {
			return ctrl.Result{}, terr.transient
		}
		s.targetErr = terr
		return ctrl.Result{}, nil
	}
	s.target = target

	// The pods are the cache's own objects (no copy: a pass runs for every
	// burst of pod events and would copy every governed pod each time); they
	// are read only, and every write starts from a deep copy.
	pods, err := r.governedPods(ctx, policy.Namespace, target)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.freshPods().resolve(pods)
	restr := decide.Restrictions{ExcludedNamespaces: defaults.Spec.ExcludedNamespaces, AllowFixedIP: defaults.Spec.AllowFixedIP}
	if defaults.Spec.ExcludedNamespaces == nil {
		restr.ExcludedNamespaces = decide.DefaultExcludedNamespaces
	}
	states, live, virtualNodes, err := r.podStates(ctx, policy, pods, restr)
	if err != nil {
		return ctrl.Result{}, err
	}

	params := decide.Params{
		Burst:         s.sw.Burst,
		LocalReplicas: policy.Spec.LocalReplicas,
		MaxBurst:      -1,
		Trigger:       policy.Spec.Trigger,
		FloorHandoff:  r.FloorHandoff,
	}
	if translator.IsTranslated(policy) && !s.sw.LocalReplicasEffective {
		// Legacy table: with neither switch set, LOCAL_REPLICAS is ignored and
		// only the "local resources are insufficient" rule applies.
		params.LocalReplicas = 0
		params.Trigger = schedulingv1alpha1.TriggerUnschedulable
	}
	if policy.Spec.MaxBurstReplicas != nil {
		params.MaxBurst = *policy.Spec.MaxBurstReplicas
	}
	if policy.Spec.BurstAfter != nil {
		params.BurstAfter = policy.Spec.BurstAfter.Duration
	}
	plan := decide.Decide(params, states, r.now())
	s.plan = &plan

	if err := r.applyPlan(ctx, policy, live, virtualNodes, plan, !s.sw.Burst); err != nil {
		return ctrl.Result{}, err
	}
	after := plan.RequeueAfter
	rbAfter, err := r.rebalance(ctx, policy, params.LocalReplicas, pods, states, live)
	if err != nil {
		return ctrl.Result{}, err
	}
	if rbAfter > 0 && (after == 0 || rbAfter < after) {
		after = rbAfter
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// governedPods lists the pods of a resolved target from the cache.
func (r *Reconciler) governedPods(ctx context.Context, namespace string, target resolvedTarget) ([]*corev1.Pod, error) {
	if target.podName != "" {
		pod := &corev1.Pod{}
		switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: target.podName}, pod); {
		case err == nil:
			return []*corev1.Pod{pod}, nil
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("getting pod %s: %w", target.podName, err)
		}
		return nil, nil
	}
	store, err := r.pods.Get(ctx, r.Cache, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	if pods, ok := store.List(namespace, target.selector); ok {
		return pods, nil // the cache's own objects: read only
	}
	list := &corev1.PodList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: target.selector}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	return pods, nil
}

// clusterDefaults returns the ClusterBurstPolicy "default", or an empty one
// when there is none.
func (r *Reconciler) clusterDefaults(ctx context.Context) (*schedulingv1alpha1.ClusterBurstPolicy, error) {
	d := &schedulingv1alpha1.ClusterBurstPolicy{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: schedulingv1alpha1.DefaultClusterBurstPolicyName}, d)
	switch {
	case apierrors.IsNotFound(err):
		return &schedulingv1alpha1.ClusterBurstPolicy{}, nil
	case err != nil:
		return nil, fmt.Errorf("getting ClusterBurstPolicy %s: %w", schedulingv1alpha1.DefaultClusterBurstPolicyName, err)
	}
	return d, nil
}

// podToPolicies maps a pod to the policies of its namespace that may govern it.
func (r *Reconciler) podToPolicies(ctx context.Context, obj client.Object) []reconcile.Request {
	if r.freshPods().isEcho(obj.GetUID(), obj.GetResourceVersion()) {
		return nil // our own write landing: the pass that wrote it planned with it
	}
	policies, err := policiesFor(ctx, r.Client, obj, true)
	if err != nil {
		log.FromContext(ctx).Error(err, "Listing BurstPolicies for a pod failed", "pod", client.ObjectKeyFromObject(obj))
		return nil
	}
	out := make([]reconcile.Request, 0, len(policies))
	for _, p := range policies {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(p)})
	}
	return out
}

// policiesFor lists the policies of the pod's namespace that govern it:
// those whose selector matches, and, with unknown, those whose selector is
// not known yet (target not resolved). Policies being deleted are included;
// the callers decide what deletion means to them.
func policiesFor(ctx context.Context, c client.Reader, pod metav1.Object, unknown bool) ([]*schedulingv1alpha1.BurstPolicy, error) {
	list := &schedulingv1alpha1.BurstPolicyList{}
	if err := c.List(ctx, list, client.InNamespace(pod.GetNamespace())); err != nil {
		return nil, fmt.Errorf("listing BurstPolicies: %w", err)
	}
	var out []*schedulingv1alpha1.BurstPolicy
	for i := range list.Items {
		p := &list.Items[i]
		if m, known := policyPods(p); known && m.matches(pod) || !known && unknown {
			out = append(out, p)
		}
	}
	return out, nil
}

// allPolicies enqueues every policy (the cluster default changed).
func (r *Reconciler) allPolicies(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &schedulingv1alpha1.BurstPolicyList{}
	if err := r.Client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "Listing BurstPolicies failed")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// podChanged passes pod events that can change a plan: creation, deletion,
// binding, scheduling conditions, labels, annotations and termination.
func podChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Pod)
			n, ok2 := e.ObjectNew.(*corev1.Pod)
			if !ok1 || !ok2 {
				return true
			}
			return o.Spec.NodeName != n.Spec.NodeName ||
				o.Status.Phase != n.Status.Phase ||
				!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
				!labels.Equals(o.Labels, n.Labels) ||
				!labels.Equals(o.Annotations, n.Annotations) ||
				unschedulableSince(o) != unschedulableSince(n) ||
				len(o.Spec.Tolerations) != len(n.Spec.Tolerations)
		},
	}
}
