package decide

import (
	"fmt"
	"net/netip"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// Pod is what the reconciler read about the PodElasticIP's pod.
type Pod struct {
	Found       bool
	UID         string
	Terminating bool
	Phase       corev1.PodPhase
	HostNetwork bool
	// IP is the pod's IPv4 address (status.podIPs), empty if none.
	IP       string
	HostIP   string
	NodeName string
}

// PodFrom extracts a Pod from a pod object (nil: not found).
func PodFrom(p *corev1.Pod) Pod {
	if p == nil {
		return Pod{}
	}
	out := Pod{
		Found:       true,
		UID:         string(p.UID),
		Terminating: p.DeletionTimestamp != nil,
		Phase:       p.Status.Phase,
		HostNetwork: p.Spec.HostNetwork,
		HostIP:      p.Status.HostIP,
		NodeName:    p.Spec.NodeName,
	}
	ips := []string{p.Status.PodIP}
	for _, ip := range p.Status.PodIPs {
		ips = append(ips, ip.IP)
	}
	for _, s := range ips {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
			out.IP = a.String()
			break
		}
	}
	return out
}

// Target returns the private IP an address should be associated with, or
// "" and the Ready reason and message saying why there is none.
func (p Pod) Target() (string, xpv2.ConditionReason, string) {
	switch {
	case !p.Found:
		return "", networkingv1alpha1.PodElasticIPReasonPodNotFound, "the pod does not exist"
	case p.Terminating:
		return "", networkingv1alpha1.PodElasticIPReasonPodNotRunning, "the pod is terminating"
	case p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed:
		return "", networkingv1alpha1.PodElasticIPReasonPodNotRunning, fmt.Sprintf("the pod has finished (%s)", p.Phase)
	case p.HostNetwork:
		return "", networkingv1alpha1.PodElasticIPReasonPodHasNoIP, "the pod uses the host network and has no IP of its own"
	case p.IP == "" && (p.Phase == corev1.PodPending || p.Phase == ""):
		return "", networkingv1alpha1.PodElasticIPReasonPodNotRunning, "the pod is pending and has no IP yet"
	case p.IP == "":
		return "", networkingv1alpha1.PodElasticIPReasonPodHasNoIP, "the pod has no IPv4 address"
	}
	return p.IP, "", ""
}

