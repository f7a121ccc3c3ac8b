package decide

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
)

// instanceIDPattern is an EC2 instance ID.
var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8,17}$`)

// InstanceID is the EC2 instance in a node's spec.providerID, which the AWS
// cloud provider writes as aws:///<zone>/<instance-id>.
func InstanceID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws://")
	if !ok {
		if providerID == "" {
			return "", fmt.Errorf("the node has no spec.providerID (want aws:///<zone>/<instance-id>)")
		}
		return "", fmt.Errorf("the node's spec.providerID %q is not an AWS one (want aws:///<zone>/<instance-id>)", providerID)
	}
	id := rest[strings.LastIndex(rest, "/")+1:]
	if !instanceIDPattern.MatchString(id) {
		return "", fmt.Errorf("the node's spec.providerID %q names no EC2 instance (want aws:///<zone>/<instance-id>)", providerID)
	}
	return id, nil
}

// NodeInstance is the instance a NodeElasticIP acts on: the one it
// recorded (status.instanceID) once it has one, else the one the node's
// spec.providerID names. The providerID is set when the node registers and
// never changes; a node deleted and registered again under the same name
// (which its own kubelet may do) can name another instance, which is
// returned as changedTo and never followed: the address stays where it
// was, and a person decides.
func NodeInstance(recorded, providerID string) (instance, changedTo string, err error) {
	id, err := InstanceID(providerID)
	switch {
	case err != nil:
		return "", "", err
	case recorded != "" && id != recorded:
		return recorded, id, nil
	}
	return id, "", nil
}

// Node is what a pass found out about the node and its instance.
type Node struct {
	Found bool
	// Instance is the node's instance; InstanceErr why it is not known.
	Instance    string
	InstanceErr string
	// ChangedTo is the instance the node names now when it is not the
	// recorded Instance (NodeInstance).
	ChangedTo string
	// ENI and PrimaryIP are the instance's primary network interface and
	// its primary private IP ("" when the interface was not found).
	ENI       string
	PrimaryIP string
}

// On reports whether addr is associated with the node's primary private
// IP.
func (n Node) On(addr aws.Address) bool {
	return n.ENI != "" && addr.Associated() && addr.NetworkInterfaceID == n.ENI && addr.PrivateIPAddress == n.PrimaryIP
}

// Match says how an address was recognised as a NodeElasticIP's.
type Match string

const (
	// MatchNone: not this NodeElasticIP's.
	MatchNone Match = ""
	// MatchExternalName: its allocation ID is the recorded external name.
	MatchExternalName Match = "ExternalName"
	// MatchOwnerUID: it carries the NodeElasticIP's UID (a crash after the
	// allocation or claim, before the external name was stored).
	MatchOwnerUID Match = "OwnerUID"
	// MatchAdopted: it is on the node already and may be taken over (see
	// Adoptable).
	MatchAdopted Match = "Adopted"
)

// Adoptable reports whether an address found on the node's primary IP may
// become o's: an address of o's pool (or its static address) that nobody
// else owns — kubeip's assignment, or a person's — or, for Auto, one
// edgeplane allocated in this cluster for this node (a former
// NodeElasticIP of the node's). Anything else on the node is somebody
// else's, and o reports NodeHasElasticIP instead of taking it.
func Adoptable(addr aws.Address, o Owner) bool {
	uid := addr.Tags[TagOwnerUID]
	free := uid == "" || uid == string(o.UID)
	switch o.Mode {
	case networkingv1alpha1.NodeElasticIPModeStatic:
		return free && addr.AllocationID == o.AllocationID
	case networkingv1alpha1.NodeElasticIPModePool:
		return free && o.Pool != nil && Matches(addr, o.Pool.Filters)
	default:
		return addr.Tags[TagCluster] == o.Cluster && addr.Tags[TagOwnerKind] == OwnerKind && addr.Tags[TagNode] == o.Node &&
			addr.Tags[TagMode] == string(networkingv1alpha1.NodeElasticIPModeAuto)
	}
}

// Select picks o's address among addrs: the one recorded as its external
// name, else one carrying its UID, else an adoptable one on the node (the
// associated one first, ties to the lower allocation ID). The other
// addresses carrying its UID are duplicates to give up. onNode is an
// address on the node's primary IP that is not o's (nil: none).
func Select(addrs []aws.Address, o Owner, n Node) (best *aws.Address, how Match, duplicates []aws.Address, onNode *aws.Address) {
	rank := map[Match]int{MatchExternalName: 3, MatchOwnerUID: 2, MatchAdopted: 1}
	type cand struct {
		a aws.Address
		m Match
	}
	var cands []cand
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a.AllocationID] {
			continue
		}
		seen[a.AllocationID] = true
		switch {
		case o.ExternalName != "" && a.AllocationID == o.ExternalName:
			cands = append(cands, cand{a, MatchExternalName})
		case IsOwnedBy(a, o):
			cands = append(cands, cand{a, MatchOwnerUID})
		case n.On(a) && Adoptable(a, o):
			cands = append(cands, cand{a, MatchAdopted})
		case n.On(a):
			onNode = &a
		}
	}
	if len(cands) == 0 {
		return nil, MatchNone, nil, onNode
	}
	slices.SortStableFunc(cands, func(x, y cand) int {
		return cmp.Or(cmp.Compare(rank[y.m], rank[x.m]), cmp.Compare(boolInt(n.On(y.a)), boolInt(n.On(x.a))),
			cmp.Compare(x.a.AllocationID, y.a.AllocationID))
	})
	first := cands[0]
	for _, c := range cands[1:] {
		if IsOwnedBy(c.a, o) {
			duplicates = append(duplicates, c.a)
		} else if n.On(c.a) && onNode == nil {
			onNode = &c.a
		}
	}
	return &first.a, first.m, duplicates, onNode
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// PlanInput is what Observe knows after reading the node and the cloud.
type PlanInput struct {
	Owner    Owner
	Deleting bool
	Node     Node
	// Addr is the selected address (Select), nil if none.
	Addr  *aws.Address
	Match Match
	// Duplicates are other addresses carrying the NodeElasticIP's UID.
	Duplicates []aws.Address
	// OnNode is an address on the node's primary IP that is not Addr.
	OnNode *aws.Address
}

// Plan is Observe's verdict and the work Create and Update have to do.
type Plan struct {
	// Exists and UpToDate are Observe's answer to the reconciler.
	Exists, UpToDate bool
	// LateInit: Addr's allocation ID must be recorded as the external name.
	LateInit bool
	// Adopted: Addr was on the node and is taken over.
	Adopted bool
	// Ready is the Ready condition to set.
	Ready xpv2.Condition
	// Addr is the address to act on (nil if none).
	Addr *aws.Address
	// Tags are ownership tags to (re)write on Addr; RemoveTags keys to
	// delete from it.
	Tags       map[string]string
	RemoveTags []string
	// Duplicates are given up (Auto: released; others: untagged).
	Duplicates []aws.Address
	// Associate Addr with the node's primary IP.
	Associate bool
	// Bound: Addr is on the node (the node gets its marks).
	Bound bool
}

// Unavailable builds a Ready=False condition.
func Unavailable(reason xpv2.ConditionReason, msg string) xpv2.Condition {
	return xpv2.Condition{Type: xpv2.TypeReady, Status: corev1.ConditionFalse, Reason: reason, Message: msg, LastTransitionTime: metav1.Now()}
}

// Owned reports whether, during deletion, addr still has to be handled: it
// carries the NodeElasticIP's UID (a released one is gone, a given-back
// one has lost its tags).
func Owned(addr *aws.Address, o Owner) bool { return addr != nil && IsOwnedBy(*addr, o) }

// Decide computes the observation and the work of the next step.
func Decide(in PlanInput) Plan {
	o, n := in.Owner, in.Node
	if in.Deleting {
		ready := xpv2.Deleting()
		ready.Message = "the NodeElasticIP is being deleted; its address is released or given back by its release policy"
		if !Owned(in.Addr, o) {
			ready.Message = "the NodeElasticIP is being deleted; its address is released or given back"
		}
		return Plan{Exists: Owned(in.Addr, o), UpToDate: true, Addr: in.Addr, Ready: ready}
	}
	blocked := func(reason xpv2.ConditionReason, msg string) Plan {
		// Nothing to create or change until the node or the cloud does:
		// an address the NodeElasticIP has is kept meanwhile.
		return Plan{Exists: true, UpToDate: true, Addr: in.Addr, LateInit: in.Addr != nil && in.Addr.AllocationID != o.ExternalName,
			Ready: Unavailable(reason, msg)}
	}
	switch {
	case !n.Found:
		return blocked(networkingv1alpha1.NodeElasticIPReasonNodeNotFound, fmt.Sprintf("node %s does not exist", o.Node))
	case n.Instance == "":
		return blocked(networkingv1alpha1.NodeElasticIPReasonInstanceIDUnknown, n.InstanceErr)
	case n.ChangedTo != "":
		return blocked(networkingv1alpha1.NodeElasticIPReasonInstanceIDChanged,
			fmt.Sprintf("the NodeElasticIP's instance is %s, but node %s's spec.providerID now names %s (the node was registered again); "+
				"its address stays on %s: delete the NodeElasticIP to give the new instance one", n.Instance, o.Node, n.ChangedTo, n.Instance))
	case n.ENI == "":
		return blocked(networkingv1alpha1.NodeElasticIPReasonNetworkInterfaceNotFound,
			fmt.Sprintf("instance %s has no primary network interface in the account (terminated, or another account's)", n.Instance))
	}
	a := in.Addr
	if a == nil {
		if in.OnNode != nil {
			return blocked(networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP, nodeHasMessage(*in.OnNode, o, n))
		}
		return Plan{Ready: Unavailable(networkingv1alpha1.NodeElasticIPReasonAssociating, creatingMessage(o))}
	}
	p := Plan{Exists: true, Addr: a, LateInit: a.AllocationID != o.ExternalName, Adopted: in.Match == MatchAdopted}
	p.Tags = a.MissingTags(Tags(o))
	p.RemoveTags = StaleTags(*a, o)
	p.Duplicates = in.Duplicates
	switch {
	case n.On(*a):
		p.Bound = true
		p.Ready = xpv2.Available()
	case a.Associated():
		return blocked(networkingv1alpha1.NodeElasticIPReasonAddressInUse,
			fmt.Sprintf("address %s (%s) is associated with %s, not with the node's primary IP %s on %s",
				a.PublicIP, a.AllocationID, where(*a), n.PrimaryIP, n.ENI))
	case in.OnNode != nil:
		return blocked(networkingv1alpha1.NodeElasticIPReasonNodeHasElasticIP, nodeHasMessage(*in.OnNode, o, n))
	default:
		p.Associate = true
		p.Ready = Unavailable(networkingv1alpha1.NodeElasticIPReasonAssociating,
			fmt.Sprintf("associating %s (%s) with %s on %s", a.PublicIP, a.AllocationID, n.PrimaryIP, n.ENI))
	}
	p.UpToDate = len(p.Tags) == 0 && len(p.RemoveTags) == 0 && len(p.Duplicates) == 0 && !p.Associate
	return p
}

func where(a aws.Address) string {
	if a.InstanceID != "" {
		return fmt.Sprintf("%s on %s of instance %s", a.PrivateIPAddress, a.NetworkInterfaceID, a.InstanceID)
	}
	return fmt.Sprintf("%s on %s", a.PrivateIPAddress, a.NetworkInterfaceID)
}

func creatingMessage(o Owner) string {
	switch o.Mode {
	case networkingv1alpha1.NodeElasticIPModePool:
		return "claiming an address of the pool"
	case networkingv1alpha1.NodeElasticIPModeStatic:
		return "claiming " + o.AllocationID
	}
	return "allocating an address"
}

func nodeHasMessage(on aws.Address, o Owner, n Node) string {
	var why string
	switch o.Mode {
	case networkingv1alpha1.NodeElasticIPModePool:
		why = "it does not match the pool's filters or belongs to another object"
	case networkingv1alpha1.NodeElasticIPModeStatic:
		why = "it is not " + o.AllocationID
	default:
		why = "edgeplane did not allocate it for this node; to keep it, use mode Static with its allocationID"
	}
	return fmt.Sprintf("the node's primary IP %s on %s already carries %s (%s): %s", n.PrimaryIP, n.ENI, on.PublicIP, on.AllocationID, why)
}

// DeletePlan is what deleting a NodeElasticIP does to its address.
type DeletePlan struct {
	// Disassociate the address first.
	Disassociate bool
	// Release the address (policy Delete).
	Release bool
	// UntagKeys are removed (Retain: the address is given back).
	UntagKeys []string
}

// PlanDelete applies the release policy to addr. An address edgeplane did
// not allocate (Pool, Static, adopted) is never released, whatever the
// policy says.
func PlanDelete(policy networkingv1alpha1.NodeElasticIPReleasePolicy, mode networkingv1alpha1.NodeElasticIPAllocationMode, addr aws.Address) DeletePlan {
	p := DeletePlan{Disassociate: addr.Associated()}
	if policy == networkingv1alpha1.NodeElasticIPReleaseDelete && mode == networkingv1alpha1.NodeElasticIPModeAuto &&
		addr.Tags[TagMode] == string(networkingv1alpha1.NodeElasticIPModeAuto) {
		p.Release = true
		return p
	}
	p.UntagKeys = ReleaseKeys(addr)
	return p
}
