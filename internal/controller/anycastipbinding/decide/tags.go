package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeplane/edgeplane/internal/orphan"
	"github.com/edgeplane/edgeplane/internal/translator"
)

// The tag contract: every address edgeplane allocates for an
// AnycastIPBinding carries these tags from its creation (AllocateAddresses
// Tags), so a crash between the allocation and the status write never loses
// it, and the orphan sweep can tell this cluster's addresses from others'.
const (
	// TagCluster, TagOwnerKind (OwnerKind) and TagOwnerUID are the shared
	// ownership tags.
	TagCluster   = orphan.TagCluster
	TagOwnerKind = orphan.TagOwnerKind
	TagOwnerUID  = orphan.TagOwnerUID
	// TagNodeName is the node the address was allocated for.
	TagNodeName = "edgeplane.io/node-name"
	// TagInstanceID is the node's CVM instance.
	TagInstanceID = "edgeplane.io/instance-id"

	// TagDeletionPolicy is set on an address allocated for a binding whose
	// management policies leave out Delete.
	TagDeletionPolicy = orphan.TagDeletionPolicy

	// OwnerKind is TagOwnerKind's value.
	OwnerKind = "AnycastIPBinding"
	// DeletionPolicyOrphan is TagDeletionPolicy's value.
	DeletionPolicyOrphan = orphan.DeletionPolicyOrphan
)

// TagInput is what the creation tags are made of.
type TagInput struct {
	Cluster    string
	OwnerUID   types.UID
	NodeName   string
	InstanceID string
	// User are the binding's spec.tags; reserved keys never override
	// edgeplane's.
	User map[string]string
	// Orphan: the binding's management policies leave out Delete.
	Orphan bool
}

// Tags returns the tags an allocated address carries.
func Tags(in TagInput) map[string]string {
	out := make(map[string]string, len(in.User)+5)
	for k, v := range in.User {
		if !IsReservedTagKey(k) {
			out[k] = v
		}
	}
	out[TagCluster] = in.Cluster
	out[TagOwnerKind] = OwnerKind
	out[TagOwnerUID] = string(in.OwnerUID)
	out[TagNodeName] = in.NodeName
	out[TagInstanceID] = in.InstanceID
	if in.Orphan {
		out[TagDeletionPolicy] = DeletionPolicyOrphan
	}
	return out
}

// IsReservedTagKey reports keys users may not set: edgeplane's and the
// legacy controller's.
func IsReservedTagKey(k string) bool {
	return strings.HasPrefix(k, "edgeplane.io/") || strings.HasPrefix(k, "aia-")
}

// ClientToken is the AllocateAddresses ClientToken of a binding: derived
// from its UID only, so every retry (the SDK's after a timeout, or a later
// reconcile after a crash) gets the address the first call created.
func ClientToken(uid types.UID) string {
	// "aipb-" + a 36-character UID stays within the 64 ASCII characters
	// Tencent accepts.
	return "aipb-" + string(uid)
}

// AddressName is the address's display name in the console.
func AddressName(cluster, node string) string {
	name := "edgeplane-" + cluster + "-" + node
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// ParseTags parses the --anycastipbinding-tags flag: comma-separated key=value pairs.
// Keys must be non-empty, unique, at most 127 characters and not reserved;
// values at most 255 characters.
func ParseTags(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		switch {
		case !ok:
			return nil, fmt.Errorf("tag %q: want key=value", pair)
		case k == "" || len(k) > 127:
			return nil, fmt.Errorf("tag %q: the key must be 1-127 characters", pair)
		case len(v) > 255:
			return nil, fmt.Errorf("tag %q: the value must be at most 255 characters", k)
		case IsReservedTagKey(k):
			return nil, fmt.Errorf("tag %q: keys starting with edgeplane.io/ or aia- are reserved", k)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("tag %q appears twice", k)
		}
		out[k] = v
	}
	return out, nil
}

// FormatTags is ParseTags' inverse (keys sorted).
func FormatTags(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// ParseNodeSelector parses the --anycastipbinding-node-selector flag (a label selector,
// default tke.cloud.tencent.com/need-aia-ip=true) as every node translator
// does (translator.ParseNodeSelector): an empty selector is rejected, it
// would give every node an address.
func ParseNodeSelector(s string) (labels.Selector, error) { return translator.ParseNodeSelector(s) }
