package decide

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/orphan"
)

// LegacyOwnerPrefix prefixes the synthetic owner of an address
// aia-ip-controller allocated (it has no owner UID tag): its node. Such an
// address is owned while its node exists and is only ever reported.
const LegacyOwnerPrefix = "legacy-node:"

// SweepObject is the orphan sweep's view of an address listed by this
// cluster's identity tag (or the legacy controller's). An address bound to
// an instance other than the one in its tags is never deleted: someone
// rebound it on purpose.
func SweepObject(a tencentcloud.Address, cluster, legacyUUID string) orphan.CloudObject {
	obj := orphan.CloudObject{
		ID:                 a.ID,
		OwnerUID:           types.UID(a.Tags[TagOwnerUID]),
		HasClusterIdentity: cluster != "" && a.Tags[TagCluster] == cluster,
		Description:        fmt.Sprintf("%s %s %s node=%s", a.Type, a.IP, a.Status, NodeOfAddress(a, legacyUUID)),
	}
	if t, err := time.Parse(time.RFC3339, a.CreatedTime); err == nil {
		obj.CreatedAt = t
	} else if t, err := time.Parse(time.DateTime, a.CreatedTime); err == nil {
		obj.CreatedAt = t
	}
	if !obj.HasClusterIdentity && legacyUUID != "" && a.Tags[networkingv1alpha1.LegacyTagClusterUUID] == legacyUUID {
		obj.OwnerUID = types.UID(LegacyOwnerPrefix + a.Tags[networkingv1alpha1.LegacyTagNodeName])
	}
	want := a.Tags[TagInstanceID]
	if want == "" {
		want = a.Tags[networkingv1alpha1.LegacyTagInstanceID]
	}
	if a.InstanceID != "" && a.InstanceID != want {
		obj.ReportOnly = fmt.Sprintf("bound to instance %s, not to the instance %q in its tags", a.InstanceID, want)
	}
	if a.Tags[TagDeletionPolicy] == DeletionPolicyOrphan {
		obj.ReportOnly = "allocated for a binding whose management policies keep the address"
	}
	if a.NetworkInterfaceID != "" && a.Status == tencentcloud.StatusBindENI {
		obj.ReportOnly = fmt.Sprintf("bound to network interface %s", a.NetworkInterfaceID)
	}
	return obj
}

// NodeOfAddress is the node an address was allocated for, from its tags.
func NodeOfAddress(a tencentcloud.Address, legacyUUID string) string {
	if n := a.Tags[TagNodeName]; n != "" {
		return n
	}
	if legacyUUID != "" && a.Tags[networkingv1alpha1.LegacyTagClusterUUID] == legacyUUID {
		return a.Tags[networkingv1alpha1.LegacyTagNodeName]
	}
	return ""
}

// SweepOwners is the set of owners that keep addresses alive: the UIDs of
// live bindings, the tag UIDs of addresses a live binding records (adopted
// ones carry another binding's UID), and the tag UIDs of addresses whose
// node still exists (an address is only an orphan once its binding and its
// node are gone), plus the synthetic owners of legacy addresses whose node
// exists.
func SweepOwners(listed []tencentcloud.Address, bindingUIDs sets.Set[types.UID], recorded sets.Set[string], nodes sets.Set[string], legacyUUID string) sets.Set[types.UID] {
	owners := sets.New[types.UID]()
	owners = owners.Union(bindingUIDs)
	for _, a := range listed {
		uid := types.UID(a.Tags[TagOwnerUID])
		node := NodeOfAddress(a, legacyUUID)
		alive := recorded.Has(a.ID) || (node != "" && nodes.Has(node))
		if !alive {
			continue
		}
		if uid != "" {
			owners.Insert(uid)
		}
		if legacyUUID != "" && a.Tags[networkingv1alpha1.LegacyTagClusterUUID] == legacyUUID {
			owners.Insert(types.UID(LegacyOwnerPrefix + a.Tags[networkingv1alpha1.LegacyTagNodeName]))
		}
	}
	return owners
}
