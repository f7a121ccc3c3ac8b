package nodeelasticip

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/runtime/reconciler"
	"github.com/edgeplane/edgeplane/internal/status"
)

// AnnotationAdopted, on a NodeElasticIP, records that its address was on
// the node already and was taken over (status.adopted mirrors it).
const AnnotationAdopted = "networking.edgeplane.io/adopted"

// Event actions (events.k8s.io requires one).
const (
	actionAllocate   = "Allocate"
	actionClaim      = "Claim"
	actionAdopt      = "Adopt"
	actionAssociate  = "Associate"
	actionRelease    = "Release"
	actionTaint      = "Taint"
	reasonAllocated  = "Allocated"
	reasonClaimed    = "Claimed"
	reasonAdopted    = "Adopted"
	reasonLostClaim  = "LostClaim"
	reasonGivenBack  = "GivenBack"
	reasonReleasedIP = "Released"
)

// nodeSync is what SyncCluster does to the node; the zero value leaves it
// alone (the pass failed before deciding).
type nodeSync int

const (
	syncNone nodeSync = iota
	// syncBound: labelled and annotated with the address, untainted.
	syncBound
	// syncPending: tainted, without address marks.
	syncPending
	// syncClean: untainted, without this NodeElasticIP's marks.
	syncClean
)

// external is one pass's view of one NodeElasticIP: Observe records what
// it found for Create, Update, Delete and SyncCluster in the same pass.
type external struct {
	conn *connector
	acct *account

	owner decide.Owner
	node  *corev1.Node
	nf    decide.Node
	plan  decide.Plan
	// prevReason is the Ready reason before the pass: node Events are
	// emitted on a change only.
	prevReason xpv2.ConditionReason
	sync       nodeSync
	// bound is the address on the node (syncBound).
	bound aws.Address
	// poll is the requeue the pass chose (0: the reconciler's default).
	poll time.Duration
}

var (
	_ managed.TypedExternalClient[*networkingv1alpha1.NodeElasticIP] = (*external)(nil)
	_ reconciler.ClusterSyncer[*networkingv1alpha1.NodeElasticIP]    = (*external)(nil)
	_ reconciler.Poller                                              = (*external)(nil)
)

// Disconnect implements managed.TypedExternalClient; clients are shared.
func (e *external) Disconnect(context.Context) error { return nil }

// PollAfter implements reconciler.Poller.
func (e *external) PollAfter() (time.Duration, bool) { return e.poll, e.poll > 0 }

func (e *external) ownerOf(n *networkingv1alpha1.NodeElasticIP) decide.Owner {
	o := decide.Owner{
		Cluster: e.acct.cluster, UID: n.UID, Node: n.Spec.NodeName, Mode: n.Spec.Allocation.Mode,
		Pool: n.Spec.Allocation.Pool, AllocationID: n.Spec.Allocation.AllocationID,
		ExternalName: meta.GetExternalName(n), User: n.Spec.Tags,
		// Without Delete the address outlives the NodeElasticIP: its tag
		// keeps the orphan sweep's hands off it.
		Orphan: !orphan.Deletes(n.Spec.ManagementPolicies),
	}
	if o.Mode == "" {
		o.Mode = networkingv1alpha1.NodeElasticIPModeAuto
	}
	return o
}

// Observe reads the node, its instance's primary interface and the
// addresses, and decides (decide.Decide). It changes nothing: the node's
// marks are SyncCluster's.
func (e *external) Observe(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.ExternalObservation, error) {
	e.prevReason = n.GetCondition(xpv2.TypeReady).Reason
	obs, err := e.observe(ctx, n)
	if err != nil {
		// Say why, also while deleting (the finalizer waits for the cloud).
		setReady(n, decide.Unavailable(classify(err), err.Error()))
	}
	return obs, err
}

