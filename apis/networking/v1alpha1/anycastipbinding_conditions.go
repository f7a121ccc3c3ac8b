package v1alpha1

// AnycastIPBinding uses crossplane's condition types: Ready (is the address
// bound to the node?) and Synced (did the last reconcile succeed?). Ready's
// reasons are crossplane's Available, Creating and Deleting, plus these.
const (
	// AnycastReasonBinding: the address exists and is being bound (an
	// allocation or association task is running).
	AnycastReasonBinding = "Binding"
	// AnycastReasonUnbinding: the address is being unbound or released.
	AnycastReasonUnbinding = "Unbinding"
	// AnycastReasonNodeNotFound: spec.nodeName names no node.
	AnycastReasonNodeNotFound = "NodeNotFound"
	// AnycastReasonInstanceIDUnknown: the node has no Tencent Cloud
	// spec.providerID (the legacy instance label is not trusted).
	AnycastReasonInstanceIDUnknown = "InstanceIDUnknown"
	// AnycastReasonInstanceIDChanged: the node's spec.providerID names
	// another instance than the one the binding recorded (the node was
	// registered again under the same name); the binding does not follow.
	AnycastReasonInstanceIDChanged = "InstanceIDChanged"
	// AnycastReasonInstanceNotFound: the node's instance does not exist in
	// the cloud account.
	AnycastReasonInstanceNotFound = "InstanceNotFound"
	// AnycastReasonInstanceHasPublicIP: the instance already has another
	// public address (one edgeplane did not allocate for this binding).
	AnycastReasonInstanceHasPublicIP = "InstanceHasPublicIP"
	// AnycastReasonAddressInUse: the address (spec.addressID) is bound to
	// another instance.
	AnycastReasonAddressInUse = "AddressInUse"
	// AnycastReasonAddressNotFound: spec.addressID names no address.
	AnycastReasonAddressNotFound = "AddressNotFound"
	// AnycastReasonAddressTypeMismatch: the adopted address is of another
	// type than spec.addressType.
	AnycastReasonAddressTypeMismatch = "AddressTypeMismatch"
	// AnycastReasonQuotaExceeded: the account's address quota is used up.
	AnycastReasonQuotaExceeded = "QuotaExceeded"
	// AnycastReasonAnycastNotEnabled: the account is not allow-listed for
	// AnycastEIP (or for the requested anycastZone).
	AnycastReasonAnycastNotEnabled = "AnycastNotEnabled"
	// AnycastReasonTaskFailed: an asynchronous task ended FAILED; the step is
	// retried.
	AnycastReasonTaskFailed = "TaskFailed"
	// AnycastReasonThrottled: the cloud API rate limit was hit; retried.
	AnycastReasonThrottled = "Throttled"
	// AnycastReasonInvalidParameter: the cloud rejected a parameter
	// (bandwidth, charge type, tags).
	AnycastReasonInvalidParameter = "InvalidParameter"
	// AnycastReasonProviderConfigError: the provider config is missing, for
	// another cloud, or its credentials are unavailable.
	AnycastReasonProviderConfigError = "ProviderConfigError"
	// AnycastReasonCloudError: any other cloud error; retried.
	AnycastReasonCloudError = "CloudError"
	// AnycastReasonCredentialsRejected: Tencent Cloud refused the provider
	// config's credentials; the account's calls are held back with a
	// growing backoff.
	AnycastReasonCredentialsRejected = "CredentialsRejected"
)

// Adoption sources (status.adopted).
const (
	AdoptedSpec       = "Spec"
	AdoptedLegacy     = "Legacy"
	AdoptedAnnotation = "Annotation"
)

// Well-known names of AnycastIPBinding.
const (
	// AnycastIPBindingFinalizer holds a binding until its address is
	// released (the cloud reconciler adds it before the first allocation).
	AnycastIPBindingFinalizer = "networking.edgeplane.io/finalizer"
)

// Legacy (tkestack aia-ip-controller) names, honoured exactly.
const (
	// LegacyLabelNeedAIAIP selects the nodes that get an address (value
	// "true"; the selector is configurable).
	LegacyLabelNeedAIAIP = "tke.cloud.tencent.com/need-aia-ip"
	// LegacyLabelNodeInstanceID carried a node's CVM instance ID for the
	// legacy controller. edgeplane does not read it: the node may rewrite
	// it, so the instance comes from spec.providerID.
	LegacyLabelNodeInstanceID = "cloud.tencent.com/node-instance-id"
	// LegacyTaintNoAIAIP keeps pods off a node until its address is bound
	// (value "true", effect NoSchedule).
	LegacyTaintNoAIAIP = "tke.cloud.tencent.com/no-aia-ip"
	// LegacyAnnotationAnycastIPID records the bound address ID on the node.
	LegacyAnnotationAnycastIPID = "tke.cloud.tencent.com/anycast-ip-id"
	// LegacyAnnotationAnycastIPAddress records the bound public IP.
	LegacyAnnotationAnycastIPAddress = "tke.cloud.tencent.com/anycast-ip-address"
	// LegacyClusterUUIDConfigMap (in kube-system) holds the legacy cluster
	// identity under the key LegacyTagClusterUUID.
	LegacyClusterUUIDConfigMap = "aia-official-cluster-uuid"
	// Legacy tags on addresses.
	LegacyTagClusterUUID = "aia-official-cluster-uuid"
	LegacyTagClusterID   = "aia-official-cluster-id"
	LegacyTagNodeName    = "aia-node-name"
	LegacyTagInstanceID  = "aia-node-ins-id"
)

// Event reasons on the node, as the legacy controller emitted them.
const (
	LegacyReasonFailedAllocate  = "FailedAllocateAnycastIp"
	LegacyReasonFailedAssociate = "FailedAssociateAnycastIp"
	LegacyReasonFailedUntaint   = "FailedUntaintNode"
)

// edgeplane's own Event reasons on the node.
const (
	// AnycastEventBound: the address was bound and the node untainted.
	AnycastEventBound = "AnycastIPBound"
	// AnycastEventReleased: the address was released and the node's taint
	// and annotations removed.
	AnycastEventReleased = "AnycastIPReleased"
	// AnycastEventTainted: the node was tainted until its address is bound.
	AnycastEventTainted = "AnycastIPPending"
)
