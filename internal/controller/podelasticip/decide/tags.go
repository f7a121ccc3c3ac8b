// Package decide holds PodElasticIP's pure decisions: the tag contract on
// Elastic IPs, which address belongs to a PodElasticIP, whether the pod is
// ready for an address, which pool address to claim, what deleting must do
// and which addresses the orphan sweep may touch. Nothing here does I/O, so
// everything is table-tested.
package decide

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud"
	"github.com/edgeplane/edgeplane/internal/controller/podelasticip/translate"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// The tag contract. Every address edgeplane allocates (Auto) carries these
// tags from its creation (AllocateAddress TagSpecifications); every address
// it claims (Pool, Static) gets them with the claim, before it is
// associated. A crash between a cloud call and the status write therefore
// never loses an address: Observe finds it again by these tags, and the
// orphan sweep can tell this cluster's addresses from others'.
const (
	// TagCluster, TagOwnerKind (OwnerKind) and TagOwnerUID are the shared
	// ownership tags. TagOwnerUID is removed when the PodElasticIP is
	// deleted and the address is kept (Retain, AfterDelay).
	TagCluster   = orphan.TagCluster
	TagOwnerKind = orphan.TagOwnerKind
	TagOwnerUID  = orphan.TagOwnerUID
	// TagNamespace is the PodElasticIP's namespace: the sweep of a tenant's
	// account lists only its namespace's addresses.
	TagNamespace = orphan.TagNamespace
	// TagPod is "<namespace>/<pod>", the pod the address serves.
	TagPod = "networking.edgeplane.io/pod"
	// TagMode is the allocation mode (Auto, Pool, Static).
	TagMode = "networking.edgeplane.io/mode"
	// TagClaim marks a Pool or Static address as claimed:
	// "<cluster>/<namespace>/<pod>". Concurrent claimers (in this cluster or
	// another sharing the pool) overwrite each other; association, which
	// EC2 grants to one of them only, decides, and the winner re-asserts
	// its claim.
	TagClaim = "networking.edgeplane.io/claim"
	// TagReleaseAfter, on a kept address (AfterDelay), is the RFC 3339 time
	// after which the orphan sweep may release (Auto) or unclaim it.
	TagReleaseAfter = "networking.edgeplane.io/release-after"
	// TagDeletionPolicy is set on an address allocated, claimed or adopted
	// for a PodElasticIP whose management policies leave out Delete.
	TagDeletionPolicy = orphan.TagDeletionPolicy

	// OwnerKind is TagOwnerKind's value.
	OwnerKind = "PodElasticIP"
	// DeletionPolicyOrphan is TagDeletionPolicy's value.
	DeletionPolicyOrphan = orphan.DeletionPolicyOrphan
)

// The legacy controller's tags (aws-pod-eip-controller pkg/config.go),
// read for adoption and removed when an adopted Pool or Static address is
// given back.
const (
	// LegacyTagType is the type annotation's key, on the address.
	LegacyTagType    = translate.Type
	LegacyTagCluster = "aws-samples.github.com/aws-pod-eip-controller-cluster-name"
	LegacyTagPod     = "aws-samples.github.com/aws-pod-eip-controller-pod"
)

// Owner identifies one PodElasticIP for the tag contract.
type Owner struct {
	Cluster   string
	UID       types.UID
	Namespace string
	Pod       string
	Mode      networkingv1alpha1.PodElasticIPAllocationMode
	// TagKey is the Pool or Static tag key.
	TagKey string
	// AllocationID is the Static allocation ID.
	AllocationID string
	// ExternalName is the allocation ID recorded on the PodElasticIP. The
	// tenant may write it too, so it names an address only together with
	// proof that the address is this PodElasticIP's (Classify).
	ExternalName string
	// PodIP is the pod's current IP (the kubelet's word) and PodENI the
	// ENI the cloud says holds it ("" when not looked up): an address
	// associated, or being bound, there is this PodElasticIP's after a
	// concurrent claimer overwrote or withdrew its tags.
	PodIP, PodENI string
	// LegacyCluster is the legacy controller's --cluster-name, for adoption
	// (empty: adoption off).
	LegacyCluster string
	// User are the spec.tags.
	User map[string]string
	// Orphan: the management policies leave out Delete, so the address
	// outlives the PodElasticIP (TagDeletionPolicy).
	Orphan bool
}

