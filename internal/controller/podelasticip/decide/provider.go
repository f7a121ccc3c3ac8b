package decide

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	cloudv1alpha1 "github.com/edgeplane/edgeplane/apis/cloud/v1alpha1"
	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// tencentReservedTagPrefixes are the tag key prefixes Tencent Cloud keeps
// for itself ("a tag key cannot start with qcloud, tencent or project",
// Tag API InvalidParameter.ReservedTagKey).
var tencentReservedTagPrefixes = []string{"qcloud", "tencent", "project"}

// CheckProvider says whether spec can be acted on with a provider config
// of provider: reason is empty when it can, ProviderMismatch when spec
// carries the other cloud's settings (which the API server cannot see, as
// the provider config's cloud is not part of the PodElasticIP), InvalidSpec
// when the cloud would refuse its tag keys; msg says which field.
func CheckProvider(provider cloudv1alpha1.Provider, spec networkingv1alpha1.PodElasticIPSpec) (reason xpv2.ConditionReason, msg string) {
	mismatch := func(format string, args ...any) (xpv2.ConditionReason, string) {
		return networkingv1alpha1.PodElasticIPReasonProviderMismatch, fmt.Sprintf(format, args...)
	}
	id := spec.Allocation.AllocationID
	switch provider {
	case cloudv1alpha1.ProviderAWS:
		if spec.Tencent != nil {
			return mismatch("spec.tencent is Tencent Cloud's, but the provider config is an AWS one")
		}
		if id != "" && !strings.HasPrefix(id, "eipalloc-") {
			return mismatch("allocation.allocationID %s is not an EC2 allocation ID (eipalloc-...), and the provider config is an AWS one", id)
		}
	case cloudv1alpha1.ProviderTencentCloud:
		if spec.Allocation.PublicIPv4Pool != "" {
			return mismatch("allocation.publicIPv4Pool is AWS's, but the provider config is a Tencent Cloud one (use spec.tencent)")
		}
		if id != "" && !strings.HasPrefix(id, "eip-") {
			return mismatch("allocation.allocationID %s is not a Tencent Cloud address ID (eip-...), and the provider config is a Tencent Cloud one", id)
		}
		keys := slices.Sorted(maps.Keys(spec.Tags))
		if spec.Allocation.TagKey != "" {
			keys = append([]string{spec.Allocation.TagKey}, keys...)
		}
		for _, k := range keys {
			for _, p := range tencentReservedTagPrefixes {
				if strings.HasPrefix(strings.ToLower(k), p) {
					return networkingv1alpha1.PodElasticIPReasonInvalidSpec,
						fmt.Sprintf("tag key %q starts with %q, which Tencent Cloud keeps for itself", k, p)
				}
			}
		}
	default:
		return mismatch("the provider config's cloud %q has no elastic IPs edgeplane can give pods", provider)
	}
	return "", ""
}
