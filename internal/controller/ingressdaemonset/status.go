package ingressdaemonset

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/ingressdaemonset/decide"
	"github.com/edgeplane/edgeplane/internal/status"
)

// observation is what a pass saw and did, for computing status.
type observation struct {
	// revision is the update revision.
	revision string
	// nodes are the matching node names.
	nodes []string
	// deployments by node name, as they are after this pass's writes.
	deployments map[string]*appsv1.Deployment
	// plan is this pass's plan.
	plan decide.Plan
	// reattached are the nodes this pass reattached.
	reattached map[string]bool
	// problems are messages for the Degraded condition (sorted when used).
	problems []string
	// degradedReason is the reason of the first problem.
	degradedReason string
}

// computeStatus sets ids's status from what a pass observed. It is pure.
func computeStatus(ids *appsv1alpha1.IngressDaemonSet, o observation) {
	st := &ids.Status
	st.UpdateRevision = o.revision
	st.ReplicasPerNode = replicasPerNode(ids)
	st.DesiredNodes = int32(len(o.nodes))
	st.CurrentNodes, st.UpdatedNodes, st.ReadyNodes, st.AvailableNodes = 0, 0, 0, 0
	st.Nodes = nil
	nodes := slices.Clone(o.nodes)
	slices.Sort(nodes)
	inRollout := 0
	for _, n := range nodes {
		d, ok := o.deployments[n]
		if !ok {
			st.Nodes = append(st.Nodes, appsv1alpha1.NodeStatus{Node: n, Phase: appsv1alpha1.NodePhaseReady})
			continue
		}
		st.CurrentNodes++
		rev := d.Annotations[appsv1alpha1.AnnotationRevision]
		phase := phaseOf(d)
		if o.reattached[n] {
			// Reattached in this very pass: the load balancer is only now
			// seeing the node healthy again.
			phase = appsv1alpha1.NodePhaseReattaching
		}
		if rev == o.revision {
			st.UpdatedNodes++
		}
		ready := DeploymentAvailable(d)
		if ready {
			st.ReadyNodes++
			if phase == appsv1alpha1.NodePhaseReady || phase == appsv1alpha1.NodePhaseReattaching {
				st.AvailableNodes++
			}
		}
		if phase != appsv1alpha1.NodePhaseReady {
			inRollout++
		}
		ns := appsv1alpha1.NodeStatus{
			Node:       n,
			Deployment: d.Name,
			Phase:      phase,
			Revision:   rev,
			Replicas:   ptr.Deref(d.Spec.Replicas, 1),
			Ready:      d.Status.ReadyReplicas,
		}
		if t, err := decide.ParseMillis(d.Labels[appsv1alpha1.LabelDetachStartedAt]); err == nil && phase != appsv1alpha1.NodePhaseReady {
			ns.DetachStartedAt = &metav1.Time{Time: t}
		}
		st.Nodes = append(st.Nodes, ns)
	}

	ru := ids.Spec.UpdateStrategy.RollingUpdate
	paused := ru != nil && ru.Paused
	held := o.plan.HeldByPartition
	desired := st.DesiredNodes
	switch {
	case desired == 0:
		status.SetReady(ids, metav1.ConditionTrue, appsv1alpha1.ReasonNoMatchingNodes, "no node matches the node selector")
	case st.UpdatedNodes+int32(held) >= desired && st.AvailableNodes == desired:
		msg := fmt.Sprintf("%d/%d nodes updated, ready and attached", st.AvailableNodes, desired)
		if held > 0 {
			msg += fmt.Sprintf("; %d kept at the old revision by the partition", held)
		}
		status.SetReady(ids, metav1.ConditionTrue, appsv1alpha1.ReasonAllNodesReady, msg)
	case st.UpdatedNodes+int32(held) < desired || inRollout > 0:
		reason := appsv1alpha1.ReasonRolloutInProgress
		if paused {
			reason = appsv1alpha1.ReasonRolloutPaused
		}
		status.SetReady(ids, metav1.ConditionFalse, reason,
			fmt.Sprintf("%d/%d nodes updated, %d ready and attached", st.UpdatedNodes, desired, st.AvailableNodes))
	default:
		status.SetReady(ids, metav1.ConditionFalse, appsv1alpha1.ReasonNodesNotReady,
			fmt.Sprintf("%d/%d nodes have every replica ready", st.ReadyNodes, desired))
	}

	switch {
	case st.UpdatedNodes >= desired && inRollout == 0:
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionFalse,
			Reason: appsv1alpha1.ReasonRolloutComplete, Message: fmt.Sprintf("all %d nodes run revision %s", desired, o.revision)})
	case paused && inRollout == 0:
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionFalse,
			Reason: appsv1alpha1.ReasonRolloutPaused, Message: fmt.Sprintf("rollout paused with %d/%d nodes updated", st.UpdatedNodes, desired)})
	case held > 0 && inRollout == 0 && st.UpdatedNodes+int32(held) >= desired:
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionFalse,
			Reason: appsv1alpha1.ReasonPartitioned, Message: fmt.Sprintf("%d/%d nodes updated; the partition keeps %d", st.UpdatedNodes, desired, held)})
	default:
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeProgressing, Status: metav1.ConditionTrue,
			Reason: appsv1alpha1.ReasonRollingUpdate, Message: progressMessage(st)})
	}

	if len(o.problems) == 0 {
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeDegraded, Status: metav1.ConditionFalse,
			Reason: appsv1alpha1.ReasonAsExpected, Message: "no problems"})
	} else {
		p := slices.Clone(o.problems)
		slices.Sort(p)
		status.Set(ids, metav1.Condition{Type: appsv1alpha1.TypeDegraded, Status: metav1.ConditionTrue,
			Reason: o.degradedReason, Message: strings.Join(p, "; ")})
	}
}

// progressMessage lists the nodes in the rollout, sorted, without times.
func progressMessage(st *appsv1alpha1.IngressDaemonSetStatus) string {
	var parts []string
	for _, n := range st.Nodes {
		if n.Phase != appsv1alpha1.NodePhaseReady {
			parts = append(parts, n.Node+" "+string(n.Phase))
		}
	}
	msg := fmt.Sprintf("%d/%d nodes updated", st.UpdatedNodes, st.DesiredNodes)
	if len(parts) > 0 {
		const maxListed = 10
		if len(parts) > maxListed {
			parts = append(parts[:maxListed], fmt.Sprintf("and %d more", len(parts)-maxListed))
		}
		msg += "; " + strings.Join(parts, ", ")
	}
	return msg
}
