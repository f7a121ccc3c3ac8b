package podelasticip

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/cloudtask"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
	"github.com/edgeplane/edgeplane/internal/status"
)

// Event reasons on the PodElasticIP; on the pod, the legacy controller's
// reasons are used (EIPAssociated, EIPDisassociated, EIPAssociationFailed).
const (
	reasonAllocated      = "Allocated"
	reasonClaimed        = "Claimed"
	reasonAdopted        = "Adopted"
	reasonAssociated     = "Associated"
	reasonDisassociated  = "Disassociated"
	reasonReleased       = "Released"
	reasonKept           = "Kept"
	reasonGivenBack      = "GivenBack"
	reasonLostClaim      = "LostClaim"
	reasonLegacyAssoc    = "EIPAssociated"
	reasonLegacyDisassoc = "EIPDisassociated"
	reasonLegacyFailed   = "EIPAssociationFailed"
)

// Warning Event reasons on the PodElasticIP: a refused association onto an
// occupied private IP, a spec for another cloud, a failed cloud task.
const (
	reasonPrivateIPInUse   = "PrivateIPInUse"
	reasonProviderMismatch = "ProviderMismatch"
	reasonTaskFailed       = "TaskFailed"
)

// tokenPrefix prefixes a PodElasticIP's ClientTokens (runtime/cloudtask).
const tokenPrefix = "peip"

// external is one reconcile's view of one PodElasticIP: Observe records
// what it found (pod, address, plan) for Create, Update or Delete in the
// same reconcile.
type external struct {
	conn *connector
	acct *account

	owner decide.Owner
	pod   *corev1.Pod
	ps    decide.Pod
	plan  decide.Plan
	dups  []decide.Address
	match decide.Match
	// podAddr is the address the pod is marked for by SyncCluster (nil:
	// the pod is left as it is).
	podAddr *decide.Address
	// poll is when the pass wants the PodElasticIP looked at again (a
	// cloud task runs); 0: the reconciler's default.
	poll time.Duration
}

var (
	_ managed.TypedExternalClient[*networkingv1alpha1.PodElasticIP] = &external{}
	_ reconciler.ClusterSyncer[*networkingv1alpha1.PodElasticIP]    = &external{}
	_ reconciler.Poller                                             = &external{}
)

// Disconnect implements managed.TypedExternalClient; clients are shared.
func (e *external) Disconnect(context.Context) error { return nil }

// PollAfter implements reconciler.Poller: soon while a cloud task runs.
func (e *external) PollAfter() (time.Duration, bool) { return e.poll, e.poll > 0 }

// awaitTask asks for the next pass after the task poll interval.
func (e *external) awaitTask() { e.poll = e.conn.opts.taskPollInterval() }

// async reports whether the account's cloud changes addresses by tasks.
func (e *external) async() bool { return e.acct.tasks != nil }

func (e *external) ownerOf(cr *networkingv1alpha1.PodElasticIP) decide.Owner {
	o := decide.Owner{
		Cluster: e.acct.cluster, UID: cr.UID, Namespace: cr.Namespace, Pod: cr.Spec.PodName,
		Mode: cr.Spec.Allocation.Mode, TagKey: cr.Spec.Allocation.TagKey, AllocationID: cr.Spec.Allocation.AllocationID,
		ExternalName: meta.GetExternalName(cr), LegacyCluster: e.acct.look.legacyCluster, User: cr.Spec.Tags,
		// Without Delete the address outlives the PodElasticIP: its tag
		// keeps the orphan sweep's hands off it.
		Orphan: !orphan.Deletes(cr.Spec.ManagementPolicies),
	}
	if o.Mode == "" {
		o.Mode = networkingv1alpha1.PodElasticIPModeAuto
	}
	return o
}

