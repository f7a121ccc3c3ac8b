package v1alpha1

// Condition types of BurstPolicy and ClusterBurstPolicy.
const (
	// TypeReady says whether the policy's target could be resolved and its
	// pods were reconciled.
	TypeReady = "Ready"
	// TypeBursting says whether any governed pod is on (or bursting to) a
	// virtual node.
	TypeBursting = "Bursting"
	// TypeLocalCapacityShort says whether replicas that must stay local (the
	// floor) are waiting because local nodes have no room.
	TypeLocalCapacityShort = "LocalCapacityShort"
)

// Reasons of the Ready condition.
const (
	// ReasonReconciled: the target was resolved and its pods reconciled.
	ReasonReconciled = "Reconciled"
	// ReasonReconciling: the policy has not been reconciled yet.
	ReasonReconciling = "Reconciling"
	// ReasonTargetNotFound: the targetRef names no existing workload.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetUnsupported: the target kind is unknown or has no scale
	// subresource with a selector.
	ReasonTargetUnsupported = "TargetUnsupported"
	// ReasonInvalidSelector: the selector cannot be parsed or selects nothing.
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonAccepted: the cluster default is in effect (ClusterBurstPolicy).
	ReasonAccepted = "Accepted"
)

// Reasons of the Bursting condition.
const (
	// ReasonPodsBurst: some governed pods are on or bound for virtual nodes.
	ReasonPodsBurst = "PodsBurst"
	// ReasonNoBurstNeeded: every governed pod runs, or waits, locally.
	ReasonNoBurstNeeded = "NoBurstNeeded"
	// ReasonBurstDisabled: the switch table turned bursting off (the policy's
	// enabled is false, or it is unset and the cluster default is false).
	ReasonBurstDisabled = "BurstDisabled"
	// ReasonSelectedPodsOnly: the ClusterBurstPolicy governs only the pods
	// BurstPolicies select (governs: SelectedPods).
	ReasonSelectedPodsOnly = "SelectedPodsOnly"
	// ReasonMaxBurstReached: maxBurstReplicas pods are burst; others wait.
	ReasonMaxBurstReached = "MaxBurstReached"
)

// EventReasonSchedulerNameRewritten: the pod webhook moved a new pod from
// the legacy tke-scheduler, which edgeplane replaces, to the default
// scheduler (Event on the pod).
const EventReasonSchedulerNameRewritten = "SchedulerNameRewritten"

// Event reasons of rebalancing (spec.rebalance), on the policy and the pod.
const (
	// EventReasonRebalanceEvicted: a burst pod was evicted so that its
	// replacement runs locally.
	EventReasonRebalanceEvicted = "RebalanceEvicted"
	// EventReasonRebalanceBlocked: the eviction was refused (a
	// PodDisruptionBudget, for example); it is retried later.
	EventReasonRebalanceBlocked = "RebalanceBlocked"
)

// Reasons of the LocalCapacityShort condition.
const (
	// ReasonLocalReplicasWaiting: replicas of the local floor are pending.
	ReasonLocalReplicasWaiting = "LocalReplicasWaiting"
	// ReasonLocalCapacitySufficient: no replica of the local floor is pending.
	ReasonLocalCapacitySufficient = "LocalCapacitySufficient"
)