func (e *external) observe(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.ExternalObservation, error) {
	e.owner = e.ownerOf(n)
	deleting := meta.WasDeleted(n)
	if err := e.readNode(ctx, n.Spec.NodeName); err != nil {
		return managed.ExternalObservation{}, err
	}
	e.nf = decide.Node{Found: e.node != nil}
	if e.node != nil {
		// The recorded instance, or the node's spec.providerID's on the
		// first pass; never another one the node names later.
		id, changed, err := decide.NodeInstance(n.Status.InstanceID, e.node.Spec.ProviderID)
		e.nf.Instance, e.nf.ChangedTo = id, changed
		if err != nil {
			e.nf.InstanceErr = err.Error()
		}
	}
	if e.nf.Instance == "" && deleting {
		e.nf.Instance = n.Status.InstanceID
	}
	e.owner.Instance = e.nf.Instance
	if e.nf.Instance != "" {
		n.Status.InstanceID = e.nf.Instance
	}

	addrs, err := e.addresses(ctx, n, deleting)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	best, how, dups, onNode := decide.Select(addrs, e.owner, e.nf)
	e.plan = decide.Decide(decide.PlanInput{Owner: e.owner, Deleting: deleting, Node: e.nf, Addr: best, Match: how,
		Duplicates: dups, OnNode: onNode})
	setStatus(n, e.plan.Addr)
	setReady(n, e.plan.Ready)
	if e.plan.LateInit {
		// An address found by its tags (after a crash) or adopted becomes
		// the external name; the reconciler records it.
		meta.SetExternalName(n, e.plan.Addr.AllocationID)
	}
	if e.plan.Adopted && n.GetAnnotations()[AnnotationAdopted] == "" {
		meta.AddAnnotations(n, map[string]string{AnnotationAdopted: networkingv1alpha1.AdoptedAssociated})
		e.event(n, corev1.EventTypeNormal, reasonAdopted, actionAdopt, "Adopted %s (%s), already on the node's primary IP %s",
			e.plan.Addr.PublicIP, e.plan.Addr.AllocationID, e.nf.PrimaryIP)
	}
	n.Status.Adopted = n.GetAnnotations()[AnnotationAdopted]
	switch {
	case deleting:
		e.sync = syncClean
	case e.plan.Bound:
		e.sync, e.bound = syncBound, *e.plan.Addr
	case e.node != nil:
		e.sync = syncPending
	}
	if ready := e.plan.Ready; ready.Status != corev1.ConditionTrue && ready.Reason != networkingv1alpha1.NodeElasticIPReasonAssociating && !deleting {
		// Blocked: say so on the node once, and look again after a while
		// (node changes trigger a pass at once).
		e.failedEvent(n, ready.Reason, ready.Message)
		e.poll = e.conn.opts.BlockedPollInterval
	}
	return managed.ExternalObservation{ResourceExists: e.plan.Exists, ResourceUpToDate: e.plan.UpToDate}, nil
}

