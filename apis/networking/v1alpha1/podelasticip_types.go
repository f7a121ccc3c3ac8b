package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodElasticIPAllocationMode says where a PodElasticIP's address comes from.
// +kubebuilder:validation:Enum=Auto;Pool;Static
type PodElasticIPAllocationMode string

const (
	// PodElasticIPModeAuto allocates a fresh address from publicIPv4Pool
	// (legacy type "auto").
	PodElasticIPModeAuto PodElasticIPAllocationMode = "Auto"
	// PodElasticIPModePool claims a free pre-created address that carries the
	// tag key tagKey, whatever its value (legacy type "fixed-tag").
	PodElasticIPModePool PodElasticIPAllocationMode = "Pool"
	// PodElasticIPModeStatic uses one known address: the one tagged
	// tagKey=<namespace>/<pod> (legacy type "fixed-tag-value") or the one with
	// allocationID.
	PodElasticIPModeStatic PodElasticIPAllocationMode = "Static"
)

// PodElasticIPReleasePolicy says what happens to the address when the
// PodElasticIP is deleted.
// +kubebuilder:validation:Enum=Delete;Retain;AfterDelay
type PodElasticIPReleasePolicy string

const (
	// PodElasticIPReleaseDelete disassociates and releases the address
	// (default for Auto; only allowed for Auto).
	PodElasticIPReleaseDelete PodElasticIPReleasePolicy = "Delete"
	// PodElasticIPReleaseRetain disassociates the address and removes
	// edgeplane's claim and ownership tags, giving it back to its pool or to
	// the account (default for Pool and Static).
	PodElasticIPReleaseRetain PodElasticIPReleasePolicy = "Retain"
	// PodElasticIPReleaseAfterDelay disassociates the address and keeps it,
	// tagged for <namespace>/<pod>, for releaseDelay: a PodElasticIP created
	// for a pod of the same name within the delay (a StatefulSet pod moving
	// to another node) gets the same address. After the delay the orphan
	// sweep applies the mode's default policy.
	PodElasticIPReleaseAfterDelay PodElasticIPReleasePolicy = "AfterDelay"
)

// PodElasticIPAllocation selects the address.
// +kubebuilder:validation:XValidation:rule="self.mode == 'Auto' || !has(self.publicIPv4Pool)",message="publicIPv4Pool is only allowed with mode Auto"
// +kubebuilder:validation:XValidation:rule="self.mode != 'Auto' || (!has(self.tagKey) && !has(self.allocationID))",message="mode Auto takes neither tagKey nor allocationID"
// +kubebuilder:validation:XValidation:rule="self.mode != 'Pool' || (has(self.tagKey) && !has(self.allocationID))",message="mode Pool requires tagKey and takes no allocationID"
// +kubebuilder:validation:XValidation:rule="self.mode != 'Static' || (has(self.tagKey) != has(self.allocationID))",message="mode Static requires exactly one of tagKey or allocationID"
type PodElasticIPAllocation struct {
	// Mode is Auto, Pool or Static.
	// +optional
	// +kubebuilder:default=Auto
	Mode PodElasticIPAllocationMode `json:"mode,omitempty"`

	// PublicIPv4Pool is the pool Auto allocates from (default "amazon"), for
	// example a BYOIP pool.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	PublicIPv4Pool string `json:"publicIPv4Pool,omitempty"`

	// TagKey is, for Pool, the tag key every address of the pool carries;
	// for Static, the tag key whose value is "<namespace>/<pod>".
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=127
	// +kubebuilder:validation:XValidation:rule="!self.lowerAscii().startsWith('aws:')",message="tagKey must not start with aws:"
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('edgeplane.io/') && !self.startsWith('networking.edgeplane.io/')",message="tagKey must not be one of edgeplane's own tag keys"
	TagKey string `json:"tagKey,omitempty"`

	// AllocationID names the address for Static: an EC2 allocation ID
	// (eipalloc-...) on AWS, a Tencent Cloud address ID (eip-...) on
	// Tencent Cloud. An ID of the other cloud than the provider config's
	// is Ready=False ProviderMismatch.
	// +optional
	// +kubebuilder:validation:Pattern=`^(eipalloc-[0-9a-f]{8,17}|eip-[0-9a-z]{8})$`
	AllocationID string `json:"allocationID,omitempty"`
}

// PodElasticIPTencentAddressType is the type of a Tencent Cloud address.
// +kubebuilder:validation:Enum=EIP;HighQualityEIP
type PodElasticIPTencentAddressType string

