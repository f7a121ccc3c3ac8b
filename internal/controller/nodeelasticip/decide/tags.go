// Package decide holds NodeElasticIP's pure decisions: the tag contract on
// Elastic IPs, which address belongs to a NodeElasticIP or may be adopted
// from its node, which pool address to claim and in what order, what a
// pass does next, what deleting does, what the node's marks are and which
// addresses the orphan sweep may touch. Nothing here does I/O, so
// everything is table-tested.
package decide

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// The tag contract. Every address edgeplane allocates for a NodeElasticIP
// (Auto) carries these tags from its creation (AllocateAddress
// TagSpecifications); every address it claims or adopts (Pool, Static)
// gets them before it is associated (claimed) or right after it is
// adopted. A crash between a cloud call and the status write therefore
// never loses an address: Observe finds it again by its owner UID, and the
// orphan sweep can tell this cluster's addresses from others'.
const (
	// TagCluster, TagOwnerKind (OwnerKind) and TagOwnerUID are the shared
	// ownership tags.
	TagCluster   = orphan.TagCluster
	TagOwnerKind = orphan.TagOwnerKind
	TagOwnerUID  = orphan.TagOwnerUID
	// TagNode is the node the address serves.
	TagNode = "networking.edgeplane.io/node"
	// TagInstanceID is the node's EC2 instance.
	TagInstanceID = "networking.edgeplane.io/instance-id"
	// TagMode is the allocation mode (Auto, Pool, Static): the sweep
	// releases only Auto addresses and gives the others back.
	TagMode = "networking.edgeplane.io/mode"
	// TagDeletionPolicy is set on an address of a NodeElasticIP whose
	// management policies leave out Delete.
	TagDeletionPolicy = orphan.TagDeletionPolicy

	// OwnerKind is TagOwnerKind's value.
	OwnerKind = networkingv1alpha1.NodeElasticIPKind
	// DeletionPolicyOrphan is TagDeletionPolicy's value.
	DeletionPolicyOrphan = orphan.DeletionPolicyOrphan
)

// Owner identifies one NodeElasticIP for the tag contract and says what
// address it wants.
type Owner struct {
	Cluster string
	UID     types.UID
	Node    string
	// Instance is the node's instance ("" not known).
	Instance string
	Mode     networkingv1alpha1.NodeElasticIPAllocationMode
	// Pool is the reserved pool (Pool).
	Pool *networkingv1alpha1.NodeElasticIPPool
	// AllocationID is the Static address.
	AllocationID string
	// ExternalName is the allocation ID recorded on the NodeElasticIP.
	ExternalName string
	// User are the spec.tags.
	User map[string]string
	// Orphan: the management policies leave out Delete, so the address
	// outlives the NodeElasticIP (TagDeletionPolicy).
	Orphan bool
}

// Tags returns the ownership tags plus the user's tags (reserved keys never
// override edgeplane's).
func Tags(o Owner) map[string]string {
	out := make(map[string]string, len(o.User)+7)
	for k, v := range o.User {
		if !IsReservedTagKey(k) {
			out[k] = v
		}
	}
	out[TagCluster] = o.Cluster
	out[TagOwnerKind] = OwnerKind
	out[TagOwnerUID] = string(o.UID)
	out[TagNode] = o.Node
	out[TagMode] = string(o.Mode)
	if o.Instance != "" {
		out[TagInstanceID] = o.Instance
	}
	if o.Orphan {
		out[TagDeletionPolicy] = DeletionPolicyOrphan
	}
	return out
}

// StaleTags are the tag keys addr carries that o no longer wants: the
// deletion policy after Delete was added back to the management policies.
func StaleTags(addr aws.Address, o Owner) []string {
	if _, ok := addr.Tags[TagDeletionPolicy]; ok && !o.Orphan {
		return []string{TagDeletionPolicy}
	}
	return nil
}

// ReleaseKeys are edgeplane's tags the address carries: what giving it
// back (instead of releasing it) removes.
func ReleaseKeys(addr aws.Address) []string {
	var out []string
	for _, k := range []string{TagCluster, TagOwnerKind, TagOwnerUID, TagNode, TagInstanceID, TagMode, TagDeletionPolicy} {
		if _, ok := addr.Tags[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// IsReservedTagKey reports keys users may not set: AWS's and edgeplane's.
func IsReservedTagKey(k string) bool {
	return strings.HasPrefix(strings.ToLower(k), "aws:") || strings.HasPrefix(k, "edgeplane.io/") ||
		strings.HasPrefix(k, "networking.edgeplane.io/")
}

// IsOwnedBy reports whether addr carries o's owner UID.
func IsOwnedBy(addr aws.Address, o Owner) bool {
	return o.UID != "" && addr.Tags[TagOwnerUID] == string(o.UID)
}
