package translate

import (
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// ClusterPolicySpec translates the data of the eks-config ConfigMap into the
// spec of the singleton ClusterBurstPolicy (DefaultClusterBurstPolicyName),
// as the eks-config translator does: AUTO_SCALE_EKS is the cluster-wide
// switch. ok is false when the data has no AUTO_SCALE_EKS key (nothing to
// translate); err is set when its value is not a switch.
func ClusterPolicySpec(data map[string]string) (spec schedulingv1alpha1.ClusterBurstPolicySpec, ok bool, err error) {
	v, ok := data[AnnotationAutoScaleEKS]
	if !ok {
		return spec, false, nil
	}
	enabled, err := decide.ParseSwitch(v)
	if err != nil {
		return spec, true, err
	}
	spec.Enabled = enabled
	return spec, true, nil
}
