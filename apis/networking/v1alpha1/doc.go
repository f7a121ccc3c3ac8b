// Package v1alpha1 holds the networking.edgeplane.io API: public IPs for nodes and pods (AnycastIPBinding,
// PodElasticIP) and pools of fixed pod IPs (FloatIPPool, FloatIP).
//
// +kubebuilder:object:generate=true
// +groupName=networking.edgeplane.io
package v1alpha1
