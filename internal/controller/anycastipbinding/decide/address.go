package decide

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
)

// Binding is what the decisions need to know about an AnycastIPBinding and
// its node.
type Binding struct {
	UID          types.UID
	NodeName     string
	InstanceID   string
	AddressType  string
	SpecAddress  string // spec.addressID
	ExternalName string // the address recorded on the binding
	// Cluster is this cluster's identity (TagCluster).
	Cluster string
	// LegacyUUID is aia-ip-controller's cluster identity, "" if the
	// cluster never ran it.
	LegacyUUID string
	// NodeAnnotation is the node's tke.cloud.tencent.com/anycast-ip-id.
	// The node writes it itself, so it only picks among addresses whose
	// tags prove them this cluster's (ThisClusters).
	NodeAnnotation string
}

// Candidates are the addresses Observe looked up for a binding whose
// address is not known yet.
type Candidates struct {
	// Owned carry this cluster's and this binding's ownership tags.
	Owned []tencentcloud.Address
	// Spec is the address spec.addressID names (nil: none or not found).
	Spec *tencentcloud.Address
	// OnInstance are the addresses bound to the node's instance, of any
	// type.
	OnInstance []tencentcloud.Address
	// Legacy carry aia-ip-controller's tags for this cluster and node.
	Legacy []tencentcloud.Address
}

// Verdict is the outcome of Select.
type Verdict struct {
	// Address is the binding's address (nil: none yet, allocate one unless
	// Reason is set).
	Address *tencentcloud.Address
	// Adopted says how a found address was taken over ("" when edgeplane
	// allocated it for this binding).
	Adopted string
	// Reason, when set, blocks the binding: a Ready reason of the API
	// package and a message for the condition and the node's Event.
	Reason  string
	Message string
}

// Blocked reports whether the binding cannot make progress.
func (v Verdict) Blocked() bool { return v.Reason != "" }

func boundTo(a tencentcloud.Address, instanceID string) bool {
	return (a.Status == tencentcloud.StatusBind || a.Status == tencentcloud.StatusBindENI || a.Status == tencentcloud.StatusBinding) &&
		a.InstanceID == instanceID
}

// IsBound reports whether a is bound (BIND) to instanceID: the only state
// in which the node gets untainted.
func IsBound(a *tencentcloud.Address, instanceID string) bool {
	return a != nil && instanceID != "" && a.InstanceID == instanceID &&
		(a.Status == tencentcloud.StatusBind || a.Status == tencentcloud.StatusBindENI)
}

func oldestFirst(as []tencentcloud.Address) []tencentcloud.Address {
	out := slices.Clone(as)
	slices.SortFunc(out, func(x, y tencentcloud.Address) int {
		return cmp.Or(cmp.Compare(x.CreatedTime, y.CreatedTime), cmp.Compare(x.ID, y.ID))
	})
	return out
}

