package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Namespaced,shortName=pcu
// +kubebuilder:printcolumn:name="CONFIG-KIND",type="string",JSONPath=".providerConfigRef.kind"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A ProviderConfigUsage records that a namespaced managed resource uses a
// ProviderConfig or ClusterProviderConfig. It is named after the resource's UID
// and owned by it, so it goes away with the resource.
type ProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ProviderConfigUsageList is a list of ProviderConfigUsages.
type ProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfigUsage `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=cpcu
// +kubebuilder:printcolumn:name="CONFIG-KIND",type="string",JSONPath=".providerConfigRef.kind"
// +kubebuilder:printcolumn:name="CONFIG-NAME",type="string",JSONPath=".providerConfigRef.name"
// +kubebuilder:printcolumn:name="RESOURCE-KIND",type="string",JSONPath=".resourceRef.kind"
// +kubebuilder:printcolumn:name="RESOURCE-NAME",type="string",JSONPath=".resourceRef.name"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"

// A ClusterProviderConfigUsage records that a cluster-scoped managed resource
// uses a ClusterProviderConfig.
type ClusterProviderConfigUsage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	xpv2.TypedProviderConfigUsage `json:",inline"`
}

// +kubebuilder:object:root=true

// ClusterProviderConfigUsageList is a list of ClusterProviderConfigUsages.
type ClusterProviderConfigUsageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProviderConfigUsage `json:"items"`
}

// GetProviderConfigReference returns the config this usage records.
func (u *ProviderConfigUsage) GetProviderConfigReference() xpv2.ProviderConfigReference {
	return u.ProviderConfigReference
}

// SetProviderConfigReference sets the config this usage records.
func (u *ProviderConfigUsage) SetProviderConfigReference(r xpv2.ProviderConfigReference) {
	u.ProviderConfigReference = r
}

// GetResourceReference returns the managed resource that uses the config.
func (u *ProviderConfigUsage) GetResourceReference() xpv2.TypedReference { return u.ResourceReference }

// SetResourceReference sets the managed resource that uses the config.
func (u *ProviderConfigUsage) SetResourceReference(r xpv2.TypedReference) { u.ResourceReference = r }

// GetProviderConfigReference returns the config this usage records.
func (u *ClusterProviderConfigUsage) GetProviderConfigReference() xpv2.ProviderConfigReference {
	return u.ProviderConfigReference
}

// SetProviderConfigReference sets the config this usage records.
func (u *ClusterProviderConfigUsage) SetProviderConfigReference(r xpv2.ProviderConfigReference) {
	u.ProviderConfigReference = r
}

// GetResourceReference returns the managed resource that uses the config.
func (u *ClusterProviderConfigUsage) GetResourceReference() xpv2.TypedReference {
	return u.ResourceReference
}

// SetResourceReference sets the managed resource that uses the config.
func (u *ClusterProviderConfigUsage) SetResourceReference(r xpv2.TypedReference) {
	u.ResourceReference = r
}

func init() {
	register(&ProviderConfigUsage{}, &ProviderConfigUsageList{},
		&ClusterProviderConfigUsage{}, &ClusterProviderConfigUsageList{})
}
