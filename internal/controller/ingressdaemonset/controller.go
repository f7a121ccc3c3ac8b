// Package ingressdaemonset reconciles IngressDaemonSets: one Deployment per
// matching node with replicasPerNode replicas, a health-checker DaemonSet per
// health-check port (the platform's: in its namespace, with its image and
// ServiceAccount, see HealthChecker), and node-by-node rolling updates that
// detach each node before its pods are replaced.
//
// The decisions are pure and live elsewhere: decide.Compute says what each
// node does next, computeStatus what the status says, and the builders in
// objects.go what each generated object looks like. This file reads the
// world, runs the plan and writes status once.
package ingressdaemonset

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/setup"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/status"
)

// staleCacheRequeue is the fallback pace while the cache catches up with a write.
const staleCacheRequeue = 250 * time.Millisecond

// minRequeue is the requeue of a wait that ended while the pass ran.
const minRequeue = time.Millisecond

// Name is the controller's name (for --controllers and the event recorder).
const Name = "ingressdaemonset"

// Options are the controller's flags.
type Options struct {
	// HealthChecker is the platform's health checker.
	HealthChecker HealthChecker
}

// DefaultOptions are the options without flags: config/'s install.
func DefaultOptions() Options { return Options{HealthChecker: DefaultHealthChecker()} }

// BindFlags registers the options' flags.
func (o *Options) BindFlags(fs *flag.FlagSet) { o.HealthChecker.BindFlags(fs) }

// Setup returns the setup.Func that registers the reconciler with o.
func (o Options) Setup() setup.Func {
	return func(_ context.Context, mgr ctrl.Manager, cfg setup.Config) error {
		hc := o.HealthChecker.withDefaults()
		checkers, err := newCheckerCache(mgr, hc.Namespace)
		if err != nil {
			return err
		}
		r := &Reconciler{
			Client:        mgr.GetClient(),
			APIReader:     mgr.GetAPIReader(),
			Recorder:      mgr.GetEventRecorder(Name),
			HealthChecker: hc,
			DaemonSets:    checkers,
			Namespace:     cfg.WatchNamespace,
		}
		return r.SetupWithManager(mgr, checkers)
	}
}

// Setup registers the reconciler with DefaultOptions.
func Setup(ctx context.Context, mgr ctrl.Manager, cfg setup.Config) error {
	return DefaultOptions().Setup()(ctx, mgr, cfg)
}

// Reconciler reconciles IngressDaemonSets.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// HealthChecker is the platform's health checker (empty fields take
	// DefaultHealthChecker's).
	HealthChecker HealthChecker
	// DaemonSets reads the health-checker DaemonSets in the platform's
	// namespace (a cache of those alone); nil means Client.
	DaemonSets client.Reader
	// Namespace restricts the IngressDaemonSets reconciled; empty means all.
	Namespace string
	// Clock is the time of rollout decisions and expectations (tests set
	// it); nil means the real clock.
	Clock clock.PassiveClock

	// APIReader reads objects uncached (with their managedFields); nil
	// means Client.
	APIReader client.Reader

	// expect holds this process's writes the cache may not show yet (see
	// expectations).
	expect expect.Lazy[types.NamespacedName, expectation]
	// statuses holds the IngressDaemonSets as this process's last status
	// write left them, until the cache shows that write (see freshest).
	statuses expect.Lazy[types.NamespacedName, *appsv1alpha1.IngressDaemonSet]
	// untouched holds per Deployment what its status still describes after
	// this process's own writes that left its pods alone (see settled).
	untouched expect.Lazy[types.NamespacedName, untouchedPods]
	// adopted holds the UIDs of the objects whose earlier writes this
	// process has handed to FieldManager.
	adopted sync.Map
	// synced holds the Deployments found in sync (see inSync).
	synced inSync
	// legacyChecked holds the UIDs of the IngressDaemonSets whose earlier
	// version's health checkers are known gone (see removeLegacyCheckers).
	legacyChecked sync.Map
}

