package decide

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// Taint is the taint a node carries until its address is bound.
func Taint() corev1.Taint {
	return corev1.Taint{Key: networkingv1alpha1.LegacyTaintNoAIAIP, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

// HasTaint reports whether node carries the no-aia-ip taint.
func HasTaint(node *corev1.Node) bool { return nodepatch.HasTaint(node, Taint()) }

// NodeWant is the node state a binding wants.
type NodeWant struct {
	// Tainted: the node must carry the taint (true) or must not (false).
	Tainted bool
	// AddressID and PublicIP are written to the legacy annotations when
	// set; with ClearAnnotations they are removed instead (when they name
	// ClearAddressID, or always when ClearAddressID is empty).
	AddressID, PublicIP string
	ClearAnnotations    bool
	ClearAddressID      string
}

// Marks says what the node must look like for want, in the terms of the
// node patches every kind shares (internal/runtime/nodepatch): only the
// no-aia-ip taint and the two legacy annotations are named, so the node's
// other taints and annotations are never touched. Clearing removes the
// annotations only when they name want.ClearAddressID (or always, when it
// is empty): an address someone else recorded there stays.
func Marks(node *corev1.Node, want NodeWant) nodepatch.Want {
	w := nodepatch.Want{Taint: Taint(), Tainted: want.Tainted}
	id, ip := networkingv1alpha1.LegacyAnnotationAnycastIPID, networkingv1alpha1.LegacyAnnotationAnycastIPAddress
	switch {
	case want.ClearAnnotations:
		if want.ClearAddressID == "" || node.Annotations[id] == want.ClearAddressID {
			w.Annotations = map[string]*string{id: nil, ip: nil}
		}
	case want.AddressID != "":
		w.Annotations = map[string]*string{id: &want.AddressID}
		if want.PublicIP != "" {
			w.Annotations[ip] = &want.PublicIP
		}
	}
	return w
}

// NeedsTaintAtAdmission is the admission webhook's decision: a node that
// the selector picks and that records no bound address gets the taint from
// the moment it is created (or labelled), closing the window in which the
// scheduler could place pods on it before the controller reacts.
func NeedsTaintAtAdmission(node *corev1.Node, selector labels.Selector) bool {
	if selector == nil || !selector.Matches(labels.Set(node.Labels)) {
		return false
	}
	if node.Annotations[networkingv1alpha1.LegacyAnnotationAnycastIPID] != "" {
		return false
	}
	return !HasTaint(node)
}
