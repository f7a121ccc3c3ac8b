package decide

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/aws"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// SweepTags are the tags the orphan sweep lists an account's addresses by:
// this cluster's and the kind's.
func SweepTags(cluster string) map[string]string {
	return map[string]string{TagCluster: cluster, TagOwnerKind: OwnerKind}
}

// SweepObject is the orphan sweep's view of one listed address. release
// says what removing it does: release it (Auto) or give it back (take
// edgeplane's tags off; Pool and Static). An address kept on purpose
// (management policies without Delete) is only ever reported.
func SweepObject(a aws.Address, cluster string) (obj orphan.CloudObject, release bool) {
	obj = orphan.CloudObject{
		ID:                 a.AllocationID,
		OwnerUID:           types.UID(a.Tags[TagOwnerUID]),
		HasClusterIdentity: cluster != "" && a.Tags[TagCluster] == cluster && a.Tags[TagOwnerKind] == OwnerKind,
		Description:        fmt.Sprintf("%s for node %s (%s)", a.PublicIP, a.Tags[TagNode], a.Tags[TagMode]),
	}
	if a.Tags[TagDeletionPolicy] == DeletionPolicyOrphan {
		obj.ReportOnly = "allocated or claimed for a NodeElasticIP whose management policies keep the address"
	}
	return obj, a.Tags[TagMode] == string(networkingv1alpha1.NodeElasticIPModeAuto)
}

// SweepOwners are the owners that keep addresses alive: the UIDs of live
// NodeElasticIPs, and the owner tags of the addresses a live NodeElasticIP
// records (an adopted address may still carry its former owner's UID
// until the adopter re-tags it).
func SweepOwners(listed []aws.Address, live sets.Set[types.UID], recorded sets.Set[string]) sets.Set[types.UID] {
	owners := live.Clone()
	for _, a := range listed {
		if recorded.Has(a.AllocationID) && a.Tags[TagOwnerUID] != "" {
			owners.Insert(types.UID(a.Tags[TagOwnerUID]))
		}
	}
	return owners
}
