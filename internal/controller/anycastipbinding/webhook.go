package anycastipbinding

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// NodeWebhookPath is where the Node tainting webhook is served.
const NodeWebhookPath = "/mutate-v1-node-anycastipbinding"

// failurePolicy=Ignore: a node must be able to register while the manager
// is down or being upgraded (failing closed would stop kubelets joining the
// cluster). The controller taints a selected node on its first reconcile
// anyway, so an outage only reopens the legacy race for that window; see
// docs/anycastipbinding.md.
//
// Scope: a Node is cluster-scoped, so a namespaceSelector would not narrow
// anything; the objectSelector sends only nodes carrying the selector label
// (the default --anycastipbinding-node-selector; the chart sets it from
// anycastIP.nodeSelector) to the webhook. It matches the old or the new node,
// so removing the label still reaches it. timeoutSeconds=3: a node update
// waits at most that long for a manager that does not answer.
// +kubebuilder:webhook:path=/mutate-v1-node-anycastipbinding,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=nodes,verbs=create;update,versions=v1,name=aia.nodes.networking.edgeplane.io,admissionReviewVersions=v1,timeoutSeconds=3,reinvocationPolicy=IfNeeded,patch=`{"objectSelector":{"matchLabels":{"tke.cloud.tencent.com/need-aia-ip":"true"}}}`

// NodeTainter is the mutating admission webhook on Node create and update
// (the shared nodepatch.TaintWebhook): a node the selector picks that
// records no bound address gets the taint tke.cloud.tencent.com/no-aia-ip=
// true:NoSchedule in the same request, so it carries the taint from its
// registration (or from the moment it is labelled) and the scheduler never
// sees it untainted before its address is bound. This closes the race
// aia-ip-controller documented (pods landing on a labelled node before the
// controller tainted it).
//
// The decoder is not used (the webhook decodes only the node's marks); it
// stays in the signature for the callers.
func NodeTainter(selector labels.Selector) *nodepatch.TaintWebhook {
	return &nodepatch.TaintWebhook{
		Taint: func(_, node *corev1.Node) (corev1.Taint, bool) {
			return decide.Taint(), decide.NeedsTaintAtAdmission(node, selector)
		},
		Message: "tainted until its anycast address is bound",
	}
}