// PodElasticIPTencentChargeType is how a Tencent Cloud address's traffic
// is billed (AllocateAddresses InternetChargeType).
// +kubebuilder:validation:Enum=TRAFFIC_POSTPAID_BY_HOUR;BANDWIDTH_POSTPAID_BY_HOUR
type PodElasticIPTencentChargeType string

// PodElasticIPTencentISP is the line of a Tencent Cloud address
// (AllocateAddresses InternetServiceProvider): BGP, or one carrier's static
// single line (accounts allow-listed for them).
// +kubebuilder:validation:Enum=BGP;CMCC;CTCC;CUCC
type PodElasticIPTencentISP string

// Defaults of spec.tencent: Tencent Cloud's own defaults for
// AllocateAddresses (https://www.tencentcloud.com/document/api/215/16699),
// sent explicitly so an address does not change with the cloud's defaults.
const (
	PodElasticIPTencentDefaultAddressType PodElasticIPTencentAddressType = "EIP"
	PodElasticIPTencentDefaultChargeType  PodElasticIPTencentChargeType  = "TRAFFIC_POSTPAID_BY_HOUR"
	PodElasticIPTencentDefaultBandwidth   int64                          = 1
	PodElasticIPTencentDefaultISP         PodElasticIPTencentISP         = "BGP"
)

// PodElasticIPTencent is how an Auto address is allocated on Tencent Cloud
// (a PodElasticIP whose provider config is a Tencent Cloud one). Every field
// has the default Tencent Cloud itself applies; a PodElasticIP without the
// block gets them all.
type PodElasticIPTencent struct {
	// AddressType: EIP (default) or HighQualityEIP (accounts allow-listed
	// for it).
	// +optional
	// +kubebuilder:default=EIP
	AddressType PodElasticIPTencentAddressType `json:"addressType,omitempty"`
	// InternetChargeType: TRAFFIC_POSTPAID_BY_HOUR (default) or
	// BANDWIDTH_POSTPAID_BY_HOUR.
	// +optional
	// +kubebuilder:default=TRAFFIC_POSTPAID_BY_HOUR
	InternetChargeType PodElasticIPTencentChargeType `json:"internetChargeType,omitempty"`
	// InternetMaxBandwidthOut is the outbound bandwidth cap in Mbps
	// (default 1).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2000
	InternetMaxBandwidthOut int64 `json:"internetMaxBandwidthOut,omitempty"`
	// InternetServiceProvider: BGP (default), or CMCC, CTCC, CUCC for a
	// static single-line address.
	// +optional
	// +kubebuilder:default=BGP
	InternetServiceProvider PodElasticIPTencentISP `json:"internetServiceProvider,omitempty"`
}

