package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterProviderConfigSpec is the desired state of a ClusterProviderConfig.
// +kubebuilder:validation:XValidation:rule="self.credentials.source != 'None' || has(self.endpoint)",message="credentials.source None is only allowed with an endpoint override (e.g. the local cloud emulator)"
type ClusterProviderConfigSpec struct {
	CloudSettings `json:",inline"`

	// Credentials says how to authenticate to the cloud.
	Credentials ClusterProviderConfigCredentials `json:"credentials"`
}

// ClusterProviderConfigCredentials are the platform's credentials: a Secret in a
// namespace the platform team chooses, the injected identity, or none.
// +kubebuilder:validation:XValidation:rule="(self.source == 'Secret') == has(self.secretRef)",message="secretRef must be set when, and only when, source is Secret"
type ClusterProviderConfigCredentials struct {
	// Source of the credentials.
	Source CredentialsSource `json:"source"`

	// SecretRef names the Secret that holds the credentials under the
	// well-known keys of the provider.
	// +optional
	SecretRef *SecretReference `json:"secretRef,omitempty"`
}

// SecretReference names a Secret in a given namespace.
type SecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=cpc,categories={edgeplane}
// +kubebuilder:printcolumn:name="PROVIDER",type="string",JSONPath=".spec.provider"
// +kubebuilder:printcolumn:name="REGION",type="string",JSONPath=".spec.region"
// +kubebuilder:printcolumn:name="SOURCE",type="string",JSONPath=".spec.credentials.source"
// +kubebuilder:printcolumn:name="USERS",type="integer",JSONPath=".status.users"
// +kubebuilder:printcolumn:name="READY",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="ENDPOINT",type="string",JSONPath=".spec.endpoint",priority=1

// A ClusterProviderConfig is a cloud account any managed resource may use.
// Managed resources that name no config use the one called "default".
type ClusterProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterProviderConfigSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigList is a list of ClusterProviderConfigs.
type ClusterProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfig `json:"items"`
}

// GetCondition returns the condition of the given type.
func (p *ClusterProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions sets the given conditions.
func (p *ClusterProviderConfig) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetUsers returns how many managed resources use this config.
func (p *ClusterProviderConfig) GetUsers() int64 { return p.Status.Users }

// SetUsers records how many managed resources use this config.
func (p *ClusterProviderConfig) SetUsers(i int64) { p.Status.Users = i }

func init() {
	register(&ClusterProviderConfig{}, &ClusterProviderConfigList{})
}
