package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// NodeElasticIP uses crossplane's condition types: Ready (is the address on
// the node?) and Synced (did the last reconcile succeed?). Ready=True uses
// crossplane's Available and a deletion its Deleting; the other reasons
// are these. Stable: alerts and scripts may match them.
const (
	// NodeElasticIPReasonAssociating: the address exists (or is being
	// allocated or claimed) and is being associated with the node.
	NodeElasticIPReasonAssociating xpv2.ConditionReason = "Associating"
	// NodeElasticIPReasonNodeNotFound: spec.nodeName names no node.
	NodeElasticIPReasonNodeNotFound xpv2.ConditionReason = "NodeNotFound"
	// NodeElasticIPReasonInstanceIDUnknown: the node's spec.providerID
	// names no EC2 instance (aws:///<zone>/i-...).
	NodeElasticIPReasonInstanceIDUnknown xpv2.ConditionReason = "InstanceIDUnknown"
	// NodeElasticIPReasonInstanceIDChanged: the node's spec.providerID
	// names another instance than the one the NodeElasticIP recorded (the
	// node was registered again under the same name); it does not follow.
	NodeElasticIPReasonInstanceIDChanged xpv2.ConditionReason = "InstanceIDChanged"
	// NodeElasticIPReasonNetworkInterfaceNotFound: the node's instance has
	// no primary network interface in the account (terminated, or another
	// account's).
	NodeElasticIPReasonNetworkInterfaceNotFound xpv2.ConditionReason = "NetworkInterfaceNotFound"
	// NodeElasticIPReasonNodeHasElasticIP: the node's primary private IP
	// already carries an Elastic IP this NodeElasticIP may not take over
	// (not of its pool, not its static address, not allocated by
	// edgeplane for the node); EC2 refuses a second one.
	NodeElasticIPReasonNodeHasElasticIP xpv2.ConditionReason = "NodeHasElasticIP"
	// NodeElasticIPReasonPoolExhausted: no free address matches the pool's
	// filters. Retried; a node waits for an address as with kubeip.
	NodeElasticIPReasonPoolExhausted xpv2.ConditionReason = "PoolExhausted"
	// NodeElasticIPReasonAddressNotFound: the Static address does not
	// exist, or was released behind edgeplane's back.
	NodeElasticIPReasonAddressNotFound xpv2.ConditionReason = "AddressNotFound"
	// NodeElasticIPReasonAddressInUse: the Static address is associated with
	// something else, or owned by another object.
	NodeElasticIPReasonAddressInUse xpv2.ConditionReason = "AddressInUse"
	// NodeElasticIPReasonQuotaExceeded: the account's Elastic IP quota is
	// reached (AddressLimitExceeded).
	NodeElasticIPReasonQuotaExceeded xpv2.ConditionReason = "QuotaExceeded"
	// NodeElasticIPReasonThrottled: EC2 kept throttling the calls.
	NodeElasticIPReasonThrottled xpv2.ConditionReason = "Throttled"
	// NodeElasticIPReasonInvalidSpec: EC2 refused a parameter of the spec
	// (a publicIPv4Pool that does not exist, a malformed filter value).
	NodeElasticIPReasonInvalidSpec xpv2.ConditionReason = "InvalidSpec"
	// NodeElasticIPReasonCredentialsRejected: EC2 refused the provider
	// config's credentials; the account's calls are held back with a
	// growing backoff (see the ClusterProviderConfig's Ready condition).
	NodeElasticIPReasonCredentialsRejected xpv2.ConditionReason = "CredentialsRejected"
	// NodeElasticIPReasonProviderConfigError: the provider config is
	// missing, for another cloud, or its credentials are unavailable.
	NodeElasticIPReasonProviderConfigError xpv2.ConditionReason = "ProviderConfigError"
	// NodeElasticIPReasonCloudError: any other cloud error; retried.
	NodeElasticIPReasonCloudError xpv2.ConditionReason = "CloudError"
)