// addresses gathers the candidates for the NodeElasticIP's address: the
// one this process just wrote (no describe), or a listing of this
// cluster's node addresses fresh enough for the pass; plus, while it has
// none, what is on its node's instance, and the instance's primary
// interface. The look-ups run in parallel, each joining a batch.
func (e *external) addresses(ctx context.Context, n *networkingv1alpha1.NodeElasticIP, deleting bool) ([]aws.Address, error) {
	look := e.acct.look
	ext := e.owner.ExternalName
	var (
		wg    sync.WaitGroup
		errs  [3]error
		found []aws.Address
		onIns []aws.Address
	)
	if !deleting && e.nf.Instance != "" {
		wg.Go(func() {
			eni, err := look.PrimaryENI(ctx, e.nf.Instance)
			switch {
			case aws.IsNotFound(err):
			case err != nil:
				errs[0] = err
			default:
				e.nf.ENI, e.nf.PrimaryIP = eni.ID, eni.PrivateIPs[0]
			}
		})
	}
	if a, ok := look.Recent(e.owner.UID, ext); ok && !deleting {
		found = []aws.Address{a}
	} else {
		wg.Go(func() {
			maxAge := time.Duration(0)
			if ext != "" && !deleting {
				// A poll: an address recorded on the object shows in
				// any recent listing.
				maxAge = e.conn.opts.ListingMaxAge
			}
			found, errs[1] = look.Addresses(ctx, maxAge, ext, e.owner.AllocationID)
		})
		if ext == "" && !deleting && e.nf.Instance != "" {
			wg.Go(func() { onIns, errs[2] = look.OnInstance(ctx, e.nf.Instance) })
		}
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return append(found, onIns...), nil
}

// Create allocates (Auto) or claims (Pool, Static) an address and
// associates it with the node's primary IP in the same step, as claiming
// does: the association is what the NodeElasticIP is for, and doing it at
// once spares a pass and a status write per node. Observe only asks for it
// once the node's primary interface is known.
func (e *external) Create(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.ExternalCreation, error) {
	if e.owner.Mode != networkingv1alpha1.NodeElasticIPModeAuto {
		return managed.ExternalCreation{}, e.claim(ctx, n)
	}
	tags := decide.Tags(e.owner)
	a, err := e.acct.aws.AllocateAddress(ctx, aws.AllocateRequest{PublicIPv4Pool: n.Spec.Allocation.PublicIPv4Pool, Tags: tags})
	if err != nil {
		// After a timeout the address may exist: the next Observe finds it
		// by its owner UID before anything is allocated again.
		return managed.ExternalCreation{}, e.fail(n, err)
	}
	e.acct.look.Remember(n.UID, a)
	meta.SetExternalName(n, a.AllocationID)
	setStatus(n, &a)
	assoc, err := e.acct.aws.AssociateAddress(ctx, a.AllocationID, e.nf.ENI, e.nf.PrimaryIP)
	if err != nil {
		// The address exists and is recorded: the next pass (Update)
		// associates it, and says why it cannot.
		log.FromContext(ctx).Info("Allocated an address but could not associate it yet", "address", a.AllocationID, "error", err.Error())
		setReady(n, decide.Unavailable(networkingv1alpha1.NodeElasticIPReasonAssociating,
			fmt.Sprintf("allocated %s (%s); associating it with %s on %s", a.PublicIP, a.AllocationID, e.nf.PrimaryIP, e.nf.ENI)))
		e.event(n, corev1.EventTypeNormal, reasonAllocated, actionAllocate, "Allocated %s (%s)", a.PublicIP, a.AllocationID)
		return managed.ExternalCreation{}, nil
	}
	// The node's ElasticIPAssociated Event (SyncCluster) says it, with
	// the NodeElasticIP as its related object.
	e.associated(n, &a, assoc)
	return managed.ExternalCreation{}, nil
}

// claim takes a Pool or Static address for the node: tag it with the
// ownership tags, then associate it (EC2 lets only one claimer associate
// an unassociated address when reassociation is off). A claimer that loses
// the association withdraws its tags, where they are still its own, and
// tries the next candidate in the pool's order.
func (e *external) claim(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) error {
	const rounds, perRound = 3, 4
	for range rounds {
		cands, err := e.claimCandidates(ctx)
		if err != nil {
			return e.fail(n, err)
		}
		tried := 0
		for _, a := range cands {
			if tried == perRound {
				break
			}
			if !e.acct.look.Claim(a.AllocationID, n.UID) {
				// Another worker of this process is claiming it.
				continue
			}
			tried++
			// Won or lost, the in-process reservation ends here: an
			// associated address is no candidate any more.
			won, err := e.tryClaim(ctx, n, a)
			e.acct.look.Unclaim(a.AllocationID)
			if err != nil {
				return e.fail(n, err)
			}
			if won {
				return nil
			}
			e.event(n, corev1.EventTypeNormal, reasonLostClaim, actionClaim,
				"Another claimer associated %s (%s) first; trying the next address", a.PublicIP, a.AllocationID)
		}
		if tried == 0 {
			break
		}
	}
	if e.owner.Mode == networkingv1alpha1.NodeElasticIPModeStatic {
		return e.fail(n, reasonError(networkingv1alpha1.NodeElasticIPReasonAddressInUse, "the static address %s was taken by another claimer", e.owner.AllocationID))
	}
	return e.fail(n, reasonError(networkingv1alpha1.NodeElasticIPReasonPoolExhausted, "no free address matches the pool's filters"))
}

// claimCandidates lists what claim may try, in order.
func (e *external) claimCandidates(ctx context.Context) ([]aws.Address, error) {
	if e.owner.Mode == networkingv1alpha1.NodeElasticIPModePool {
		q := aws.AddressQuery{}
		for _, f := range e.owner.Pool.Filters {
			q.Filters = append(q.Filters, aws.Filter{Name: f.Name, Values: f.Values})
		}
		addrs, err := e.acct.aws.DescribeAddresses(ctx, q)
		if err != nil {
			return nil, err
		}
		cands := decide.Candidates(addrs, e.owner)
		if len(cands) == 0 {
			return nil, reasonError(networkingv1alpha1.NodeElasticIPReasonPoolExhausted, "no free address matches the pool's filters (%d match, all associated or owned)", len(addrs))
		}
		return cands, nil
	}
	addrs, err := e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{AllocationIDs: []string{e.owner.AllocationID}})
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, reasonError(networkingv1alpha1.NodeElasticIPReasonAddressNotFound, "the static address %s does not exist in the account", e.owner.AllocationID)
	}
	a := addrs[0]
	if !decide.Free(a, e.owner) {
		return nil, reasonError(networkingv1alpha1.NodeElasticIPReasonAddressInUse, "the static address %s (%s) is associated with something else or owned by another object",
			a.AllocationID, a.PublicIP)
	}
	return addrs, nil
}

