package anycastipbinding

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
	"github.com/edgeplane/edgeplane/internal/status"
)

// Annotations edgeplane keeps on a binding (metadata survives the managed
// reconciler's object updates, which status written during Create does not).
const (
	// AnnotationAllocateTask records the AllocateAddresses task
	// ("<attempt>/<task ID>") so Observe can wait for it with
	// DescribeTaskResult.
	AnnotationAllocateTask = "networking.edgeplane.io/allocate-task"
	// AnnotationAttempt counts allocations whose address was lost (task
	// FAILED, or released behind edgeplane's back); it is part of the
	// ClientToken so the next allocation is a new one.
	AnnotationAttempt = "networking.edgeplane.io/allocation-attempt"
	// AnnotationAdopted records how an address edgeplane did not allocate
	// for the binding was adopted (status.adopted mirrors it).
	AnnotationAdopted = "networking.edgeplane.io/adopted"
)

// Node event actions (events.k8s.io requires one).
const (
	actionBind    = "Bind"
	actionRelease = "Release"
	actionTaint   = "Taint"
)

// msgAllocating is the Creating message while an address is allocated.
const msgAllocating = "allocating an address"

// bindingMessage is the Binding message while addressID is associated.
func bindingMessage(addressID, instance string) string {
	return fmt.Sprintf("binding %s to %s", addressID, instance)
}

// external is the ExternalClient of one reconcile of one binding.
type external struct {
	c    *Connector
	acct *account

	// Set by Observe for the other methods.
	node     *corev1.Node
	address  *tencentcloud.Address
	instance string
	// prevReason is the Ready reason before this pass, so node Events are
	// only emitted on a change.
	prevReason string
	// nodeSync is what SyncCluster does to the node; bound is the address
	// bound to its instance (nil: none).
	nodeSync nodeSync
	bound    *tencentcloud.Address
	// poll is the requeue interval the pass chose (0: the default).
	poll time.Duration
}

var (
	_ managed.TypedExternalClient[*networkingv1alpha1.AnycastIPBinding] = (*external)(nil)
	_ reconciler.ClusterSyncer[*networkingv1alpha1.AnycastIPBinding]    = (*external)(nil)
	_ reconciler.Poller                                                 = (*external)(nil)
)

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// Observe reads the node and the address, records what it found in
// status, decides what the node should look like (SyncCluster makes it
// so), and tells the reconciler what to do next: Create (allocate) when no
// address belongs to the binding, Update (associate) when the address is
// UNBIND, nothing while a task runs or when bound. Observe changes
// nothing, in the cloud or in the cluster.
func (e *external) Observe(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalObservation, error) {
	obs, err := e.observe(ctx, b)
	if tencentcloud.IsCredentialsRejected(err) {
		// Say why, also while deleting: the finalizer waits for the
		// account (its calls are held back by the credential gate).
		setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonCredentialsRejected, err.Error())
	}
	return obs, err
}

func (e *external) observe(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalObservation, error) {
	e.prevReason = string(b.GetCondition(xpv2.TypeReady).Reason)
	if err := e.readNode(ctx, b); err != nil {
		return managed.ExternalObservation{}, err
	}
	if meta.WasDeleted(b) {
		return e.observeDeleting(ctx, b)
	}
	if e.node == nil {
		return e.blocked(ctx, b, networkingv1alpha1.AnycastReasonNodeNotFound, fmt.Sprintf("node %s does not exist", b.Spec.NodeName))
	}
	// The instance is the node's spec.providerID, recorded on the first
	// pass and never followed elsewhere afterwards.
	instance, err := decide.BindingInstance(b.Status.InstanceID, e.node)
	switch {
	case errors.Is(err, decide.ErrInstanceChanged):
		return e.blocked(ctx, b, networkingv1alpha1.AnycastReasonInstanceIDChanged, err.Error())
	case err != nil:
		return e.blocked(ctx, b, networkingv1alpha1.AnycastReasonInstanceIDUnknown, err.Error())
	}
	e.instance = instance
	b.Status.InstanceID = instance

	if meta.GetExternalName(b) == "" {
		return e.observeUnknown(ctx, b)
	}
	a, err := e.describe(ctx, meta.GetExternalName(b))
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	if a == nil {
		return e.observeLost(ctx, b)
	}
	return e.observeAddress(ctx, b, *a)
}

