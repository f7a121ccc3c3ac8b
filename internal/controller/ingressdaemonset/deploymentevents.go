package ingressdaemonset

import (
	"context"
	"maps"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// statusOnlyDelay is how long a change of a node's Deployment that only
// the IngressDaemonSet's status shows (not what any node does next) may
// wait for a pass; the changes of that time share one pass.
const statusOnlyDelay = time.Second

// deploymentUpdate is what an update of a node's Deployment asks of the
// controller.
type deploymentUpdate int

const (
	// ignoreUpdate: nothing a pass reads changed.
	ignoreUpdate deploymentUpdate = iota
	// statusOnly: only the IngressDaemonSet's status shows the change (a
	// replica count of a node being updated, say): a pass within
	// statusOnlyDelay.
	statusOnly
	// planNow: the change may let a node move on, or change the budget: a
	// pass now.
	planNow
)

// classifyDeploymentUpdate says what the update of a node's Deployment from
// o to n asks of the controller. The Deployment controller writes a node's
// status about ten times while it replaces the node's pods, and each write
// would bring a pass over every node (its writes, a status write of the
// whole IngressDaemonSet), delaying the passes that move nodes on. Only
// these do, by the phase the node is in (see decide.Compute):
//
//   - its metadata: the rollout's own state (phase, revision, detach
//     labels and annotations, which this process's expectations wait for),
//     its owners, its spec or its deletion (not the Deployment
//     controller's own annotations);
//   - a node being updated: its Deployment rolled out, or no longer (it is
//     reattached when it is), and nothing else (it counts against the
//     budget either way);
//   - a node detaching: nothing (it waits for time and timestamps);
//   - any other node: whether it is available, partly ready, or its status
//     current (the budget counts the unavailable ones, and starts no node
//     whose status is stale).
func classifyDeploymentUpdate(o, n *appsv1.Deployment) deploymentUpdate {
	if !o.DeletionTimestamp.Equal(n.DeletionTimestamp) || !maps.Equal(o.Labels, n.Labels) ||
		!maps.Equal(ownAnnotations(o), ownAnnotations(n)) ||
		!equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences) ||
		(o.Generation != n.Generation && !equality.Semantic.DeepEqual(o.Spec, n.Spec)) {
		return planNow
	}
	read := func(s appsv1.DeploymentStatus) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: s.ObservedGeneration, Replicas: s.Replicas,
			UpdatedReplicas: s.UpdatedReplicas, ReadyReplicas: s.ReadyReplicas, TerminatingReplicas: s.TerminatingReplicas}
	}
	if o.Generation == n.Generation && equality.Semantic.DeepEqual(read(o.Status), read(n.Status)) {
		return ignoreUpdate
	}
	switch phaseOf(n) {
	case appsv1alpha1.NodePhaseUpdating:
		if DeploymentRolledOut(o) != DeploymentRolledOut(n) {
			return planNow
		}
	case appsv1alpha1.NodePhaseDetaching:
	default:
		if DeploymentAvailable(o) != DeploymentAvailable(n) || DeploymentPartlyReady(o) != DeploymentPartlyReady(n) ||
			DeploymentStatusCurrent(o) != DeploymentStatusCurrent(n) {
			return planNow
		}
	}
	return statusOnly
}

// deploymentControllerAnnotations prefixes the annotations the Deployment
// controller keeps on a Deployment for itself (the revision it rolled
// last); no pass reads them. It writes one as it starts replacing a node's
// pods, which moves the generation too: what that changes for the node
// (its status no longer current) is judged by the rules for its phase.
const deploymentControllerAnnotations = "deployment.kubernetes.io/"

// ownAnnotations are a Deployment's annotations but the Deployment
// controller's own.
func ownAnnotations(d *appsv1.Deployment) map[string]string {
	out := make(map[string]string, len(d.Annotations))
	for k, v := range d.Annotations {
		if !strings.HasPrefix(k, deploymentControllerAnnotations) {
			out[k] = v
		}
	}
	return out
}

// deploymentEvents enqueues the IngressDaemonSet controlling a Deployment
// for its events: at once for creations, deletions and the updates
// classifyDeploymentUpdate says need a pass now, within statusOnlyDelay for
// the ones only the status shows.
type deploymentEvents struct{}

var _ handler.EventHandler = deploymentEvents{}

// owner returns the request of the IngressDaemonSet that controls obj.
func owner(obj client.Object) (reconcile.Request, bool) {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "IngressDaemonSet" || ref.APIVersion != appsv1alpha1.GroupVersion.String() {
		return reconcile.Request{}, false
	}
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}}, true
}

func (deploymentEvents) enqueue(obj client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if req, ok := owner(obj); ok {
		q.Add(req)
	}
}

func (h deploymentEvents) Create(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.enqueue(e.Object, q)
}

func (h deploymentEvents) Delete(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.enqueue(e.Object, q)
}

func (h deploymentEvents) Generic(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.enqueue(e.Object, q)
}

func (h deploymentEvents) Update(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	o, ok1 := e.ObjectOld.(*appsv1.Deployment)
	n, ok2 := e.ObjectNew.(*appsv1.Deployment)
	if !ok1 || !ok2 {
		h.enqueue(e.ObjectNew, q)
		return
	}
	// A Deployment handed to another owner asks a pass of both.
	if !equality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences) {
		h.enqueue(o, q)
	}
	req, ok := owner(n)
	if !ok {
		return
	}
	switch classifyDeploymentUpdate(o, n) {
	case planNow:
		q.Add(req)
	case statusOnly:
		q.AddAfter(req, statusOnlyDelay)
	}
}
