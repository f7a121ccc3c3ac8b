package nodepatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TaintWebhook is a mutating admission webhook on Node create and update
// that gives a node a controller's taint in the same request, so the
// scheduler never sees the node without it: Taint says, from the node
// before (nil on create) and after the request, which taint it must carry
// (ok false: none). The patch is Ops', the controller's own.
//
// Taint sees only the node's marks (decodeMarks): its name, labels,
// annotations and taints. A node as a kubelet registers it is mostly
// status (images, conditions, capacity), and decoding all of it, twice on
// an update, was most of the webhook's cost.
type TaintWebhook struct {
	Taint func(old, node *corev1.Node) (corev1.Taint, bool)
	// Message is the patched response's reason.
	Message string
}

// Handle implements admission.Handler.
func (w *TaintWebhook) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	node, err := decodeMarks(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *corev1.Node
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		if old, err = decodeMarks(req.OldObject.Raw); err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
	}
	taint, ok := w.Taint(old, node)
	if !ok {
		return admission.Allowed("no taint needed")
	}
	var ops []jsonpatch.JsonPatchOperation
	for _, op := range Ops(node, Want{Taint: taint, Tainted: true}) {
		ops = append(ops, jsonpatch.JsonPatchOperation{Operation: op.Op, Path: op.Path, Value: op.Value})
	}
	if len(ops) == 0 {
		return admission.Allowed("tainted already")
	}
	return admission.Patched(w.Message, ops...)
}

// nodeMarks is the part of a Node the webhook reads; the JSON decoder
// skips the rest without allocating it.
type nodeMarks struct {
	Metadata struct {
		Name        string            `json:"name"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Taints []corev1.Taint `json:"taints"`
	} `json:"spec"`
}

// decodeMarks decodes a Node's name, labels, annotations and taints from
// raw with the API machinery's JSON rules (case-sensitive field names, as
// the admission Decoder), into a Node that holds nothing else.
func decodeMarks(raw []byte) (*corev1.Node, error) {
	if len(raw) == 0 {
		return nil, errors.New("there is no content to decode")
	}
	var m nodeMarks
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding the node: %w", err)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: m.Metadata.Name, Labels: m.Metadata.Labels, Annotations: m.Metadata.Annotations},
		Spec:       corev1.NodeSpec{Taints: m.Spec.Taints},
	}, nil
}
