package decide

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// LegacyOwnerPrefix prefixes the synthetic owner the orphan sweep gives an
// address only the legacy controller tagged (it has no owner UID): its
// pod, "<namespace>/<pod>". Such an address is owned while its pod or a
// PodElasticIP for that pod (which adopts it) exists; otherwise it is a
// leak of the legacy controller's, which edgeplane reports and never
// releases: edgeplane did not allocate it.
const LegacyOwnerPrefix = "legacy-pod:"

// LegacyOwner is the synthetic owner of the legacy addresses of a pod key.
func LegacyOwner(podKey string) types.UID { return types.UID(LegacyOwnerPrefix + podKey) }

// LegacyVerdict says what the orphan sweep sees in an address listed by
// the legacy controller's cluster tag.
type LegacyVerdict struct {
	// Skip: not a legacy-only address of this cluster (edgeplane tagged it,
	// so the listing by this cluster's tag covers it, or it belongs to
	// another cluster, or it lacks the legacy pod tag).
	Skip bool
	// Pod is the legacy pod tag, "<namespace>/<pod>".
	Pod string
	// Namespace is the pod's namespace ("" when the tag is malformed: the
	// address then has no owner and is reported).
	Namespace string
	// OwnerUID is LegacyOwner(Pod).
	OwnerUID types.UID
}

// SweepLegacy classifies one address listed by the legacy controller's
// cluster tag (legacyCluster: its --cluster-name for this cluster).
func SweepLegacy(addr Address, legacyCluster string) LegacyVerdict {
	t := addr.Tags
	if legacyCluster == "" || t[LegacyTagCluster] != legacyCluster || t[LegacyTagPod] == "" {
		return LegacyVerdict{Skip: true}
	}
	if t[TagCluster] != "" || t[TagOwnerKind] != "" || t[TagOwnerUID] != "" {
		return LegacyVerdict{Skip: true}
	}
	v := LegacyVerdict{Pod: t[LegacyTagPod], OwnerUID: LegacyOwner(t[LegacyTagPod])}
	if ns, name, ok := strings.Cut(v.Pod, "/"); ok && ns != "" && name != "" && !strings.Contains(name, "/") {
		v.Namespace = ns
	}
	return v
}
