package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// Condition types and reasons of ProviderConfig and ClusterProviderConfig.
// Ready says whether the credentials the config points at can be used.
const (
	// TypeReady is the type of the condition that says whether the config can be used.
	TypeReady = xpv2.TypeReady

	// ReasonCredentialsAvailable: the credentials source is usable.
	ReasonCredentialsAvailable xpv2.ConditionReason = "CredentialsAvailable"
	// ReasonCredentialsRejected: the cloud refused the credentials (a
	// revoked or unknown key, a wrong secret, a skewed clock), as seen by
	// a managed resource using the config. Calls of the account are held
	// back and retried with a growing backoff; fixing the credentials
	// clears it.
	ReasonCredentialsRejected xpv2.ConditionReason = "CredentialsRejected"
	// ReasonSecretNotFound: the Secret that secretRef names does not exist.
	ReasonSecretNotFound xpv2.ConditionReason = "SecretNotFound"
	// ReasonSecretKeyMissing: the Secret lacks a key the provider needs.
	ReasonSecretKeyMissing xpv2.ConditionReason = "SecretKeyMissing"
	// ReasonSecretForbidden: the manager is not allowed to read Secrets in the
	// Secret's namespace (no RoleBinding to the credentials-reader ClusterRole).
	ReasonSecretForbidden xpv2.ConditionReason = "SecretForbidden"
	// ReasonNotAllowedForTenant: a ProviderConfig breaks the tenant rules
	// (the manager's identity, a clusterIdentity, or an endpoint the cluster
	// admin does not allow); the manager never uses it.
	ReasonNotAllowedForTenant xpv2.ConditionReason = "NotAllowedForTenant"

	// TypeTerminating is set while deletion waits for the config's users to go.
	TypeTerminating xpv2.ConditionType = "Terminating"
	// ReasonInUse: managed resources still use the config.
	ReasonInUse xpv2.ConditionReason = "InUse"
)

// Well-known names.
const (
	// DefaultProviderConfigName is the ClusterProviderConfig managed resources use
	// when they name none.
	DefaultProviderConfigName = "default"

	// InUseFinalizer holds a config while managed resources use it.
	InUseFinalizer = "cloud.edgeplane.io/in-use"

	// UsageFinalizer holds a usage until its managed resource has let go of
	// its cloud object: a usage deleted before that (by the namespace
	// controller, or by the garbage collector under foreground deletion)
	// would let the config, and its credentials, go while they are still
	// needed.
	UsageFinalizer = "cloud.edgeplane.io/usage"

	// CredentialsFinalizerDomain, prefixed with the config kind in lower
	// case, is the domain of the finalizer a config puts on its credentials
	// Secret while managed resources use it:
	// providerconfig.cloud.edgeplane.io/<config> or
	// clusterproviderconfig.cloud.edgeplane.io/<config>. One per config, so
	// that configs sharing a Secret each let go of it on their own.
	CredentialsFinalizerDomain = "cloud.edgeplane.io"
)

// Kind names, for typed references.
const (
	ProviderConfigKind        = "ProviderConfig"
	ClusterProviderConfigKind = "ClusterProviderConfig"
)
