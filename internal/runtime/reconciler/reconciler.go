// Package reconciler is the one reconciler of edgeplane's cloud-backed kinds
// (AnycastIPBinding, PodElasticIP). It keeps crossplane-runtime's contract —
// a kind implements managed.TypedExternalConnector and
// managed.TypedExternalClient (Connect, Observe, Create, Update, Delete,
// Disconnect); the external name and the external-create
// pending/succeeded/failed annotations, management policies, provider
// config usages, crossplane's Synced condition and event reasons keep their
// meaning — and drives it with the loop every other edgeplane controller
// uses:
//
//	scope    read the object (read-your-writes: never older than this
//	         process's own last write), connect, track the usage
//	observe  the kind's Observe: reads only, records what it found on the
//	         object (status, annotations)
//	decide   Next, a pure function of the pass's Facts
//	act      persist what Observe recorded, then Create, Update or Delete,
//	         then the kind's Kubernetes-side effects (ClusterSyncer)
//	status   one status write at the end of the pass, only when it changed
//	         (and not at all while the kind defers transitional progress)
//
// The kind owns its Ready condition; the reconciler owns Synced (did the
// last pass succeed, and if not, why), as in crossplane. docs/architecture.md
// section 4 says why edgeplane owns this loop instead of using crossplane's
// managed reconciler.
package reconciler

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/edgeplane/edgeplane/internal/runtime/expect"
	"github.com/edgeplane/edgeplane/internal/status"
)

// Object is a cloud-backed kind: a crossplane managed resource with a typed
// provider config reference and status.observedGeneration.
type Object interface {
	resource.ModernManaged
	resource.ReconciliationObserver
}

// ClusterSyncer is implemented by an external client whose kind keeps
// objects in the cluster in step with the cloud (a node's taint and
// annotations, a pod's labels and readiness condition). SyncCluster runs
// once per pass after the cloud step — whether or not the step failed — on
// every pass whose Observe succeeded, including the last pass of a
// deletion before the finalizer goes; what it writes is the kind's to
// decide from what the pass found. An error fails the pass (Synced=False)
// unless the step already did.
type ClusterSyncer[T Object] interface {
	SyncCluster(ctx context.Context, obj T) error
}

// Poller is implemented by an external client that chose during the pass
// when an object in sync should be looked at again (a running cloud task,
// a blocked object), or when a deletion step that waits for a cloud task
// should be taken again (instead of the work queue's backoff).
type Poller interface {
	// PollAfter returns the chosen interval, false when the reconciler's
	// default applies.
	PollAfter() (time.Duration, bool)
}

// UsageTracker records that an object uses its provider config
// (crossplane's ProviderConfigUsageTracker).
type UsageTracker interface {
	Track(ctx context.Context, mg resource.ModernManaged) error
}

// UsageReleaser is implemented by a UsageTracker whose usages are held
// until their object has let go of its cloud object (internal/cloud/pcusage):
// Release lets the object's usage go once its finalizer is gone.
type UsageReleaser interface {
	Release(ctx context.Context, mg metav1.Object) error
}

// DeferStatus reports whether a pass may leave its status (next's) unwritten
// while the stored status is written's, which this process wrote age ago:
// the kind's rule for transitional progress that the next pass will carry
// on anyway. The deferred status is laid over the object the next pass
// reads, as long as the stored status is still the one written.
type DeferStatus[T Object] func(written, next T, age time.Duration) bool