// Observe reads the pod and the address and decides. It changes nothing:
// once the address is known to be associated, SyncCluster marks the pod.
func (e *external) Observe(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalObservation, error) {
	e.owner = e.ownerOf(cr)
	pod := &corev1.Pod{}
	if err := e.conn.kube.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: cr.Spec.PodName}, pod); err != nil {
		if !apierrors.IsNotFound(err) {
			return managed.ExternalObservation{}, fmt.Errorf("getting pod %s: %w", e.owner.PodKey(), err)
		}
		pod = nil
	}
	e.pod, e.ps = pod, decide.PodFrom(pod)
	e.owner.PodIP = e.ps.IP
	deleting := meta.WasDeleted(cr)
	if !deleting {
		if reason, msg := decide.CheckProvider(e.acct.cloud.Provider(), cr.Spec); reason != "" {
			// Nothing was allocated or claimed with this spec: say why
			// (once per change) and wait for a person.
			if cr.GetCondition(xpv2.TypeReady).Reason != reason {
				e.conn.event(cr, nil, corev1.EventTypeWarning, string(reason), "Validate", "%s", msg)
			}
			setReady(cr, decide.Unavailable(reason, msg))
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		}
	}

	addrs, err := e.addresses(ctx, cr)
	if err != nil {
		setReady(cr, decide.Unavailable(classify(err), "cannot list addresses: "+err.Error()))
		return managed.ExternalObservation{}, err
	}
	e.owner.PodENI = e.podENI(ctx, addrs)
	best, how, dups := decide.Select(addrs, e.owner)
	if best == nil && e.async() && !deleting && meta.GetExternalName(cr) != "" {
		return e.observeLost(ctx, cr)
	}
	e.dups, e.match = dups, how
	e.plan = decide.Decide(decide.PlanInput{
		Owner: e.owner, Deleting: deleting, Invalid: cr.GetAnnotations()[networkingv1alpha1.AnnotationPodElasticIPInvalid],
		Pod: e.ps, Addr: best, Match: how, Duplicates: dups, KnownAssociationID: cr.Status.AssociationID,
	})
	if e.plan.Wait {
		e.awaitTask()
	}
	knownAssociation := cr.Status.AssociationID
	setStatus(cr, e.plan.Addr, e.ps)
	setReady(cr, e.plan.Ready)
	if e.async() && e.plan.Addr != nil && e.plan.Addr.Pending == "" {
		if failed := e.checkTask(ctx, cr, *e.plan.Addr); failed && !deleting {
			// Report the failure for one short pass; the next one tries
			// again.
			e.plan.UpToDate = true
			e.awaitTask()
		}
	}
	if e.plan.LateInit {
		// An allocation ID found by tags (after a crash, for a kept or a
		// legacy address) becomes the external name; the reconciler
		// records it.
		meta.SetExternalName(cr, e.plan.Addr.AllocationID)
		if how == decide.MatchLegacy || how == decide.MatchKept {
			e.conn.event(cr, pod, corev1.EventTypeNormal, reasonAdopted, "Adopt",
				"Adopted %s (%s), kept for pod %s (%s)", e.plan.Addr.PublicIP, e.plan.Addr.AllocationID, e.owner.PodKey(), how)
		}
	}
	if e.plan.UpToDate && !deleting && e.plan.Addr != nil && e.plan.Addr.Pending == "" {
		e.podAddr = e.plan.Addr
		if a := e.plan.Addr; e.async() && a.Associated() && a.AssociationID != knownAssociation && a.PrivateIPAddress == e.ps.IP {
			// A task associated it since the last pass: the one Event of
			// the association.
			e.conn.event(cr, pod, corev1.EventTypeNormal, reasonAssociated, "Associate",
				"Associated %s (%s) with pod IP %s on %s", a.PublicIP, a.AllocationID, a.PrivateIPAddress, a.NetworkInterfaceID)
		}
	}
	return managed.ExternalObservation{
		ResourceExists: e.plan.Exists, ResourceUpToDate: e.plan.UpToDate,
	}, nil
}

// podENI looks up the ENI holding the pod's IP when only that can prove
// the recorded address this PodElasticIP's: it sits on the pod's IP but
// no longer carries the PodElasticIP's UID (a concurrent claimer
// overwrote or withdrew it). The look-up is the cloud's word (cached and
// batched, lookup.ENI), so an external name the PodElasticIP's author
// wrote never makes another's address look like the pod's. "" otherwise.
func (e *external) podENI(ctx context.Context, addrs []decide.Address) string {
	ext, ip := e.owner.ExternalName, e.ps.IP
	if ext == "" || ip == "" {
		return ""
	}
	for _, a := range addrs {
		if a.AllocationID != ext || a.Tags[decide.TagOwnerUID] == string(e.owner.UID) || a.PrivateIPAddress != ip {
			continue
		}
		eni, err := e.acct.look.ENI(ctx, ip, e.ps.HostIP)
		if err != nil {
			log.FromContext(ctx).V(1).Info("Cannot look up the pod's ENI; the recorded address is not taken as the pod's", "address", ext, "error", err.Error())
			return ""
		}
		return eni
	}
	return ""
}