// AdoptedAssociated is status.adopted of an address that was on the node
// already.
const AdoptedAssociated = "Associated"

// Well-known names of NodeElasticIP.
const (
	// NodeElasticIPFinalizer holds a NodeElasticIP until its address has
	// been handled according to the release policy.
	NodeElasticIPFinalizer = "networking.edgeplane.io/finalizer"

	// LabelNodeElasticIP, on a node, is the public IP of its Elastic IP,
	// once the address is on the node (a selector can pin pods to nodes
	// with an address).
	LabelNodeElasticIP = "networking.edgeplane.io/elastic-ip"
	// AnnotationNodeElasticIPAllocationID, on a node, is the allocation ID
	// of that address.
	AnnotationNodeElasticIPAllocationID = "networking.edgeplane.io/elastic-ip-allocation-id"
	// LabelWantElasticIP is the default node selector's label: nodes
	// labelled networking.edgeplane.io/want-elastic-ip=true get a
	// NodeElasticIP.
	LabelWantElasticIP = "networking.edgeplane.io/want-elastic-ip"
	// DefaultNodeElasticIPTaintKey is the default taint key of translated
	// NodeElasticIPs (--nodeelasticip-taint-key).
	DefaultNodeElasticIPTaintKey = "networking.edgeplane.io/elastic-ip-pending"

	// LegacyLabelKubeIPAssigned is kubeip's node label (v1, and v2.4's
	// optional legacy label): the address with "." replaced by "_".
	LegacyLabelKubeIPAssigned = "kubip_assigned"
)

// Event reasons of NodeElasticIP, on the NodeElasticIP and its node.
const (
	// NodeElasticIPEventAssociated: the address was associated with the node
	// (and the node's taint removed).
	NodeElasticIPEventAssociated = "ElasticIPAssociated"
	// NodeElasticIPEventReleased: the address was released or given back,
	// and the node's marks removed.
	NodeElasticIPEventReleased = "ElasticIPReleased"
	// NodeElasticIPEventPending: the node was tainted until its address is
	// associated.
	NodeElasticIPEventPending = "ElasticIPPending"
	// NodeElasticIPEventFailed: the address could not be allocated, claimed
	// or associated (the reason and message say why).
	NodeElasticIPEventFailed = "ElasticIPFailed"
)

// The methods below make NodeElasticIP a crossplane-runtime
// resource.ModernManaged (what angryjet generates for providers).

// GetCondition returns the condition of type ct.
func (n *NodeElasticIP) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return n.Status.GetCondition(ct)
}

// SetConditions sets conditions.
func (n *NodeElasticIP) SetConditions(c ...xpv2.Condition) { n.Status.SetConditions(c...) }

// GetObservedGeneration returns status.observedGeneration.
func (n *NodeElasticIP) GetObservedGeneration() int64 { return n.Status.GetObservedGeneration() }

// SetObservedGeneration sets status.observedGeneration.
func (n *NodeElasticIP) SetObservedGeneration(g int64) { n.Status.SetObservedGeneration(g) }

// GetManagementPolicies returns spec.managementPolicies.
func (n *NodeElasticIP) GetManagementPolicies() xpv2.ManagementPolicies {
	return n.Spec.ManagementPolicies
}

// SetManagementPolicies sets spec.managementPolicies.
func (n *NodeElasticIP) SetManagementPolicies(p xpv2.ManagementPolicies) {
	n.Spec.ManagementPolicies = p
}

// GetProviderConfigReference returns spec.providerConfigRef.
func (n *NodeElasticIP) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return n.Spec.ProviderConfigReference
}

// SetProviderConfigReference sets spec.providerConfigRef.
func (n *NodeElasticIP) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	n.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference returns spec.writeConnectionSecretToRef
// (unused: an address has no secret).
func (n *NodeElasticIP) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return n.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference sets spec.writeConnectionSecretToRef.
func (n *NodeElasticIP) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	n.Spec.WriteConnectionSecretToReference = r
}
