package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnycastAddressType is the Tencent Cloud address type to allocate.
// +kubebuilder:validation:Enum=AnycastEIP;HighQualityEIP;EIP
type AnycastAddressType string

const (
	// AddressTypeAnycastEIP is an anycast (AIA) address, announced from
	// Tencent's edge outside the Chinese mainland.
	AddressTypeAnycastEIP AnycastAddressType = "AnycastEIP"
	// AddressTypeHighQualityEIP is a premium BGP address.
	AddressTypeHighQualityEIP AnycastAddressType = "HighQualityEIP"
	// AddressTypeEIP is an ordinary elastic IP.
	AddressTypeEIP AnycastAddressType = "EIP"
)

// AnycastZone is where an AnycastEIP is announced.
// +kubebuilder:validation:Enum=ANYCAST_ZONE_OVERSEAS;ANYCAST_ZONE_GLOBAL
type AnycastZone string

// InternetChargeType is how the address's traffic is billed.
// +kubebuilder:validation:Enum=BANDWIDTH_PACKAGE;BANDWIDTH_POSTPAID_BY_HOUR;BANDWIDTH_PREPAID_BY_MONTH;TRAFFIC_POSTPAID_BY_HOUR
type InternetChargeType string

// AnycastIPBindingSpec is the desired state of an AnycastIPBinding: one
// public address of AddressType bound to the CVM instance behind NodeName.
//
// +kubebuilder:validation:XValidation:rule="!has(self.anycastZone) || self.addressType == 'AnycastEIP'",message="anycastZone is only valid with addressType AnycastEIP"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.addressID) || (has(self.addressID) && self.addressID == oldSelf.addressID)",message="addressID cannot be changed or removed once set"
// +kubebuilder:validation:XValidation:rule="!has(self.providerConfigRef) || self.providerConfigRef.kind == 'ClusterProviderConfig'",message="a cluster-scoped AnycastIPBinding can only use a ClusterProviderConfig"
// writeConnectionSecretToRef is refused for the reason given on PodElasticIPSpec
// (and a cluster-scoped binding has no namespace to write one in).
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef)",message="writeConnectionSecretToRef is not supported: an AnycastIPBinding has no connection secret (its address is in status), and edgeplane may not write Secrets"
type AnycastIPBindingSpec struct {
	// ProviderConfigReference (providerConfigRef, default
	// ClusterProviderConfig "default") names the Tencent Cloud account, and
	// ManagementPolicies say what edgeplane may do: leaving out Delete keeps
	// (orphans) the address when the binding is deleted; ["Observe"] only
	// reports an adopted address.
	xpv2.ManagedResourceSpec `json:",inline"`

	// NodeName is the node whose CVM instance gets the address. The instance
	// ID comes from the node's spec.providerID only (set when the node
	// registers, never changed), and is recorded in status.instanceID; the
	// legacy label cloud.tencent.com/node-instance-id, which the node's
	// kubelet may rewrite, is ignored.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeName is immutable"
	NodeName string `json:"nodeName"`

	// AddressType is the type of address to allocate.
	// +optional
	// +kubebuilder:default=AnycastEIP
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="addressType is immutable"
	AddressType AnycastAddressType `json:"addressType,omitempty"`

	// AnycastZone is where an AnycastEIP is announced; the cloud's default
	// (ANYCAST_ZONE_OVERSEAS) applies when unset. Only for AnycastEIP.
	// +optional
	AnycastZone AnycastZone `json:"anycastZone,omitempty"`

	// InternetMaxBandwidthOut caps the address's outbound bandwidth in
	// Mbps; the cloud's default applies when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2000
	InternetMaxBandwidthOut *int64 `json:"internetMaxBandwidthOut,omitempty"`

	// InternetChargeType is how traffic is billed; the cloud's default
	// (TRAFFIC_POSTPAID_BY_HOUR) applies when unset.
	// +optional
	InternetChargeType InternetChargeType `json:"internetChargeType,omitempty"`

	// Tags are put on the address at allocation, next to the ownership tags
	// edgeplane writes (keys starting with edgeplane.io/ or aia-, which are
	// reserved). Changing them later does not retag an existing address.
	// +optional
	// +kubebuilder:validation:MaxProperties=40
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('edgeplane.io/') && !k.startsWith('aia-'))",message="tag keys starting with edgeplane.io/ or aia- are reserved"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) >= 1 && size(k) <= 127 && size(self[k]) <= 255)",message="tag keys must be 1-127 characters and values at most 255"
	Tags map[string]string `json:"tags,omitempty"`

	// AddressID adopts an existing address (eip-xxxxxxxx) instead of
	// allocating one. It must be UNBIND, or already bound to the node's
	// instance. An adopted address is released on deletion like an
	// allocated one unless the management policies leave out Delete.
	// +optional
	// +kubebuilder:validation:Pattern=`^eip-[0-9a-z]{8}$`
	AddressID string `json:"addressID,omitempty"`
}