// observeLost handles a recorded address the cloud does not show, on a
// cloud whose allocations are tasks with a ClientToken: the allocation task
// still runs (wait), it FAILED (report, and allocate again under a new
// token), the address is not visible yet after its allocation (wait for
// it: the cloud's read-after-create lag), or it was released behind
// edgeplane's back (allocate a new one).
func (e *external) observeLost(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalObservation, error) {
	lost := meta.GetExternalName(cr)
	setStatus(cr, nil, e.ps)
	if task, ok := cloudtask.AllocationTask(cr); ok {
		res, err := e.acct.cloud.TaskResult(ctx, task)
		if err != nil {
			setReady(cr, decide.Unavailable(classify(err), err.Error()))
			return managed.ExternalObservation{}, err
		}
		switch res {
		case tencentcloud.TaskRunning:
			e.awaitTask()
			setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, decide.MessageAllocating))
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		case tencentcloud.TaskFailed:
			msg := fmt.Sprintf("the allocation task %d of %s FAILED; allocating again", task, lost)
			e.conn.event(cr, e.pod, corev1.EventTypeWarning, reasonTaskFailed, "Allocate", "%s", msg)
			cloudtask.Forget(cr)
			// Report TaskFailed for one short pass before allocating again.
			setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonTaskFailed, msg))
			e.awaitTask()
			return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
		}
	}
	ready := decide.Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, decide.MessageAllocating)
	if ip, reason, msg := e.ps.Target(); ip == "" {
		ready = decide.Unavailable(reason, msg)
	}
	setReady(cr, ready)
	if meta.ExternalCreateSucceededDuring(cr, lostGrace) {
		// Maybe not visible yet: look again soon rather than send the
		// allocation again (its ClientToken would return the same address,
		// at the price of a write call per pass).
		e.awaitTask()
		return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true}, nil
	}
	log.FromContext(ctx).Info("Recorded address is gone; allocating a new one", "address", lost)
	cloudtask.Forget(cr)
	return managed.ExternalObservation{ResourceExists: false}, nil
}

// lostGrace is how long after its allocation a recorded address the cloud
// does not show may just not be visible yet.
const lostGrace = 30 * time.Second

// checkTask looks at the task this process last started on a (now settled)
// address: ended as meant, or FAILED (the cloud rolled it back: Ready
// TaskFailed, a Warning Event, and true so the pass reports it).
func (e *external) checkTask(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a decide.Address) bool {
	v, ok := e.acct.tasks.Get(a.AllocationID)
	if !ok {
		return false
	}
	t := v.(startedTask)
	e.acct.tasks.Remove(a.AllocationID)
	switch {
	case t.action == actionAssociate && a.Associated() && a.PrivateIPAddress == t.ip,
		t.action == actionDisassociate && !a.Associated():
		// Ended as meant: no need to ask.
		return false
	}
	res, err := e.acct.cloud.TaskResult(ctx, t.id)
	if err != nil || res != tencentcloud.TaskFailed {
		return false
	}
	msg := fmt.Sprintf("the %s task %d of %s FAILED; trying again", t.action, t.id, a.AllocationID)
	e.conn.event(cr, e.pod, corev1.EventTypeWarning, reasonTaskFailed, t.action, "%s", msg)
	if t.action == actionAssociate {
		e.conn.podEvent(e.pod, cr, corev1.EventTypeWarning, reasonLegacyFailed, msg)
	}
	setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonTaskFailed, msg))
	return true
}

// startedTask is a cloud task this process started on an address.
type startedTask struct {
	action string
	id     uint64
	// ip is the private IP an association binds to.
	ip string
}

// Task actions, as the Events name them.
const (
	actionAssociate    = "AssociateAddress"
	actionDisassociate = "DisassociateAddress"
	actionRelease      = "ReleaseAddresses"
)

