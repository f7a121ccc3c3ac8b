package podelasticip

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/orphan"
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

// errPrivateIPInUse: the pod's private IP carries another Elastic IP, so
// EC2 refuses ours there (reason PrivateIPInUse).
var errPrivateIPInUse = errors.New("the pod's private IP already carries another Elastic IP")

// Event reason of a refused association onto an occupied private IP.
const reasonPrivateIPInUse = "PrivateIPInUse"

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
	dups  []aws.Address
	match decide.Match
	// podAddr is the address the pod is marked for by SyncCluster (nil:
	// the pod is left as it is).
	podAddr *aws.Address
}

var (
	_ managed.TypedExternalClient[*networkingv1alpha1.PodElasticIP] = &external{}
	_ reconciler.ClusterSyncer[*networkingv1alpha1.PodElasticIP]    = &external{}
)

// Disconnect implements managed.TypedExternalClient; clients are shared.
func (e *external) Disconnect(context.Context) error { return nil }

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

	addrs, err := e.addresses(ctx, cr)
	if err != nil {
		setReady(cr, decide.Unavailable(classify(err), "cannot list addresses: "+err.Error()))
		return managed.ExternalObservation{}, err
	}
	best, how, dups := decide.Select(addrs, e.owner)
	e.dups, e.match = dups, how
	e.plan = decide.Decide(decide.PlanInput{
		Owner: e.owner, Deleting: meta.WasDeleted(cr), Invalid: cr.GetAnnotations()[networkingv1alpha1.AnnotationPodElasticIPInvalid],
		Pod: e.ps, Addr: best, Match: how, Duplicates: dups, KnownAssociationID: cr.Status.AssociationID,
	})
	setStatus(cr, e.plan.Addr, e.ps)
	setReady(cr, e.plan.Ready)
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
	if e.plan.UpToDate && !meta.WasDeleted(cr) && e.plan.Addr != nil {
		e.podAddr = e.plan.Addr
	}
	return managed.ExternalObservation{
		ResourceExists: e.plan.Exists, ResourceUpToDate: e.plan.UpToDate,
	}, nil
}