// PodKey is "<namespace>/<pod>", the legacy controller's key too.
func (o Owner) PodKey() string { return o.Namespace + "/" + o.Pod }

// ClaimValue is TagClaim's value for this owner.
func (o Owner) ClaimValue() string { return o.Cluster + "/" + o.PodKey() }

// Tags returns the ownership tags plus the user's tags (reserved keys never
// override edgeplane's).
func Tags(o Owner) map[string]string {
	out := make(map[string]string, len(o.User)+6)
	for k, v := range o.User {
		if !IsReservedTagKey(k) {
			out[k] = v
		}
	}
	out[TagCluster] = o.Cluster
	out[TagOwnerKind] = OwnerKind
	out[TagOwnerUID] = string(o.UID)
	out[TagNamespace] = o.Namespace
	out[TagPod] = o.PodKey()
	out[TagMode] = string(o.Mode)
	if o.Mode != networkingv1alpha1.PodElasticIPModeAuto {
		out[TagClaim] = o.ClaimValue()
	}
	if o.Orphan {
		out[TagDeletionPolicy] = DeletionPolicyOrphan
	}
	return out
}

// StaleTags returns the tag keys addr carries that o's tags no longer
// want: the deletion policy after Delete was added back to the management
// policies.
func StaleTags(addr Address, o Owner) []string {
	if _, ok := addr.Tags[TagDeletionPolicy]; ok && !o.Orphan {
		return []string{TagDeletionPolicy}
	}
	return nil
}

// IsReservedTagKey reports keys users may not set: AWS's, edgeplane's and
// the legacy controller's.
func IsReservedTagKey(k string) bool {
	return strings.HasPrefix(strings.ToLower(k), "aws:") || strings.HasPrefix(k, "edgeplane.io/") ||
		strings.HasPrefix(k, "networking.edgeplane.io/") || strings.HasPrefix(k, "aws-samples.github.com/")
}

// MissingTags returns the tags of want that addr lacks or has with another
// value; nil when addr carries them all.
func MissingTags(addr Address, want map[string]string) map[string]string {
	return cloud.MissingTags(addr.Tags, want)
}

// Match says how an address was recognised as a PodElasticIP's.
type Match string

const (
	// MatchNone: the address is not this PodElasticIP's.
	MatchNone Match = ""
	// MatchExternalName: its allocation ID is the recorded external name.
	MatchExternalName Match = "ExternalName"
	// MatchOwnerUID: it carries this PodElasticIP's UID (a crash after the
	// allocation or claim, before the external name was stored).
	MatchOwnerUID Match = "OwnerUID"
	// MatchKept: it was kept (AfterDelay) for a pod of the same name by an
	// earlier PodElasticIP of the same mode.
	MatchKept Match = "Kept"
	// MatchLegacy: the legacy controller allocated or claimed it for this
	// pod (adoption when migrating).
	MatchLegacy Match = "Legacy"
)

// Classify says whether addr is o's and how. The external name alone
// proves nothing (the PodElasticIP's author can write it): the address it
// names must also carry o's UID, or be associated (or being bound) with
// o's pod's current IP on the pod's ENI (a concurrent claimer overwrote or
// withdrew o's tags, and the association, which the cloud grants once,
// decides), or be o's by the tags a kept or legacy address is found by.
func Classify(addr Address, o Owner) Match {
	t := addr.Tags
	if o.ExternalName != "" && addr.AllocationID == o.ExternalName && recordedOwned(addr, o) {
		return MatchExternalName
	}
	if t[TagCluster] != o.Cluster {
		if o.LegacyCluster != "" && t[TagCluster] == "" && t[TagNamespace] == "" && t[TagOwnerKind] == "" && t[TagOwnerUID] == "" &&
			t[LegacyTagCluster] == o.LegacyCluster && t[LegacyTagPod] == o.PodKey() && t[LegacyTagType] == translate.TypeOf(o.Mode) && modeFits(addr, o) {
			return MatchLegacy
		}
		return MatchNone
	}
	if o.UID != "" && t[TagOwnerUID] == string(o.UID) {
		return MatchOwnerUID
	}
	if t[TagReleaseAfter] != "" && t[TagPod] == o.PodKey() &&
		t[TagMode] == string(o.Mode) && modeFits(addr, o) {
		return MatchKept
	}
	return MatchNone
}