// Why each grant (cluster-wide, because IngressDaemonSets live in any namespace):
// IngressDaemonSets: read and watch, finalizer patches, status writes.
// +kubebuilder:rbac:groups=apps.edgeplane.io,resources=ingressdaemonsets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps.edgeplane.io,resources=ingressdaemonsets/status,verbs=get;update;patch
// Owner references with blockOwnerDeletion on the Deployments it creates.
// +kubebuilder:rbac:groups=apps.edgeplane.io,resources=ingressdaemonsets/finalizers,verbs=update
// One Deployment per node, in the IngressDaemonSet's namespace, of the
// template its author wrote: created and rolled by server-side apply
// (patch; patch also hands the fields an earlier version wrote by update to
// the apply field manager), removed (delete) by the controller.
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// The health-checker DaemonSets, in the platform's namespace only (the
// chart renames this namespace to the release's): server-side applied,
// deleted when their port or IngressDaemonSet goes.
// +kubebuilder:rbac:groups=apps,namespace=edgeplane-system,resources=daemonsets,verbs=get;list;watch;create;patch;delete
// Health-checker DaemonSets earlier versions created in the
// IngressDaemonSet's namespace: listed (uncached, once per IngressDaemonSet
// and process) and deleted. Never created or changed there.
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=list;delete
// Nodes: read for the node set; detach annotations are patched on and off.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler: IngressDaemonSets, the
// Deployments they own, the health-checker DaemonSets in checkers (the
// platform namespace's cache), and nodes (a node that joins, leaves, or
// changes labels or annotations brings a pass for every IngressDaemonSet at
// once).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, checkers cache.Cache) error {
	nodeChanged := predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld, e.ObjectNew
			return !maps.Equal(o.GetLabels(), n.GetLabels()) || !maps.Equal(o.GetAnnotations(), n.GetAnnotations()) ||
				(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(Name).
		// Not on status changes: every pass writes status, and a pass per
		// write would double the work during a rollout.
		For(&appsv1alpha1.IngressDaemonSet{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{},
			predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) ||
					len(e.ObjectNew.GetFinalizers()) != len(e.ObjectOld.GetFinalizers())
			}},
		))).
		// Owned Deployments, at once or within statusOnlyDelay (see
		// classifyDeploymentUpdate).
		Watches(&appsv1.Deployment{}, deploymentEvents{}).
		// A health checker names its IngressDaemonSet by annotation: an owner
		// reference cannot cross namespaces.
		WatchesRawSource(source.Kind(checkers, &appsv1.DaemonSet{}, handler.TypedEnqueueRequestsFromMapFunc(checkerRequests))).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allIngressDaemonSets), builder.WithPredicates(nodeChanged)).
		Complete(r)
}

func (r *Reconciler) allIngressDaemonSets(ctx context.Context, _ client.Object) []reconcile.Request {
	var list appsv1alpha1.IngressDaemonSetList
	var opts []client.ListOption
	if r.Namespace != "" {
		opts = append(opts, client.InNamespace(r.Namespace))
	}
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing IngressDaemonSets for a node event")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, ids := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ids.Namespace, Name: ids.Name}})
	}
	return reqs
}