// observeUnknown looks for an address of this binding when none is
// recorded: its own (by ownership tags), or one to adopt; otherwise it asks
// for an allocation.
func (e *external) observeUnknown(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalObservation, error) {
	cands, err := e.candidates(ctx, b)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	v := decide.Select(e.decideBinding(b), cands)
	if v.Blocked() {
		return e.blocked(ctx, b, v.Reason, v.Message)
	}
	if v.Address == nil {
		if bl, ok := e.c.blockedAllocation(b); ok {
			return e.blocked(ctx, b, bl.reason, bl.message)
		}
		e.wantNode(nil)
		setReady(b, corev1.ConditionFalse, string(xpv2.ReasonCreating), msgAllocating)
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	// Record the found address (an own one whose ID was lost in a crash,
	// or an adopted one) as the external name; the reconciler persists the
	// annotations Observe changed.
	meta.SetExternalName(b, v.Address.ID)
	if v.Adopted != "" {
		meta.AddAnnotations(b, map[string]string{AnnotationAdopted: v.Adopted})
		log.FromContext(ctx).Info("Adopted address", "address", v.Address.ID, "source", v.Adopted, "node", b.Spec.NodeName)
	}
	return e.observeAddress(ctx, b, *v.Address)
}

// candidates gathers what Select needs. The look-ups run in parallel (each
// joins a batched DescribeAddresses), so a new binding's first pass waits
// for one batch window rather than three.
func (e *external) candidates(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (decide.Candidates, error) {
	var (
		c    decide.Candidates
		wg   sync.WaitGroup
		errs [4]error
	)
	wg.Go(func() {
		c.Owned, errs[0] = e.acct.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{Tags: map[string]string{decide.TagCluster: e.acct.identity, decide.TagOwnerUID: string(b.UID)}})
		if errs[0] != nil {
			errs[0] = fmt.Errorf("looking up addresses owned by the binding: %w", errs[0])
		}
	})
	if b.Spec.AddressID != "" {
		wg.Go(func() { c.Spec, errs[1] = e.describe(ctx, b.Spec.AddressID) })
	}
	wg.Go(func() {
		c.OnInstance, errs[2] = e.acct.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{InstanceID: e.instance,
			Types: []string{"EIP", "AnycastEIP", "HighQualityEIP", "AntiDDoSEIP", "WanIP"}})
		if errs[2] != nil {
			errs[2] = fmt.Errorf("looking up the addresses of instance %s: %w", e.instance, errs[2])
		}
	})
	if e.acct.legacy != "" && b.Spec.AddressID == "" {
		wg.Go(func() {
			c.Legacy, errs[3] = e.acct.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{Tags: map[string]string{
				networkingv1alpha1.LegacyTagClusterUUID: e.acct.legacy, networkingv1alpha1.LegacyTagNodeName: b.Spec.NodeName}})
			if errs[3] != nil {
				errs[3] = fmt.Errorf("looking up aia-ip-controller's addresses of node %s: %w", b.Spec.NodeName, errs[3])
			}
		})
	}
	wg.Wait()
	return c, errors.Join(errs[:]...)
}

func (e *external) decideBinding(b *networkingv1alpha1.AnycastIPBinding) decide.Binding {
	db := decide.Binding{
		UID:          b.UID,
		NodeName:     b.Spec.NodeName,
		InstanceID:   e.instance,
		AddressType:  string(b.Spec.AddressType),
		SpecAddress:  b.Spec.AddressID,
		ExternalName: meta.GetExternalName(b),
		Cluster:      e.acct.identity,
		LegacyUUID:   e.acct.legacy,
	}
	if e.node != nil {
		db.NodeAnnotation = e.node.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPID]
	}
	return db
}