// Unavailable builds a Ready=False condition.
func Unavailable(reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// PlanInput is what Observe knows after reading the pod and the cloud.
type PlanInput struct {
	Owner    Owner
	Deleting bool
	// Invalid is why the spec cannot be acted on (translated from bad
	// legacy annotations); empty when it can.
	Invalid string
	Pod     Pod
	// Addr is the selected address (Select), nil if none.
	Addr  *Address
	Match Match
	// Duplicates are other addresses carrying this PodElasticIP's UID.
	Duplicates []Address
	// KnownAssociationID is status.associationID.
	KnownAssociationID string
}

// Plan is Observe's verdict and the work Update has to do.
type Plan struct {
	// Exists and UpToDate are Observe's answer to the reconciler.
	Exists   bool
	UpToDate bool
	// LateInit: the external name must be (re)recorded.
	LateInit bool
	// Ready is the Ready condition to set.
	Ready xpv2.Condition
	// Addr is the address to act on (nil if none).
	Addr *Address

	// ReleaseDuplicates are extra addresses to give up (Auto: release,
	// others: untag).
	ReleaseDuplicates []Address
	// Tags are ownership tags to (re)write on Addr.
	Tags map[string]string
	// RemoveTags are tag keys to delete from Addr (a kept address's
	// release-after once it is adopted).
	RemoveTags []string
	// Disassociate: Addr's current association must go first.
	Disassociate bool
	// AssociateIP is the private IP to associate Addr with ("" none).
	AssociateIP string
	// Wait: a cloud task runs on Addr (Addr.Pending); nothing is done to
	// it until the task ends, and the PodElasticIP is looked at again
	// soon.
	Wait bool
}

// Owned reports whether, during deletion, addr still has to be handled:
// it carries this PodElasticIP's UID and is not already kept, or it is an
// adopted legacy address.
func Owned(addr *Address, m Match, o Owner) bool {
	if addr == nil {
		return false
	}
	if m == MatchLegacy {
		return true
	}
	return o.UID != "" && addr.Tags[TagOwnerUID] == string(o.UID) && addr.Tags[TagReleaseAfter] == ""
}

// lost reports whether a Pool or Static address recorded as ours was
// claimed by someone else (another pod or cluster won it).
func lost(in PlanInput) bool {
	if in.Owner.Mode == networkingv1alpha1.PodElasticIPModeAuto || in.Addr == nil {
		return false
	}
	c := in.Addr.Tags[TagClaim]
	if c == "" || c == in.Owner.ClaimValue() {
		return false
	}
	// We hold the association: the other claimer lost and our claim is to
	// be re-asserted.
	return !(in.Addr.Associated() && in.Addr.AssociationID == in.KnownAssociationID)
}

// Decide computes the observation and Update's work.
func Decide(in PlanInput) Plan {
	if in.Deleting {
		return Plan{Exists: Owned(in.Addr, in.Match, in.Owner), UpToDate: true, Addr: in.Addr,
			Ready: xpv2.Deleting()}
	}
	if in.Invalid != "" {
		// Nothing is allocated for an unusable spec; an address allocated
		// before the spec became unusable is kept until deletion.
		return Plan{Exists: true, UpToDate: true, Addr: in.Addr,
			Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonInvalidSpec, in.Invalid)}
	}
	ip, reason, msg := in.Pod.Target()
	addr := in.Addr
	if lost(in) {
		addr = nil
	}
	if addr == nil {
		if ip == "" {
			// Nothing to allocate for yet: report existence so the managed
			// reconciler does not create; the pod's events wake us up.
			return Plan{Exists: true, UpToDate: true, Ready: Unavailable(reason, msg)}
		}
		return Plan{Exists: false, Ready: Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, MessageAllocating)}
	}
	p := Plan{Exists: true, Addr: addr, LateInit: addr.AllocationID != in.Owner.ExternalName}
	if addr.Pending != "" {
		// Whatever the task does, the next step waits for its end.
		p.UpToDate, p.Wait = true, true
		p.Ready = Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, PendingMessage(*addr, ip))
		return p
	}
	p.Tags = MissingTags(*addr, Tags(in.Owner))
	if addr.Tags[TagReleaseAfter] != "" {
		p.RemoveTags = []string{TagReleaseAfter}
	}
	p.RemoveTags = append(p.RemoveTags, StaleTags(*addr, in.Owner)...)
	p.ReleaseDuplicates = in.Duplicates
	switch {
	case ip == "":
		p.Disassociate = addr.Associated()
		p.Ready = Unavailable(reason, msg)
	case !addr.Associated() || addr.PrivateIPAddress != ip:
		p.Disassociate = addr.Associated()
		p.AssociateIP = ip
		p.Ready = Unavailable(networkingv1alpha1.PodElasticIPReasonAssociating, AssociatingMessage(addr.PublicIP, ip))
	default:
		p.Ready = xpv2.Available()
	}
	p.UpToDate = len(p.Tags) == 0 && len(p.RemoveTags) == 0 && len(p.ReleaseDuplicates) == 0 &&
		!p.Disassociate && p.AssociateIP == ""
	return p
}

// Cloud task states an address may be Pending in (Tencent Cloud's).
const (
	PendingCreating  = "CREATING"
	PendingBinding   = "BINDING"
	PendingUnbinding = "UNBINDING"
	PendingReleasing = "OFFLINING"
)

// PendingMessage is the Ready message while a task runs on addr: the same
// as the step that started it says, so the passes that wait for the task
// find nothing new to write.
func PendingMessage(addr Address, podIP string) string {
	switch {
	case addr.Pending == PendingCreating:
		return MessageAllocating
	case addr.Pending == PendingBinding && podIP != "" && addr.PrivateIPAddress == podIP:
		return AssociatingMessage(addr.PublicIP, podIP)
	}
	return fmt.Sprintf("waiting for %s: it is %s", addr.AllocationID, addr.Pending)
}

// MessageAllocating is the Ready message while an address is allocated.
const MessageAllocating = "allocating an address"

// AssociatingMessage is the Ready message while publicIP is associated
// with podIP.
func AssociatingMessage(publicIP, podIP string) string {
	return fmt.Sprintf("associating %s with pod IP %s", publicIP, podIP)
}

