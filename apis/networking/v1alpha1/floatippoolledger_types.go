package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FloatIPPoolLedgerName is the name of the one FloatIPPoolLedger.
const FloatIPPoolLedgerName = "cluster"

// FloatIPPoolClaim is a pool's admitted claim on its IPs: the ranges and
// excludeIPs of its spec when it was admitted.
type FloatIPPoolClaim struct {
	// Pool is the FloatIPPool's name.
	// +kubebuilder:validation:MaxLength=63
	Pool string `json:"pool"`
	// UID is the FloatIPPool's UID: a pool deleted and created again under
	// the same name is a new pool, admitted anew.
	// +kubebuilder:validation:MaxLength=36
	UID string `json:"uid"`
	// Ranges and ExcludeIPs are copied from the pool's spec.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=atomic
	Ranges []string `json:"ranges"`
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=atomic
	ExcludeIPs []string `json:"excludeIPs,omitempty"`
}

// FloatIPPoolLedgerSpec lists the admitted pools.
type FloatIPPoolLedgerSpec struct {
	// Claims are the pools allowed to hand out IPs, each with the IPs it was
	// admitted for. No two claims share an IP.
	// +optional
	// +listType=map
	// +listMapKey=pool
	Claims []FloatIPPoolClaim `json:"claims,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'cluster'",message="the one FloatIPPoolLedger is named cluster"

// FloatIPPoolLedger records which FloatIPPools may hand out which IPs. The
// manager keeps the one object, named cluster: a FloatIPPool with ranges
// hands out IPs only while its claim here matches its spec, and the manager
// adds a claim only if it shares no IP with another claim, with an
// optimistic-concurrency update of this object. So of two pools that
// overlap at most one is ever usable, however many manager replicas decide
// at once (docs/floatippool.md, "Overlapping pools"). Do not edit it.
type FloatIPPoolLedger struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FloatIPPoolLedgerSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// FloatIPPoolLedgerList is a list of FloatIPPoolLedgers.
type FloatIPPoolLedgerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FloatIPPoolLedger `json:"items"`
}

func init() {
	register(&FloatIPPoolLedger{}, &FloatIPPoolLedgerList{})
}
