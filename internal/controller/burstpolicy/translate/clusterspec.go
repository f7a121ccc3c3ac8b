package translate

import (
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
)

// ClusterPolicySpec translates the data of the eks-config ConfigMap into the
// spec of the singleton ClusterBurstPolicy (DefaultClusterBurstPolicyName),
// as the eks-config translator does: AUTO_SCALE_EKS is the cluster-wide
// switch. With it on, or unset (the legacy default), every pending pod the
// scheduler finds no local room for bursts, annotated or not (governs:
// AllPods), as the legacy controller tolerated every pending pod; with it
// off, only pods whose workload switches bursting on do. Pods burst onto the
// chart's Tencent EKS virtual nodes. err is set when the value is not a
// switch.
func ClusterPolicySpec(data map[string]string) (spec schedulingv1alpha1.ClusterBurstPolicySpec, err error) {
	enabled, err := decide.ParseSwitch(data[AnnotationAutoScaleEKS])
	if err != nil {
		return spec, err
	}
	spec.Enabled = enabled
	spec.VirtualNodes = schedulingv1alpha1.VirtualNodes{Preset: schedulingv1alpha1.PresetTencentEKS}
	spec.Governs = schedulingv1alpha1.GovernsAllPods
	if enabled != nil && !*enabled {
		spec.Governs = schedulingv1alpha1.GovernsSelectedPods
	}
	return spec, nil
}
