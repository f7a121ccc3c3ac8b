// Package v1alpha1 holds the apps.edgeplane.io API: IngressDaemonSet, N replicas of an ingress per node
// with detach-before-update rolling updates.
//
// +kubebuilder:object:generate=true
// +groupName=apps.edgeplane.io
package v1alpha1