// Reasons a pending pod may not burst (NonBurstablePod.Reason, and the
// reason of the Warning Event on the pod). They are stable API.
const (
	// NotBurstableDaemonSetPod: the pod belongs to a DaemonSet.
	NotBurstableDaemonSetPod = "DaemonSetPod"
	// NotBurstableExcludedNamespace: the pod's namespace is excluded
	// (default kube-system and tke-eni-ip-webhook).
	NotBurstableExcludedNamespace = "ExcludedNamespace"
	// NotBurstableReservedPort: a container or init container port, or a
	// host port, lies in 61000-65534, which virtual nodes reserve.
	NotBurstableReservedPort = "ReservedPort"
	// NotBurstableReservedProbePort: a probe targets a port in 61000-65534.
	NotBurstableReservedProbePort = "ReservedProbePort"
	// NotBurstableLocalPortRange: the net.ipv4.ip_local_port_range sysctl
	// reaches into 61000-65534 (or cannot be parsed).
	NotBurstableLocalPortRange = "LocalPortRangeSysctl"
	// NotBurstableUnsupportedVolume: a volume type outside the allow-list
	// (emptyDir, persistentVolumeClaim, secret, nfs, configMap, downwardAPI,
	// hostPath, gitRepo, iscsi, projected, csi, ephemeral).
	NotBurstableUnsupportedVolume = "UnsupportedVolume"
	// NotBurstableUnsupportedPersistentVolume: a claim is bound to a PV type
	// outside the allow-list (nfs, cephfs, hostPath, static CBS), or an
	// unbound claim's StorageClass uses a provisioner outside it.
	NotBurstableUnsupportedPersistentVolume = "UnsupportedPersistentVolume"
	// NotBurstableFixedIP: the pod has a fixed IP (a float IP, an ENI IP
	// pool, or a VPC IP claim) and the cluster default does not allow it.
	NotBurstableFixedIP = "FixedIP"
	// NotBurstableGPUWithoutType: the pod requests GPUs without a gpu-type
	// annotation.
	NotBurstableGPUWithoutType = "GPUWithoutType"
	// NotBurstableDisabled: the switch table turned bursting off.
	NotBurstableDisabled = "BurstDisabled"
)

// Well-known names.
const (
	// DefaultClusterBurstPolicyName is the name of the singleton ClusterBurstPolicy.
	DefaultClusterBurstPolicyName = "default"

	// SchedulingGateBurst is the scheduling gate the pod webhook puts on new
	// pods of a policy with trigger Pending; the reconciler removes it once
	// it has decided whether the pod runs locally or is pinned to virtual
	// nodes (a gated pod's node selector may still be extended).
	SchedulingGateBurst = "scheduling.edgeplane.io/burst-decision"

	// LabelBurst is set to "true" on a pod that was burst.
	LabelBurst = "scheduling.edgeplane.io/burst"
	// AnnotationBurstPolicy names the BurstPolicy that burst a pod, or is
	// ClusterWideBurstMark for a pod burst through governs: AllPods.
	AnnotationBurstPolicy = "scheduling.edgeplane.io/burst-policy"
	// ClusterWideBurstMark is the value of AnnotationBurstPolicy and
	// AnnotationDeletionCostSetBy on pods the ClusterBurstPolicy's governs:
	// AllPods burst. A BurstPolicy's name cannot contain "/", so it never
	// collides with a policy's.
	ClusterWideBurstMark = ClusterBurstPolicyKind + "/" + DefaultClusterBurstPolicyName
	// AnnotationSchedulerNameRewrittenFrom records, on a pod whose
	// schedulerName the pod webhook replaced, the name it had (the legacy
	// tke-scheduler).
	AnnotationSchedulerNameRewrittenFrom = "scheduling.edgeplane.io/scheduler-name-rewritten-from"
	// AnnotationNotBurstable carries the NotBurstable* reason of a pending pod
	// that may not burst, so `kubectl get pod -o yaml` shows why it waits.
	AnnotationNotBurstable = "scheduling.edgeplane.io/not-burstable"
	// AnnotationPodDeletionCost is the ReplicaSet controller's scale-in cost.
	AnnotationPodDeletionCost = "controller.kubernetes.io/pod-deletion-cost"
	// AnnotationDeletionCostSetBy marks a deletion cost edgeplane wrote, so a
	// cost a person set is never overwritten.
	AnnotationDeletionCostSetBy = "scheduling.edgeplane.io/deletion-cost-set-by"

	// BurstPolicyKind and ClusterBurstPolicyKind are the kinds' names.
	BurstPolicyKind        = "BurstPolicy"
	ClusterBurstPolicyKind = "ClusterBurstPolicy"
)
