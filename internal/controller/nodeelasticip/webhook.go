package nodeelasticip

import (
	"context"
	"net/http"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// NodeWebhookPath is where the Node tainting webhook is served.
const NodeWebhookPath = "/mutate-v1-node-nodeelasticip"

// failurePolicy=Ignore: a node must be able to register while the manager
// is down (failing closed would stop kubelets joining the cluster); the
// reconciler taints a selected node on its first pass anyway, so an outage
// only reopens the scheduling race for that window.
//
// Scope: the objectSelector sends only nodes carrying the default
// selector's label (the chart sets it from nodeElasticIP.nodeSelector);
// it matches the old or the new node, so a node being labelled reaches it.
// timeoutSeconds=3: a node update waits at most that long for a manager
// that does not answer.
// +kubebuilder:webhook:path=/mutate-v1-node-nodeelasticip,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=nodes,verbs=create;update,versions=v1,name=neip.nodes.networking.edgeplane.io,admissionReviewVersions=v1,timeoutSeconds=3,reinvocationPolicy=IfNeeded,patch=`{"objectSelector":{"matchLabels":{"networking.edgeplane.io/want-elastic-ip":"true"}}}`

// NodeTainter is a mutating admission webhook on Node create and update: a
// node the selector picks as it is created, or as it is labelled, that has
// no address yet gets the taint in the same request, so the scheduler never
// sees it untainted before its Elastic IP is on it (decide.NeedsTaintAtAdmission).
type NodeTainter struct {
	Selector labels.Selector
	TaintKey string
	Decoder  admission.Decoder
}

func registerWebhook(mgr ctrl.Manager, selector labels.Selector, taintKey string) {
	mgr.GetWebhookServer().Register(NodeWebhookPath, &webhook.Admission{Handler: &NodeTainter{Selector: selector, TaintKey: taintKey,
		Decoder: admission.NewDecoder(mgr.GetScheme())}})
}

// Handle adds the taint when decide.NeedsTaintAtAdmission says so.
func (w *NodeTainter) Handle(_ context.Context, req admission.Request) admission.Response {
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
	if !decide.NeedsTaintAtAdmission(old, node, w.Selector, w.TaintKey) {
		return admission.Allowed("no taint needed")
	}
	// The controller's own node patch, here only the taint.
	var ops []jsonpatch.JsonPatchOperation
	for _, op := range nodepatch.Ops(node, nodepatch.Want{Taint: decide.Taint(w.TaintKey), Tainted: true}) {
		ops = append(ops, jsonpatch.JsonPatchOperation{Operation: op.Op, Path: op.Path, Value: op.Value})
	}
	return admission.Patched("tainted until its Elastic IP is associated", ops...)
}
