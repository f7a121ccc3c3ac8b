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

// The ledger's bounds keep the one object far below etcd's object size
// limit (1.5 MiB by default), which about 30 maximal claims (512 entries of
// up to 100 characters each) would pass: at most about 700 KiB of claims,
// field names and managed fields included. The markers below repeat them;
// the pool reconciler refuses a pool past them (Ready=False LedgerFull)
// before the API server would refuse the write.
const (
	// MaxFloatIPPoolClaims is the most pools with ranges the ledger admits.
	MaxFloatIPPoolClaims = 1024
	// MaxFloatIPPoolClaimEntries is the most ranges and excludeIPs entries
	// of all claims together.
	MaxFloatIPPoolClaimEntries = 4096
)

// FloatIPPoolLedgerSpec lists the admitted pools.
// +kubebuilder:validation:XValidation:rule="!has(self.claims) || self.claims.map(c, size(c.ranges) + (has(c.excludeIPs) ? size(c.excludeIPs) : 0)).sum() <= 4096",message="the claims hold at most 4096 ranges and excludeIPs entries together"
type FloatIPPoolLedgerSpec struct {
	// Claims are the pools allowed to hand out IPs, each with the IPs it was
	// admitted for. No two claims share an IP.
	// +optional
	// +listType=map
	// +listMapKey=pool
	// +kubebuilder:validation:MaxItems=1024
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