// rememberTask records a task started on an address, for checkTask.
func (e *external) rememberTask(id string, t startedTask) {
	if t.id != 0 && e.async() {
		e.acct.tasks.Add(id, t, tasksTTL)
	}
}

// addresses returns the candidates for this PodElasticIP's address: the
// one just written (no describe), or a listing fresh enough to be sure of.
func (e *external) addresses(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) ([]decide.Address, error) {
	ext := meta.GetExternalName(cr)
	deleting := meta.WasDeleted(cr)
	if ext != "" && e.async() {
		// Tasks change the recorded address between passes: describe it
		// now, with every other one awaited in the same window.
		a, ok, err := e.acct.look.ByID(ctx, ext)
		if err != nil || !ok {
			return nil, err
		}
		return []decide.Address{a}, nil
	}
	if ext != "" && !deleting {
		if a, ok := e.acct.look.Recent(ext); ok {
			return []decide.Address{a}, nil
		}
	}
	now := e.conn.opts.clock().Now()
	var notBefore time.Time
	switch {
	case deleting:
		notBefore = now
	case ext != "":
		notBefore = now.Add(-e.conn.opts.ListingMaxAge)
	default:
		// Without an external name, an address of ours can only exist if a
		// Create ran: a listing that started after the last creation
		// attempt (and after this process started: a process that died
		// mid-Create did so before) sees it. Timestamps have one-second
		// resolution.
		notBefore = cr.CreationTimestamp.Add(time.Second)
		for _, t := range []time.Time{meta.GetExternalCreatePending(cr), meta.GetExternalCreateFailed(cr), meta.GetExternalCreateSucceeded(cr)} {
			if t.Add(time.Second).After(notBefore) {
				notBefore = t.Add(time.Second)
			}
		}
		if e.conn.started.After(notBefore) {
			notBefore = e.conn.started
		}
		if notBefore.After(now) {
			notBefore = now
		}
	}
	ids := []string{ext}
	if a := cr.Spec.Allocation.AllocationID; a != "" {
		ids = append(ids, a)
	}
	return e.acct.look.Addresses(ctx, notBefore, ids...)
}

// setStatus copies what is known about the address and the pod.
func setStatus(cr *networkingv1alpha1.PodElasticIP, a *decide.Address, p decide.Pod) {
	s := &cr.Status
	if a == nil {
		s.AllocationID, s.PublicIP, s.AssociationID, s.NetworkInterfaceID, s.PrivateIP, s.PodUID, s.NodeName = "", "", "", "", "", "", ""
		return
	}
	s.AllocationID, s.PublicIP = a.AllocationID, a.PublicIP
	if a.Pending == decide.PendingCreating {
		// The IP is recorded once the address is allocated, so the passes
		// that wait for the allocation find nothing new to write.
		s.PublicIP = ""
	}
	s.AssociationID, s.NetworkInterfaceID, s.PrivateIP = a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress
	if a.Associated() && p.IP != "" && a.PrivateIPAddress == p.IP {
		s.PodUID, s.NodeName = p.UID, p.NodeName
	} else {
		s.PodUID, s.NodeName = "", ""
	}
}

// fail sets Ready with the error's reason and returns the error.
func fail(cr *networkingv1alpha1.PodElasticIP, reason xpv2.ConditionReason, err error) error {
	setReady(cr, decide.Unavailable(reason, err.Error()))
	return err
}

