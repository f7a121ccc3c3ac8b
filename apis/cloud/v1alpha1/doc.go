// Package v1alpha1 holds the cloud.edgeplane.io API: where edgeplane's cloud-backed
// kinds get their cloud account, region, credentials and endpoint from.
//
// It follows crossplane v2's model: a cluster-scoped ClusterProviderConfig for the
// platform team, a namespaced ProviderConfig for a tenant whose credentials live in
// its own namespace, and usage objects that record which managed resource uses
// which config, so that a config in use cannot be deleted.
//
// +kubebuilder:object:generate=true
// +groupName=cloud.edgeplane.io
package v1alpha1