// tryClaim tags a and associates it with the node's primary IP; won is
// false when another claimer associated it first.
func (e *external) tryClaim(ctx context.Context, n *networkingv1alpha1.NodeElasticIP, a aws.Address) (bool, error) {
	tags := decide.Tags(e.owner)
	if err := e.acct.aws.CreateTags(ctx, a.AllocationID, tags); err != nil {
		return false, err
	}
	assoc, err := e.acct.aws.AssociateAddress(ctx, a.AllocationID, e.nf.ENI, e.nf.PrimaryIP)
	if aws.IsAlreadyAssociated(err) {
		e.withdraw(ctx, a.AllocationID, n)
		if taken := e.nodeTaken(ctx, a.AllocationID); taken != nil {
			// Another address sits on the node's IP: every candidate is
			// refused alike, so stop.
			return false, taken
		}
		return false, nil
	}
	if err != nil {
		e.withdraw(ctx, a.AllocationID, n)
		return false, err
	}
	maps.Copy(a.Tags, tags)
	e.associated(n, &a, assoc)
	e.event(n, corev1.EventTypeNormal, reasonClaimed, actionClaim, "Claimed %s (%s) and associated it with %s on %s",
		a.PublicIP, a.AllocationID, e.nf.PrimaryIP, e.nf.ENI)
	return true, nil
}

// withdraw takes this NodeElasticIP's tags off an address it failed to
// associate, if they are still its own (a concurrent claimer may have
// written its own since).
func (e *external) withdraw(ctx context.Context, id string, n *networkingv1alpha1.NodeElasticIP) {
	got, err := e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{AllocationIDs: []string{id}})
	if err != nil || len(got) != 1 || !decide.IsOwnedBy(got[0], e.owner) {
		return
	}
	if err := e.acct.aws.DeleteTags(ctx, id, decide.ReleaseKeys(got[0])...); err != nil {
		log.FromContext(ctx).Info("Cannot withdraw a lost claim's tags; the orphan sweep gives the address back", "address", id, "error", err.Error())
	}
	e.acct.look.Forget(n.UID, id)
}

// nodeTaken returns an error naming the address on the node's primary IP
// when it is not except (nil when there is none, or it cannot be told).
func (e *external) nodeTaken(ctx context.Context, except string) error {
	on, err := e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{NetworkInterfaceID: e.nf.ENI, PrivateIPAddress: e.nf.PrimaryIP})
	if err != nil {
		return nil //nolint:nilerr // the refusal is then reported as it came
	}
	for _, a := range on {
		if a.AllocationID != except && e.nf.On(a) {
			return reasonError(networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP,
				"the node's primary IP %s on %s already carries %s (%s)", e.nf.PrimaryIP, e.nf.ENI, a.PublicIP, a.AllocationID)
		}
	}
	return nil
}

// associated records a's association with the node's primary IP.
func (e *external) associated(n *networkingv1alpha1.NodeElasticIP, a *aws.Address, assoc string) {
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress, a.InstanceID = assoc, e.nf.ENI, e.nf.PrimaryIP, e.nf.Instance
	e.acct.look.Remember(n.UID, *a)
	meta.SetExternalName(n, a.AllocationID)
	setStatus(n, a)
	setReady(n, xpv2.Available())
	e.sync, e.bound = syncBound, *a
	e.poll = 0
}