// addresses returns the candidates for this PodElasticIP's address: the
// one just written (no describe), or a listing fresh enough to be sure of.
func (e *external) addresses(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) ([]aws.Address, error) {
	ext := meta.GetExternalName(cr)
	deleting := meta.WasDeleted(cr)
	if ext != "" && !deleting {
		if a, ok := e.acct.look.Recent(ext); ok {
			return []aws.Address{a}, nil
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
func setStatus(cr *networkingv1alpha1.PodElasticIP, a *aws.Address, p decide.Pod) {
	s := &cr.Status
	if a == nil {
		s.AllocationID, s.PublicIP, s.AssociationID, s.NetworkInterfaceID, s.PrivateIP, s.PodUID, s.NodeName = "", "", "", "", "", "", ""
		return
	}
	s.AllocationID, s.PublicIP = a.AllocationID, a.PublicIP
	s.AssociationID, s.NetworkInterfaceID, s.PrivateIP = a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress
	if a.Associated() && p.IP != "" && a.PrivateIPAddress == p.IP {
		s.PodUID, s.NodeName = p.UID, p.NodeName
	} else {
		s.PodUID, s.NodeName = "", ""
	}
}

// classify maps a cloud error to a stable reason.
func classify(err error) xpv2.ConditionReason {
	switch {
	case errors.Is(err, errPrivateIPInUse):
		return networkingv1alpha1.PodElasticIPReasonPrivateIPInUse
	case aws.IsCredentialsRejected(err):
		return networkingv1alpha1.PodElasticIPReasonCredentialsRejected
	case aws.IsQuotaExceeded(err):
		return networkingv1alpha1.PodElasticIPReasonQuotaExceeded
	case aws.IsThrottled(err):
		return networkingv1alpha1.PodElasticIPReasonThrottled
	case aws.IsInvalidParameter(err):
		return networkingv1alpha1.PodElasticIPReasonInvalidSpec
	default:
		return networkingv1alpha1.PodElasticIPReasonCloudError
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
	a, err := e.acct.aws.AllocateAddress(ctx, aws.AllocateRequest{PublicIPv4Pool: cr.Spec.Allocation.PublicIPv4Pool, Tags: decide.Tags(e.owner)})
	if err != nil {
		// After a timeout the address may exist: the next Observe looks for
		// it by its creation tags before anything is allocated again.
		return managed.ExternalCreation{}, fail(cr, classify(err), err)
	}
	meta.SetExternalName(cr, a.AllocationID)
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
// associate it (EC2 lets only one claimer associate an unassociated address
// when reassociation is off), then verify the claim and re-assert it if a
// concurrent claimer overwrote it. A claimer that loses the association
// withdraws its tags (only where they are still its own) and tries the next
// candidate.
func (e *external) claim(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, ip string) error {
	eni, err := e.acct.look.ENI(ctx, ip, e.ps.HostIP)
	if err != nil {
		if aws.IsNotFound(err) {
			return fail(cr, networkingv1alpha1.PodElasticIPReasonNetworkInterfaceNotFound, err)
		}
		return fail(cr, classify(err), err)
	}
	const rounds, perRound = 3, 4
	for range rounds {
		var cands []aws.Address
		if e.owner.Mode == networkingv1alpha1.PodElasticIPModePool {
			addrs, err := e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{TagKeys: []string{e.owner.TagKey}})
			if err != nil {
				return fail(cr, classify(err), err)
			}
			cands = decide.PoolCandidates(addrs, e.owner)
			if len(cands) == 0 {
				return fail(cr, networkingv1alpha1.PodElasticIPReasonPoolExhausted,
					fmt.Errorf("no free address carries tag key %q", e.owner.TagKey))
			}
		} else {
			q := aws.AddressQuery{Tags: map[string]string{e.owner.TagKey: e.owner.PodKey()}}
			if e.owner.AllocationID != "" {
				q = aws.AddressQuery{AllocationIDs: []string{e.owner.AllocationID}}
			}
			addrs, err := e.acct.aws.DescribeAddresses(ctx, q)
			if err != nil {
				return fail(cr, classify(err), err)
			}
			a, why := decide.StaticCandidate(addrs, e.owner, ip)
			if a == nil {
				return fail(cr, xpv2.ConditionReason(why), fmt.Errorf("the static address (%s) is not usable: %s", staticSelector(e.owner), why))
			}
			cands = []aws.Address{*a}
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
		return fail(cr, networkingv1alpha1.PodElasticIPReasonAddressInUse, fmt.Errorf("the static address (%s) was taken by another claimer", staticSelector(e.owner)))
	}
	return fail(cr, networkingv1alpha1.PodElasticIPReasonPoolExhausted, fmt.Errorf("lost every address with tag key %q to concurrent claimers", e.owner.TagKey))
}

func staticSelector(o decide.Owner) string {
	if o.AllocationID != "" {
		return o.AllocationID
	}
	return o.TagKey + "=" + o.PodKey()
}

func (e *external) tryClaim(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a aws.Address, eni aws.NetworkInterface, ip string) (bool, error) {
	tags := decide.Tags(e.owner)
	if err := e.acct.aws.CreateTags(ctx, a.AllocationID, tags); err != nil {
		return false, err
	}
	assoc := a.AssociationID
	if !(a.Associated() && a.PrivateIPAddress == ip) {
		var err error
		assoc, err = e.acct.aws.AssociateAddress(ctx, a.AllocationID, eni.ID, ip)
		switch {
		case aws.IsAlreadyAssociated(err):
			e.withdraw(ctx, a.AllocationID, tags)
			// Another address on the pod's IP refuses every candidate
			// alike: stop instead of cycling through the pool.
			if inUse := e.targetInUse(ctx, a, eni.ID, ip); inUse != nil {
				return false, inUse
			}
			return false, nil
		case err != nil:
			return false, err
		}
	}
	// Verify: a concurrent claimer may have overwritten the claim between
	// our tagging and our association; we hold the association, so the
	// address is ours and the claim is re-asserted.
	got, err := e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{AllocationIDs: []string{a.AllocationID}})
	if err != nil {
		return false, err
	}
	if len(got) == 1 {
		if miss := decide.MissingTags(got[0], tags); len(miss) > 0 {
			if err := e.acct.aws.CreateTags(ctx, a.AllocationID, miss); err != nil {
				return false, err
			}
		}
	}
	maps.Copy(a.Tags, tags)
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = assoc, eni.ID, ip
	e.acct.look.Remember(a)
	meta.SetExternalName(cr, a.AllocationID)
	setStatus(cr, &a, e.ps)
	e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonClaimed, "Claim", "Claimed %s (%s) and associated it with pod IP %s on %s",
		a.PublicIP, a.AllocationID, ip, eni.ID)
	return true, nil
}

// targetInUse, after EC2 refused to associate a with ip on eniID because
// of an existing association, finds out whether another address sits on
// ip. It returns an errPrivateIPInUse error naming the holder, or nil when
// the refusal was about a itself (or the look failed: the caller then
// treats the refusal as before).
func (e *external) targetInUse(ctx context.Context, a aws.Address, eniID, ip string) error {
	enis, err := e.acct.aws.DescribeNetworkInterfaces(ctx, "network-interface-id", []string{eniID})
	if err != nil {
		return nil
	}
	var eniPublic string
	if len(enis) == 1 {
		eniPublic = enis[0].PublicIPs[ip]
	}
	var visible []aws.Address
	if eniPublic == "" {
		// A pod IP from a delegated prefix is not among the ENI's listed
		// private IPs; the account's own addresses still show it.
		if visible, err = e.acct.aws.DescribeAddresses(ctx, aws.AddressQuery{NetworkInterfaceID: eniID, PrivateIPAddress: ip}); err != nil {
			return nil
		}
	}
	holder := decide.ForeignHolder(eniPublic, visible, a)
	if holder == "" {
		return nil
	}
	return fmt.Errorf("%w: %s is associated with %s on %s; remove that association and the PodElasticIP retries", errPrivateIPInUse, holder, ip, eniID)
}

// withdraw removes the claim tags we wrote, each only if it still has our
// value (EC2 DeleteTags with a value is conditional), so a winner's tags
// survive.
func (e *external) withdraw(ctx context.Context, id string, tags map[string]string) {
	var del []ec2types.Tag
	for _, k := range []string{decide.TagClaim, decide.TagOwnerUID, decide.TagPod} {
		if v, ok := tags[k]; ok {
			del = append(del, ec2types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
		}
	}
	if _, err := e.acct.aws.API().DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: []string{id}, Tags: del}); err != nil {
		log.FromContext(ctx).V(1).Info("Could not withdraw a lost claim; the winner re-asserts its own", "allocationID", id, "error", err.Error())
	}
}

// Update carries out Observe's plan: clean up duplicates, write missing
// ownership tags, and (re)associate the address with the pod's current IP.
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
		if err := e.acct.aws.CreateTags(ctx, a.AllocationID, p.Tags); err != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		if a.Tags == nil {
			a.Tags = map[string]string{}
		}
		maps.Copy(a.Tags, p.Tags)
	}
	if len(p.RemoveTags) > 0 {
		if err := e.acct.aws.DeleteTags(ctx, a.AllocationID, p.RemoveTags...); err != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		for _, k := range p.RemoveTags {
			delete(a.Tags, k)
		}
	}
	if p.Disassociate {
		if err := e.acct.aws.DisassociateAddress(ctx, a.AssociationID); aws.IgnoreNotFound(err) != nil {
			e.acct.look.Forget(a.AllocationID)
			return managed.ExternalUpdate{}, err
		}
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonDisassociated, "Disassociate",
			"Disassociated %s from %s", a.PublicIP, a.PrivateIPAddress)
		a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = "", "", ""
	}
	if p.AssociateIP != "" {
		if err := e.associate(ctx, cr, &a, p.AssociateIP, false); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	e.acct.look.Remember(a)
	setStatus(cr, &a, e.ps)
	e.podAddr = &a
	return managed.ExternalUpdate{}, nil
}

