package nodeelasticip

import (
	"cmp"
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/nodeelasticip/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/nodepatch"
)

// SyncCluster brings the node's marks in line with what the pass found
// (reconciler.ClusterSyncer): the address label and annotation and no
// taint once the address is on the node, the taint and no address marks
// while it is not, neither taint nor this NodeElasticIP's marks once it is
// being deleted. Only those keys are patched (internal/runtime/nodepatch).
func (e *external) SyncCluster(ctx context.Context, n *networkingv1alpha1.NodeElasticIP) error {
	if e.node == nil || e.sync == syncNone {
		return nil
	}
	m := decide.Marks{TaintKey: n.Spec.TaintKey, KubeIPLabel: e.conn.opts.KubeIPLabel}
	id := cmp.Or(n.Status.AllocationID, meta.GetExternalName(n))
	ip := n.Status.PublicIP
	want := func(node *corev1.Node) nodepatch.Want {
		switch e.sync {
		case syncBound:
			return decide.BoundWant(m, e.bound.AllocationID, e.bound.PublicIP)
		case syncPending:
			return decide.PendingWant(m)
		default:
			return decide.CleanWant(node, m, id, ip)
		}
	}
	before := e.node.ResourceVersion
	changed, node, err := nodepatch.Apply(ctx, e.conn.kube, e.conn.reader, e.node, want)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	e.node = node
	if !changed {
		return nil
	}
	e.conn.nodes.Record(before, node)
	switch e.sync {
	case syncBound:
		e.nodeEvent(n, corev1.EventTypeNormal, networkingv1alpha1.NodeElasticIPEventAssociated, actionAssociate,
			"Elastic IP %s (%s) is on the node's primary IP %s%s", e.bound.PublicIP, e.bound.AllocationID, e.nf.PrimaryIP, untainted(m))
	case syncPending:
		if m.TaintKey != "" && nodepatch.HasTaint(node, decide.Taint(m.TaintKey)) {
			e.nodeEvent(n, corev1.EventTypeNormal, networkingv1alpha1.NodeElasticIPEventPending, actionTaint,
				"Tainted %s=true:NoSchedule until its Elastic IP is associated", m.TaintKey)
		}
	default:
		e.nodeEvent(n, corev1.EventTypeNormal, networkingv1alpha1.NodeElasticIPEventReleased, actionRelease,
			"NodeElasticIP %s is being deleted: removed its marks%s", n.Name, untainted(m))
	}
	return nil
}

func untainted(m decide.Marks) string {
	if m.TaintKey == "" {
		return ""
	}
	return "; taint " + m.TaintKey + " removed"
}

// event records an Event on the NodeElasticIP (related: its node).
func (e *external) event(n *networkingv1alpha1.NodeElasticIP, typ, reason, action, note string, args ...any) {
	var related runtime.Object
	if e.node != nil {
		related = e.node
	}
	e.conn.nodeEvents.Eventf(n, related, typ, reason, action, note, args...)
}

// nodeEvent records an Event on the node (related: the NodeElasticIP).
func (e *external) nodeEvent(n *networkingv1alpha1.NodeElasticIP, typ, reason, action, note string, args ...any) {
	if e.node == nil {
		return
	}
	e.conn.nodeEvents.Eventf(e.node, n, typ, reason, action, note, args...)
}

// failedEvent says on the node why its address is not on it, once per
// reason (the NodeElasticIP's conditions keep saying it).
func (e *external) failedEvent(n *networkingv1alpha1.NodeElasticIP, reason xpv2.ConditionReason, msg string) {
	if reason == e.prevReason {
		return
	}
	e.prevReason = reason
	e.nodeEvent(n, corev1.EventTypeWarning, networkingv1alpha1.NodeElasticIPEventFailed, actionAssociate, "%s: %s", reason, msg)
}
