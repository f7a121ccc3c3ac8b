package decide

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// A claim (Pool, Static) takes an address edgeplane did not allocate, in
// an account tenants and clusters may share, so it takes only what is
// provably free for its owner: an address no one else's ownership tags
// name (OwnedElsewhere) and, beyond that, one the cluster admin lets
// claims take at all (ClaimPolicy). The spec of a PodElasticIP is its
// tenant's word, never enough on its own.

// Refusal says why a claim may not take an address: a Ready reason and a
// message (zero: it may).
type Refusal struct {
	Reason  xpv2.ConditionReason
	Message string
}

// Refused reports whether r refuses.
func (r Refusal) Refused() bool { return r.Reason != "" }

// OwnedElsewhere names the tag that shows addr belongs to another owner
// than o: another cluster, namespace, kind, PodElasticIP or pod (a kept
// address), or the legacy controller's claim for another cluster or pod.
// It returns "" when addr carries no ownership tag but o's own, or only
// those of an address kept for o's pod in o's cluster (which o may take
// back). Values are left out of the message: they name other tenants.
func OwnedElsewhere(addr Address, o Owner) string {
	t := addr.Tags
	other := func(key, want string) bool {
		v, ok := t[key]
		return ok && v != want
	}
	// A kept address still carries the UID of the PodElasticIP that kept
	// it; kept for o's pod in o's cluster, it is o's to take back.
	keptForO := t[TagReleaseAfter] != "" && t[TagPod] == o.PodKey() && t[TagCluster] == o.Cluster
	switch {
	case other(TagCluster, o.Cluster):
		return "it carries another cluster's identity (tag " + TagCluster + ")"
	case other(TagNamespace, o.Namespace):
		return "it belongs to another namespace (tag " + TagNamespace + ")"
	case other(TagOwnerKind, OwnerKind):
		return "it belongs to another kind of object (tag " + TagOwnerKind + ")"
	case !keptForO && other(TagOwnerUID, string(o.UID)):
		return "it belongs to another PodElasticIP (tag " + TagOwnerUID + ")"
	case other(TagPod, o.PodKey()):
		return "it is another pod's (tag " + TagPod + ")"
	case t[TagReleaseAfter] != "" && t[TagPod] != o.PodKey():
		return "it is kept for another pod (tag " + TagReleaseAfter + ")"
	case other(LegacyTagCluster, o.LegacyCluster):
		return "aws-pod-eip-controller holds it for another cluster (tag " + LegacyTagCluster + ")"
	case other(LegacyTagPod, o.PodKey()):
		return "aws-pod-eip-controller holds it for another pod (tag " + LegacyTagPod + ")"
	}
	return ""
}

// CheckClaim says whether o may claim addr, ownership and policy alike
// (not its association, which the modes judge): AddressInUse when another
// claimer's claim tag is on it, AddressOwnedElsewhere when another owner's
// tags are, AddressNotAllowed when the admin's policy does not let claims
// take it.
func CheckClaim(addr Address, o Owner, policy ClaimPolicy) Refusal {
	if c := addr.Tags[TagClaim]; c != "" && c != o.ClaimValue() {
		return Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressInUse,
			Message: fmt.Sprintf("address %s is claimed by another PodElasticIP", addr.AllocationID)}
	}
	if why := OwnedElsewhere(addr, o); why != "" {
		return Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressOwnedElsewhere,
			Message: fmt.Sprintf("address %s is not this PodElasticIP's to claim: %s", addr.AllocationID, why)}
	}
	if !policy.Allows(addr, o.Namespace) {
		return Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressNotAllowed,
			Message: fmt.Sprintf("address %s carries none of the tags the cluster admin lets Pool and Static claim (%s)", addr.AllocationID, policy)}
	}
	return Refusal{}
}

// ClaimPolicy is the cluster admin's bound on what Pool and Static
// PodElasticIPs may claim: an address must carry one of its tags. It is
// the manager's --podelasticip-claimable-tags, one policy over every
// provider config, so nothing a tenant writes (its PodElasticIP, its
// ProviderConfig) can widen it. The zero policy lets claims take nothing.
type ClaimPolicy struct {
	selectors []TagSelector
}

// TagSelector matches an address carrying Key, with Value unless AnyValue.
// A Value of NamespacePlaceholder matches the claiming PodElasticIP's
// namespace, so one selector gives each tenant its own addresses.
type TagSelector struct {
	Key      string
	Value    string
	AnyValue bool
}

// NamespacePlaceholder, as a selector's value, stands for the claiming
// PodElasticIP's namespace.
const NamespacePlaceholder = "{namespace}"

// Tag length limits both clouds accept (AWS: 128 and 256 characters;
// Tencent Cloud: 127 and 255).
const (
	maxTagKey   = 127
	maxTagValue = 255
)