// Update brings the address in line with the plan: give up duplicates,
// fix its tags, associate it with the node's primary IP.
func (e *external) Update(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.ExternalUpdate, error) {
	p := e.plan
	if p.Addr == nil {
		return managed.ExternalUpdate{}, nil
	}
	for _, d := range p.Duplicates {
		if err := e.giveUp(ctx, n, d); err != nil {
			return managed.ExternalUpdate{}, e.fail(n, err)
		}
	}
	a := *p.Addr
	if err := e.acct.aws.DeleteTags(ctx, a.AllocationID, p.RemoveTags...); err != nil {
		return managed.ExternalUpdate{}, e.fail(n, err)
	}
	if err := e.acct.aws.CreateTags(ctx, a.AllocationID, p.Tags); err != nil {
		return managed.ExternalUpdate{}, e.fail(n, err)
	}
	a.Tags = maps.Clone(a.Tags)
	if a.Tags == nil {
		a.Tags = map[string]string{}
	}
	maps.Copy(a.Tags, p.Tags)
	for _, k := range p.RemoveTags {
		delete(a.Tags, k)
	}
	if !p.Associate {
		e.acct.look.Remember(n.UID, a)
		return managed.ExternalUpdate{}, nil
	}
	assoc, err := e.acct.aws.AssociateAddress(ctx, a.AllocationID, e.nf.ENI, e.nf.PrimaryIP)
	switch {
	case aws.IsAlreadyAssociated(err):
		e.acct.look.Forget(n.UID, a.AllocationID)
		if taken := e.nodeTaken(ctx, a.AllocationID); taken != nil {
			return managed.ExternalUpdate{}, e.fail(n, taken)
		}
		return managed.ExternalUpdate{}, e.fail(n, reasonError(networkingv1alpha1.NodeElasticIPReasonAddressInUse,
			"%s (%s) was associated elsewhere meanwhile: %v", a.PublicIP, a.AllocationID, err))
	case aws.IsNotFound(err):
		// The interface or the address went away (the instance was
		// terminated): look again.
		e.acct.look.ForgetENI(e.nf.Instance)
		e.acct.look.Forget(n.UID, a.AllocationID)
		return managed.ExternalUpdate{}, e.fail(n, err)
	case err != nil:
		return managed.ExternalUpdate{}, e.fail(n, err)
	}
	e.associated(n, &a, assoc)
	return managed.ExternalUpdate{}, nil
}

// giveUp releases (Auto) or untags (Pool, Static) a duplicate address.
func (e *external) giveUp(ctx context.Context, n *networkingv1alpha1.NodeElasticIP, d aws.Address) error {
	dp := decide.PlanDelete(networkingv1alpha1.NodeElasticIPReleaseDelete, e.owner.Mode, d)
	return e.remove(ctx, n, d, dp)
}

