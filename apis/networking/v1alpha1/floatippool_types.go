package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReleasePolicy says when a float IP goes back to its pool. The values map
// one to one onto galaxy's k8s.v1.cni.galaxy.io/release-policy annotation:
// "" (Default), "immutable" (Immutable) and "never" (Never).
// +kubebuilder:validation:Enum=Default;Immutable;Never
type ReleasePolicy string

const (
	// ReleasePolicyDefault releases the IP when its pod is deleted or finishes.
	ReleasePolicyDefault ReleasePolicy = "Default"
	// ReleasePolicyImmutable keeps the IP while the pod's workload exists and
	// still counts the pod (StatefulSet index below replicas; Deployment with
	// no more IPs than replicas).
	ReleasePolicyImmutable ReleasePolicy = "Immutable"
	// ReleasePolicyNever keeps the IP for the workload's key until it is
	// released through the API or by deleting the FloatIP.
	ReleasePolicyNever ReleasePolicy = "Never"
)

// FloatIPPoolSpec is the desired state of a FloatIPPool.
//
// +kubebuilder:validation:XValidation:rule="!has(self.ranges) || (has(self.subnet) && has(self.nodeSubnets))",message="a pool with ranges needs subnet and nodeSubnets"
// +kubebuilder:validation:XValidation:rule="!has(self.ranges) || self.ranges.all(r, r.contains('~') ? (isIP(r.split('~')[0]) && isIP(r.split('~')[1]) && cidr(self.subnet).containsIP(r.split('~')[0]) && cidr(self.subnet).containsIP(r.split('~')[1])) : (isIP(r) ? cidr(self.subnet).containsIP(r) : (isCIDR(r) && cidr(self.subnet).containsCIDR(r))))",message="every range must be an IP, a CIDR or 'first~last' inside subnet"
// +kubebuilder:validation:XValidation:rule="!has(self.excludeIPs) || self.excludeIPs.all(r, r.contains('~') ? (isIP(r.split('~')[0]) && isIP(r.split('~')[1])) : (isIP(r) || isCIDR(r)))",message="every excludeIPs entry must be an IP, a CIDR or 'first~last'"
// +kubebuilder:validation:XValidation:rule="!has(self.gateway) || !has(self.subnet) || cidr(self.subnet).containsIP(self.gateway)",message="gateway must be inside subnet"
type FloatIPPoolSpec struct {
	// Ranges are the pod IPs this pool hands out: single IPs ("10.0.0.5"),
	// inclusive ranges ("10.0.0.10~10.0.0.50") or CIDRs ("10.0.1.0/28"), all
	// inside subnet. Ranges of one pool must not overlap, and no IP may be in
	// two pools.
	//
	// A pool without ranges is a sharing group (galaxy's Pool): pods naming
	// it with tke.cloud.tencent.com/eni-ip-pool get IPs from any pool with
	// ranges that their node can host, and size and preAllocate apply to
	// the group.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=atomic
	Ranges []string `json:"ranges,omitempty"`

	// Subnet is the pod subnet (CIDR); its prefix length is the mask written
	// into the pod's k8s.v1.cni.galaxy.io/args annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:XValidation:rule="isCIDR(self)",message="subnet must be a CIDR"
	Subnet string `json:"subnet,omitempty"`

	// Gateway of the pod subnet.
	// +optional
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="gateway must be an IP"
	Gateway string `json:"gateway,omitempty"`

	// Vlan is the VLAN id written into the pod's IP info.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=4094
	Vlan int32 `json:"vlan,omitempty"`

	// NodeSubnets are the CIDRs of node InternalIPs whose nodes may host this
	// pool's IPs (galaxy's nodeSubnets / routableSubnet). Pods that need one
	// of these IPs are only scheduled onto such nodes.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=50
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every nodeSubnets entry must be a CIDR"
	// +listType=atomic
	NodeSubnets []string `json:"nodeSubnets,omitempty"`

	// ExcludeIPs are never handed out (IPs, CIDRs or "first~last").
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=atomic
	ExcludeIPs []string `json:"excludeIPs,omitempty"`

	// Size caps the number of IPs held by the workloads that name this pool
	// with the tke.cloud.tencent.com/eni-ip-pool annotation (galaxy's Pool
	// size). Unset: the pool grows with the workloads' replicas.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Size *int32 `json:"size,omitempty"`

	// PreAllocate reserves size IPs for the pool up front (galaxy's
	// preAllocateIP), so the first pods need not wait for allocation.
	// Requires size.
	// +optional
	PreAllocate bool `json:"preAllocate,omitempty"`

	// ReleasePolicy is used for pods that set no
	// k8s.v1.cni.galaxy.io/release-policy annotation. Pods that name this
	// pool with tke.cloud.tencent.com/eni-ip-pool always use Never.
	// +optional
	// +kubebuilder:default=Default
	ReleasePolicy ReleasePolicy `json:"releasePolicy,omitempty"`

	// NamespaceSelector limits the namespaces whose pods may get IPs from this
	// pool. Unset: every namespace.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// ReservedTTL releases an IP kept by Immutable or Never (phase Reserved)
	// once no pod has used it for this long (galaxy's open ask #87). Unset:
	// reserved IPs are kept until released by hand.
	// +optional
	ReservedTTL *metav1.Duration `json:"reservedTTL,omitempty"`
}

// FloatIPPoolStatus is the observed state of a FloatIPPool.
type FloatIPPoolStatus struct {
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Total is the number of IPs the pool can hand out (ranges minus
	// excludeIPs).
	// +optional
	Total int64 `json:"total"`
	// Allocated is the number of IPs held by a pod.
	// +optional
	Allocated int64 `json:"allocated"`
	// Reserved is the number of IPs kept for a workload, a pool or an admin
	// reservation, with no pod using them.
	// +optional
	Reserved int64 `json:"reserved"`
	// Available is Total - Allocated - Reserved.
	// +optional
	Available int64 `json:"available"`

	// Conditions: Ready, RolloutDeadlock, InUse.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fipp,categories={edgeplane}
// +kubebuilder:printcolumn:name="SUBNET",type="string",JSONPath=".spec.subnet"
// +kubebuilder:printcolumn:name="TOTAL",type="integer",JSONPath=".status.total"
// +kubebuilder:printcolumn:name="ALLOCATED",type="integer",JSONPath=".status.allocated"
// +kubebuilder:printcolumn:name="RESERVED",type="integer",JSONPath=".status.reserved"
// +kubebuilder:printcolumn:name="AVAILABLE",type="integer",JSONPath=".status.available"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="pool name must be at most 63 characters (it is used as a label value)"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.preAllocate) || !self.spec.preAllocate || has(self.spec.size)",message="preAllocate requires size"

// A FloatIPPool is a set of fixed pod IPs (galaxy-ipam float IPs) that pods
// requesting tke.cloud.tencent.com/eni-ip get, on nodes of its nodeSubnets.
type FloatIPPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FloatIPPoolSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that a pool no controller
	// has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status FloatIPPoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FloatIPPoolList is a list of FloatIPPools.
type FloatIPPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FloatIPPool `json:"items"`
}

// GetConditions returns the status conditions.
func (p *FloatIPPool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions sets the status conditions.
func (p *FloatIPPool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (p *FloatIPPool) GetObservedGeneration() int64 { return p.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (p *FloatIPPool) SetObservedGeneration(g int64) { p.Status.ObservedGeneration = g }

func init() {
	register(&FloatIPPool{}, &FloatIPPoolList{})
}
