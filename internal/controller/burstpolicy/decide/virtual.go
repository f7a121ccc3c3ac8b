package decide

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Well-known virtual node names.
const (
	// TencentEKSInstanceType is the instance-type label value of eklet nodes.
	TencentEKSInstanceType = "eklet"
	// TencentEKSTaint is the eklet virtual node taint (no value, NoSchedule).
	TencentEKSTaint = "eks.tke.cloud.tencent.com/eklet"
	// VirtualKubeletTaint is virtual-kubelet's provider taint.
	VirtualKubeletTaint = "virtual-kubelet.io/provider"
	// VirtualKubeletTypeLabel / Value is the label virtual-kubelet nodes carry.
	VirtualKubeletTypeLabel = "type"
	VirtualKubeletTypeValue = "virtual-kubelet"
)

// VirtualNodeSelector returns the labels that identify a virtual node.
func VirtualNodeSelector(v schedulingv1alpha1.VirtualNodes) map[string]string {
	switch v.Preset {
	case schedulingv1alpha1.PresetCustom:
		return maps.Clone(v.NodeSelector)
	case schedulingv1alpha1.PresetVirtualKubelet:
		return map[string]string{VirtualKubeletTypeLabel: VirtualKubeletTypeValue}
	default:
		return map[string]string{corev1.LabelInstanceTypeStable: TencentEKSInstanceType}
	}
}

// VirtualNodeTolerations returns the tolerations a burst pod gets.
func VirtualNodeTolerations(v schedulingv1alpha1.VirtualNodes) []corev1.Toleration {
	switch v.Preset {
	case schedulingv1alpha1.PresetCustom:
		return append([]corev1.Toleration(nil), v.Tolerations...)
	case schedulingv1alpha1.PresetVirtualKubelet:
		return []corev1.Toleration{{Key: VirtualKubeletTaint, Operator: corev1.TolerationOpExists}}
	default:
		return []corev1.Toleration{{Key: TencentEKSTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	}
}

// IsVirtualNode reports whether node labels match the virtual node selector.
func IsVirtualNode(nodeLabels, selector map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if nodeLabels[k] != v {
			return false
		}
	}
	return true
}

// MissingTolerations returns the tolerations of want that have no equal
// entry in have, i.e. what bursting must add.
func MissingTolerations(have, want []corev1.Toleration) []corev1.Toleration {
	var out []corev1.Toleration
	for _, w := range want {
		found := false
		for _, h := range have {
			if h.MatchToleration(&w) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

// CanPin reports whether a pod's node selector can be extended with the
// virtual node selector: Kubernetes lets a gated pod gain node selector keys
// but not change existing ones.
func CanPin(nodeSelector, virtual map[string]string) bool {
	if len(virtual) == 0 {
		return false
	}
	for k, v := range virtual {
		if cur, ok := nodeSelector[k]; ok && cur != v {
			return false
		}
	}
	return true
}