// remove carries out a delete plan on a.
func (e *external) remove(ctx context.Context, n *networkingv1alpha1.NodeElasticIP, a aws.Address, dp decide.DeletePlan) error {
	e.acct.look.Forget(n.UID, a.AllocationID)
	if dp.Disassociate {
		if err := e.acct.aws.DisassociateAddress(ctx, a.AssociationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if dp.Release {
		if err := e.acct.aws.ReleaseAddress(ctx, a.AllocationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
		e.event(n, corev1.EventTypeNormal, reasonReleasedIP, actionRelease, "Released %s (%s)", a.PublicIP, a.AllocationID)
		return nil
	}
	if err := e.acct.aws.DeleteTags(ctx, a.AllocationID, dp.UntagKeys...); err != nil {
		return err
	}
	e.event(n, corev1.EventTypeNormal, reasonGivenBack, actionRelease, "Gave %s (%s) back", a.PublicIP, a.AllocationID)
	return nil
}

// Delete applies the release policy. The reconciler calls Observe again
// afterwards and removes the finalizer once the address no longer carries
// the NodeElasticIP's UID (released or given back).
func (e *external) Delete(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) (managed.ExternalDelete, error) {
	p := e.plan
	if p.Addr == nil {
		return managed.ExternalDelete{}, nil
	}
	for _, d := range p.Duplicates {
		if err := e.giveUp(ctx, n, d); err != nil {
			return managed.ExternalDelete{}, e.fail(n, err)
		}
	}
	dp := decide.PlanDelete(n.EffectiveReleasePolicy(), e.owner.Mode, *p.Addr)
	if err := e.remove(ctx, n, *p.Addr, dp); err != nil {
		return managed.ExternalDelete{}, e.fail(n, err)
	}
	return managed.ExternalDelete{}, nil
}

// readNode reads the NodeElasticIP's node from the cache (nil when it does
// not exist), or the node as this process patched it when the cache has
// not caught up with the patch yet.
func (e *external) readNode(ctx context.Context, name string) error {
	node := &corev1.Node{}
	if err := e.conn.kube.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			e.node = nil
			return nil
		}
		return fmt.Errorf("reading node %s: %w", name, err)
	}
	e.node = e.conn.nodes.Latest(node)
	return nil
}

// setStatus copies what is known about the address.
func setStatus(n *networkingv1alpha1.NodeElasticIP, a *aws.Address) {
	s := &n.Status
	if a == nil {
		s.AllocationID, s.PublicIP, s.AssociationID, s.NetworkInterfaceID, s.PrivateIP = "", "", "", "", ""
		return
	}
	s.AllocationID, s.PublicIP = a.AllocationID, a.PublicIP
	s.AssociationID, s.NetworkInterfaceID, s.PrivateIP = a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress
}

// reasoned is an error with the Ready reason it stands for.
type reasoned struct {
	reason xpv2.ConditionReason
	msg    string
}

func (r *reasoned) Error() string { return r.msg }

func reasonError(reason xpv2.ConditionReason, format string, args ...any) error {
	return &reasoned{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// classify maps an error to a stable Ready reason.
func classify(err error) xpv2.ConditionReason {
	var r *reasoned
	if errors.As(err, &r) {
		return r.reason
	}
	if configError(err) {
		return networkingv1alpha1.NodeElasticIPReasonProviderConfigError
	}
	return xpv2.ConditionReason(status.ReasonFor(err, string(networkingv1alpha1.NodeElasticIPReasonCloudError),
		status.Classifier{Reason: string(networkingv1alpha1.NodeElasticIPReasonCredentialsRejected), Matches: aws.IsCredentialsRejected},
		status.Classifier{Reason: string(networkingv1alpha1.NodeElasticIPReasonQuotaExceeded), Matches: aws.IsQuotaExceeded},
		status.Classifier{Reason: string(networkingv1alpha1.NodeElasticIPReasonThrottled), Matches: aws.IsThrottled},
		status.Classifier{Reason: string(networkingv1alpha1.NodeElasticIPReasonInvalidSpec), Matches: aws.IsInvalidParameter},
	))
}

// fail sets Ready from err, says so on the node when the reason is new,
// and returns err.
func (e *external) fail(n *networkingv1alpha1.NodeElasticIP, err error) error {
	reason := classify(err)
	setReady(n, decide.Unavailable(reason, err.Error()))
	e.failedEvent(n, reason, err.Error())
	return err
}

// stalledReasons are the Ready reasons no retry can fix: the spec, the
// node or the account must change.
var stalledReasons = map[xpv2.ConditionReason]bool{
	networkingv1alpha1.NodeElasticIPReasonInvalidSpec:       true,
	networkingv1alpha1.NodeElasticIPReasonInstanceIDUnknown: true,
	networkingv1alpha1.NodeElasticIPReasonInstanceIDChanged: true,
	networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP:  true,
	networkingv1alpha1.NodeElasticIPReasonAddressNotFound:   true,
}

// setReady sets the Ready condition and the kstatus conditions that go with
// it.
func setReady(n *networkingv1alpha1.NodeElasticIP, ready xpv2.Condition) {
	ready.ObservedGeneration = n.Generation
	n.SetConditions(ready)
	n.SetConditions(status.ManagedKstatus(ready, stalledReasons[ready.Reason])...)
}
