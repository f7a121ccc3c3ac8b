package decide

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
)

// Taint is the taint a node carries until its address is bound.
func Taint() corev1.Taint {
	return corev1.Taint{Key: networkingv1alpha1.LegacyTaintNoAIAIP, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

func isOurTaint(t corev1.Taint) bool {
	return t.Key == networkingv1alpha1.LegacyTaintNoAIAIP && t.Effect == corev1.TaintEffectNoSchedule
}

// HasTaint reports whether node carries the no-aia-ip taint.
func HasTaint(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if isOurTaint(t) {
			return true
		}
	}
	return false
}

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

// PatchOp is one JSON patch (RFC 6902) operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// escape escapes a JSON pointer segment.
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// NodePatch returns the JSON patch that moves node to want, touching only
// the no-aia-ip taint and the two legacy annotations (never rewriting the
// node's other taints or annotations), or nil when node is already there.
// Removing the taint is guarded by a test operation on the exact entry, so
// a concurrent change to the taint list makes the patch fail (and the
// caller retry on a fresh read) instead of removing someone else's taint.
// The annotations and the taint removal travel in one patch, so the
// admission webhook never sees an untainted, unannotated node.
func NodePatch(node *corev1.Node, want NodeWant) []PatchOp {
	var ops []PatchOp
	ann := node.Annotations
	idKey := "/metadata/annotations/" + escape(networkingv1alpha1.LegacyAnnotationAnycastIPID)
	ipKey := "/metadata/annotations/" + escape(networkingv1alpha1.LegacyAnnotationAnycastIPAddress)
	switch {
	case want.ClearAnnotations:
		id, hasID := ann[networkingv1alpha1.LegacyAnnotationAnycastIPID]
		_, hasIP := ann[networkingv1alpha1.LegacyAnnotationAnycastIPAddress]
		if want.ClearAddressID == "" || id == want.ClearAddressID {
			if hasID {
				ops = append(ops, PatchOp{Op: "remove", Path: idKey})
			}
			if hasIP {
				ops = append(ops, PatchOp{Op: "remove", Path: ipKey})
			}
		}
	case want.AddressID != "":
		if ann == nil {
			ops = append(ops, PatchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
		}
		if ann[networkingv1alpha1.LegacyAnnotationAnycastIPID] != want.AddressID {
			ops = append(ops, PatchOp{Op: "add", Path: idKey, Value: want.AddressID})
		}
		if want.PublicIP != "" && ann[networkingv1alpha1.LegacyAnnotationAnycastIPAddress] != want.PublicIP {
			ops = append(ops, PatchOp{Op: "add", Path: ipKey, Value: want.PublicIP})
		}
	}
	has := HasTaint(node)
	switch {
	case want.Tainted && !has:
		if node.Spec.Taints == nil {
			ops = append(ops, PatchOp{Op: "add", Path: "/spec/taints", Value: []corev1.Taint{Taint()}})
		} else {
			ops = append(ops, PatchOp{Op: "add", Path: "/spec/taints/-", Value: Taint()})
		}
	case !want.Tainted && has:
		// Remove from the end so earlier indexes stay valid.
		for i := len(node.Spec.Taints) - 1; i >= 0; i-- {
			if t := node.Spec.Taints[i]; isOurTaint(t) {
				path := fmt.Sprintf("/spec/taints/%d", i)
				ops = append(ops, PatchOp{Op: "test", Path: path, Value: t}, PatchOp{Op: "remove", Path: path})
			}
		}
	}
	return ops
}

// SafeOnStale reports whether ops, computed from a cached copy of the node
// that may be older than the stored one, either do exactly what they would
// do on the stored node or make the API server reject the whole patch:
// every removal is guarded by a test of the exact value, and every add
// sets one annotation (never the annotation map or the taint list as a
// whole, which would overwrite what the cached copy does not show). Such a
// patch can be sent without reading the node first; only when it is
// rejected is the node read again.
func SafeOnStale(ops []PatchOp) bool {
	const annotation = "/metadata/annotations/"
	for i, op := range ops {
		switch op.Op {
		case "test":
		case "remove":
			if i == 0 || ops[i-1].Op != "test" || ops[i-1].Path != op.Path {
				return false
			}
		case "add":
			if !strings.HasPrefix(op.Path, annotation) || len(op.Path) == len(annotation) {
				return false
			}
		default:
			return false
		}
	}
	return len(ops) > 0
}

// MarshalPatch encodes ops (nil for none).
func MarshalPatch(ops []PatchOp) ([]byte, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encoding node patch: %w", err)
	}
	return b, nil
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