// Create allocates (Auto) or claims (Pool, Static) an address. Observe
// only asks for it once the pod has an IP.
func (e *external) Create(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalCreation, error) {
	ip, reason, msg := e.ps.Target()
	if ip == "" {
		return managed.ExternalCreation{}, fail(cr, reason, errors.New(msg))
	}
	switch e.owner.Mode {
	case networkingv1alpha1.PodElasticIPModePool, networkingv1alpha1.PodElasticIPModeStatic:
		return managed.ExternalCreation{}, e.claim(ctx, cr, ip)
	}
	a, task, err := e.acct.cloud.Allocate(ctx, allocateRequest{
		Tags: decide.Tags(e.owner), PublicIPv4Pool: cr.Spec.Allocation.PublicIPv4Pool,
		Tencent: cr.TencentSettings(), ClientToken: cloudtask.Token(tokenPrefix, cr),
	})
	if err != nil {
		// After a timeout the address may exist: the next Observe looks for
		// it by its creation tags (or the ClientToken returns it) before
		// anything is allocated again.
		return managed.ExternalCreation{}, fail(cr, classify(err), err)
	}
	meta.SetExternalName(cr, a.AllocationID)
	if a.Pending != "" {
		// The allocation is a task: the address is associated once it has
		// ended (Update); the task is recorded so a failure is seen.
		cloudtask.RecordAllocation(cr, task)
		setStatus(cr, &a, e.ps)
		e.awaitTask()
		return managed.ExternalCreation{}, nil
	}
	// Associate in the same pass: while this pod's association waits for
	// AssociateAddress's bucket, the next pod's allocation can use
	// AllocateAddress's (EC2 throttles each action separately), so both
	// buckets stay busy. A failed association is reported (Ready, the
	// pod's Warning) and retried by the next pass's Update; the address is
	// recorded either way. One Event tells both steps.
	if err := e.associate(ctx, cr, &a, ip, true); err == nil {
		e.podAddr = &a
	} else {
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonAllocated, "Allocate", "Allocated %s (%s)", a.PublicIP, a.AllocationID)
	}
	e.acct.look.Remember(a)
	setStatus(cr, &a, e.ps)
	return managed.ExternalCreation{}, nil
}

// claim takes a Pool or Static address for the pod: tag it with the claim,
// associate it (the cloud lets only one claimer associate an unassociated
// address), then verify the claim and re-assert it if a concurrent claimer
// overwrote it. A claimer that loses the association withdraws its tags
// (only where they are still its own) and tries the next candidate.
func (e *external) claim(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, ip string) error {
	eni, err := e.acct.look.ENI(ctx, ip, e.ps.HostIP)
	if err != nil {
		return fail(cr, classify(err), err)
	}
	const rounds, perRound = 3, 4
	for range rounds {
		var cands []decide.Address
		if e.owner.Mode == networkingv1alpha1.PodElasticIPModePool {
			addrs, err := e.acct.cloud.Describe(ctx, addressQuery{TagKeys: []string{e.owner.TagKey}})
			if err != nil {
				return fail(cr, classify(err), err)
			}
			var refused decide.Refusal
			if cands, refused = decide.PoolCandidates(addrs, e.owner, e.conn.claims); refused.Refused() {
				return e.refuse(cr, refused)
			}
		} else {
			q := addressQuery{Tags: map[string]string{e.owner.TagKey: e.owner.PodKey()}}
			if e.owner.AllocationID != "" {
				q = addressQuery{IDs: []string{e.owner.AllocationID}}
			}
			addrs, err := e.acct.cloud.Describe(ctx, q)
			if err != nil {
				return fail(cr, classify(err), err)
			}
			a, refused := decide.StaticCandidate(addrs, e.owner, ip, e.conn.claims)
			if a == nil {
				return e.refuse(cr, refused)
			}
			cands = []decide.Address{*a}
		}
		for i, a := range cands {
			if i == perRound {
				break
			}
			won, err := e.tryClaim(ctx, cr, a, eni, ip)
			if err != nil {
				if errors.Is(err, errPrivateIPInUse) {
					e.conn.event(cr, e.pod, corev1.EventTypeWarning, reasonPrivateIPInUse, "Claim", "%v", err)
				}
				return fail(cr, classify(err), err)
			}
			if won {
				return nil
			}
			e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonLostClaim, "Claim",
				"Another claimer associated %s (%s) first; trying another address", a.PublicIP, a.AllocationID)
		}
	}
	if e.owner.Mode == networkingv1alpha1.PodElasticIPModeStatic {
		return fail(cr, networkingv1alpha1.PodElasticIPReasonAddressInUse, fmt.Errorf("the static address (%s) was taken by another claimer", e.owner.StaticSelector()))
	}
	return fail(cr, networkingv1alpha1.PodElasticIPReasonPoolExhausted, fmt.Errorf("lost every address with tag key %q to concurrent claimers", e.owner.TagKey))
}

