package statemetrics

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
)

// Rollout is one IngressDaemonSet's rollout, for the stalled-rollout alert:
// a rollout in progress whose updated and available node counts stop moving.
type Rollout struct {
	Namespace, Name string
	// InProgress is the Progressing condition: True while nodes are being
	// updated (a paused or partitioned rollout is not in progress).
	InProgress                  bool
	Desired, Updated, Available int32
}

// RolloutOf reads an IngressDaemonSet's rollout from its status. It is pure.
func RolloutOf(ids *appsv1alpha1.IngressDaemonSet) Rollout {
	st := ids.Status
	return Rollout{
		Namespace: ids.Namespace, Name: ids.Name,
		InProgress: meta.IsStatusConditionTrue(st.Conditions, appsv1alpha1.TypeProgressing),
		Desired:    st.DesiredNodes, Updated: st.UpdatedNodes, Available: st.AvailableNodes,
	}
}

// Floor is one BurstPolicy's local floor and where its replicas are.
type Floor struct {
	Namespace, Name string
	// Short is the LocalCapacityShort condition: replicas that must stay
	// local (the floor) cannot be scheduled locally.
	Short bool
	// Local, Burst and Pending are the governed pods bound to local nodes,
	// bound to virtual nodes, and not bound yet.
	Local, Burst, Pending int32
}

// FloorOf reads a BurstPolicy's floor from its status. It is pure.
func FloorOf(p *schedulingv1alpha1.BurstPolicy) Floor {
	st := p.Status
	return Floor{
		Namespace: p.Namespace, Name: p.Name,
		Short: meta.IsStatusConditionTrue(st.Conditions, schedulingv1alpha1.TypeLocalCapacityShort),
		Local: st.LocalReplicas, Burst: st.BurstReplicas, Pending: st.PendingReplicas,
	}
}

func listRollouts(ctx context.Context, r client.Reader) ([]Rollout, error) {
	var list appsv1alpha1.IngressDaemonSetList
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing IngressDaemonSets: %w", err)
	}
	out := make([]Rollout, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, RolloutOf(&list.Items[i]))
	}
	return out, nil
}

func listFloors(ctx context.Context, r client.Reader) ([]Floor, error) {
	var list schedulingv1alpha1.BurstPolicyList
	if err := r.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing BurstPolicies: %w", err)
	}
	out := make([]Floor, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, FloorOf(&list.Items[i]))
	}
	return out, nil
}
