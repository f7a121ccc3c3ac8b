package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Provider names a cloud.
// +kubebuilder:validation:Enum=aws;tencentcloud
type Provider string

// The clouds edgeplane talks to.
const (
	ProviderAWS          Provider = "aws"
	ProviderTencentCloud Provider = "tencentcloud"
)

// CredentialsSource says where the cloud credentials come from.
// +kubebuilder:validation:Enum=Secret;InjectedIdentity;None
type CredentialsSource string

const (
	// CredentialsSecret reads the credentials from the Secret that secretRef names.
	// AWS keys: aws_access_key_id, aws_secret_access_key, optional aws_session_token.
	// Tencent Cloud keys: secret_id, secret_key, optional token; the legacy
	// secretID and secretKey are accepted in place of the first two.
	CredentialsSecret CredentialsSource = "Secret"

	// CredentialsInjectedIdentity uses the SDK's default chain: environment
	// variables, then the pod's identity (IRSA / EKS Pod Identity, TKE pod role),
	// then the instance's role. That is the manager's own identity, so only a
	// ClusterProviderConfig may use it.
	CredentialsInjectedIdentity CredentialsSource = "InjectedIdentity"

	// CredentialsNone sends no real credentials. Only for an endpoint override
	// such as the local cloud emulator; rejected without one.
	CredentialsNone CredentialsSource = "None"
)

// Well-known keys of a credentials Secret.
const (
	SecretKeyAWSAccessKeyID     = "aws_access_key_id"
	SecretKeyAWSSecretAccessKey = "aws_secret_access_key"
	SecretKeyAWSSessionToken    = "aws_session_token"
	SecretKeyTencentSecretID    = "secret_id"
	SecretKeyTencentSecretKey   = "secret_key"
	SecretKeyTencentToken       = "token"

	// SecretKeyTencentLegacySecretID and SecretKeyTencentLegacySecretKey are
	// the names the legacy Tencent Cloud charts use (aia-ip-controller's
	// <release>-credential Secret, the TKE resilience chart's eks-secret).
	// A Secret without secret_id / secret_key may hold these instead, so the
	// old Secret is referenced unchanged.
	SecretKeyTencentLegacySecretID  = "secretID"
	SecretKeyTencentLegacySecretKey = "secretKey"
)

// CloudSettings is what a ProviderConfig and a ClusterProviderConfig have in
// common apart from their credentials.
// +kubebuilder:validation:XValidation:rule="self.provider != 'aws' || self.region.matches('^[a-z]{2}(-[a-z]+)+-[0-9]+$')",message="region must be an AWS region such as us-east-1"
// +kubebuilder:validation:XValidation:rule="self.provider != 'tencentcloud' || self.region.matches('^[a-z]{2}-[a-z]+(-[a-z]+)*$')",message="region must be a Tencent Cloud region such as ap-guangzhou"
type CloudSettings struct {
	// Provider is the cloud this config talks to. It cannot be changed: the
	// resources that use the config were created in that cloud.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="provider is immutable"
	Provider Provider `json:"provider"`

	// Region is the cloud region API calls go to, e.g. us-east-1 or ap-guangzhou.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region"`

	// Endpoint overrides the cloud API endpoint, e.g. http://127.0.0.1:8600 for the
	// local cloud emulator. Unset means the cloud's public endpoint. On a
	// ProviderConfig it must be one the manager's --tenant-endpoints allows.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="endpoint must be an http or https URL with a host"
	Endpoint string `json:"endpoint,omitempty"`

	// ClusterIdentity is written as a tag on every cloud object edgeplane creates
	// with this config, so that the orphan sweep knows which objects are this
	// cluster's. Unset means the manager's --cluster-name. Only a
	// ClusterProviderConfig may set it.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	ClusterIdentity string `json:"clusterIdentity,omitempty"`
}

// ProviderConfigStatus is the observed state of a ProviderConfig or ClusterProviderConfig.
type ProviderConfigStatus struct {
	// Users is how many managed resources use this config.
	xpv2.ProviderConfigStatus `json:",inline"`

	// ObservedGeneration is the generation of the spec last checked.
	xpv2.ObservedStatus `json:",inline"`

	// ProtectedSecrets are the credentials Secrets that carry this config's
	// finalizer, held while managed resources use the config so that their
	// deletion can still reach the cloud (a namespace's deletion deletes
	// its Secrets in no particular order). Recorded before the finalizer is
	// added and dropped after it is removed, so a Secret the config no
	// longer names (its secretRef changed) is let go too.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	ProtectedSecrets []SecretReference `json:"protectedSecrets,omitempty"`
}
