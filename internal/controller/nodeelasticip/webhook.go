package nodeelasticip

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

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

// NewNodeTainter is the mutating admission webhook on Node create and
// update: a node the selector picks as it is created, or as it is labelled,
// that has no address yet gets the taint in the same request, so the
// scheduler never sees it untainted before its Elastic IP is on it
// (decide.NeedsTaintAtAdmission). The decoder is not used (the webhook
// decodes only the node's marks); it stays in the signature for the callers.
func NewNodeTainter(selector labels.Selector, taintKey string) *nodepatch.TaintWebhook {
	return &nodepatch.TaintWebhook{Message: "tainted until its Elastic IP is associated",
		Taint: func(old, node *corev1.Node) (corev1.Taint, bool) {
			return decide.Taint(taintKey), decide.NeedsTaintAtAdmission(old, node, selector, taintKey)
		}}
}

func registerWebhook(mgr ctrl.Manager, selector labels.Selector, taintKey string) {
	mgr.GetWebhookServer().Register(NodeWebhookPath, &webhook.Admission{Handler: NewNodeTainter(selector, taintKey)})
}
