package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LegacySwitchTable says how the legacy local switch (the AUTO_SCALE_EKS
// annotation of a workload's pod template) combines with the global one
// (eks-config's AUTO_SCALE_EKS, this object's enabled). The TKE resilience
// chart documented two tables that differ on two rows.
// +kubebuilder:validation:Enum=LocalOptIn;LocalOverride
type LegacySwitchTable string

const (
	// SwitchTableLocalOptIn is the table of the TKE resilience documentation
	// (chart v0.5.0): a workload's AUTO_SCALE_EKS=true opts it in when the
	// global switch is false, but AUTO_SCALE_EKS=false does not opt it out;
	// only a global false with no local true keeps pods from bursting.
	// LOCAL_REPLICAS is honoured whenever the workload bursts.
	SwitchTableLocalOptIn LegacySwitchTable = "LocalOptIn"
	// SwitchTableLocalOverride is the table of chart v1.0.0: the local
	// switch wins when set, both ways; otherwise the global one; otherwise
	// on. With neither set, LOCAL_REPLICAS is ignored.
	SwitchTableLocalOverride LegacySwitchTable = "LocalOverride"
)

// Governs says which pending pods bursting applies to.
// +kubebuilder:validation:Enum=SelectedPods;AllPods
type Governs string

const (
	// GovernsSelectedPods: only pods a BurstPolicy selects burst.
	GovernsSelectedPods Governs = "SelectedPods"
	// GovernsAllPods: every pod no BurstPolicy selects bursts too, without
	// an annotation, once the scheduler finds no room for it on local nodes
	// and it passes the restrictions (the legacy chart with its global
	// switch on). Pods of excluded namespaces are not touched.
	GovernsAllPods Governs = "AllPods"
)

// ClusterBurstPolicySpec is the cluster-wide burst default.
type ClusterBurstPolicySpec struct {
	// Enabled is the cluster-wide switch (the legacy eks-config
	// AUTO_SCALE_EKS). A BurstPolicy's own enabled wins when set; when both
	// are unset, bursting is on. Policies translated from the legacy
	// annotations, and pods governed through governs: AllPods, combine it
	// with their AUTO_SCALE_EKS as legacySwitchTable says.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// Governs says which pending pods burst: SelectedPods (default), only
	// those a BurstPolicy selects; AllPods, also every other pod once the
	// scheduler reports it unschedulable (the legacy global switch on).
	// +kubebuilder:default=SelectedPods
	// +optional
	Governs Governs `json:"governs,omitempty"`

	// LegacySwitchTable is the switch table of the legacy AUTO_SCALE_EKS
	// annotations: LocalOptIn (the TKE resilience documentation) or
	// LocalOverride (chart v1.0.0). Unset: the manager's
	// --burstpolicy-legacy-switch-table (default LocalOptIn). A BurstPolicy a
	// person writes always follows LocalOverride: its enabled: false opts out.
	// +optional
	LegacySwitchTable LegacySwitchTable `json:"legacySwitchTable,omitempty"`

	// VirtualNodes says which nodes are virtual and which tolerations a pod
	// burst through governs: AllPods gets. Default: the Tencent EKS virtual
	// node.
	// +kubebuilder:default={preset: TencentEKS}
	// +optional
	VirtualNodes VirtualNodes `json:"virtualNodes,omitempty"`

	// ExcludedNamespaces: pods in these namespaces never burst.
	// +kubebuilder:default={"kube-system","tke-eni-ip-webhook"}
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +optional
	ExcludedNamespaces []string `json:"excludedNamespaces,omitempty"`

	// AllowFixedIP lets pods with a fixed IP (a float IP or a VPC IP claim)
	// burst. Default false: their IP cannot follow them to a virtual node.
	// +optional
	AllowFixedIP bool `json:"allowFixedIP,omitempty"`
}

// ClusterBurstPolicyStatus is the observed state of a ClusterBurstPolicy.
type ClusterBurstPolicyStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// LegacySwitchTable is the switch table in effect (spec.legacySwitchTable
	// or the manager's default).
	// +optional
	LegacySwitchTable LegacySwitchTable `json:"legacySwitchTable,omitempty"`

	// BurstPods counts the pods that governs: AllPods burst (they carry the
	// annotation scheduling.edgeplane.io/burst-policy:
	// ClusterBurstPolicy/default) and that have not finished. Unset with
	// governs: SelectedPods; each BurstPolicy counts its own pods.
	// +optional
	BurstPods *int32 `json:"burstPods,omitempty"`

	// NonBurstablePods counts the pending pods governs: AllPods found
	// unschedulable that may not burst; each carries the annotation
	// scheduling.edgeplane.io/not-burstable with the reason. Unset with
	// governs: SelectedPods.
	// +optional
	NonBurstablePods *int32 `json:"nonBurstablePods,omitempty"`

	// Conditions: Ready, and Bursting with governs: AllPods.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cbp,categories={edgeplane}
// +kubebuilder:printcolumn:name="GOVERNS",type="string",JSONPath=".spec.governs"
// +kubebuilder:printcolumn:name="ENABLED",type="boolean",JSONPath=".spec.enabled"
// +kubebuilder:printcolumn:name="TABLE",type="string",JSONPath=".status.legacySwitchTable"
// +kubebuilder:printcolumn:name="BURST",type="integer",JSONPath=".status.burstPods"
// +kubebuilder:printcolumn:name="REFUSED",type="integer",JSONPath=".status.nonBurstablePods"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="the ClusterBurstPolicy is a singleton and must be named default"

// A ClusterBurstPolicy is the cluster-wide burst switch, the restrictions
// that apply to every BurstPolicy, the legacy switch table, and whether pods
// no BurstPolicy selects burst too (governs: AllPods). There is one, named
// "default"; without it bursting is on for the pods BurstPolicies select and
// the built-in restrictions apply.
type ClusterBurstPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterBurstPolicySpec `json:"spec,omitempty"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status ClusterBurstPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterBurstPolicyList is a list of ClusterBurstPolicies.
type ClusterBurstPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterBurstPolicy `json:"items"`
}

// GetConditions returns the status conditions.
func (p *ClusterBurstPolicy) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the status conditions.
func (p *ClusterBurstPolicy) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (p *ClusterBurstPolicy) GetObservedGeneration() int64 { return p.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (p *ClusterBurstPolicy) SetObservedGeneration(g int64) { p.Status.ObservedGeneration = g }

func init() {
	register(&ClusterBurstPolicy{}, &ClusterBurstPolicyList{})
}