// PodElasticIPSpec is the desired state of a PodElasticIP.
// +kubebuilder:validation:XValidation:rule="(has(self.releasePolicy) && self.releasePolicy == 'AfterDelay') == has(self.releaseDelay)",message="releaseDelay is required with releasePolicy AfterDelay and only allowed with it"
// +kubebuilder:validation:XValidation:rule="!has(self.releasePolicy) || self.releasePolicy != 'Delete' || self.allocation.mode == 'Auto'",message="releasePolicy Delete releases the address and is only allowed with allocation.mode Auto"
// +kubebuilder:validation:XValidation:rule="!has(self.tencent) || self.allocation.mode == 'Auto'",message="tencent says how Auto allocates on Tencent Cloud and is only allowed with allocation.mode Auto"
// +kubebuilder:validation:XValidation:rule="!has(self.tencent) || !has(self.allocation.publicIPv4Pool)",message="allocation.publicIPv4Pool is AWS's and tencent is Tencent Cloud's: set at most one"
// +kubebuilder:validation:XValidation:rule="has(self.tencent) == has(oldSelf.tencent)",message="tencent is immutable; delete and recreate the PodElasticIP to change it"
//
// writeConnectionSecretToRef comes with crossplane's ManagedResourceSpec but is
// refused: an address has no secret to publish, and publishing an empty one
// would need create/update on Secrets in every namespace, a grant the manager
// deliberately lacks (docs/operations.md, "What the manager may do").
// +kubebuilder:validation:XValidation:rule="!has(self.writeConnectionSecretToRef)",message="writeConnectionSecretToRef is not supported: a PodElasticIP has no connection secret (its address is in status), and edgeplane may not write Secrets"
type PodElasticIPSpec struct {
	xpv2.ManagedResourceSpec `json:",inline"`

	// PodName is the pod, in the PodElasticIP's namespace, that gets the
	// address. A pod recreated with the same name (a StatefulSet pod) gets
	// the same address.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="podName is immutable"
	PodName string `json:"podName"`

	// Allocation selects the address. It is immutable: to change it, delete
	// the PodElasticIP (its release policy applies) and create a new one.
	// +kubebuilder:default={mode: Auto}
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="allocation is immutable; delete and recreate the PodElasticIP to change it"
	Allocation PodElasticIPAllocation `json:"allocation"`

	// ReleasePolicy applies when the PodElasticIP is deleted. Default:
	// Delete for Auto, Retain for Pool and Static.
	// +optional
	ReleasePolicy PodElasticIPReleasePolicy `json:"releasePolicy,omitempty"`

	// ReleaseDelay is how long AfterDelay keeps the address for a pod of
	// the same name.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('720h')",message="releaseDelay must be a duration between 0s (exclusive) and 720h"
	ReleaseDelay *metav1.Duration `json:"releaseDelay,omitempty"`

	// Tags are added to the address besides edgeplane's ownership tags
	// (Auto: at allocation; Pool and Static: with the claim).
	// +optional
	// +kubebuilder:validation:MaxProperties=20
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.lowerAscii().startsWith('aws:') && !k.startsWith('edgeplane.io/') && !k.startsWith('networking.edgeplane.io/') && !k.startsWith('aws-samples.github.com/'))",message="tags must not use the aws:, edgeplane.io/, networking.edgeplane.io/ or aws-samples.github.com/ prefixes"
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 127 && size(self[k]) <= 255)",message="tag keys are at most 127 and values at most 255 characters"
	Tags map[string]string `json:"tags,omitempty"`

	// Tencent is how an Auto address is allocated when the provider config
	// is a Tencent Cloud one: type, bandwidth, charge type and line (every
	// field defaults to Tencent Cloud's own default). It is Tencent Cloud's
	// provider block: on an AWS provider config it is Ready=False
	// ProviderMismatch. Immutable, as the allocation is.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="tencent is immutable; delete and recreate the PodElasticIP to change it"
	Tencent *PodElasticIPTencent `json:"tencent,omitempty"`
}

// PodElasticIPStatus is the observed state of a PodElasticIP.
type PodElasticIPStatus struct {
	xpv2.ManagedResourceStatus `json:",inline"`

	// AllocationID of the address (also the crossplane.io/external-name).
	// +optional
	AllocationID string `json:"allocationID,omitempty"`
	// PublicIP of the address.
	// +optional
	PublicIP string `json:"publicIP,omitempty"`
	// AssociationID of the address's association with the pod.
	// +optional
	AssociationID string `json:"associationID,omitempty"`
	// NetworkInterfaceID is the ENI the address is associated with.
	// +optional
	NetworkInterfaceID string `json:"networkInterfaceID,omitempty"`
	// PrivateIP is the pod IP the address is associated with.
	// +optional
	PrivateIP string `json:"privateIP,omitempty"`
	// PodUID is the UID of the pod the address is associated with.
	// +optional
	PodUID string `json:"podUID,omitempty"`
	// NodeName is the node of that pod.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=peip,categories=edgeplane
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".spec.podName"
// +kubebuilder:printcolumn:name="MODE",type="string",JSONPath=".spec.allocation.mode"
// +kubebuilder:printcolumn:name="PUBLIC-IP",type="string",JSONPath=".status.publicIP"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="REASON",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="SYNCED",type="string",JSONPath=".status.conditions[?(@.type=='Synced')].status",priority=1
// +kubebuilder:printcolumn:name="ALLOCATION",type="string",JSONPath=".status.allocationID",priority=1
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".status.nodeName",priority=1

// A PodElasticIP gives one pod an elastic IP on AWS or Tencent Cloud (the
// provider config's cloud): allocated for it (Auto),
// claimed from a pool of pre-tagged addresses (Pool) or one known address
// (Static), associated with the pod's private IP on its ENI, and followed
// when the pod is recreated. It is a crossplane-runtime managed resource;
// the pod annotations of aws-pod-eip-controller are translated into it.
type PodElasticIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PodElasticIPSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status PodElasticIPStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PodElasticIPList is a list of PodElasticIPs.
type PodElasticIPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PodElasticIP `json:"items"`
}

func init() {
	register(&PodElasticIP{}, &PodElasticIPList{})
}

// PodElasticIPKind is the kind's name.
const PodElasticIPKind = "PodElasticIP"

