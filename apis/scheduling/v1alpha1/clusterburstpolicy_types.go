package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterBurstPolicySpec is the cluster-wide burst default.
type ClusterBurstPolicySpec struct {
	// Enabled is the cluster-wide switch (the legacy eks-config
	// AUTO_SCALE_EKS). A BurstPolicy's own enabled wins when set; when both
	// are unset, bursting is on.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

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

	// Conditions: Ready.
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
// +kubebuilder:printcolumn:name="ENABLED",type="boolean",JSONPath=".spec.enabled"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="the ClusterBurstPolicy is a singleton and must be named default"

// A ClusterBurstPolicy is the cluster-wide burst switch and the restrictions
// that apply to every BurstPolicy. There is one, named "default"; without it
// bursting is on and the built-in restrictions apply.
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