// DeletePlan is what deleting a PodElasticIP does to its address.
type DeletePlan struct {
	// Disassociate the address first.
	Disassociate bool
	// Release the address (Delete policy).
	Release bool
	// UntagKeys are removed (Retain: the address is given back).
	UntagKeys []string
	// Tags are written (AfterDelay: TagReleaseAfter).
	Tags map[string]string
}

// PlanDelete applies the release policy to addr.
func PlanDelete(policy networkingv1alpha1.PodElasticIPReleasePolicy, mode networkingv1alpha1.PodElasticIPAllocationMode,
	addr Address, now time.Time, delay time.Duration) DeletePlan {
	p := DeletePlan{Disassociate: addr.Associated()}
	if policy == networkingv1alpha1.PodElasticIPReleaseAfterDelay && addr.Tags[TagOwnerKind] != OwnerKind {
		// A legacy address that was never adopted cannot be kept: it has
		// none of the tags a later PodElasticIP would find it by.
		policy = networkingv1alpha1.PodElasticIPReleaseRetain
		if mode == networkingv1alpha1.PodElasticIPModeAuto {
			policy = networkingv1alpha1.PodElasticIPReleaseDelete
		}
	}
	switch policy {
	case networkingv1alpha1.PodElasticIPReleaseDelete:
		if mode == networkingv1alpha1.PodElasticIPModeAuto {
			p.Release = true
			return p
		}
		// The API refuses Delete for Pool and Static; never release an
		// address edgeplane did not allocate.
		p.UntagKeys = ReleaseKeys(addr)
	case networkingv1alpha1.PodElasticIPReleaseAfterDelay:
		p.Tags = map[string]string{TagReleaseAfter: now.Add(delay).UTC().Format(time.RFC3339)}
	default:
		p.UntagKeys = ReleaseKeys(addr)
	}
	return p
}

// ReleaseKeys are the ReleaseTags the address carries: what untagging it
// (instead of releasing it) removes.
func ReleaseKeys(addr Address) []string {
	var out []string
	for _, k := range ReleaseTags() {
		if _, ok := addr.Tags[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// SweepVerdict says what the orphan sweep sees in one of this cluster's
// addresses.
type SweepVerdict struct {
	// Skip: not listed (kept for a pod, or not a PodElasticIP address).
	Skip bool
	// OwnerUID is the owning PodElasticIP's UID.
	OwnerUID string
	// BornAt is when the grace period starts (zero: first seen).
	BornAt time.Time
	// Release: the orphan is released (Auto); otherwise only untagged.
	Release bool
	// ReportOnly, when not empty, says why the orphan is only ever
	// reported (neither released nor untagged).
	ReportOnly string
}

const reportOnlyOrphan = "allocated or claimed for a PodElasticIP whose management policies leave out Delete: the address is meant to outlive it"

// SweepTags are the tags the orphan sweep lists one account's addresses
// by: this cluster's identity and, for a tenant's account (namespace not
// empty), that tenant's namespace. A tenant's account may hold addresses
// of other tenants and of other clusters; the sweep never judges them.
func SweepTags(cluster, namespace string) map[string]string {
	tags := map[string]string{TagCluster: cluster}
	if namespace != "" {
		tags[TagNamespace] = namespace
	}
	return tags
}

// InSweepScope reports whether addr carries every one of SweepTags: a
// second check on what the cloud's tag filter returned, since a wrongly
// released address cannot be brought back.
func InSweepScope(addr Address, cluster, namespace string) bool {
	for k, v := range SweepTags(cluster, namespace) {
		if addr.Tags[k] != v {
			return false
		}
	}
	return true
}

// Sweep classifies one address listed by this cluster's tag.
func Sweep(addr Address, now time.Time) SweepVerdict {
	if addr.Tags[TagOwnerKind] != OwnerKind {
		return SweepVerdict{Skip: true}
	}
	v := SweepVerdict{OwnerUID: addr.Tags[TagOwnerUID],
		Release: addr.Tags[TagMode] == string(networkingv1alpha1.PodElasticIPModeAuto)}
	if addr.Tags[TagDeletionPolicy] == DeletionPolicyOrphan {
		v.ReportOnly = reportOnlyOrphan
	}
	if until, ok := KeptUntil(addr); ok {
		if now.Before(until) {
			return SweepVerdict{Skip: true}
		}
		v.BornAt = until
	}
	return v
}
