package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BurstTrigger says when a replica beyond the local floor bursts.
// +kubebuilder:validation:Enum=Unschedulable;Pending
type BurstTrigger string

const (
	// TriggerUnschedulable bursts a replica beyond the local floor once the
	// scheduler has reported it unschedulable for burstAfter.
	TriggerUnschedulable BurstTrigger = "Unschedulable"
	// TriggerPending bursts every pending replica beyond the local floor at
	// once, without waiting for the scheduler to give up on local nodes (the
	// legacy LOCAL_REPLICAS behaviour: 4 replicas, LOCAL_REPLICAS 1 → 1 local,
	// 3 virtual).
	TriggerPending BurstTrigger = "Pending"
)

// ScaleInPolicy says which replicas a scale-in removes first.
// +kubebuilder:validation:Enum=BurstFirst;Any
type ScaleInPolicy string

const (
	// ScaleInBurstFirst gives replicas on virtual nodes a lower
	// controller.kubernetes.io/pod-deletion-cost, so the ReplicaSet controller
	// removes them before local ones.
	ScaleInBurstFirst ScaleInPolicy = "BurstFirst"
	// ScaleInAny leaves the deletion order to the workload controller.
	ScaleInAny ScaleInPolicy = "Any"
)

// VirtualNodePreset names a well-known kind of virtual node.
// +kubebuilder:validation:Enum=TencentEKS;VirtualKubelet;Custom
type VirtualNodePreset string

const (
	// PresetTencentEKS is the Tencent Cloud EKS virtual node (eklet): label
	// node.kubernetes.io/instance-type=eklet, taint
	// eks.tke.cloud.tencent.com/eklet:NoSchedule.
	PresetTencentEKS VirtualNodePreset = "TencentEKS"
	// PresetVirtualKubelet is a virtual-kubelet node: label
	// type=virtual-kubelet, taint virtual-kubelet.io/provider.
	PresetVirtualKubelet VirtualNodePreset = "VirtualKubelet"
	// PresetCustom uses nodeSelector and tolerations as given.
	PresetCustom VirtualNodePreset = "Custom"
)

