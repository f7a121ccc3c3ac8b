package v1alpha1

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The methods below make AnycastIPBinding a crossplane-runtime
// resource.ModernManaged (what angryjet generates for providers).

// GetCondition returns the condition of type ct.
func (b *AnycastIPBinding) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return b.Status.GetCondition(ct)
}

// SetConditions sets conditions.
func (b *AnycastIPBinding) SetConditions(c ...xpv2.Condition) { b.Status.SetConditions(c...) }

// GetManagementPolicies returns the management policies.
func (b *AnycastIPBinding) GetManagementPolicies() xpv2.ManagementPolicies {
	return b.Spec.ManagementPolicies
}

// SetManagementPolicies sets the management policies.
func (b *AnycastIPBinding) SetManagementPolicies(p xpv2.ManagementPolicies) {
	b.Spec.ManagementPolicies = p
}

// GetProviderConfigReference returns the provider config reference.
func (b *AnycastIPBinding) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return b.Spec.ProviderConfigReference
}

// SetProviderConfigReference sets the provider config reference.
func (b *AnycastIPBinding) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	b.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference returns the connection secret
// reference (unused: an address has no secret).
func (b *AnycastIPBinding) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return b.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference sets the connection secret reference.
func (b *AnycastIPBinding) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	b.Spec.WriteConnectionSecretToReference = r
}

// GetObservedGeneration returns status.observedGeneration.
func (b *AnycastIPBinding) GetObservedGeneration() int64 { return b.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (b *AnycastIPBinding) SetObservedGeneration(g int64) { b.Status.ObservedGeneration = g }