// Options configure a Reconciler. Name, New, Client, Reader and Connector
// are required.
type Options[T Object] struct {
	// Name names the controller in logs.
	Name string
	// New returns an empty object of the kind.
	New func() T
	// Client reads through the manager's cache and writes.
	Client client.Client
	// Reader reads the API server directly (the check before a create, a
	// status write that lost a race).
	Reader client.Reader
	// Connector connects an object to its cloud account.
	Connector managed.TypedExternalConnector[T]
	// Finalizer holds an object until its cloud object is gone.
	Finalizer string
	// Usage records provider config usages (nil: none).
	Usage UsageTracker
	// UsageTTL is how long a usage this process recorded is trusted before
	// it is looked at again (default 30s).
	UsageTTL time.Duration
	// Recorder records Events on the object (nil: none).
	Recorder events.EventRecorder
	// NormalEvents records crossplane's Normal Events
	// (CreatedExternalResource, UpdatedExternalResource, ...) besides its
	// Warnings. A kind whose own conditions and Events say more can spare
	// them: each is one more API write.
	NormalEvents bool
	// PollInterval is how often an object in sync is observed again
	// (default 1 minute); an external client that is a Poller may choose
	// another interval per pass.
	PollInterval time.Duration
	// CreationGracePeriod: after a successful create, a cloud object that is
	// not found yet is waited for this long instead of created again.
	CreationGracePeriod time.Duration
	// Timeout bounds a pass's calls to the external client (default 1
	// minute).
	Timeout time.Duration
	// ProgressPriority is the work-queue priority of the pass that follows
	// a create or delete step, or a poll sooner than PollInterval (a step
	// in flight), so that an object's next step is not queued behind every
	// object still waiting for its first (0: the default priority).
	ProgressPriority int
	// PrefetchCreate, when set and true for an object, starts the read that
	// guards a create once the pass has connected, so it runs while the
	// pass observes instead of after. A pass that cannot connect (a
	// missing provider config) makes no such read: it retries on the work
	// queue's backoff, and a read per retry would only load the API server
	// and this process.
	PrefetchCreate func(T) bool
	// DeferStatus, when set, lets the kind leave transitional progress
	// unwritten (see DeferStatus).
	DeferStatus DeferStatus[T]
	// PollAfterCreate: the pass after a successful create follows the
	// interval the kind chose during it (a Poller), when it chose one,
	// instead of coming at once: the kind knows its cloud object cannot
	// have moved on sooner (an asynchronous allocation task), so the
	// immediate pass would only observe it still being created.
	PollAfterCreate bool
	// SyncBesideCreateRecord runs the kind's cluster sync after a create
	// beside the write that records the created cloud object (its
	// external name) instead of after it: one API round trip less in
	// every create pass, which holds a worker and delays the objects
	// after it. For a kind whose SyncCluster only reads the object (it is
	// given a copy) and whose cluster-side marks follow what the cloud
	// holds, right whether or not the record lands: the kind finds its
	// cloud object again by its ownership tags.
	SyncBesideCreateRecord bool
	// Clock is the reconciler's time (default: the real clock).
	Clock clock.PassiveClock
}

// Reconciler drives one cloud-backed kind. Use New.
type Reconciler[T Object] struct {
	o Options[T]
	// writes remembers, per object, the newest copy this process wrote or
	// read and the status it last wrote (read-your-writes, deferred
	// status).
	writes *expect.Writes[types.NamespacedName, *memo[T]]
	// mu serialises the read-modify-write of one memo.
	mu sync.Mutex
	// usages remembers the usages recorded recently, by object UID and
	// provider config.
	usages *expect.Writes[string, struct{}]
	// own remembers the version changes of this process's metadata
	// writes, whose watch events OwnWrites drops.
	own *expect.Writes[types.NamespacedName, struct{}]
}

// memo is what the reconciler remembers about one object.
type memo[T Object] struct {
	// obj is the newest copy this process wrote or read.
	obj T
	// written is the status (JSON) this process last wrote, or that it saw
	// stored when it first wrote the object's metadata; "" unknown.
	written string
	// writtenAt is when written was written (or seen).
	writtenAt time.Time
	// unwritten is the status of the last pass whose status write was
	// deferred (nil: none).
	unwritten T
	deferred  bool
}

// memoTTL bounds how long a memo outlives its last use; maxMemos how many
// are kept (the oldest go first). A forgotten memo costs one write.
const (
	memoTTL  = 10 * time.Minute
	maxMemos = 20000
)

// New returns a Reconciler with o.
func New[T Object](o Options[T]) *Reconciler[T] {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.UsageTTL <= 0 {
		o.UsageTTL = 30 * time.Second
	}
	return &Reconciler[T]{
		o: o,
		// Memos expire on wall time: their TTL bounds memory, it decides
		// nothing (a deferral's age is measured on o.Clock).
		writes: expect.New[types.NamespacedName, *memo[T]](memoTTL, maxMemos, clock.RealClock{}),
		usages: expect.New[string, struct{}](o.UsageTTL, maxMemos, o.Clock),
		own:    expect.New[types.NamespacedName, struct{}](memoTTL, maxMemos, clock.RealClock{}),
	}
}