// PodElasticIPGroupVersionKind is the kind's GroupVersionKind.
var PodElasticIPGroupVersionKind = GroupVersion.WithKind(PodElasticIPKind)

// GetCondition returns the condition of type ct.
func (p *PodElasticIP) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions sets conditions.
func (p *PodElasticIP) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetObservedGeneration returns status.observedGeneration.
func (p *PodElasticIP) GetObservedGeneration() int64 { return p.Status.GetObservedGeneration() }

// SetObservedGeneration sets status.observedGeneration.
func (p *PodElasticIP) SetObservedGeneration(g int64) { p.Status.SetObservedGeneration(g) }

// GetManagementPolicies returns spec.managementPolicies.
func (p *PodElasticIP) GetManagementPolicies() xpv2.ManagementPolicies {
	return p.Spec.ManagementPolicies
}

// SetManagementPolicies sets spec.managementPolicies.
func (p *PodElasticIP) SetManagementPolicies(r xpv2.ManagementPolicies) {
	p.Spec.ManagementPolicies = r
}

// GetProviderConfigReference returns spec.providerConfigRef.
func (p *PodElasticIP) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return p.Spec.ProviderConfigReference
}

// SetProviderConfigReference sets spec.providerConfigRef.
func (p *PodElasticIP) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	p.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference returns spec.writeConnectionSecretToRef.
func (p *PodElasticIP) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return p.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference sets spec.writeConnectionSecretToRef.
func (p *PodElasticIP) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	p.Spec.WriteConnectionSecretToReference = r
}

// TencentSettings is spec.tencent with Tencent Cloud's defaults for what
// it leaves out (all of them without the block).
func (p *PodElasticIP) TencentSettings() PodElasticIPTencent {
	var t PodElasticIPTencent
	if p.Spec.Tencent != nil {
		t = *p.Spec.Tencent
	}
	if t.AddressType == "" {
		t.AddressType = PodElasticIPTencentDefaultAddressType
	}
	if t.InternetChargeType == "" {
		t.InternetChargeType = PodElasticIPTencentDefaultChargeType
	}
	if t.InternetMaxBandwidthOut == 0 {
		t.InternetMaxBandwidthOut = PodElasticIPTencentDefaultBandwidth
	}
	if t.InternetServiceProvider == "" {
		t.InternetServiceProvider = PodElasticIPTencentDefaultISP
	}
	return t
}

// EffectiveReleasePolicy is spec.releasePolicy or the mode's default.
func (p *PodElasticIP) EffectiveReleasePolicy() PodElasticIPReleasePolicy {
	if p.Spec.ReleasePolicy != "" {
		return p.Spec.ReleasePolicy
	}
	if p.Spec.Allocation.Mode == PodElasticIPModeAuto || p.Spec.Allocation.Mode == "" {
		return PodElasticIPReleaseDelete
	}
	return PodElasticIPReleaseRetain
}

