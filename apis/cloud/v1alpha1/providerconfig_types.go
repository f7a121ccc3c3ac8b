package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Why the tenant rules are CEL rules on shared fields rather than a
// separate tenant CloudSettings without clusterIdentity (and a narrower
// credentials enum): a field missing from a structural schema is pruned,
// with only a warning unless the client asks for strict field validation,
// so an old manifest setting clusterIdentity would apply "successfully"
// and its author would believe it took effect. With the field kept, the
// API server refuses it by name, and the manager still sees it on a config
// stored before the rule existed and refuses that config too
// (internal/tenancy, Ready=False NotAllowedForTenant).

// ProviderConfigSpec is the desired state of a ProviderConfig: a tenant's
// account and nothing more.
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'None' || has(self.endpoint)",message="credentials.source None is only allowed with an endpoint override (e.g. the local cloud emulator)"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterIdentity)",message="clusterIdentity may only be set on a ClusterProviderConfig: a tenant's config always uses the cluster's identity"
type ProviderConfigSpec struct {
	CloudSettings `json:",inline"`

	// Credentials says how to authenticate to the cloud.
	Credentials ProviderConfigCredentials `json:"credentials"`
}

// ProviderConfigCredentials are a tenant's credentials: a Secret in the
// ProviderConfig's own namespace, or none (only for an endpoint the cluster
// admin allows). Never the injected identity, which is the manager's own.
// +kubebuilder:validation:XValidation:rule="(self.source == 'Secret') == has(self.secretRef)",message="secretRef must be set when, and only when, source is Secret"
// +kubebuilder:validation:XValidation:rule="self.source != 'InjectedIdentity'",message="credentials.source InjectedIdentity is the manager's own cloud identity: only a ClusterProviderConfig may use it"
type ProviderConfigCredentials struct {
	// Source of the credentials.
	Source CredentialsSource `json:"source"`

	// SecretRef names the Secret, in this ProviderConfig's namespace, that holds
	// the credentials under the well-known keys of the provider.
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`
}

// LocalSecretReference names a Secret in the referrer's namespace.
type LocalSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=pc,categories={edgeplane}
// +kubebuilder:printcolumn:name="PROVIDER",type="string",JSONPath=".spec.provider"
// +kubebuilder:printcolumn:name="REGION",type="string",JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="ENDPOINT",type="string",JSONPath=".spec.endpoint",priority=1

// A ProviderConfig is a tenant's cloud account for the managed resources in its
// namespace: its credentials Secret lives in the same namespace, so a tenant
// never needs access to anybody else's. It cannot use the manager's injected
// identity or set clusterIdentity, and its endpoint override must be one the
// cluster admin allows (the manager's --tenant-endpoints); a config that
// breaks these rules is Ready=False (NotAllowedForTenant) and never used.
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProviderConfigSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ProviderConfigList is a list of ProviderConfigs.
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// GetCondition returns the condition of the given type.
func (p *ProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions sets the given conditions.
func (p *ProviderConfig) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetUsers returns how many managed resources use this config.
func (p *ProviderConfig) GetUsers() int64 { return p.Status.Users }

// SetUsers records how many managed resources use this config.
func (p *ProviderConfig) SetUsers(i int64) { p.Status.Users = i }

func init() {
	register(&ProviderConfig{}, &ProviderConfigList{})
}