// Event reasons and Synced messages, crossplane's.
const (
	reasonCannotConnect     = "CannotConnectToProvider"
	reasonCannotObserve     = "CannotObserveExternalResource"
	reasonCannotCreate      = "CannotCreateExternalResource"
	reasonCannotUpdate      = "CannotUpdateExternalResource"
	reasonCannotDelete      = "CannotDeleteExternalResource"
	reasonCannotUpdateMR    = "CannotUpdateManagedResource"
	reasonPolicyInvalid     = "CannotUseInvalidManagementPolicy"
	reasonPaused            = "ReconciliationPaused"
	reasonCreated           = "CreatedExternalResource"
	reasonUpdated           = "UpdatedExternalResource"
	reasonDeleted           = "DeletedExternalResource"
	reasonPending           = "PendingExternalResource"
	reasonCannotSyncCluster = "CannotSyncClusterObjects"

	errConnect  = "connect failed"
	errObserve  = "observe failed"
	errCreate   = "create failed"
	errUpdate   = "update failed"
	errDelete   = "delete failed"
	errNotExist = "external resource does not exist"
)

// Reconcile is one pass over the object named by req.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, r.o.Timeout+30*time.Second)
	defer cancel()
	p, err := r.scope(ctx, req.NamespacedName)
	if err != nil || p == nil {
		return reconcile.Result{}, err
	}
	res := p.run(ctx)
	return p.finish(ctx, res)
}

// pass is one reconcile of one object.
type pass[T Object] struct {
	r   *Reconciler[T]
	key types.NamespacedName
	obj T
	// storedStatus is the status (JSON) the API server holds, as far as
	// the pass knows; storedVersion the resourceVersion of that copy.
	storedStatus  string
	storedVersion string
	// current: the pass has proven its copy is the stored version (a write
	// with an optimistic lock succeeded).
	current bool
	// prefetch is the read of the stored object started once the pass
	// connected (PrefetchCreate).
	prefetch *liveRead[T]
	// usage delivers the result of recording the provider config usage.
	usage <-chan error
	// skipStatus: the object is gone or released; write no status.
	skipStatus bool
	log        logr.Logger
}