// TargetReference names the workload a BurstPolicy applies to, in the
// policy's namespace: a kind with a scale subresource (its status.selector
// selects the pods), a batch/v1 Job (its spec.selector), or a v1 Pod (that
// one pod, which is its own workload).
type TargetReference struct {
	// APIVersion of the workload, e.g. apps/v1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	APIVersion string `json:"apiVersion"`
	// Kind of the workload, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// VirtualNodes says which nodes are virtual and what a pod needs to run there.
// +kubebuilder:validation:XValidation:rule="self.preset == 'Custom' ? has(self.nodeSelector) && size(self.nodeSelector) > 0 : !has(self.nodeSelector) && !has(self.tolerations)",message="nodeSelector is required with preset Custom, and nodeSelector and tolerations are only allowed with preset Custom"
type VirtualNodes struct {
	// Preset picks a well-known virtual node. Default TencentEKS.
	// +kubebuilder:default=TencentEKS
	// +optional
	Preset VirtualNodePreset `json:"preset,omitempty"`

	// NodeSelector matches the labels of virtual nodes (preset Custom only).
	// A pod bound to a node these labels match counts as burst.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are added to a pod when it bursts (preset Custom only).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Rebalance moves burst pods back home: when fewer than localReplicas
// replicas of the workload's current revision run locally (a local node
// failed, for example, and recovered), no rollout is under way, and a local
// node has room for a burst pod, edgeplane evicts one burst pod through the
// Eviction API (PodDisruptionBudgets apply) so that its replacement is
// planned local. One pod at a time: the next only once the replacement is
// placed.
// +kubebuilder:validation:XValidation:rule="!has(self.after) || (has(self.enabled) && self.enabled)",message="after is only allowed with enabled: true"
type Rebalance struct {
	// Enabled turns rebalancing on. Default false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`

	// After is how long the local floor must have been short, with a burst
	// pod running, before a burst pod is evicted. Default 1m.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="after must be between 0s and 24h"
	// +optional
	After *metav1.Duration `json:"after,omitempty"`
}

// BurstPolicySpec is the desired state of a BurstPolicy.
// +kubebuilder:validation:XValidation:rule="has(self.targetRef) != has(self.selector)",message="exactly one of targetRef and selector must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.rebalance) || !has(self.rebalance.enabled) || !self.rebalance.enabled || (has(self.localReplicas) && self.localReplicas > 0)",message="rebalance needs localReplicas > 0"
type BurstPolicySpec struct {
	// TargetRef names the workload (Deployment, StatefulSet, ReplicaSet, any
	// kind with a scale subresource, a Job, or a single Pod) whose pods this
	// policy governs.
	// +optional
	TargetRef *TargetReference `json:"targetRef,omitempty"`

	// Selector selects the governed pods directly, in the policy's namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	// Enabled is this policy's own switch (the legacy local AUTO_SCALE_EKS).
	// When unset, the cluster default (ClusterBurstPolicy "default") decides,
	// and when that is unset too, bursting is on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// LocalReplicas is the local floor: that many replicas stay on local
	// nodes and never burst, even when they cannot be scheduled.
	// +kubebuilder:validation:Minimum=0
	// +optional
	LocalReplicas int32 `json:"localReplicas,omitempty"`

	// MaxBurstReplicas caps the replicas on (or bursting to) virtual nodes.
	// Unset means no cap.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxBurstReplicas *int32 `json:"maxBurstReplicas,omitempty"`

	// Trigger says when a replica beyond the floor bursts. Default Unschedulable.
	// +kubebuilder:default=Unschedulable
	// +optional
	Trigger BurstTrigger `json:"trigger,omitempty"`

	// BurstAfter is how long a pod must have been unschedulable on local
	// nodes before it bursts (trigger Unschedulable). Default 0s.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="burstAfter must be between 0s and 24h"
	// +optional
	BurstAfter *metav1.Duration `json:"burstAfter,omitempty"`

	// VirtualNodes says which nodes are virtual and which tolerations a
	// burst pod gets. Default: the Tencent EKS virtual node.
	// +kubebuilder:default={preset: TencentEKS}
	// +optional
	VirtualNodes VirtualNodes `json:"virtualNodes,omitempty"`

	// ScaleIn says which replicas go first when the workload scales in.
	// Default BurstFirst.
	// +kubebuilder:default=BurstFirst
	// +optional
	ScaleIn ScaleInPolicy `json:"scaleIn,omitempty"`

	// Rebalance moves burst pods back to local nodes, one at a time, when
	// the local floor is short and local room is free. Default off.
	// +optional
	Rebalance *Rebalance `json:"rebalance,omitempty"`
}

// RebalanceStatus is the state of moving burst pods home.
type RebalanceStatus struct {
	// FloorShortSince is when edgeplane first saw fewer than localReplicas
	// replicas of the current revision local while a burst pod ran; unset
	// when the floor is kept.
	// +optional
	FloorShortSince *metav1.Time `json:"floorShortSince,omitempty"`
	// LastEvictedPod is the burst pod last evicted to move home.
	// +optional
	LastEvictedPod string `json:"lastEvictedPod,omitempty"`
	// LastEvictionTime is when it was evicted.
	// +optional
	LastEvictionTime *metav1.Time `json:"lastEvictionTime,omitempty"`
	// Message says what rebalancing waits for, if anything.
	// +optional
	Message string `json:"message,omitempty"`
}

// NonBurstablePod is a governed pod that may not burst, and why.
type NonBurstablePod struct {
	// Name of the pod.
	Name string `json:"name"`
	// Reason is one of the NotBurstable* reasons of this package.
	Reason string `json:"reason"`
	// Message says what exactly is in the way.
	// +optional
	Message string `json:"message,omitempty"`
}

// BurstPolicyStatus is the observed state of a BurstPolicy.
type BurstPolicyStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Target names what the policy governs: "<Kind>/<name>" or the selector.
	// +optional
	Target string `json:"target,omitempty"`

	// Selector is the label selector of the governed pods, in string form.
	// +optional
	Selector string `json:"selector,omitempty"`

	// LocalReplicas counts governed pods bound to local nodes.
	// +optional
	LocalReplicas int32 `json:"localReplicas"`
	// BurstReplicas counts governed pods bound to virtual nodes.
	// +optional
	BurstReplicas int32 `json:"burstReplicas"`
	// PendingReplicas counts governed pods not bound to any node yet.
	// +optional
	PendingReplicas int32 `json:"pendingReplicas"`

	// NonBurstablePods lists pending pods that may not burst, with the reason.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	NonBurstablePods []NonBurstablePod `json:"nonBurstablePods,omitempty"`

	// Rebalance is the state of spec.rebalance; unset when it is off.
	// +optional
	Rebalance *RebalanceStatus `json:"rebalance,omitempty"`

	// Conditions: Ready, Bursting, LocalCapacityShort.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=bp,categories={edgeplane}
// +kubebuilder:printcolumn:name="TARGET",type="string",JSONPath=".status.target"
// +kubebuilder:printcolumn:name="LOCAL",type="integer",JSONPath=".status.localReplicas"
// +kubebuilder:printcolumn:name="BURST",type="integer",JSONPath=".status.burstReplicas"
// +kubebuilder:printcolumn:name="PENDING",type="integer",JSONPath=".status.pendingReplicas"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A BurstPolicy keeps the first localReplicas replicas of a workload on local
// nodes and bursts the others onto cloud virtual nodes when they cannot run
// locally; on scale-in the burst replicas go first.
type BurstPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BurstPolicySpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status BurstPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BurstPolicyList is a list of BurstPolicies.
type BurstPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BurstPolicy `json:"items"`
}

// GetConditions returns the status conditions.
func (p *BurstPolicy) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the status conditions.
func (p *BurstPolicy) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (p *BurstPolicy) GetObservedGeneration() int64 { return p.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (p *BurstPolicy) SetObservedGeneration(g int64) { p.Status.ObservedGeneration = g }

func init() {
	register(&BurstPolicy{}, &BurstPolicyList{})
}