// Select decides which address belongs to a binding whose address is not
// recorded yet, in this order:
//
//  1. one edgeplane allocated for this binding (its ownership tags), so a
//     crash between allocation and the status write never allocates twice;
//  2. spec.addressID: adopted when UNBIND or already bound to the node's
//     instance, refused when bound elsewhere, missing or of another type;
//  3. an address bound to the node's instance that aia-ip-controller
//     allocated for this node (its tags), that an earlier binding of this
//     cluster allocated for this node, or that the node's legacy
//     annotation names among this cluster's addresses (ThisClusters):
//     adopted, so a migrated node keeps its address and is never
//     re-tainted;
//  4. any other address bound to the instance blocks the binding
//     (InstanceHasPublicIP) rather than stealing or stacking addresses;
//  5. an unbound address aia-ip-controller allocated for this node;
//  6. nothing: allocate.
func Select(b Binding, c Candidates) Verdict {
	if owned := oldestFirst(c.Owned); len(owned) > 0 {
		return Verdict{Address: &owned[0]}
	}
	if b.SpecAddress != "" {
		a := c.Spec
		switch {
		case a == nil:
			return Verdict{Reason: networkingv1alpha1.AnycastReasonAddressNotFound,
				Message: fmt.Sprintf("address %s (spec.addressID) does not exist", b.SpecAddress)}
		case b.AddressType != "" && a.Type != b.AddressType:
			return Verdict{Reason: networkingv1alpha1.AnycastReasonAddressTypeMismatch,
				Message: fmt.Sprintf("address %s is of type %s, not %s", a.ID, a.Type, b.AddressType)}
		case a.InstanceID != "" && a.InstanceID != b.InstanceID:
			return Verdict{Reason: networkingv1alpha1.AnycastReasonAddressInUse,
				Message: fmt.Sprintf("address %s is bound to %s, not to the node's instance %s", a.ID, a.InstanceID, b.InstanceID)}
		}
		for _, o := range c.OnInstance {
			if o.ID != a.ID && boundTo(o, b.InstanceID) {
				return Verdict{Reason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP,
					Message: fmt.Sprintf("instance %s already has address %s (%s %s)", b.InstanceID, o.ID, o.Type, o.IP)}
			}
		}
		return Verdict{Address: a, Adopted: networkingv1alpha1.AdoptedSpec}
	}
	onInstance := oldestFirst(c.OnInstance)
	for _, a := range onInstance {
		if !boundTo(a, b.InstanceID) {
			continue
		}
		if source := adoptable(b, a); source != "" {
			if b.AddressType != "" && a.Type != b.AddressType {
				return Verdict{Reason: networkingv1alpha1.AnycastReasonAddressTypeMismatch,
					Message: fmt.Sprintf("address %s bound to instance %s is of type %s, not %s", a.ID, b.InstanceID, a.Type, b.AddressType)}
			}
			return Verdict{Address: &a, Adopted: source}
		}
	}
	for _, a := range onInstance {
		if boundTo(a, b.InstanceID) {
			return Verdict{Reason: networkingv1alpha1.AnycastReasonInstanceHasPublicIP,
				Message: fmt.Sprintf("instance %s already has address %s (%s %s), which edgeplane did not allocate for node %s", b.InstanceID, a.ID, a.Type, a.IP, b.NodeName)}
		}
	}
	for _, a := range oldestFirst(c.Legacy) {
		if a.Status == tencentcloud.StatusUnbind && a.InstanceID == "" && adoptable(b, a) == networkingv1alpha1.AdoptedLegacy &&
			(b.AddressType == "" || a.Type == b.AddressType) {
			return Verdict{Address: &a, Adopted: networkingv1alpha1.AdoptedLegacy}
		}
	}
	return Verdict{}
}

// AdoptedPrevious marks an address an earlier binding of this cluster
// allocated for the same node.
const AdoptedPrevious = "PreviousBinding"

// adoptable says why a (bound to the binding's instance, or unbound) may be
// adopted, or "".
func adoptable(b Binding, a tencentcloud.Address) string {
	switch {
	case b.LegacyUUID != "" && a.Tags[networkingv1alpha1.LegacyTagClusterUUID] == b.LegacyUUID &&
		a.Tags[networkingv1alpha1.LegacyTagNodeName] == b.NodeName:
		return networkingv1alpha1.AdoptedLegacy
	case b.Cluster != "" && a.Tags[TagCluster] == b.Cluster && a.Tags[TagNodeName] == b.NodeName:
		return AdoptedPrevious
	case b.NodeAnnotation != "" && a.ID == b.NodeAnnotation && ThisClusters(b, a):
		return networkingv1alpha1.AdoptedAnnotation
	}
	return ""
}

// ThisClusters reports whether a's tags prove it this cluster's: the
// legacy controller's cluster UUID (from the ConfigMap in kube-system,
// which only the cluster admin writes), or this cluster's identity on an
// address edgeplane allocated for an AnycastIPBinding. A node's
// annotation, a label or an address's name prove nothing: the node (or
// anybody with the account) writes them.
func ThisClusters(b Binding, a tencentcloud.Address) bool {
	t := a.Tags
	return (b.LegacyUUID != "" && t[networkingv1alpha1.LegacyTagClusterUUID] == b.LegacyUUID) ||
		(b.Cluster != "" && t[TagCluster] == b.Cluster && (t[TagOwnerKind] == OwnerKind || t[TagNodeName] != ""))
}