// recordedOwned reports whether the address o's external name names is
// o's: it carries o's UID, or it is associated (or being bound) with the
// pod's current IP on the pod's ENI, which neither the PodElasticIP's
// author nor anything it writes decides.
func recordedOwned(addr Address, o Owner) bool {
	if o.UID != "" && addr.Tags[TagOwnerUID] == string(o.UID) {
		return true
	}
	return (addr.Associated() || addr.Pending == PendingBinding) &&
		o.PodIP != "" && o.PodENI != "" && addr.PrivateIPAddress == o.PodIP && addr.NetworkInterfaceID == o.PodENI
}

// modeFits checks that a kept or legacy address fits the mode's selector:
// a Pool address carries the pool's tag key, a Static one its tag or ID.
func modeFits(addr Address, o Owner) bool {
	switch o.Mode {
	case networkingv1alpha1.PodElasticIPModePool:
		_, ok := addr.Tags[o.TagKey]
		return ok
	case networkingv1alpha1.PodElasticIPModeStatic:
		if o.AllocationID != "" {
			return addr.AllocationID == o.AllocationID
		}
		return addr.Tags[o.TagKey] == o.PodKey()
	default:
		return true
	}
}

// Select picks o's address among addrs: the best match (external name,
// then owner UID, then kept, then legacy; ties broken by allocation ID) and
// the other addresses carrying o's UID, which are duplicates to clean up.
func Select(addrs []Address, o Owner) (best *Address, how Match, duplicates []Address) {
	rank := map[Match]int{MatchExternalName: 4, MatchOwnerUID: 3, MatchKept: 2, MatchLegacy: 1}
	type cand struct {
		a Address
		m Match
	}
	var cands []cand
	for _, a := range addrs {
		if m := Classify(a, o); m != MatchNone {
			cands = append(cands, cand{a, m})
		}
	}
	if len(cands) == 0 {
		return nil, MatchNone, nil
	}
	slices.SortStableFunc(cands, func(x, y cand) int {
		if c := cmp.Compare(rank[y.m], rank[x.m]); c != 0 {
			return c
		}
		// Prefer an associated address: it is the one the pod uses.
		if c := cmp.Compare(boolInt(y.a.Associated()), boolInt(x.a.Associated())); c != 0 {
			return c
		}
		return cmp.Compare(x.a.AllocationID, y.a.AllocationID)
	})
	first := cands[0].a
	for _, c := range cands[1:] {
		if c.a.AllocationID != first.AllocationID && c.a.Tags[TagOwnerUID] == string(o.UID) && o.UID != "" {
			duplicates = append(duplicates, c.a)
		}
	}
	return &first, cands[0].m, duplicates
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spread orders pool candidates by a hash of claimer and address.
func spread(seed, id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}

// KeptUntil parses TagReleaseAfter; ok is false when absent or malformed.
func KeptUntil(addr Address) (time.Time, bool) {
	v := addr.Tags[TagReleaseAfter]
	if v == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, v)
	return t, err == nil
}

// ReleaseTags are the tags removed when a Pool or Static address is given
// back: edgeplane's ownership and claim tags, and the legacy controller's
// (it removed its own tags the same way).
func ReleaseTags() []string {
	return []string{TagCluster, TagOwnerKind, TagOwnerUID, TagNamespace, TagPod, TagMode, TagClaim, TagReleaseAfter, TagDeletionPolicy,
		LegacyTagType, LegacyTagCluster, LegacyTagPod}
}
