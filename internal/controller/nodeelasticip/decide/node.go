package decide

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// Taint is the NoSchedule taint with key that a node carries until its
// address is associated.
func Taint(key string) corev1.Taint {
	return corev1.Taint{Key: key, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

// Marks are the node marks a NodeElasticIP keeps: the taint key (empty:
// none) and whether kubeip's kubip_assigned label is written too.
type Marks struct {
	TaintKey    string
	KubeIPLabel bool
}

// KubeIPValue is kubeip's label value for ip: the address with its dots
// replaced by underscores.
func KubeIPValue(ip string) string { return strings.ReplaceAll(ip, ".", "_") }

// labelKeys are the label keys of m.
func (m Marks) labelKeys() []string {
	keys := []string{networkingv1alpha1.LabelNodeElasticIP}
	if m.KubeIPLabel {
		keys = append(keys, networkingv1alpha1.LegacyLabelKubeIPAssigned)
	}
	return keys
}

// BoundWant is the node with address (allocationID, ip) on it: labelled and
// annotated with it, untainted.
func BoundWant(m Marks, allocationID, ip string) nodepatch.Want {
	w := nodepatch.Want{Taint: Taint(m.TaintKey),
		Labels:      map[string]*string{networkingv1alpha1.LabelNodeElasticIP: ptr.To(ip)},
		Annotations: map[string]*string{networkingv1alpha1.AnnotationNodeElasticIPAllocationID: ptr.To(allocationID)}}
	if m.KubeIPLabel {
		w.Labels[networkingv1alpha1.LegacyLabelKubeIPAssigned] = ptr.To(KubeIPValue(ip))
	}
	if m.TaintKey == "" {
		w.Taint = corev1.Taint{}
	}
	return w
}

// PendingWant is the node waiting for its address: tainted, without
// address marks (they would name an address that is not on it).
func PendingWant(m Marks) nodepatch.Want {
	w := nodepatch.Want{Taint: Taint(m.TaintKey), Tainted: true, Labels: map[string]*string{},
		Annotations: map[string]*string{networkingv1alpha1.AnnotationNodeElasticIPAllocationID: nil}}
	for _, k := range m.labelKeys() {
		w.Labels[k] = nil
	}
	if m.TaintKey == "" {
		w.Taint = corev1.Taint{}
	}
	return w
}

// CleanWant is the node once its NodeElasticIP is gone: untainted, and
// without the marks when they name the address (allocationID, ip) —
// another NodeElasticIP of the node may have marked it since.
func CleanWant(node *corev1.Node, m Marks, allocationID, ip string) nodepatch.Want {
	w := nodepatch.Want{Taint: Taint(m.TaintKey), Labels: map[string]*string{}, Annotations: map[string]*string{}}
	if m.TaintKey == "" {
		w.Taint = corev1.Taint{}
	}
	if allocationID != "" && node.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID] == allocationID {
		w.Annotations[networkingv1alpha1.AnnotationNodeElasticIPAllocationID] = nil
	}
	if ip != "" && node.Labels[networkingv1alpha1.LabelNodeElasticIP] == ip {
		w.Labels[networkingv1alpha1.LabelNodeElasticIP] = nil
	}
	if ip != "" && m.KubeIPLabel && node.Labels[networkingv1alpha1.LegacyLabelKubeIPAssigned] == KubeIPValue(ip) {
		w.Labels[networkingv1alpha1.LegacyLabelKubeIPAssigned] = nil
	}
	return w
}

// NeedsTaintAtAdmission is the Node webhook's decision: a node the
// selector picks that has no address yet gets the taint in the request
// that creates it, or labels it for the selector, so the scheduler never
// sees it untainted before its address is on it. A node that matched
// already is left to the controller: it may have its address (kubeip's,
// about to be adopted).
func NeedsTaintAtAdmission(old, node *corev1.Node, selector labels.Selector, taintKey string) bool {
	if taintKey == "" || selector == nil || !selector.Matches(labels.Set(node.Labels)) {
		return false
	}
	if old != nil && selector.Matches(labels.Set(old.Labels)) {
		return false
	}
	if node.Labels[networkingv1alpha1.LabelNodeElasticIP] != "" {
		return false
	}
	return !nodepatch.HasTaint(node, Taint(taintKey))
}