// AnycastIPBindingStatus is the observed state of an AnycastIPBinding.
type AnycastIPBindingStatus struct {
	// Conditions (Ready, Synced) and observedGeneration.
	xpv2.ManagedResourceStatus `json:",inline"`

	// AddressID is the address bound (or being bound) to the node.
	// +optional
	AddressID string `json:"addressID,omitempty"`
	// PublicIP is the address's public IP.
	// +optional
	PublicIP string `json:"publicIP,omitempty"`
	// InstanceID is the node's CVM instance.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
	// AddressType is the type of the address found in the cloud.
	// +optional
	AddressType string `json:"addressType,omitempty"`
	// State is the cloud's address state: CREATING, UNBIND, BINDING, BIND,
	// UNBINDING, OFFLINING.
	// +optional
	State string `json:"state,omitempty"`
	// PendingTask is the asynchronous cloud task edgeplane is waiting for.
	// +optional
	PendingTask *AnycastIPTask `json:"pendingTask,omitempty"`
	// Adopted says how an address edgeplane did not allocate for this
	// binding was taken over: Spec (spec.addressID), Legacy
	// (aia-ip-controller's tags) or Annotation (the node's legacy
	// tke.cloud.tencent.com/anycast-ip-id annotation).
	// +optional
	Adopted string `json:"adopted,omitempty"`
}

// AnycastIPTask is an asynchronous Tencent Cloud task (DescribeTaskResult).
type AnycastIPTask struct {
	// ID is the task ID.
	ID string `json:"id"`
	// Action is the call that started it: AllocateAddresses,
	// AssociateAddress, DisassociateAddress or ReleaseAddresses.
	Action string `json:"action"`
	// StartedAt is when the call returned.
	StartedAt metav1.Time `json:"startedAt"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=aipb,categories=edgeplane
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".spec.nodeName"
// +kubebuilder:printcolumn:name="TYPE",type="string",JSONPath=".spec.addressType"
// +kubebuilder:printcolumn:name="PUBLIC-IP",type="string",JSONPath=".status.publicIP"
// +kubebuilder:printcolumn:name="STATE",type="string",JSONPath=".status.state"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="ADDRESS",type="string",JSONPath=".status.addressID",priority=1
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// An AnycastIPBinding binds one Tencent Cloud public address (an anycast
// AIA address by default) to the CVM instance of one node. The node is
// tainted tke.cloud.tencent.com/no-aia-ip=true:NoSchedule until the address
// is bound, and carries the address in the legacy annotations
// tke.cloud.tencent.com/anycast-ip-id and -address once it is. Nodes
// labelled tke.cloud.tencent.com/need-aia-ip=true get one automatically,
// named after the node.
type AnycastIPBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec AnycastIPBindingSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status AnycastIPBindingStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AnycastIPBindingList is a list of AnycastIPBindings.
type AnycastIPBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AnycastIPBinding `json:"items"`
}

func init() {
	register(&AnycastIPBinding{}, &AnycastIPBindingList{})
}