// observeLost handles a recorded address that DescribeAddresses does not
// return: not visible yet (eventual consistency: for 30s after the
// allocation it is allocated again, which the ClientToken makes return the
// same address), its allocation task FAILED, or it was
// released behind edgeplane's back. In the last two cases the next
// allocation uses a new ClientToken.
func (e *external) observeLost(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalObservation, error) {
	lost := meta.GetExternalName(b)
	if attempt, task, ok := allocateTask(b); ok && attempt == attemptOf(b) {
		res, err := e.acct.cloud.TaskResult(ctx, task)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		switch res {
		case tencentcloud.TaskRunning:
			e.pollAfter(e.c.opts.TaskPollInterval)
			setReady(b, corev1.ConditionFalse, string(xpv2.ReasonCreating), fmt.Sprintf("waiting for allocation task %d of %s", task, lost))
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		case tencentcloud.TaskFailed:
			msg := fmt.Sprintf("the allocation task %d of %s FAILED; allocating again", task, lost)
			e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.LegacyReasonFailedAllocate, actionBind, "Failed to allocate Anycast ip (will retry): %s", msg)
			e.forget(b)
			// Report TaskFailed for one short pass before allocating again
			// (Create's Creating condition would hide it at once).
			setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonTaskFailed, msg)
			e.pollAfter(e.c.opts.TaskPollInterval)
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		}
	}
	if meta.ExternalCreateSucceededDuring(b, 30*time.Second) {
		// Maybe not visible yet: allocating again with the same
		// ClientToken returns the same address.
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	log.FromContext(ctx).Info("Recorded address is gone; allocating a new one", "address", lost)
	return e.forget(b), nil
}

// forget clears the recorded address and bumps the allocation attempt, so
// the next Create allocates a new address, at once (the reconciler
// persists the annotations with the pass).
func (e *external) forget(b *networkingv1alpha1.AnycastIPBinding) managed.ExternalObservation {
	anns := maps.Clone(b.GetAnnotations())
	for _, k := range []string{meta.AnnotationKeyExternalName, meta.AnnotationKeyExternalCreatePending, meta.AnnotationKeyExternalCreateSucceeded,
		meta.AnnotationKeyExternalCreateFailed, AnnotationAllocateTask, AnnotationAdopted} {
		delete(anns, k)
	}
	if anns == nil {
		anns = map[string]string{}
	}
	anns[AnnotationAttempt] = strconv.Itoa(attemptOf(b) + 1)
	b.SetAnnotations(anns)
	b.Status.AddressID, b.Status.PublicIP, b.Status.State, b.Status.PendingTask = "", "", "", nil
	return managed.ExternalObservation{ResourceExists: false}
}

// observeAddress records a and decides the next step.
func (e *external) observeAddress(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding, a tencentcloud.Address) (managed.ExternalObservation, error) {
	e.address = &a
	b.Status.AddressID, b.Status.State, b.Status.AddressType = a.ID, a.Status, a.Type
	if a.Status != tencentcloud.StatusCreating {
		// The IP is recorded once the address is allocated, so the passes
		// that wait for the allocation find nothing new to write.
		b.Status.PublicIP = a.IP
	}
	b.Status.Adopted = b.GetAnnotations()[AnnotationAdopted]
	if err := e.checkTask(ctx, b, a); err != nil {
		return managed.ExternalObservation{}, err
	}
	switch decide.BindStep(a, e.instance) {
	case decide.StepNone:
		b.Status.PendingTask = nil
		e.wantNode(&a)
		setReady(b, corev1.ConditionTrue, string(xpv2.ReasonAvailable), "")
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case decide.StepWait:
		e.wantNode(nil)
		if b.GetCondition(xpv2.TypeReady).Reason != networkingv1alpha1.AnycastReasonTaskFailed {
			// The same condition as the step that started the task
			// (Create, Update), so waiting passes write nothing.
			switch a.Status {
			case tencentcloud.StatusCreating:
				// Creating since before the allocation; keep that.
				if b.GetCondition(xpv2.TypeReady).Reason != xpv2.ReasonCreating {
					setReady(b, corev1.ConditionFalse, string(xpv2.ReasonCreating), msgAllocating)
				}
			case tencentcloud.StatusBinding:
				setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonBinding, bindingMessage(a.ID, e.instance))
			default:
				setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonBinding, fmt.Sprintf("address %s is %s", a.ID, a.Status))
			}
		}
		e.pollAfter(e.c.opts.TaskPollInterval)
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	case decide.StepAssociate:
		e.wantNode(nil)
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: false,
			Diff: fmt.Sprintf("address %s is UNBIND; want it bound to %s", a.ID, e.instance)}, nil
	default:
		return e.blocked(ctx, b, networkingv1alpha1.AnycastReasonAddressInUse,
			fmt.Sprintf("address %s is bound to %s, not to the node's instance %s", a.ID, cmp.Or(a.InstanceID, a.NetworkInterfaceID), e.instance))
	}
}

