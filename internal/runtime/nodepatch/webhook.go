package nodepatch

import (
	"context"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// TaintWebhook is a mutating admission webhook on Node create and update
// that gives a node a controller's taint in the same request, so the
// scheduler never sees the node without it: Taint says, from the node
// before (nil on create) and after the request, which taint it must carry
// (ok false: none). The patch is Ops', the controller's own.
type TaintWebhook struct {
	Taint   func(old, node *corev1.Node) (corev1.Taint, bool)
	Decoder admission.Decoder
	// Message is the patched response's reason.
	Message string
}

// Handle implements admission.Handler.
func (w *TaintWebhook) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	node := &corev1.Node{}
	if err := w.Decoder.Decode(req, node); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	var old *corev1.Node
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old = &corev1.Node{}
		if err := w.Decoder.DecodeRaw(req.OldObject, old); err != nil {
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