// associate associates a (allocated in this pass: the Event says so) with
// the pod IP ip on the pod's ENI, and records it in a and the Ready
// condition; a failure is Ready=False with its reason and the legacy
// controller's Warning on the pod.
func (e *external) associate(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, a *aws.Address, ip string, allocated bool) error {
	eni, err := e.acct.look.ENI(ctx, ip, e.ps.HostIP)
	if err != nil {
		e.acct.look.Remember(*a)
		reason := classify(err)
		if aws.IsNotFound(err) {
			reason = networkingv1alpha1.PodElasticIPReasonNetworkInterfaceNotFound
		}
		setReady(cr, decide.Unavailable(reason, err.Error()))
		e.conn.podEvent(e.pod, cr, corev1.EventTypeWarning, reasonLegacyFailed, err.Error())
		return err
	}
	id, err := e.acct.aws.AssociateAddress(ctx, a.AllocationID, eni.ID, ip)
	if aws.IsAlreadyAssociated(err) {
		if inUse := e.targetInUse(ctx, *a, eni.ID, ip); inUse != nil {
			e.conn.event(cr, e.pod, corev1.EventTypeWarning, reasonPrivateIPInUse, "Associate", "%v", inUse)
			err = inUse
		}
	}
	if err != nil {
		e.acct.look.Forget(a.AllocationID)
		if aws.IsInvalidParameter(err) || aws.IsNotFound(err) {
			e.acct.look.ForgetENI(ip)
		}
		setReady(cr, decide.Unavailable(classify(err), err.Error()))
		e.conn.podEvent(e.pod, cr, corev1.EventTypeWarning, reasonLegacyFailed, err.Error())
		return err
	}
	a.AssociationID, a.NetworkInterfaceID, a.PrivateIPAddress = id, eni.ID, ip
	verb := "Associated"
	if allocated {
		verb = "Allocated and associated"
	}
	e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonAssociated, "Associate",
		"%s %s (%s) with pod IP %s on %s", verb, a.PublicIP, a.AllocationID, ip, eni.ID)
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