// refuse reports a claim that found nothing it may take: Ready=False with
// the refusal's reason and, when only a person can change it (the address
// is another owner's, or outside the admin's policy), a Warning Event the
// first time. Nothing is written to the cloud.
func (e *external) refuse(cr *networkingv1alpha1.PodElasticIP, r decide.Refusal) error {
	switch r.Reason {
	case networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere, networkingv1alpha1.PodElasticIPReasonAddressNotAllowed:
		if cr.GetCondition(xpv2.TypeReady).Reason != r.Reason {
			e.conn.event(cr, e.pod, corev1.EventTypeWarning, string(r.Reason), "Claim", "%s", r.Message)
		}
	}
	return fail(cr, r.Reason, errors.New(r.Message))
}

func (e *external) tryClaim(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a decide.Address, eni, ip string) (bool, error) {
	tags := decide.Tags(e.owner)
	if err := e.acct.cloud.Tag(ctx, a.AllocationID, tags); err != nil {
		return false, err
	}
	if !(a.Associated() && a.PrivateIPAddress == ip) {
		got, task, err := e.acct.cloud.Associate(ctx, a, eni, ip)
		switch {
		case errors.Is(err, errAddressTaken):
			e.withdraw(ctx, a.AllocationID, tags)
			return false, nil
		case errors.Is(err, errPrivateIPInUse):
			// Another address on the pod's IP refuses every candidate
			// alike: stop instead of cycling through the pool.
			e.withdraw(ctx, a.AllocationID, tags)
			return false, err
		case err != nil:
			return false, err
		}
		a = got
		e.rememberTask(a.AllocationID, startedTask{action: actionAssociate, id: task, ip: ip})
	}
	// Verify: a concurrent claimer may have overwritten the claim between
	// our tagging and our association; we hold the association, so the
	// address is ours and the claim is re-asserted.
	got, err := e.acct.cloud.Describe(ctx, addressQuery{IDs: []string{a.AllocationID}})
	if err != nil {
		return false, err
	}
	if len(got) == 1 {
		if miss := decide.MissingTags(got[0], tags); len(miss) > 0 {
			if err := e.acct.cloud.Tag(ctx, a.AllocationID, miss); err != nil {
				return false, err
			}
		}
	}
	if a.Tags == nil {
		a.Tags = map[string]string{}
	}
	maps.Copy(a.Tags, tags)
	meta.SetExternalName(cr, a.AllocationID)
	setStatus(cr, &a, e.ps)
	if a.Pending != "" {
		e.awaitTask()
		setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, decide.AssociatingMessage(a.PublicIP, ip)))
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonClaimed, "Claim", "Claimed %s (%s); binding it to pod IP %s on %s",
			a.PublicIP, a.AllocationID, ip, eni)
		return true, nil
	}
	e.acct.look.Remember(a)
	e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonClaimed, "Claim", "Claimed %s (%s) and associated it with pod IP %s on %s",
		a.PublicIP, a.AllocationID, ip, eni)
	return true, nil
}

// withdraw removes the claim tags we wrote where they still carry our
// values, so a winner's tags survive.
func (e *external) withdraw(ctx context.Context, id string, tags map[string]string) {
	if err := e.acct.cloud.Withdraw(ctx, id, tags); err != nil {
		log.FromContext(ctx).V(1).Info("Could not withdraw a lost claim; the winner re-asserts its own", "allocationID", id, "error", err.Error())
	}
}