func (r *Reconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

// Reconcile runs one pass for one IngressDaemonSet.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if r.Namespace != "" && req.Namespace != r.Namespace {
		return ctrl.Result{}, nil
	}
	ids := &appsv1alpha1.IngressDaemonSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ids); err != nil {
		if apierrors.IsNotFound(err) {
			// Gone without its finalizer having run (removed by hand):
			// its health checkers are left to delete.
			return ctrl.Result{}, r.deleteCheckers(ctx, req.Namespace, req.Name, nil)
		}
		return ctrl.Result{}, err
	}
	ids = r.freshest(ids)
	if !ids.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.reconcileDelete(ctx, ids)
	}
	if !controllerutil.ContainsFinalizer(ids, appsv1alpha1.Finalizer) {
		patch := client.MergeFrom(ids.DeepCopy())
		controllerutil.AddFinalizer(ids, appsv1alpha1.Finalizer)
		if err := r.Client.Patch(ctx, ids, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	before := ids.DeepCopy()
	status.MarkUnknownIfMissing(ids, appsv1alpha1.ReasonReconciling, "first reconcile in progress",
		appsv1alpha1.TypeReady, appsv1alpha1.TypeProgressing, appsv1alpha1.TypeDegraded)

	if ok, err := SelectorMatchesTemplate(ids); !ok {
		msg := "spec.selector does not select the template's labels; nothing is created"
		if err != nil {
			msg = err.Error()
		}
		status.SetStalled(ids, appsv1alpha1.ReasonSelectorMismatch, msg)
		status.ObserveGeneration(ids)
		return status.Patch(ctx, r.Client, before, ids)
	}

	s, err := r.observe(ctx, ids)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.stale {
		// The cache does not show this controller's last writes yet; the
		// watch event that brings them also brings the next pass.
		return ctrl.Result{RequeueAfter: staleCacheRequeue}, nil
	}
	result, runErr := r.reconcileNodes(ctx, s)
	hcErr := r.reconcileHealthCheck(ctx, s, before)
	if hcErr != nil {
		s.problem(appsv1alpha1.ReasonApplyFailed, "health checker: "+hcErr.Error())
	}
	computeStatus(ids, s.observation())
	if runErr == nil && hcErr == nil {
		status.ObserveGeneration(ids)
	}
	res, err := status.Patch(ctx, r.Client, before, ids)
	if err == nil && ids.ResourceVersion != before.ResourceVersion {
		r.statusWrites().Record(req.NamespacedName, ids.DeepCopy(), ids.ResourceVersion, before.ResourceVersion)
	}
	if err := errors.Join(runErr, hcErr, err); err != nil {
		return ctrl.Result{}, err
	}
	if !s.requeueAt.IsZero() {
		// The wait ends at a time, not after a duration from the end of
		// this pass: its writes took time since the plan was made.
		result.RequeueAfter = max(s.requeueAt.Sub(r.now()), minRequeue)
	}
	if res.RequeueAfter > 0 && (result.RequeueAfter == 0 || res.RequeueAfter < result.RequeueAfter) {
		result.RequeueAfter = res.RequeueAfter
	}
	return result, nil
}

// statusTTL bounds how long a status write is remembered: far longer than
// the cache takes to show it.
const statusTTL = time.Minute

func (r *Reconciler) statusWrites() *expect.Writes[types.NamespacedName, *appsv1alpha1.IngressDaemonSet] {
	return r.statuses.Get(statusTTL, maxExpectations, r.Clock)
}

// freshest returns the IngressDaemonSet as this process's last status write
// left it when cached is the version that write replaced: a pass that
// starts before the cache shows the previous pass's status write would
// otherwise lose its own status write to the optimistic lock (and wait a
// second for the next try).
func (r *Reconciler) freshest(cached *appsv1alpha1.IngressDaemonSet) *appsv1alpha1.IngressDaemonSet {
	if written, v := r.statusWrites().Observe(client.ObjectKeyFromObject(cached), cached.ResourceVersion); v == expect.Behind {
		return written.DeepCopy()
	}
	return cached
}

// reconcileDelete removes the node annotations a rollout left on nodes and
// the health-checker DaemonSets (in the platform's namespace, which garbage
// collection does not reach from here), then the finalizer; garbage
// collection deletes the Deployments.
func (r *Reconciler) reconcileDelete(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) error {
	if !controllerutil.ContainsFinalizer(ids, appsv1alpha1.Finalizer) {
		return nil
	}
	if err := r.deleteCheckers(ctx, ids.Namespace, ids.Name, nil); err != nil {
		return err
	}
	deps, err := r.ownedDeployments(ctx, ids)
	if err != nil {
		return err
	}
	for _, d := range deps {
		if err := r.removeNodeDetachAnnotations(ctx, d); err != nil {
			return err
		}
	}
	patch := client.MergeFrom(ids.DeepCopy())
	controllerutil.RemoveFinalizer(ids, appsv1alpha1.Finalizer)
	if err := r.Client.Patch(ctx, ids, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing finalizer: %w", err))
	}
	return nil
}

// ownedDeployments lists the Deployments ids controls.
func (r *Reconciler) ownedDeployments(ctx context.Context, ids *appsv1alpha1.IngressDaemonSet) ([]*appsv1.Deployment, error) {
	var list appsv1.DeploymentList
	if err := r.Client.List(ctx, &list, client.InNamespace(ids.Namespace), client.MatchingLabels(ownerLabels(ids))); err != nil {
		return nil, fmt.Errorf("listing Deployments: %w", err)
	}
	var out []*appsv1.Deployment
	for i := range list.Items {
		if isControlledBy(&list.Items[i], ids) {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

func isControlledBy(obj client.Object, ids *appsv1alpha1.IngressDaemonSet) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == ids.UID
}
