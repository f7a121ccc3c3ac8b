package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeElasticIPAllocationMode says where a NodeElasticIP's address comes
// from.
// +kubebuilder:validation:Enum=Auto;Pool;Static
type NodeElasticIPAllocationMode string

const (
	// NodeElasticIPModeAuto allocates a fresh address (from publicIPv4Pool).
	NodeElasticIPModeAuto NodeElasticIPAllocationMode = "Auto"
	// NodeElasticIPModePool claims a free address of a reserved pool, chosen
	// by the pool's filters and in its order (kubeip's FILTER and ORDER_BY).
	NodeElasticIPModePool NodeElasticIPAllocationMode = "Pool"
	// NodeElasticIPModeStatic uses one known address (allocationID).
	NodeElasticIPModeStatic NodeElasticIPAllocationMode = "Static"
)

// NodeElasticIPReleasePolicy says what happens to the address when the
// NodeElasticIP is deleted (the node went away, or stopped matching the
// translator's selector).
// +kubebuilder:validation:Enum=Delete;Retain
type NodeElasticIPReleasePolicy string

const (
	// NodeElasticIPReleaseDelete disassociates and releases the address
	// (default for Auto; only allowed for Auto).
	NodeElasticIPReleaseDelete NodeElasticIPReleasePolicy = "Delete"
	// NodeElasticIPReleaseRetain disassociates the address and removes
	// edgeplane's ownership tags, returning it to its pool or to the account
	// (default for Pool and Static).
	NodeElasticIPReleaseRetain NodeElasticIPReleasePolicy = "Retain"
)

// AddressFilter is one EC2 DescribeAddresses filter: the address matches
// when its field matches one of the values (* and ? are wildcards).
// Several filters are ANDed, as in EC2 (and kubeip's FILTER).
type AddressFilter struct {
	// Name is tag:<key> (the tag's value), tag-key (a tag key),
	// public-ip or allocation-id. The other DescribeAddresses filters
	// describe where an address is associated, which a free pool address
	// never is.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=135
	// +kubebuilder:validation:XValidation:rule="(self.startsWith('tag:') && size(self) > 4) || self in ['tag-key', 'public-ip', 'allocation-id']",message="filter name must be tag:<key>, tag-key, public-ip or allocation-id"
	Name string `json:"name"`
	// Values are the accepted values (at least one).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=200
	// +kubebuilder:validation:items:MaxLength=255
	// +listType=atomic
	Values []string `json:"values"`
}

// NodeElasticIPPool is a reserved pool: the addresses the filters select
// (at least one filter: a pool of every address in the account is refused),
// claimed in OrderBy's order.
type NodeElasticIPPool struct {
	// Filters select the pool's addresses (ANDed).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	Filters []AddressFilter `json:"filters"`
	// OrderBy is the order in which free addresses are claimed: PublicIp
	// (numerically), AllocationId, PublicIpv4Pool, or Tag:<key> (the tag's
	// value; addresses without the tag come last); a leading "-" reverses
	// it. Ties go to the lower allocation ID. Default PublicIp.
	// +optional
	// +kubebuilder:default=PublicIp
	// +kubebuilder:validation:MaxLength=133
	// +kubebuilder:validation:Pattern=`^-?(PublicIp|AllocationId|PublicIpv4Pool|Tag:.+)$`
	OrderBy string `json:"orderBy,omitempty"`
}

// NodeElasticIPAllocation selects the address.
// +kubebuilder:validation:XValidation:rule="self.mode == 'Auto' || !has(self.publicIPv4Pool)",message="publicIPv4Pool is only allowed with mode Auto"
// +kubebuilder:validation:XValidation:rule="(self.mode == 'Pool') == has(self.pool)",message="pool is required with mode Pool and only allowed with it"
// +kubebuilder:validation:XValidation:rule="(self.mode == 'Static') == has(self.allocationID)",message="allocationID is required with mode Static and only allowed with it"
type NodeElasticIPAllocation struct {
	// Mode is Auto, Pool or Static.
	// +optional
	// +kubebuilder:default=Auto
	Mode NodeElasticIPAllocationMode `json:"mode,omitempty"`

	// PublicIPv4Pool is the pool Auto allocates from (default "amazon"), for
	// example a BYOIP pool.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	PublicIPv4Pool string `json:"publicIPv4Pool,omitempty"`

	// Pool is the reserved pool Pool claims from.
	// +optional
	Pool *NodeElasticIPPool `json:"pool,omitempty"`

	// AllocationID names the address for Static (eipalloc-...).
	// +optional
	// +kubebuilder:validation:Pattern=`^eipalloc-[0-9a-f]{8,17}$`
	AllocationID string `json:"allocationID,omitempty"`
}