// Update carries out Observe's plan: clean up duplicates, write missing
// ownership tags, and (re)associate the address with the pod's current IP.
// On a cloud with tasks, an association waits for a disassociation's task
// to end (the next pass associates).
func (e *external) Update(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalUpdate, error) {
	p := e.plan
	if p.Addr == nil {
		return managed.ExternalUpdate{}, nil
	}
	a := *p.Addr
	a.Tags = maps.Clone(a.Tags)
	for _, d := range p.ReleaseDuplicates {
		if err := e.giveUp(ctx, cr, d); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if len(p.Tags) > 0 {
		if err := e.acct.cloud.Tag(ctx, a.AllocationID, p.Tags); err != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		if a.Tags == nil {
			a.Tags = map[string]string{}
		}
		maps.Copy(a.Tags, p.Tags)
	}
	if len(p.RemoveTags) > 0 {
		if err := e.acct.cloud.Untag(ctx, a.AllocationID, p.RemoveTags...); err != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		for _, k := range p.RemoveTags {
			delete(a.Tags, k)
		}
	}
	if p.Disassociate {
		from := a.PrivateIPAddress
		next, task, err := e.acct.cloud.Disassociate(ctx, a)
		if errors.Is(err, errBusy) {
			e.awaitTask()
			return managed.ExternalUpdate{}, nil
		}
		if err != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonDisassociated, "Disassociate",
			"Disassociated %s from %s", a.PublicIP, from)
		a = next
		if task != 0 {
			e.rememberTask(a.AllocationID, startedTask{action: actionDisassociate, id: task})
			setStatus(cr, &a, e.ps)
			e.awaitTask()
			return managed.ExternalUpdate{}, nil
		}
	}
	if p.AssociateIP != "" {
		if err := e.associate(ctx, cr, &a, p.AssociateIP, false); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	setStatus(cr, &a, e.ps)
	if a.Pending != "" {
		// The pod is marked once the task has ended.
		return managed.ExternalUpdate{}, nil
	}
	e.acct.look.Remember(a)
	e.podAddr = &a
	return managed.ExternalUpdate{}, nil
}

// associate associates a (allocated in this pass: the Event says so) with
// the pod IP ip on the pod's ENI, and records it in a and the Ready
// condition; a failure is Ready=False with its reason and the legacy
// controller's Warning on the pod. On a cloud with tasks it starts the
// association: the Event follows when Observe sees it done.
func (e *external) associate(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a *decide.Address, ip string, allocated bool) error {
	eni, err := e.acct.look.ENI(ctx, ip, e.ps.HostIP)
	if err != nil {
		e.acct.look.Remember(*a)
		setReady(cr, decide.Unavailable(classify(err), err.Error()))
		e.conn.podEvent(e.pod, cr, corev1.EventTypeWarning, reasonLegacyFailed, err.Error())
		return err
	}
	got, task, err := e.acct.cloud.Associate(ctx, *a, eni, ip)
	if errors.Is(err, errPrivateIPInUse) {
		e.conn.event(cr, e.pod, corev1.EventTypeWarning, reasonPrivateIPInUse, "Associate", "%v", err)
	}
	if err != nil {
		e.acct.look.Forget(a.AllocationID)
		if e.acct.cloud.StaleENI(err) {
			e.acct.look.ForgetENI(ip)
		}
		setReady(cr, decide.Unavailable(classify(err), err.Error()))
		e.conn.podEvent(e.pod, cr, corev1.EventTypeWarning, reasonLegacyFailed, err.Error())
		return err
	}
	*a = got
	if task != 0 {
		e.rememberTask(a.AllocationID, startedTask{action: actionAssociate, id: task, ip: ip})
		e.awaitTask()
		setReady(cr, decide.Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, decide.AssociatingMessage(a.PublicIP, ip)))
		return nil
	}
	verb := "Associated"
	if allocated {
		verb = "Allocated and associated"
	}
	e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonAssociated, "Associate",
		"%s %s (%s) with pod IP %s on %s", verb, a.PublicIP, a.AllocationID, ip, eni)
	setReady(cr, xpv2.Available())
	return nil
}

// SyncCluster marks the pod for the address this pass found associated or
// associated (reconciler.ClusterSyncer); a pass that found nothing of the
// kind leaves the pod as it is.
func (e *external) SyncCluster(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) error {
	if e.podAddr == nil {
		return nil
	}
	return e.syncPod(ctx, cr, *e.podAddr)
}

// giveUp releases (Auto) or un-tags (Pool, Static) a duplicate address. On
// a cloud with tasks, a duplicate still associated is released by a later
// pass, once its disassociation's task has ended.
func (e *external) giveUp(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, d decide.Address) error {
	if d.Pending != "" {
		return nil
	}
	if d.Associated() {
		next, task, err := e.acct.cloud.Disassociate(ctx, d)
		if err != nil && !errors.Is(err, errBusy) {
			return err
		}
		if err != nil || task != 0 {
			e.awaitTask()
			if e.owner.Mode == networkingv1alpha1.PodElasticIPModeAuto {
				return nil
			}
		}
		d = next
	}
	if e.owner.Mode == networkingv1alpha1.PodElasticIPModeAuto {
		if _, err := e.acct.cloud.Release(ctx, d); err != nil && !errors.Is(err, errBusy) {
			return err
		}
		e.acct.look.Forget(d.AllocationID)
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonReleased, "Release", "Released duplicate %s (%s)", d.PublicIP, d.AllocationID)
		return nil
	}
	e.acct.look.Forget(d.AllocationID)
	return e.acct.cloud.Untag(ctx, d.AllocationID, decide.ReleaseKeys(d)...)
}

