package anycastipbinding

import (
	"cmp"
	"context"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/cloud/tencentcloud"
	"github.com/edgeplane/edgeplane/internal/controller/anycastipbinding/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// nodeSync is what a pass does to the binding's node; the zero value
// leaves it as it is (the pass failed before deciding).
type nodeSync int

const (
	// nodeEnsure: ensureNode with the pass's bound address (or none).
	nodeEnsure nodeSync = iota + 1
	// nodeClean: cleanNode (the address is released).
	nodeClean
)

// wantNode records that the node is kept in step with a (nil: not bound).
func (e *external) wantNode(a *tencentcloud.Address) {
	e.nodeSync = nodeEnsure
	e.bound = a
}

// wantClean records that the node is cleaned of the binding's marks.
func (e *external) wantClean() { e.nodeSync = nodeClean }

// SyncCluster brings the node in line with what Observe found
// (reconciler.ClusterSyncer). Failures are the node's Events and a short
// poll, never a failed pass: the binding's own state is unaffected.
func (e *external) SyncCluster(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) error {
	switch e.nodeSync {
	case nodeEnsure:
		e.ensureNode(ctx, b, e.bound)
	case nodeClean:
		e.cleanNode(ctx, b)
	}
	return nil
}

// pollAfter chooses when the binding is looked at again.
func (e *external) pollAfter(d time.Duration) { e.poll = d }

// PollAfter implements reconciler.Poller.
func (e *external) PollAfter() (time.Duration, bool) { return e.poll, e.poll > 0 }

// ensureNode keeps the node in step with the binding: untainted and
// annotated with the address once a is bound to its instance, tainted
// otherwise. Only the no-aia-ip taint and the two legacy annotations are
// touched (a JSON patch, never a rewrite of the taint list).
func (e *external) ensureNode(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding, a *tencentcloud.Address) {
	if e.node == nil {
		return
	}
	bound := decide.IsBound(a, e.instance)
	want := decide.NodeWant{Tainted: !bound}
	if bound {
		want.AddressID, want.PublicIP = a.ID, a.IP
	}
	changed, err := e.patchNode(ctx, want)
	switch {
	case err != nil && bound:
		log.FromContext(ctx).Error(err, "Failed to untaint node", "node", e.node.Name)
		e.nodeEvent(b, corev1.EventTypeWarning, networkingv1alpha1.LegacyReasonFailedUntaint, actionTaint, "failed to untaint node %s, will retry: %v", e.node.Name, err)
		e.pollAfter(e.c.opts.TaskPollInterval)
	case err != nil:
		log.FromContext(ctx).Error(err, "Failed to taint node", "node", e.node.Name)
		e.pollAfter(e.c.opts.TaskPollInterval)
	case changed && bound:
		e.nodeEvent(b, corev1.EventTypeNormal, networkingv1alpha1.AnycastEventBound, actionBind, "Bound address %s (%s) to instance %s; removed taint %s", a.ID, a.IP, e.instance, networkingv1alpha1.LegacyTaintNoAIAIP)
	case changed && decide.HasTaint(e.node):
		e.nodeEvent(b, corev1.EventTypeNormal, networkingv1alpha1.AnycastEventTainted, actionTaint, "Tainted %s=true:NoSchedule until an address is bound", networkingv1alpha1.LegacyTaintNoAIAIP)
	}
}

// cleanNode removes the taint, and the annotations when they name the
// binding's address, once the address is released.
func (e *external) cleanNode(ctx context.Context, b *networkingv1alpha1.AnycastIPBinding) {
	if e.node == nil {
		return
	}
	id := cmp.Or(b.Status.AddressID, meta.GetExternalName(b))
	changed, err := e.patchNode(ctx, decide.NodeWant{ClearAnnotations: true, ClearAddressID: id})
	if err != nil {
		log.FromContext(ctx).Error(err, "Failed to clean node", "node", e.node.Name)
		return
	}
	if changed && id != "" {
		e.nodeEvent(b, corev1.EventTypeNormal, networkingv1alpha1.AnycastEventReleased, actionRelease, "Released address %s; removed its annotations and taint %s", id, networkingv1alpha1.LegacyTaintNoAIAIP)
	}
}

// patchNode moves the node to want with the patch every kind shares
// (nodepatch.Apply: sent as computed from the cached node when that is
// safe on a stale copy — the usual untaint-and-annotate — otherwise, or
// when the API server refuses it, computed again from a fresh read) and
// reports whether it changed anything. e.node is updated to the patched
// node.
func (e *external) patchNode(ctx context.Context, want decide.NodeWant) (bool, error) {
	before := e.node.ResourceVersion
	changed, node, err := nodepatch.Apply(ctx, e.c.kube, e.c.reader, e.node, func(n *corev1.Node) nodepatch.Want {
		return decide.Marks(n, want)
	})
	if changed && err == nil {
		// From the cached copy's version: when Apply had to read the node
		// afresh, the echo's old version is not this one, and the event
		// brings a pass as someone else's would.
		e.c.ownNodeWrites.Record(node.Name, struct{}{}, node.ResourceVersion, before)
	}
	e.node = node
	return changed, err
}

// nodeEvent emits an Event on the binding's node (related: the binding).
func (e *external) nodeEvent(b *networkingv1alpha1.AnycastIPBinding, eventType, reason, action, note string, args ...any) {
	if e.node == nil {
		return
	}
	e.c.nodeEvents.Eventf(e.node, b, eventType, reason, action, note, args...)
}