// NodeElasticIPSpec is the desired state of a NodeElasticIP: one Elastic
// IP on the primary private IP of the node's primary network interface.
// +kubebuilder:validation:XValidation:rule="!has(self.releasePolicy) || self.releasePolicy != 'Delete' || self.allocation.mode == 'Auto'",message="releasePolicy Delete releases the address and is only allowed with allocation.mode Auto"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind == 'ClusterProviderConfig'",message="a cluster-scoped NodeElasticIP can only use a ClusterProviderConfig"
// writeConnectionSecretToRef is refused for the reason given on PodElasticIPSpec.
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef)",message="writeConnectionSecretToRef is not supported: a NodeElasticIP has no connection secret (its address is in status), and edgeplane may not write Secrets"
type NodeElasticIPSpec struct {
	// ProviderConfigReference (providerConfigRef, default
	// ClusterProviderConfig "default") names the AWS account;
	// ManagementPolicies say what edgeplane may do (leaving out Delete keeps
	// the address when the NodeElasticIP is deleted).
	xpv2.ManagedResourceSpec `json:",inline"`

	// NodeName is the node whose EC2 instance gets the address, on its
	// primary network interface. The instance comes from the node's
	// spec.providerID (aws:///<zone>/<instance-id>).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeName is immutable"
	NodeName string `json:"nodeName"`

	// Allocation selects the address. It is immutable: to change it, delete
	// the NodeElasticIP (its release policy applies) and create a new one.
	// +kubebuilder:default={mode: Auto}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="allocation is immutable; delete and recreate the NodeElasticIP to change it"
	Allocation NodeElasticIPAllocation `json:"allocation"`

	// ReleasePolicy applies when the NodeElasticIP is deleted. Default:
	// Delete for Auto, Retain for Pool and Static.
	// +optional
	ReleasePolicy NodeElasticIPReleasePolicy `json:"releasePolicy,omitempty"`

	// TaintKey, when set, is a NoSchedule taint (value "true") the node
	// carries until its address is associated: edgeplane adds it while the
	// node has none (the Node webhook already at the node's registration)
	// and removes it once the address is on the node (kubeip's TAINT_KEY).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	TaintKey string `json:"taintKey,omitempty"`

	// Tags are added to the address besides edgeplane's ownership tags
	// (Auto: at allocation; Pool and Static: with the claim).
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.lowerAscii().startsWith('aws:') && !k.startsWith('edgeplane.io/') && !k.startsWith('networking.edgeplane.io/'))",message="tags must not use the aws:, edgeplane.io/ or networking.edgeplane.io/ prefixes"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 127 && size(self[k]) <= 255)",message="tag keys are 1-127 and values at most 255 characters"
	Tags map[string]string `json:"tags,omitempty"`
}

// NodeElasticIPStatus is the observed state of a NodeElasticIP.
type NodeElasticIPStatus struct {
	// Conditions (Ready, Synced) and observedGeneration.
	xpv2.ManagedResourceStatus `json:",inline"`

	// AllocationID of the address (also the crossplane.io/external-name).
	// +optional
	AllocationID string `json:"allocationID,omitempty"`
	// PublicIP of the address.
	// +optional
	PublicIP string `json:"publicIP,omitempty"`
	// AssociationID of the address's association with the node.
	// +optional
	AssociationID string `json:"associationID,omitempty"`
	// InstanceID is the node's EC2 instance.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
	// NetworkInterfaceID is the instance's primary network interface.
	// +optional
	NetworkInterfaceID string `json:"networkInterfaceID,omitempty"`
	// PrivateIP is the primary private IP the address is associated with.
	// +optional
	PrivateIP string `json:"privateIP,omitempty"`
	// Adopted is "Associated" when the address was already on the node and
	// edgeplane took it over instead of claiming or allocating one.
	// +optional
	Adopted string `json:"adopted,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=neip,categories=edgeplane
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".spec.nodeName"
// +kubebuilder:printcolumn:name="MODE",type="string",JSONPath=".spec.allocation.mode"
// +kubebuilder:printcolumn:name="PUBLIC-IP",type="string",JSONPath=".status.publicIP"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status",priority=1
// +kubebuilder:printcolumn:name="ALLOCATION",type="string",JSONPath=".status.allocationID",priority=1
// +kubebuilder:printcolumn:name="INSTANCE",type="string",JSONPath=".status.instanceID",priority=1

// A NodeElasticIP gives one node an AWS Elastic IP on the primary private
// IP of its instance's primary network interface: allocated for it (Auto),
// claimed from a reserved pool (Pool) or one known address (Static). The
// node is labelled networking.edgeplane.io/elastic-ip=<ip> once the
// address is on it, and may be tainted until then. Nodes matching the
// manager's --nodeelasticip-node-selector get one automatically, named
// after the node. See docs/nodeelasticip.md.
type NodeElasticIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NodeElasticIPSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status NodeElasticIPStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// NodeElasticIPList is a list of NodeElasticIPs.
type NodeElasticIPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NodeElasticIP `json:"items"`
}

func init() {
	register(&NodeElasticIP{}, &NodeElasticIPList{})
}

// NodeElasticIPKind is the kind's name.
const NodeElasticIPKind = "NodeElasticIP"

// EffectiveReleasePolicy is spec.releasePolicy or the mode's default.
func (n *NodeElasticIP) EffectiveReleasePolicy() NodeElasticIPReleasePolicy {
	if n.Spec.ReleasePolicy != "" {
		return n.Spec.ReleasePolicy
	}
	if n.Spec.Allocation.Mode == NodeElasticIPModeAuto || n.Spec.Allocation.Mode == "" {
		return NodeElasticIPReleaseDelete
	}
	return NodeElasticIPReleaseRetain
}
