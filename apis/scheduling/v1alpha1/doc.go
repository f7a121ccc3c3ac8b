// Package v1alpha1 holds the scheduling.edgeplane.io API: BurstPolicy, which keeps N replicas of a
// workload on local nodes and bursts the rest onto cloud virtual nodes.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.edgeplane.io
package v1alpha1