// checkTask waits for the pending task with DescribeTaskResult. The
// address's own state (from the batched DescribeAddresses) already shows
// most outcomes: CREATING/BINDING/UNBINDING end when the task does, a
// FAILED allocation removes the address, a FAILED association returns it
// to UNBIND. So DescribeTaskResult (one call per task, 20/s on Tencent, not
// batchable) is asked only when the state alone is ambiguous: an address
// that is still transitional after twice the task poll interval (a slow
// task, which may have failed), or an association that ended without BIND
// (did it fail, or was the address unbound by someone?).
func (e *external) checkTask(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding, a tencentcloud.Address) error {
	task := b.Status.PendingTask
	if task == nil {
		if attempt, id, ok := allocateTask(b); ok && attempt == attemptOf(b) && a.Status == tencentcloud.StatusCreating {
			task = &networkingv1alpha1.AnycastIPTask{ID: strconv.FormatUint(id, 10), Action: "AllocateAddresses"}
			if t := meta.GetExternalCreateSucceeded(b); !t.IsZero() {
				task.StartedAt = metav1.NewTime(t)
			}
		}
	}
	if task == nil {
		return nil
	}
	id, err := strconv.ParseUint(task.ID, 10, 64)
	if err != nil {
		b.Status.PendingTask = nil
		return nil //nolint:nilerr // a malformed task ID in status is dropped, not retried
	}
	transitional := decide.Transitional(a.Status)
	switch {
	case !transitional && (task.Action != "AssociateAddress" || decide.IsBound(&a, e.instance)):
		// Ended the way the task meant it to.
		b.Status.PendingTask = nil
		return nil
	case transitional && !decide.TaskOverdue(task.StartedAt.Time, e.c.clock.Now(), e.c.opts.TaskPollInterval):
		return nil
	}
	res, err := e.acct.cloud.TaskResult(ctx, id)
	if err != nil {
		return err
	}
	switch res {
	case tencentcloud.TaskFailed:
		b.Status.PendingTask = nil
		msg := fmt.Sprintf("the %s task %d of %s FAILED; retrying", task.Action, id, a.ID)
		setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonTaskFailed, msg)
		reason := networkingv1alpha1.LegacyReasonFailedAssociate
		if task.Action == "AllocateAddresses" {
			reason = networkingv1alpha1.LegacyReasonFailedAllocate
		}
		e.nodeEvent(b, corev1.EventTypeWarning, reason, actionBind, "%s", msg)
	case tencentcloud.TaskSuccess:
		if !transitional {
			b.Status.PendingTask = nil
		}
	}
	return nil
}