// run carries the pass from connect to the cloud step and returns the
// requeue it wants.
func (p *pass[T]) run(ctx context.Context) reconcile.Result {
	r, obj := p.r, p.obj
	policy := managed.NewManagementPoliciesResolver(true, obj.GetManagementPolicies())
	if meta.IsPaused(obj) || policy.IsPaused() {
		p.event("Normal", reasonPaused, "Reconciliation is paused either through the `spec.managementPolicies` or the pause annotation")
		p.synced(xpv2.ReconcilePaused())
		return reconcile.Result{}
	}
	if err := policy.Validate(); err != nil {
		p.event("Warning", reasonPolicyInvalid, err.Error())
		p.synced(xpv2.ReconcileError(err))
		return reconcile.Result{}
	}
	deleting := meta.WasDeleted(obj)
	if deleting && !policy.ShouldDelete() {
		// The cloud object outlives the object: let go without touching it.
		return p.release(ctx)
	}

	extCtx, cancel := context.WithTimeout(ctx, r.o.Timeout)
	defer cancel()
	ext, err := r.o.Connector.Connect(extCtx, obj)
	if err != nil {
		return p.fail(reasonCannotConnect, errConnect, err)
	}
	p.startPrefetch(ctx)
	defer func() {
		if err := ext.Disconnect(ctx); err != nil {
			p.log.V(1).Info("Cannot disconnect from provider", "error", err.Error())
		}
	}()
	p.trackUsage(ctx)
	annotations := maps.Clone(obj.GetAnnotations())
	obs, err := ext.Observe(extCtx, obj)
	if err != nil {
		return p.fail(reasonCannotObserve, errObserve, err)
	}
	status.ObserveManagedGeneration(obj)
	if err := p.waitUsage(ctx); err != nil && !(deleting && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)) {
		// A deleting object in a namespace being deleted cannot record a
		// usage it never had (nothing new is created there); it still
		// lets go of its cloud object.
		return p.fail(reasonCannotConnect, errConnect, fmt.Errorf("cannot track provider config usage: %w", err))
	}
	if !deleting {
		// Held from the first pass that reached the cloud on (as
		// crossplane does), so that a deletion passes through the kind:
		// its cluster side is cleaned even when it never got a cloud
		// object.
		if err := p.ensureFinalizer(ctx); err != nil {
			return p.fail(reasonCannotUpdateMR, "cannot add finalizer", err)
		}
	}

	f := Facts{
		Deleting:        deleting,
		OtherFinalizers: len(obj.GetFinalizers()) > 1,
		Create:          policy.ShouldCreate(),
		Update:          policy.ShouldUpdate(),
		Delete:          policy.ShouldDelete(),
		ObserveOnly:     policy.ShouldOnlyObserve(),
		Exists:          obs.ResourceExists,
		UpToDate:        obs.ResourceUpToDate,
		CreatedRecently: r.o.CreationGracePeriod > 0 && meta.ExternalCreateSucceededDuring(obj, r.o.CreationGracePeriod),
	}
	step := Next(f)
	p.log = p.log.WithValues("step", step.String())
	if obs.Diff != "" {
		p.log.V(1).Info("External resource differs from desired state", "diff", obs.Diff)
	}

	// polled: an object in sync (or only observed) is looked at again
	// after the poll interval, which the kind may choose during the pass
	// (including its cluster sync); other steps requeue at once or back off.
	var (
		res     reconcile.Result
		polled  bool
		stepErr error
	)
	switch step {
	case Missing:
		p.event("Warning", reasonCannotObserve, errNotExist)
		p.synced(xpv2.ReconcileError(fmt.Errorf("%s: %s", errObserve, errNotExist)))
		polled = true
	case WaitForVisibility:
		p.event("Normal", reasonPending, "Waiting for external resource existence to be confirmed")
		return requeue(0)
	case WaitForFinalizers:
		return requeue(0)
	case Release:
		if err := p.syncCluster(ctx, ext); err != nil {
			return p.fail(reasonCannotSyncCluster, "cannot sync cluster objects", err)
		}
		return p.release(ctx)
	case Create:
		return p.create(ctx, extCtx, ext, annotations)
	case Delete:
		if _, stepErr = ext.Delete(extCtx, obj); stepErr != nil {
			res = p.fail(reasonCannotDelete, errDelete, stepErr)
		} else {
			p.event("Normal", reasonDeleted, "Successfully requested deletion of external resource")
			p.synced(xpv2.ReconcileSuccess())
			res = requeue(r.o.ProgressPriority)
			if d, ok := p.chosenPoll(ext); ok {
				// The deletion waits for a cloud task: look again when
				// it should have ended, not after a growing backoff.
				res = progressAfter(d, r.o.ProgressPriority)
			}
		}
	case Update:
		if _, stepErr = ext.Update(extCtx, obj); stepErr != nil {
			res = p.fail(reasonCannotUpdate, errUpdate, stepErr)
		} else {
			p.event("Normal", reasonUpdated, "Successfully requested update of external resource")
			p.synced(xpv2.ReconcileSuccess())
			polled = true
		}
	default: // InSync
		p.synced(xpv2.ReconcileSuccess())
		polled = true
	}
	if err := p.persistAnnotations(ctx, annotations, false); err != nil {
		return p.fail(reasonCannotUpdateMR, "cannot record annotations", err)
	}
	if err := p.syncCluster(ctx, ext); err != nil && stepErr == nil {
		return p.fail(reasonCannotSyncCluster, "cannot sync cluster objects", err)
	}
	if polled {
		d := p.poll(ext)
		res = reconcile.Result{RequeueAfter: d}
		if d < r.o.PollInterval && r.o.ProgressPriority != 0 {
			// A poll sooner than the default follows a step in flight (a
			// cloud task): its next step goes before objects still
			// waiting for their first.
			res.Priority = ptr.To(r.o.ProgressPriority)
		}
	}
	return res
}