// giveUp releases (Auto) or un-tags (Pool, Static) a duplicate address.
func (e *external) giveUp(ctx context.Context, cr *networkingv1alpha1.PodElasticIP, d aws.Address) error {
	if d.Associated() {
		if err := e.acct.aws.DisassociateAddress(ctx, d.AssociationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
	}
	if e.owner.Mode == networkingv1alpha1.PodElasticIPModeAuto {
		if err := e.acct.aws.ReleaseAddress(ctx, d.AllocationID); aws.IgnoreNotFound(err) != nil {
			return err
		}
		e.acct.look.Forget(d.AllocationID)
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonReleased, "Release", "Released duplicate %s (%s)", d.PublicIP, d.AllocationID)
		return nil
	}
	e.acct.look.Forget(d.AllocationID)
	return e.acct.aws.DeleteTags(ctx, d.AllocationID, decide.ReleaseKeys(d)...)
}

// Delete applies the release policy. The reconciler calls Observe again
// afterwards and removes the finalizer once the address is no longer
// this PodElasticIP's (released, given back or kept for the pod's name).
func (e *external) Delete(ctx context.Context, cr *networkingv1alpha1.PodElasticIP) (managed.ExternalDelete, error) {
	p := e.plan
	if p.Addr == nil {
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
		if err := e.acct.aws.DisassociateAddress(ctx, a.AssociationID); aws.IgnoreNotFound(err) != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, e.pod, corev1.EventTypeNormal, reasonDisassociated, "Disassociate", "Disassociated %s from %s", a.PublicIP, a.PrivateIPAddress)
	}
	if err := e.unlabelPod(ctx, cr); err != nil {
		return managed.ExternalDelete{}, err
	}
	switch {
	case dp.Release:
		if err := e.acct.aws.ReleaseAddress(ctx, a.AllocationID); aws.IgnoreNotFound(err) != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonReleased, "Release", "Released %s (%s)", a.PublicIP, a.AllocationID)
	case len(dp.Tags) > 0:
		if err := e.acct.aws.CreateTags(ctx, a.AllocationID, dp.Tags); err != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonKept, "Keep", "Kept %s (%s) for pod %s until %s",
			a.PublicIP, a.AllocationID, e.owner.PodKey(), dp.Tags[decide.TagReleaseAfter])
	default:
		if err := e.acct.aws.DeleteTags(ctx, a.AllocationID, dp.UntagKeys...); err != nil {
			return managed.ExternalDelete{}, err
		}
		e.conn.event(cr, nil, corev1.EventTypeNormal, reasonGivenBack, "GiveBack", "Gave %s (%s) back", a.PublicIP, a.AllocationID)
	}
	return managed.ExternalDelete{}, nil
}

// setReady sets the Ready condition and the kstatus conditions that go with
// it: Stalled for an invalid spec (only a person can fix it), Reconciling
// while the address is being allocated or associated or waits for the pod.
func setReady(cr *networkingv1alpha1.PodElasticIP, ready xpv2.Condition) {
	cr.SetConditions(ready)
	cr.SetConditions(status.ManagedKstatus(ready, ready.Reason == networkingv1alpha1.PodElasticIPReasonInvalidSpec)...)
}