// observeDeleting finds the address of a binding being deleted; a binding
// whose address is gone (or was rebound elsewhere by someone) lets go after
// cleaning the node.
func (e *external) observeDeleting(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalObservation, error) {
	var a *tencentcloud.Address
	var err error
	if id := meta.GetExternalName(b); id != "" {
		if a, err = e.describe(ctx, id); err != nil {
			return managed.ExternalObservation{}, err
		}
	} else if b.UID != "" {
		// A crash between allocation and recording the ID leaves an
		// address only its tags name.
		owned, err := e.acct.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{Tags: map[string]string{decide.TagCluster: e.acct.identity, decide.TagOwnerUID: string(b.UID)}})
		if err != nil {
			return managed.ExternalObservation{}, fmt.Errorf("looking up addresses owned by the binding: %w", err)
		}
		if len(owned) > 0 {
			a = &owned[0]
		}
	}
	// The instance the binding recorded; a node that names another one now
	// does not decide what is unbound.
	e.instance = b.Status.InstanceID
	if e.instance == "" && e.node != nil {
		e.instance, _ = decide.InstanceID(e.node)
	}
	if e.instance == "" && a != nil {
		e.instance = cmp.Or(a.Tags[decide.TagInstanceID], a.Tags[networkingv1alpha1.LegacyTagInstanceID])
	}
	e.address = a
	if a != nil {
		b.Status.AddressID, b.Status.PublicIP, b.Status.State = a.ID, a.IP, a.Status
	}
	switch decide.DeleteStep(a, e.instance, a != nil && decide.Releasable(e.decideBinding(b), *a)) {
	case decide.StepNone:
		e.wantClean()
		return managed.ExternalObservation{ResourceExists: false}, nil
	case decide.StepForget:
		e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.AnycastEventReleased, actionRelease,
			"Left address %s alone: it is bound to %s, not to instance %s", a.ID, cmp.Or(a.InstanceID, a.NetworkInterfaceID), e.instance)
		e.wantClean()
		return managed.ExternalObservation{ResourceExists: false}, nil
	case decide.StepNotOurs:
		e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.AnycastEventReleased, actionRelease,
			"Left address %s alone: its tags do not prove it this cluster's, so it is neither unbound nor released", a.ID)
		e.wantClean()
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonUnbinding, fmt.Sprintf("releasing address %s (%s)", a.ID, a.Status))
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// blocked reports a binding that cannot progress: Ready=False with reason,
// the node stays tainted (never silently: the reason is also a Warning
// Event on the node), and the binding is looked at again after
// BlockedPollInterval or when its node changes.
func (e *external) blocked(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding, reason, msg string) (managed.ExternalObservation, error) {
	e.wantNode(nil)
	setReady(b, corev1.ConditionFalse, reason, msg)
	legacyReason := networkingv1alpha1.LegacyReasonFailedAllocate
	switch reason {
	case networkingv1alpha1.AnycastReasonAddressInUse, networkingv1alpha1.AnycastReasonInstanceIDChanged:
		// The binding has, or may have, an address it cannot bind here.
		legacyReason = networkingv1alpha1.LegacyReasonFailedAssociate
	}
	if e.prevReason != reason {
		e.nodeEvent(b, corev1.EventTypeWarning, legacyReason, actionBind, "%s", msg)
	}
	e.pollAfter(e.c.opts.BlockedPollInterval)
	// Nothing to create or update until something changes.
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
}