// Condition reasons of PodElasticIP's Ready condition (crossplane's Ready
// and Synced condition types; Ready=True uses crossplane's Available).
// Stable: alerts and scripts may match them.
const (
	// PodElasticIPReasonAssociating: the address exists and is being
	// associated with the pod's current IP.
	PodElasticIPReasonAssociating xpv2.ConditionReason = "Associating"
	// PodElasticIPReasonPodNotFound: the pod does not exist.
	PodElasticIPReasonPodNotFound xpv2.ConditionReason = "PodNotFound"
	// PodElasticIPReasonPodNotRunning: the pod is pending, finished or
	// terminating.
	PodElasticIPReasonPodNotRunning xpv2.ConditionReason = "PodNotRunning"
	// PodElasticIPReasonPodHasNoIP: the pod runs but has no IPv4 address yet
	// (or uses the host network).
	PodElasticIPReasonPodHasNoIP xpv2.ConditionReason = "PodHasNoIP"
	// PodElasticIPReasonNetworkInterfaceNotFound: no ENI holds the pod IP,
	// neither as a private address nor in a delegated prefix.
	PodElasticIPReasonNetworkInterfaceNotFound xpv2.ConditionReason = "NetworkInterfaceNotFound"
	// PodElasticIPReasonPoolExhausted: no free address carries the pool's
	// tag key.
	PodElasticIPReasonPoolExhausted xpv2.ConditionReason = "PoolExhausted"
	// PodElasticIPReasonAddressNotFound: the Static address does not exist,
	// or it was released or re-tagged behind edgeplane's back.
	PodElasticIPReasonAddressNotFound xpv2.ConditionReason = "AddressNotFound"
	// PodElasticIPReasonAddressInUse: the Static address is associated with
	// something else, or claimed by another PodElasticIP.
	PodElasticIPReasonAddressInUse xpv2.ConditionReason = "AddressInUse"
	// PodElasticIPReasonAddressOwnedElsewhere: the Static address carries
	// another owner's tags (another cluster, namespace, kind, PodElasticIP
	// or pod, or the legacy controller's for another cluster or pod):
	// never claimed.
	PodElasticIPReasonAddressOwnedElsewhere xpv2.ConditionReason = "AddressOwnedElsewhere"
	// PodElasticIPReasonAddressNotAllowed: the address (Static), or every
	// free address of the pool (Pool), carries none of the tags the
	// cluster admin lets claims take (--podelasticip-claimable-tags).
	PodElasticIPReasonAddressNotAllowed xpv2.ConditionReason = "AddressNotAllowed"
	// PodElasticIPReasonQuotaExceeded: the account's elastic IP quota is
	// reached (EC2 AddressLimitExceeded, Tencent Cloud
	// AddressQuotaLimitExceeded).
	PodElasticIPReasonQuotaExceeded xpv2.ConditionReason = "QuotaExceeded"
	// PodElasticIPReasonThrottled: the cloud kept throttling the calls.
	PodElasticIPReasonThrottled xpv2.ConditionReason = "Throttled"
	// PodElasticIPReasonInvalidSpec: the spec (or the legacy annotations it
	// was translated from) cannot be acted on; see the message.
	PodElasticIPReasonInvalidSpec xpv2.ConditionReason = "InvalidSpec"
	// PodElasticIPReasonPrivateIPInUse: the pod's private IP already carries
	// another elastic IP (not this PodElasticIP's); the cloud refuses to
	// associate a second one. Retried with backoff until that address is
	// gone.
	PodElasticIPReasonPrivateIPInUse xpv2.ConditionReason = "PrivateIPInUse"
	// PodElasticIPReasonCredentialsRejected: the cloud refused the provider
	// config's credentials; the account's calls are held back with a
	// growing backoff (see the ProviderConfig's Ready condition).
	PodElasticIPReasonCredentialsRejected xpv2.ConditionReason = "CredentialsRejected"
	// PodElasticIPReasonProviderConfigNotAllowed: the namespace's
	// ProviderConfig breaks the tenant rules (the manager's identity, a
	// clusterIdentity, an endpoint the cluster admin does not allow); no
	// cloud call is made with it. Its own Ready condition says why.
	PodElasticIPReasonProviderConfigNotAllowed xpv2.ConditionReason = "ProviderConfigNotAllowed"
	// PodElasticIPReasonProviderMismatch: the spec carries settings of
	// another cloud than its provider config's (spec.tencent or a Tencent
	// address ID on an AWS config; allocation.publicIPv4Pool or an EC2
	// allocation ID on a Tencent Cloud config). Nothing is allocated or
	// claimed; only a person can fix it (Stalled).
	PodElasticIPReasonProviderMismatch xpv2.ConditionReason = "ProviderMismatch"
	// PodElasticIPReasonTaskFailed: a Tencent Cloud task (allocation,
	// association) ended FAILED and was rolled back by the cloud; the step
	// is tried again (an allocation with a new ClientToken).
	PodElasticIPReasonTaskFailed xpv2.ConditionReason = "TaskFailed"
	// PodElasticIPReasonCloudError: any other cloud error; see the message
	// and the Synced condition.
	PodElasticIPReasonCloudError xpv2.ConditionReason = "CloudError"
)

// Well-known names of PodElasticIP.
const (
	// PodElasticIPFinalizer holds a PodElasticIP until its address has been
	// handled according to the release policy.
	PodElasticIPFinalizer = "networking.edgeplane.io/finalizer"

	// AnnotationPodElasticIPInvalid, on a PodElasticIP, carries why the
	// legacy annotations it was translated from are unusable; the
	// reconciler then reports InvalidSpec and touches no cloud object.
	AnnotationPodElasticIPInvalid = "networking.edgeplane.io/invalid-spec"

	// AnnotationPodPublicIP, on a pod, carries its Elastic IP.
	AnnotationPodPublicIP = "networking.edgeplane.io/public-ip"

	// PodConditionElasticIPReady is the pod readiness gate (and pod
	// condition type) set True once the pod's address is associated.
	PodConditionElasticIPReady corev1.PodConditionType = "networking.edgeplane.io/elastic-ip-ready"
)
