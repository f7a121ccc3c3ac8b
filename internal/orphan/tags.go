package orphan

import (
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The ownership tags every cloud object edgeplane creates carries from its
// creation (AllocateAddress TagSpecifications, AllocateAddresses Tags), so a
// crash between the cloud call and the status write never loses the object,
// and a sweep can tell this cluster's objects, and their owners, from
// anybody else's. Each cloud-backed kind adds its own tags next to these.
const (
	// TagCluster is the cluster identity (the provider config's
	// clusterIdentity, or the manager's --cluster-name).
	TagCluster = "edgeplane.io/cluster"
	// TagOwnerKind is the kind of the owning CR.
	TagOwnerKind = "edgeplane.io/owner-kind"
	// TagOwnerUID is the UID of the owning CR.
	TagOwnerUID = "edgeplane.io/owner-uid"
	// TagNamespace is the namespace of the owning CR, on every object a
	// namespaced CR creates. The sweep of a tenant's account (its
	// ProviderConfig) lists only objects carrying this cluster's identity
	// and that tenant's namespace, so it never judges another tenant's
	// objects sharing the account, nor objects created before this tag
	// existed (those are left to a ClusterProviderConfig's sweep, which the
	// cluster admin owns).
	TagNamespace = "edgeplane.io/namespace"
	// TagDeletionPolicy is DeletionPolicyOrphan on an object created for a
	// CR whose management policies leave out Delete (crossplane's orphan
	// semantics): it is meant to outlive the CR, so sweeps only report it.
	TagDeletionPolicy = "edgeplane.io/deletion-policy"
	// DeletionPolicyOrphan is TagDeletionPolicy's value.
	DeletionPolicyOrphan = "Orphan"
)

// Deletes reports whether a CR's management policies let edgeplane delete
// its cloud object (none given means all, the API default). When they do
// not, the object is created with TagDeletionPolicy Orphan.
func Deletes(policies xpv2.ManagementPolicies) bool {
	if len(policies) == 0 {
		return true
	}
	return slices.ContainsFunc(policies, func(p xpv2.ManagementAction) bool {
		return p == xpv2.ManagementActionAll || p == xpv2.ManagementActionDelete
	})
}