// Create allocates the address with the binding's ClientToken and its
// ownership tags, and records its ID and the allocation task.
func (e *external) Create(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalCreation, error) {
	req := tencentcloud.AllocateRequest{
		AddressType:        string(b.Spec.AddressType),
		AnycastZone:        string(b.Spec.AnycastZone),
		InternetChargeType: string(b.Spec.InternetChargeType),
		AddressName:        decide.AddressName(e.acct.identity, b.Spec.NodeName),
		Tags: decide.Tags(decide.TagInput{Cluster: e.acct.identity, OwnerUID: b.UID, NodeName: b.Spec.NodeName,
			InstanceID: e.instance, User: b.Spec.Tags, Orphan: !orphan.Deletes(b.Spec.ManagementPolicies)}),
		ClientToken: clientToken(b),
	}
	if b.Spec.InternetMaxBandwidthOut != nil {
		req.InternetMaxBandwidthOut = *b.Spec.InternetMaxBandwidthOut
	}
	res, err := e.acct.cloud.AllocateAddress(ctx, req)
	if err != nil {
		reason := classify(err)
		setReady(b, corev1.ConditionFalse, reason, err.Error())
		if e.prevReason != reason {
			e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.LegacyReasonFailedAllocate, actionBind, "Failed to allocate Anycast ip (will retry): %s", err)
		}
		switch reason {
		case networkingv1alpha1.AnycastReasonQuotaExceeded, networkingv1alpha1.AnycastReasonAnycastNotEnabled, networkingv1alpha1.AnycastReasonInvalidParameter:
			e.c.blocks.Store(b.UID, block{generation: b.Generation, reason: reason, message: err.Error(), until: e.c.clock.Now().Add(e.c.opts.BlockedPollInterval)})
		}
		return managed.ExternalCreation{}, err
	}
	if len(res.AddressIDs) != 1 {
		return managed.ExternalCreation{}, fmt.Errorf("AllocateAddresses returned %d addresses, want 1", len(res.AddressIDs))
	}
	meta.SetExternalName(b, res.AddressIDs[0])
	meta.AddAnnotations(b, map[string]string{AnnotationAllocateTask: fmt.Sprintf("%d/%d", attemptOf(b), res.TaskID)})
	// Status as the next pass will observe it while the allocation runs
	// (annotationUpdater keeps it; the pass's status write carries it).
	b.Status.AddressID, b.Status.State, b.Status.AddressType, b.Status.PendingTask = res.AddressIDs[0], tencentcloud.StatusCreating, string(b.Spec.AddressType), nil
	e.pollAfter(e.c.opts.TaskPollInterval)
	return managed.ExternalCreation{}, nil
}

// Update binds the UNBIND address to the node's instance.
func (e *external) Update(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalUpdate, error) {
	if e.address == nil || e.instance == "" {
		return managed.ExternalUpdate{}, nil
	}
	task, err := e.acct.cloud.AssociateAddress(ctx, e.address.ID, e.instance)
	if err != nil {
		if tencentcloud.IsTaskRunning(err) || tencentcloud.IsInvalidState(err) {
			// The address moved on since Observe; look again.
			e.pollAfter(e.c.opts.TaskPollInterval)
			return managed.ExternalUpdate{}, nil
		}
		reason := classify(err)
		if tencentcloud.IsAlreadyBound(err) {
			reason = networkingv1alpha1.AnycastReasonInstanceHasPublicIP
		}
		setReady(b, corev1.ConditionFalse, reason, err.Error())
		if e.prevReason != reason {
			e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.LegacyReasonFailedAssociate, actionBind, "Failed to associate %s with %s: %s", e.address.ID, e.instance, err)
		}
		return managed.ExternalUpdate{}, err
	}
	b.Status.PendingTask = &networkingv1alpha1.AnycastIPTask{ID: strconv.FormatUint(task, 10), Action: "AssociateAddress", StartedAt: metav1.NewTime(e.c.clock.Now())}
	b.Status.State = tencentcloud.StatusBinding
	if b.GetCondition(xpv2.TypeReady).Reason != networkingv1alpha1.AnycastReasonTaskFailed {
		setReady(b, corev1.ConditionFalse, networkingv1alpha1.AnycastReasonBinding, bindingMessage(e.address.ID, e.instance))
	}
	e.pollAfter(e.c.opts.TaskPollInterval)
	return managed.ExternalUpdate{}, nil
}

