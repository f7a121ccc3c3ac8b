package decide

// UngovernedPod is what the cluster-wide mode (ClusterBurstPolicy governs:
// AllPods) knows of a pod that no BurstPolicy governs.
type UngovernedPod struct {
	// Placement says where the pod is.
	Placement Placement
	// Burst says the pod carries the virtual-node tolerations.
	Burst bool
	// Gated says the pod waits at the burst-decision gate: the policy of
	// its workload decides it.
	Gated bool
	// Floor says the pod carries a LOCAL_REPLICAS annotation and its
	// workload is translated: that policy keeps the floor, so the
	// cluster-wide mode must not burst it first.
	Floor bool
	// Unschedulable says the scheduler found no room for the pod.
	Unschedulable bool
	// Switch is the switch table's outcome for the pod (the global switch
	// and the pod's own AUTO_SCALE_EKS).
	Switch Switch
	// Refusal says why the pod may not burst (zero: it may). Only asked
	// for a pending, unschedulable pod without the tolerations.
	Refusal Refusal
	// Marked says the pod carries edgeplane's burst marks (the burst label
	// or the burst-policy annotation): edgeplane burst it.
	Marked bool
}

// ClusterWideStep is what the cluster-wide mode makes of one pod.
type ClusterWideStep struct {
	// Skip: leave the pod alone (its policy decides it).
	Skip bool
	// Burst: add the virtual-node tolerations and the burst marks.
	Burst bool
	// NotBurstable is the reason the pod's not-burstable annotation must
	// carry; "" means the pod must carry none.
	NotBurstable string
	// MarkBurst: the pod is burst; its burst marks must name the cluster-wide
	// mode (it adopts the marks of a policy that no longer governs the pod).
	MarkBurst bool
}

// ClusterWide decides one pod under governs: AllPods. A pending pod the
// scheduler reported unschedulable bursts when the switch table lets it and
// no restriction refuses it (then the refusal's reason is marked on it); a
// pod edgeplane burst keeps burst marks that name the cluster-wide mode. A
// gated pod, or one with a local floor, is its policy's to decide. With the
// switch off, pods are left unmarked: the ClusterBurstPolicy's Bursting
// condition says why nothing bursts.
func ClusterWide(p UngovernedPod) ClusterWideStep {
	if p.Gated || p.Floor && p.Placement == Pending && !p.Burst {
		return ClusterWideStep{Skip: true}
	}
	var s ClusterWideStep
	switch {
	case p.Placement != Pending || p.Burst:
		s.MarkBurst = p.Marked
	case !p.Unschedulable || !p.Switch.Burst:
	case p.Refusal.Refused():
		s.NotBurstable = p.Refusal.Reason
	default:
		s.Burst = true
	}
	return s
}