// Releasable reports whether deleting b may unbind and release a: its
// tags prove it this cluster's (ThisClusters, which covers every address
// edgeplane allocated for a binding and every one aia-ip-controller did),
// or b's author named it (spec.addressID; a binding is cluster-scoped, so
// its author is the cluster admin). Anything else a binding may hold (an
// address an earlier version adopted on the node's word) is left alone.
func Releasable(b Binding, a tencentcloud.Address) bool {
	return (b.SpecAddress != "" && a.ID == b.SpecAddress) || ThisClusters(b, a)
}

// Step is the next cloud action.
type Step string

// Steps while binding and while deleting.
const (
	// StepNone: nothing to do (bound, or gone while deleting).
	StepNone Step = "None"
	// StepWait: a task is running or the address is in a transitional
	// state; look again shortly.
	StepWait Step = "Wait"
	// StepAssociate: bind the UNBIND address to the instance.
	StepAssociate Step = "Associate"
	// StepDisassociate: unbind the address from the node's instance.
	StepDisassociate Step = "Disassociate"
	// StepRelease: release the UNBIND address.
	StepRelease Step = "Release"
	// StepBlocked: the address is bound to another instance; never touched.
	StepBlocked Step = "Blocked"
	// StepForget: while deleting, the address is bound to another instance
	// (someone rebound it): it is left alone and the binding lets go.
	StepForget Step = "Forget"
	// StepNotOurs: while deleting, the address is not proven this
	// cluster's (Releasable): it is left alone and the binding lets go.
	StepNotOurs Step = "NotOurs"
)

// Transitional states end by themselves when their task does.
func Transitional(status string) bool {
	switch status {
	case tencentcloud.StatusCreating, tencentcloud.StatusBinding, tencentcloud.StatusUnbinding, tencentcloud.StatusOffline:
		return true
	}
	return false
}

// BindStep is the next step toward a bound to instanceID.
func BindStep(a tencentcloud.Address, instanceID string) Step {
	switch {
	case Transitional(a.Status):
		return StepWait
	case IsBound(&a, instanceID):
		return StepNone
	case a.Status == tencentcloud.StatusUnbind:
		return StepAssociate
	default: // bound to another instance or an ENI
		return StepBlocked
	}
}

// DeleteStep is the next step toward releasing a (nil: gone). instanceID is
// the instance the binding bound it to: an address bound anywhere else is
// never unbound (someone rebound it on purpose), and one not proven this
// cluster's (releasable false) is never touched at all.
func DeleteStep(a *tencentcloud.Address, instanceID string, releasable bool) Step {
	switch {
	case a == nil:
		return StepNone
	case !releasable:
		return StepNotOurs
	case Transitional(a.Status):
		return StepWait
	case a.Status == tencentcloud.StatusUnbind:
		return StepRelease
	case a.InstanceID != "" && a.InstanceID == instanceID:
		return StepDisassociate
	default:
		return StepForget
	}
}

// TaskOverdue reports whether a task that started at startedAt has run for
// twice the task poll interval, long enough to ask the cloud whether it
// failed. A start time read back from the API server (metav1.Time) or from
// crossplane's RFC 3339 annotations has whole seconds: the task may have
// started up to a second after it, so such a time counts from the end of
// its second; otherwise every task recorded that way looked overdue up to
// a second early, and a normal one cost a DescribeTaskResult call.
func TaskOverdue(startedAt, now time.Time, poll time.Duration) bool {
	if startedAt.Nanosecond() == 0 {
		startedAt = startedAt.Add(time.Second)
	}
	return now.Sub(startedAt) >= 2*poll
}