// Delete moves the address one step toward released: unbind it from the
// node's instance, wait for UNBIND (never releasing while the unbind task
// runs), release it. The reconciler calls it again until Observe
// reports the address gone.
func (e *external) Delete(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) (managed.ExternalDelete, error) {
	a := e.address
	switch decide.DeleteStep(a, e.instance, a != nil && decide.Releasable(e.decideBinding(b), *a)) {
	case decide.StepDisassociate:
		task, err := e.acct.cloud.DisassociateAddress(ctx, a.ID)
		if err != nil && !tencentcloud.IsTaskRunning(err) && !tencentcloud.IsInvalidState(err) {
			return managed.ExternalDelete{}, err
		}
		if err == nil {
			b.Status.PendingTask = &networkingv1alpha1.AnycastIPTask{ID: strconv.FormatUint(task, 10), Action: "DisassociateAddress", StartedAt: metav1.NewTime(e.c.clock.Now())}
		}
	case decide.StepRelease:
		task, err := e.acct.cloud.ReleaseAddresses(ctx, a.ID)
		if err != nil && !tencentcloud.IsTaskRunning(err) && !tencentcloud.IsInvalidState(err) && !tencentcloud.IsNotFound(err) {
			return managed.ExternalDelete{}, err
		}
		if err == nil {
			b.Status.PendingTask = &networkingv1alpha1.AnycastIPTask{ID: strconv.FormatUint(task, 10), Action: "ReleaseAddresses", StartedAt: metav1.NewTime(e.c.clock.Now())}
		}
	}
	return managed.ExternalDelete{}, nil
}

// describe returns the address with id, nil when it does not exist.
func (e *external) describe(ctx context.Context, id string) (*tencentcloud.Address, error) {
	as, err := e.acct.cloud.DescribeAddresses(ctx, tencentcloud.AddressQuery{IDs: []string{id}})
	if err != nil {
		return nil, fmt.Errorf("describing address %s: %w", id, err)
	}
	for i := range as {
		if as[i].ID == id {
			return &as[i], nil
		}
	}
	return nil, nil
}

// classify maps a cloud error to a Ready reason.
func classify(err error) string {
	return status.ReasonFor(err, networkingv1alpha1.AnycastReasonCloudError,
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonCredentialsRejected, Matches: tencentcloud.IsCredentialsRejected},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonQuotaExceeded, Matches: tencentcloud.IsQuotaExceeded},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonAnycastNotEnabled, Matches: tencentcloud.IsAnycastNotAllowed},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonThrottled, Matches: tencentcloud.IsThrottled},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonTaskFailed, Matches: tencentcloud.IsTaskFailed},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonInstanceNotFound, Matches: func(err error) bool {
			return tencentcloud.ErrorCode(err) == tencentcloud.CodeInvalidInstanceIDNotFound
		}},
		status.Classifier{Reason: networkingv1alpha1.AnycastReasonInvalidParameter, Matches: tencentcloud.IsInvalidParameter},
	)
}

// attemptOf is the binding's allocation attempt.
func attemptOf(b *networkingv1alpha1.AnycastIPBinding) int {
	n, _ := strconv.Atoi(b.GetAnnotations()[AnnotationAttempt])
	return max(n, 0)
}

// clientToken is the ClientToken of the binding's current attempt.
func clientToken(b *networkingv1alpha1.AnycastIPBinding) string {
	t := decide.ClientToken(b.UID)
	if n := attemptOf(b); n > 0 {
		t += "-" + strconv.Itoa(n)
	}
	return t
}

// allocateTask parses AnnotationAllocateTask.
func allocateTask(b *networkingv1alpha1.AnycastIPBinding) (attempt int, task uint64, ok bool) {
	v := b.GetAnnotations()[AnnotationAllocateTask]
	a, t, found := strings.Cut(v, "/")
	if !found {
		return 0, 0, false
	}
	attempt, err1 := strconv.Atoi(a)
	task, err2 := strconv.ParseUint(t, 10, 64)
	return attempt, task, err1 == nil && err2 == nil
}

// readNode reads the binding's node (nil when it does not exist).
func (e *external) readNode(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) error {
	n := &corev1.Node{}
	if err := e.c.kube.Get(ctx, client.ObjectKey{Name: b.Spec.NodeName}, n); err != nil {
		if apierrors.IsNotFound(err) {
			e.node = nil
			return nil
		}
		return fmt.Errorf("reading node %s: %w", b.Spec.NodeName, err)
	}
	e.node = n
	return nil
}
