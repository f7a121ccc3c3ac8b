// Package orphans builds `kubectl edgeplane orphans`: for each provider
// config, the cloud addresses tagged with this cluster's identity that no
// live CR owns — what the manager's reverse-reconcile sweep reports in
// report mode. It runs the same decision (internal/orphan's Sweeper in
// ModeReport), once, and never changes the cloud.
//
// The tag contract (docs/architecture.md, "Reverse reconciliation"): every cloud
// object edgeplane creates carries the cluster identity (TagCluster), the
// owning kind (TagOwnerKind) and the owning CR's UID (TagOwnerUID). The
// owner kinds are a registry (OwnerKinds): one entry per cloud-backed kind.
package orphans

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeplane/edgeplane/internal/orphan"
)

// The ownership tags on every cloud object edgeplane creates.
const (
	TagCluster   = orphan.TagCluster
	TagOwnerKind = orphan.TagOwnerKind
	TagOwnerUID  = orphan.TagOwnerUID
	TagNamespace = orphan.TagNamespace
)

// OwnerKind is a kind whose CRs own cloud objects.
type OwnerKind struct {
	// Kind is the value of TagOwnerKind on the objects it owns.
	Kind string
	// Resource is where its CRs are listed.
	Resource schema.GroupVersionResource
}

// OwnerKinds are the cloud-backed kinds. Adding one is one entry.
func OwnerKinds() []OwnerKind {
	networking := schema.GroupVersion{Group: "networking.edgeplane.io", Version: "v1alpha1"}
	return []OwnerKind{
		{Kind: "PodElasticIP", Resource: networking.WithResource("podelasticips")},
		{Kind: "AnycastIPBinding", Resource: networking.WithResource("anycastipbindings")},
		{Kind: "NodeElasticIP", Resource: networking.WithResource("nodeelasticips")},
	}
}

// Address is one tagged cloud address, provider-neutral.
type Address struct {
	ID       string
	PublicIP string
	Tags     map[string]string
	// Created is when the cloud created it; zero when the cloud does not
	// say (AWS).
	Created time.Time
	// AttachedTo is what it is associated with (instance, ENI); empty if
	// nothing.
	AttachedTo string
}

// Finding is one row of the report.
type Finding struct {
	// ProviderConfig is "<Kind>/<name>" or "<Kind>/<namespace>/<name>".
	ProviderConfig string `json:"providerConfig"`
	Provider       string `json:"provider"`
	AddressID      string `json:"addressID"`
	PublicIP       string `json:"publicIP,omitempty"`
	// OwnerTag is "<owner kind>/<owner UID>" from the address's tags.
	OwnerTag string `json:"ownerTag,omitempty"`
	// Action is what the sweep does in report mode: Report (an orphan) or
	// Keep (unowned but within the grace period).
	Action string `json:"action"`
	Reason string `json:"reason"`
	// Created is when the address was created, if the cloud says.
	Created *time.Time `json:"created,omitempty"`
	// AttachedTo is what the address is associated with.
	AttachedTo string `json:"attachedTo,omitempty"`
}

// cloudObject maps an address to what the sweep judges. served has an
// entry per registered owner kind, true when the API server serves it: an
// address of another kind is reported, never deletable, because its owners
// cannot be listed. namespace is a tenant config's namespace (empty for a
// ClusterProviderConfig): the manager's sweep of a tenant's account never
// touches an address without that namespace's tag (another tenant's, or
// one created before addresses carried their namespace), so it is only
// reported here.
func cloudObject(a Address, identity, namespace string, served map[string]bool) orphan.CloudObject {
	o := orphan.CloudObject{
		ID:                 a.ID,
		CreatedAt:          a.Created,
		OwnerUID:           types.UID(a.Tags[TagOwnerUID]),
		HasClusterIdentity: identity != "" && a.Tags[TagCluster] == identity,
		Description:        a.PublicIP,
	}
	_, known := served[a.Tags[TagOwnerKind]]
	switch kind := a.Tags[TagOwnerKind]; {
	case kind == "":
		o.ReportOnly = "no " + TagOwnerKind + " tag"
	case !known:
		o.ReportOnly = fmt.Sprintf("owner kind %s is not a cloud-backed kind this plugin knows", kind)
	case !served[kind]:
		o.ReportOnly = fmt.Sprintf("owner kind %s is not served by this cluster, so its owners cannot be listed", kind)
	case a.AttachedTo != "":
		o.ReportOnly = "still associated with " + a.AttachedTo
	case namespace != "" && a.Tags[TagNamespace] != namespace:
		o.ReportOnly = fmt.Sprintf("not tagged %s=%s: the sweep of this tenant's account never touches it", TagNamespace, namespace)
	}
	return o
}

// findings turns a sweep report into rows, sorted by address ID.
func findings(pc, provider string, addrs map[string]Address, rep orphan.Report) []Finding {
	var out []Finding
	add := func(fs []orphan.Finding) {
		for _, f := range fs {
			a := addrs[f.Object.ID]
			row := Finding{
				ProviderConfig: pc, Provider: provider, AddressID: a.ID, PublicIP: a.PublicIP,
				Action: string(f.Decision.Action), Reason: f.Decision.Reason, AttachedTo: a.AttachedTo,
			}
			if k, uid := a.Tags[TagOwnerKind], a.Tags[TagOwnerUID]; k != "" || uid != "" {
				row.OwnerTag = strings.TrimSuffix(k+"/"+uid, "/")
			}
			if !a.Created.IsZero() {
				t := a.Created.UTC()
				row.Created = &t
			}
			out = append(out, row)
		}
	}
	add(rep.Found())
	add(rep.Pending)
	slices.SortFunc(out, func(a, b Finding) int { return strings.Compare(a.AddressID, b.AddressID) })
	return out
}