// ParseClaimPolicy parses the flag: comma-separated selectors, each a tag
// key (any value) or key=value; empty lets claims take nothing. A key may
// not be reserved (edgeplane's own tags never make an address free), nor
// appear twice.
func ParseClaimPolicy(s string) (ClaimPolicy, error) {
	var p ClaimPolicy
	if strings.TrimSpace(s) == "" {
		return p, nil
	}
	seen := map[TagSelector]bool{}
	for _, item := range strings.Split(s, ",") {
		k, v, hasValue := strings.Cut(strings.TrimSpace(item), "=")
		sel := TagSelector{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v), AnyValue: !hasValue}
		switch {
		case sel.Key == "" || len(sel.Key) > maxTagKey:
			return ClaimPolicy{}, fmt.Errorf("claimable tag %q: the key must be 1-%d characters", item, maxTagKey)
		case len(sel.Value) > maxTagValue:
			return ClaimPolicy{}, fmt.Errorf("claimable tag %q: the value must be at most %d characters", item, maxTagValue)
		case IsReservedTagKey(sel.Key):
			return ClaimPolicy{}, fmt.Errorf("claimable tag %q: keys starting with aws:, edgeplane.io/, networking.edgeplane.io/ or aws-samples.github.com/ are reserved", item)
		case seen[sel]:
			return ClaimPolicy{}, fmt.Errorf("claimable tag %q appears twice", item)
		}
		seen[sel] = true
		p.selectors = append(p.selectors, sel)
	}
	return p, nil
}

// Allows reports whether addr carries one of the policy's tags, for a
// claimer in namespace.
func (p ClaimPolicy) Allows(addr Address, namespace string) bool {
	return slices.ContainsFunc(p.selectors, func(s TagSelector) bool {
		v, ok := addr.Tags[s.Key]
		switch {
		case !ok:
			return false
		case s.AnyValue:
			return true
		case s.Value == NamespacePlaceholder:
			return v == namespace
		}
		return v == s.Value
	})
}

// String is the policy as the flag spells it, for messages.
func (p ClaimPolicy) String() string {
	if len(p.selectors) == 0 {
		return "none: --podelasticip-claimable-tags is empty"
	}
	parts := make([]string, len(p.selectors))
	for i, s := range p.selectors {
		parts[i] = s.Key
		if !s.AnyValue {
			parts[i] += "=" + s.Value
		}
	}
	return "--podelasticip-claimable-tags=" + strings.Join(parts, ",")
}

// PoolCandidates returns the addresses a Pool claimer may try, in the
// order to try them: unassociated, with no cloud task running on them,
// carrying the pool's tag key, and claimable by o (CheckClaim). The order
// is a hash of claimer and address, so concurrent claimers mostly start on
// different addresses. With none, the refusal says why: AddressNotAllowed
// when free pool addresses exist but the admin's policy lets claims take
// none of them, PoolExhausted otherwise.
func PoolCandidates(addrs []Address, o Owner, policy ClaimPolicy) ([]Address, Refusal) {
	var out []Address
	notAllowed := 0
	for _, a := range addrs {
		if _, ok := a.Tags[o.TagKey]; !ok || a.Associated() || a.Pending != "" {
			continue
		}
		switch CheckClaim(a, o, policy).Reason {
		case "":
			out = append(out, a)
		case networkingv1alpha1.PodElasticIPReasonAddressNotAllowed:
			notAllowed++
		}
	}
	switch {
	case len(out) > 0:
	case notAllowed > 0:
		return nil, Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressNotAllowed,
			Message: fmt.Sprintf("%d free address(es) carry tag key %q, but none carries a tag the cluster admin lets Pool and Static claim (%s)", notAllowed, o.TagKey, policy)}
	default:
		return nil, Refusal{Reason: networkingv1alpha1.PodElasticIPReasonPoolExhausted,
			Message: fmt.Sprintf("no free address carries tag key %q", o.TagKey)}
	}
	seed := o.ClaimValue() + "/" + string(o.UID)
	slices.SortFunc(out, func(x, y Address) int {
		return cmp.Or(cmp.Compare(spread(seed, x.AllocationID), spread(seed, y.AllocationID)), cmp.Compare(x.AllocationID, y.AllocationID))
	})
	return out, Refusal{}
}

// StaticCandidate picks the Static address among addrs (found by the tag
// value or the allocation ID) and otherwise says why none is usable:
// AddressNotFound when none matches; else the first match's (by
// allocation ID) CheckClaim refusal, or AddressInUse when it is associated
// (or being associated) with something other than podIP or busy with
// another cloud task.
func StaticCandidate(addrs []Address, o Owner, podIP string, policy ClaimPolicy) (*Address, Refusal) {
	var matches []Address
	for _, a := range addrs {
		if modeFits(a, o) {
			matches = append(matches, a)
		}
	}
	if len(matches) == 0 {
		return nil, Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressNotFound,
			Message: fmt.Sprintf("no address is %s", o.StaticSelector())}
	}
	slices.SortFunc(matches, func(x, y Address) int { return cmp.Compare(x.AllocationID, y.AllocationID) })
	var first Refusal
	for _, a := range matches {
		r := CheckClaim(a, o, policy)
		switch {
		case r.Refused():
		case a.Associated() && a.PrivateIPAddress != podIP,
			a.Pending != "" && !(a.Pending == PendingBinding && a.PrivateIPAddress == podIP):
			r = Refusal{Reason: networkingv1alpha1.PodElasticIPReasonAddressInUse,
				Message: fmt.Sprintf("address %s is associated with something else or busy", a.AllocationID)}
		default:
			return &a, Refusal{}
		}
		if !first.Refused() {
			first = r
		}
	}
	return nil, first
}

// StaticSelector describes the Static address o wants.
func (o Owner) StaticSelector() string {
	if o.AllocationID != "" {
		return o.AllocationID
	}
	return "tagged " + o.TagKey + "=" + o.PodKey()
}