// create guards, makes and records the cloud object. The finalizer is
// already stored (run), so a deletion that comes after the create always
// finds it; the object must be the stored version, so a copy older than one of
// this process's own writes never creates a second cloud object.
func (p *pass[T]) create(ctx, extCtx context.Context, ext managed.TypedExternalClient[T], annotations map[string]string) reconcile.Result {
	r, obj := p.r, p.obj
	if err := p.guardCreate(ctx); err != nil {
		return p.fail(reasonCannotUpdateMR, "cannot read the object before creating", err)
	}
	started := r.o.Clock.Now()
	_, err := ext.Create(extCtx, obj)
	if err != nil {
		meta.SetExternalCreateFailed(obj, r.o.Clock.Now())
		if perr := p.persistAnnotations(ctx, annotations, true); perr != nil {
			p.log.Info("Cannot record the failed create", "error", perr.Error())
		}
		_ = p.syncCluster(ctx, ext)
		return p.fail(reasonCannotCreate, errCreate, err)
	}
	meta.SetExternalCreatePending(obj, started)
	meta.SetExternalCreateSucceeded(obj, r.o.Clock.Now())
	var (
		syncErr  error
		syncDone chan struct{}
	)
	if r.o.SyncBesideCreateRecord {
		snapshot := copyOf(obj)
		syncDone = make(chan struct{})
		go func() {
			defer close(syncDone)
			syncErr = p.syncClusterOf(ctx, ext, snapshot)
		}()
	}
	recordErr := p.persistAnnotations(ctx, annotations, true)
	if syncDone != nil {
		<-syncDone
	}
	if recordErr != nil {
		return p.fail(reasonCannotUpdateMR, "cannot record the created external resource", recordErr)
	}
	p.event("Normal", reasonCreated, "Successfully requested creation of external resource")
	p.synced(xpv2.ReconcileSuccess())
	if syncDone == nil {
		syncErr = p.syncCluster(ctx, ext)
	}
	if syncErr != nil {
		return p.fail(reasonCannotSyncCluster, "cannot sync cluster objects", syncErr)
	}
	if d, ok := p.chosenPoll(ext); ok && r.o.PollAfterCreate {
		return progressAfter(d, r.o.ProgressPriority)
	}
	return requeue(r.o.ProgressPriority)
}

// progressAfter asks for the pass after d at priority (a step in flight).
func progressAfter(d time.Duration, priority int) reconcile.Result {
	res := reconcile.Result{RequeueAfter: d}
	if priority != 0 {
		res.Priority = ptr.To(priority)
	}
	return res
}

// syncCluster runs the kind's Kubernetes-side effects, if it has any.
func (p *pass[T]) syncCluster(ctx context.Context, ext managed.TypedExternalClient[T]) error {
	return p.syncClusterOf(ctx, ext, p.obj)
}

// syncClusterOf runs the kind's Kubernetes-side effects for obj (the
// pass's object or a copy of it).
func (p *pass[T]) syncClusterOf(ctx context.Context, ext managed.TypedExternalClient[T], obj T) error {
	if s, ok := ext.(ClusterSyncer[T]); ok {
		return s.SyncCluster(ctx, obj)
	}
	return nil
}

// poll is the requeue of an object in sync.
func (p *pass[T]) poll(ext managed.TypedExternalClient[T]) time.Duration {
	if d, ok := p.chosenPoll(ext); ok {
		return d
	}
	return p.r.o.PollInterval
}

// chosenPoll is the interval the external client chose in the pass, if
// it is a Poller and chose one.
func (p *pass[T]) chosenPoll(ext managed.TypedExternalClient[T]) (time.Duration, bool) {
	if pl, ok := ext.(Poller); ok {
		if d, ok := pl.PollAfter(); ok && d > 0 {
			return d, true
		}
	}
	return 0, false
}

// fail records a failed step: a Warning Event with reason, Synced=False
// with the error wrapped in what, and a rate-limited requeue (the work
// queue's per-object backoff). A conflict is not an error: the next pass
// starts from the newer object.
func (p *pass[T]) fail(reason, what string, err error) reconcile.Result {
	if apierrors.IsConflict(err) {
		// The pass started from a copy that is no longer the stored one:
		// nothing it computed is worth writing.
		p.log.V(1).Info("Lost a race with another write; requeueing", "error", err.Error())
		p.skipStatus = true
		return requeue(0)
	}
	p.log.V(1).Info("Pass failed", "reason", reason, "error", err.Error())
	p.event("Warning", reason, err.Error())
	p.synced(xpv2.ReconcileError(fmt.Errorf("%s: %w", what, err)))
	return requeue(0)
}

// requeue asks for a rate-limited requeue at priority.
func requeue(priority int) reconcile.Result {
	res := reconcile.Result{Requeue: true} //nolint:staticcheck // the work queue's per-object backoff, as crossplane's reconciler asks for it
	if priority != 0 {
		res.Priority = ptr.To(priority)
	}
	return res
}

// synced sets the Synced condition for the object's generation.
func (p *pass[T]) synced(c xpv2.Condition) {
	c.ObservedGeneration = p.obj.GetGeneration()
	p.obj.SetConditions(c)
}

// event records an Event on the object: Warnings always, Normal ones when
// the kind asks for them.
func (p *pass[T]) event(typ, reason, note string) {
	if p.r.o.Recorder == nil || (typ == "Normal" && !p.r.o.NormalEvents) {
		return
	}
	p.r.o.Recorder.Eventf(p.obj, nil, typ, reason, "Reconcile", "%s", note)
}