// Delete applies the release policy. The reconciler calls Observe again
// afterwards and removes the finalizer once the address is no longer
// this PodElasticIP's (released, given back or kept for the pod's name).
// On a cloud with tasks it takes a step per pass: an address is released
// only once its disassociation has ended, and nothing is done while a task
// runs.
func (e *external) Delete(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalDelete, error) {
	p := e.plan
	if p.Addr == nil {
		return managed.ExternalDelete{}, nil
	}
	if p.Addr.Pending != "" {
		e.awaitTask()
		return managed.ExternalDelete{}, nil
	}
	for _, d := range e.dups {
		if err := e.giveUp(ctx, cr, d); err != nil {
			return managed.ExternalDelete{}, err
		}
	}
	a := *p.Addr
	var delay time.Duration
	if cr.Spec.ReleaseDelay != nil {
		delay = cr.Spec.ReleaseDelay.Duration
	}
	policy := cr.EffectiveReleasePolicy()
	dp := decide.PlanDelete(policy, e.owner.Mode, a, e.conn.opts.clock().Now(), delay)
	e.acct.look.Forget(a.AllocationID)
	if dp.Disassociate {
		next, task, err := e.acct.cloud.Disassociate(ctx, a)
		if errors.Is(err, errBusy) {
			e.awaitTask()
			return managed.ExternalDelete{}, nil
		}
		if err != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonDisassociated, "Disassociate", "Disassociated %s from %s", a.PublicIP, a.PrivateIPAddress)
		if task != 0 {
			e.rememberTask(a.AllocationID, startedTask{action: actionDisassociate, id: task})
			if dp.Release {
				// Released once unbound (a later pass).
				setStatus(cr, &next, e.ps)
				e.awaitTask()
				return managed.ExternalDelete{}, e.unlabelPod(ctx, cr)
			}
		}
	}
	if err := e.unlabelPod(ctx, cr); err != nil {
		return managed.ExternalDelete{}, err
	}
	switch {
	case dp.Release:
		task, err := e.acct.cloud.Release(ctx, a)
		if errors.Is(err, errBusy) {
			e.awaitTask()
			return managed.ExternalDelete{}, nil
		}
		if err != nil {
			return managed.ExternalDelete{}, err
		}
		if task != 0 {
			e.rememberTask(a.AllocationID, startedTask{action: actionRelease, id: task})
			e.awaitTask()
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonReleased, "Release", "Released %s (%s)", a.PublicIP, a.AllocationID)
	case len(dp.Tags) > 0:
		if err := e.acct.cloud.Tag(ctx, a.AllocationID, dp.Tags); err != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonKept, "Keep", "Kept %s (%s) for pod %s until %s",
			a.PublicIP, a.AllocationID, e.owner.PodKey(), dp.Tags[decide.TagReleaseAfter])
	default:
		if err := e.acct.cloud.Untag(ctx, a.AllocationID, dp.UntagKeys...); err != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonGivenBack, "GiveBack", "Gave %s (%s) back", a.PublicIP, a.AllocationID)
	}
	return managed.ExternalDelete{}, nil
}

// setReady sets the Ready condition and the kstatus conditions that go with
// it: Stalled for an invalid spec or one for another cloud (only a person
// can fix them), Reconciling while the address is being allocated or
// associated or waits for the pod.
func setReady(cr *networkingv1alpha1.PodElasticIP, ready xpv2.Condition) {
	cr.SetConditions(ready)
	stalled := ready.Reason == networkingv1alpha1.PodElasticIPReasonInvalidSpec || ready.Reason == networkingv1alpha1.PodElasticIPReasonProviderMismatch
	cr.SetConditions(status.ManagedKstatus(ready, stalled)...)
}
