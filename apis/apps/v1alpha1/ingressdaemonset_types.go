package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IngressDaemonSetSpec is the desired state of an IngressDaemonSet: replicasPerNode
// replicas of template on every node that matches nodeSelector, one Deployment per
// node, plus a health-checker DaemonSet per healthCheckNodePorts entry.
//
// +kubebuilder:validation:XValidation:rule="self.selector == oldSelf.selector",message="selector is immutable"
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec.nodeName) || size(self.template.spec.nodeName) == 0",message="template.spec.nodeName must not be set: edgeplane pins each node's pods itself"
type IngressDaemonSetSpec struct {
	// Selector selects the pods of this IngressDaemonSet; it must match the
	// template's labels (otherwise Ready is False with reason
	// SelectorMismatch and nothing is created) and cannot change. edgeplane adds its own node and owner
	// labels to each per-node Deployment's selector.
	// +required
	Selector *metav1.LabelSelector `json:"selector"`

	// Template is the pod template of every replica. Its labels and annotations
	// are kept on the pods; edgeplane adds its own labels and pins each pod to
	// its node. A change to it is rolled out node by node (see updateStrategy).
	// +required
	Template PodTemplate `json:"template"`

	// ReplicasPerNode is how many replicas run on each matching node
	// (the legacy README's podsPerNode). Changing it scales every node at once;
	// it is not a rollout.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	ReplicasPerNode int32 `json:"replicasPerNode,omitempty"`

	// NodeSelector selects the nodes that get a Deployment. Empty means every
	// node. The template's own nodeSelector must match too.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// HealthCheckNodePorts are the host ports of the per-node health endpoint:
	// one health-checker DaemonSet per port (in the platform's namespace), so
	// an external load balancer can move from one port to another without a
	// gap. The health checker runs on the nodes nodeSelector and the
	// template's nodeSelector select, with those of the template's
	// tolerations the platform allows (the manager's
	// --ingressdaemonset-healthcheck-allowed-tolerations); a toleration it
	// does not allow is left out and reported (Degraded, reason
	// HealthCheckerTolerationsNotAllowed).
	// +listType=set
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=65535
	// +optional
	HealthCheckNodePorts []int32 `json:"healthCheckNodePorts,omitempty"`

	// HealthChecker is deprecated: the health checker is the platform's, and
	// none of its fields may be set (see HealthChecker).
	// +optional
	HealthChecker HealthChecker `json:"healthChecker,omitempty"`

	// UpdateStrategy says how a template change is rolled out over the nodes.
	// +optional
	UpdateStrategy UpdateStrategy `json:"updateStrategy,omitempty"`
}

// PodTemplate is a pod template whose labels and annotations are kept
// (corev1.PodTemplateSpec's metadata would be pruned by the API server).
type PodTemplate struct {
	// Metadata holds the pods' labels and annotations.
	// +optional
	Metadata PodTemplateMetadata `json:"metadata,omitempty"`
	// Spec is the pods' spec. Do not set nodeName: edgeplane pins each
	// per-node Deployment's pods to its node with node affinity.
	// +required
	Spec corev1.PodSpec `json:"spec"`
}

// PodTemplateMetadata is the part of a pod's metadata a template may set.
type PodTemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// HealthChecker is deprecated: the health checker is the platform's. Its
// image, pull policy, identity, resources and bind address are the manager's
// (flags --ingressdaemonset-healthcheck-*, the chart's
// ingressDaemonSet.healthCheck values), and it runs in the platform's
// namespace under the platform's ServiceAccount, not in this namespace: an
// IngressDaemonSet's author must not choose what runs on the host network of
// every node. Setting any field is refused at admission. An object stored
// before that rule keeps its fields; the manager ignores them and says so
// (Degraded, reason HealthCheckerFieldsIgnored, and a Warning Event).
//
// +kubebuilder:validation:XValidation:rule="!has(self.image)",fieldPath=".image",reason=FieldValueForbidden,message="deprecated: the health checker's image is the platform's (manager flag --ingressdaemonset-healthcheck-image)"
// +kubebuilder:validation:XValidation:rule="!has(self.imagePullPolicy)",fieldPath=".imagePullPolicy",reason=FieldValueForbidden,message="deprecated: the health checker's pull policy is the platform's (manager flag --ingressdaemonset-healthcheck-image-pull-policy)"
// +kubebuilder:validation:XValidation:rule="!has(self.serviceAccountName)",fieldPath=".serviceAccountName",reason=FieldValueForbidden,message="deprecated: the health checker runs as the platform's ServiceAccount (manager flag --ingressdaemonset-healthcheck-service-account)"
// +kubebuilder:validation:XValidation:rule="!has(self.resources)",fieldPath=".resources",reason=FieldValueForbidden,message="deprecated: the health checker's resources are the platform's (manager flag --ingressdaemonset-healthcheck-resources)"
type HealthChecker struct {
	// Refused at admission and ignored (deprecated): the image is the
	// manager's --ingressdaemonset-healthcheck-image.
	// +optional
	Image string `json:"image,omitempty"`
	// Refused at admission and ignored (deprecated): the pull policy is the
	// manager's --ingressdaemonset-healthcheck-image-pull-policy.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`
	// Refused at admission and ignored (deprecated): the health checker runs
	// as the manager's --ingressdaemonset-healthcheck-service-account, in
	// the platform's namespace.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Refused at admission and ignored (deprecated): the resources are the
	// manager's --ingressdaemonset-healthcheck-resources.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// UpdateStrategyType names a rollout algorithm.
// +kubebuilder:validation:Enum=RollingUpdate
type UpdateStrategyType string

// RollingUpdateStrategyType is the only strategy: node by node.
const RollingUpdateStrategyType UpdateStrategyType = "RollingUpdate"

// UpdateStrategy says how a template change is rolled out.
type UpdateStrategy struct {
	// Type is always RollingUpdate.
	// +kubebuilder:default=RollingUpdate
	// +optional
	Type UpdateStrategyType `json:"type,omitempty"`
	// RollingUpdate tunes the node-by-node rollout.
	// +optional
	RollingUpdate *RollingUpdate `json:"rollingUpdate,omitempty"`
}

// RollingUpdate tunes the node-by-node rollout. Two modes:
//
//   - Degraded mode (maxUnavailableNodes unset or 0): at most maxDegradedNodes
//     (default 1) nodes are updated at a time; each node's pods are replaced by
//     its Deployment with maxUnavailablePodsPerNode / maxSurgedPodsPerNode, so
//     the node keeps serving.
//   - Detach mode (maxUnavailableNodes ≥ 1): at most maxUnavailableNodes nodes
//     are detached from the load balancer at a time (health endpoint 503,
//     annotations, grace period), then all their pods are replaced at once
//     (maxUnavailablePodsPerNode defaults to 100%), then they are reattached.
//
// In both modes the node's health endpoint fails before any of its pods is
// replaced, for annotateDeploymentToDetach's grace period.
//
// +kubebuilder:validation:XValidation:rule="!has(self.maxUnavailableNodes) || self.maxUnavailableNodes == 0 || !has(self.maxDegradedNodes) || self.maxDegradedNodes == 0",message="maxUnavailableNodes >= 1 requires maxDegradedNodes to be 0 or unset"
// +kubebuilder:validation:XValidation:rule="(has(self.maxUnavailableNodes) && self.maxUnavailableNodes >= 1) || !has(self.maxDegradedNodes) || self.maxDegradedNodes >= 1",message="one of maxUnavailableNodes and maxDegradedNodes must be at least 1"
// +kubebuilder:validation:XValidation:rule="!has(self.annotateNodeToDetach) || (has(self.maxUnavailableNodes) && self.maxUnavailableNodes >= 1)",message="annotateNodeToDetach requires maxUnavailableNodes >= 1"
// +kubebuilder:validation:XValidation:rule="!has(self.waitForDetachmentByAnnotatedTimestamp) || has(self.annotateNodeToDetach)",message="waitForDetachmentByAnnotatedTimestamp requires annotateNodeToDetach"
type RollingUpdate struct {
	// MaxUnavailableNodes, when at least 1, selects detach mode: how many
	// nodes may be detached and updated at a time.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxUnavailableNodes *int32 `json:"maxUnavailableNodes,omitempty"`
	// MaxDegradedNodes is how many nodes may be updated at a time in degraded
	// mode. Default 1 (0 in detach mode).
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxDegradedNodes *int32 `json:"maxDegradedNodes,omitempty"`
	// MaxUnavailablePodsPerNode is each per-node Deployment's maxUnavailable.
	// Default 1 in degraded mode, 100% in detach mode. (The legacy
	// controller's maxUnavailablePodsPerNodes and maxUnavaiablePodsPerNode
	// map here through the importer.)
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxUnavailablePodsPerNode *intstr.IntOrString `json:"maxUnavailablePodsPerNode,omitempty"`
	// MaxSurgedPodsPerNode is each per-node Deployment's maxSurge. Default 0,
	// which is what host ports and hostNetwork without SO_REUSEPORT need.
	// +kubebuilder:validation:XIntOrString
	// +optional
	MaxSurgedPodsPerNode *intstr.IntOrString `json:"maxSurgedPodsPerNode,omitempty"`
	// AnnotateNodeToDetach annotates the node before its pods are updated
	// (for node-detacher and similar tools) and waits the grace period.
	// +optional
	AnnotateNodeToDetach *DetachAnnotation `json:"annotateNodeToDetach,omitempty"`
	// WaitForDetachmentByAnnotatedTimestamp waits, after annotating the node,
	// until the node carries a detachment timestamp annotation (written by
	// node-detacher) and gracePeriodSeconds have passed since it.
	// +optional
	WaitForDetachmentByAnnotatedTimestamp *DetachmentTimestamp `json:"waitForDetachmentByAnnotatedTimestamp,omitempty"`
	// AnnotateDeploymentToDetach annotates the node's Deployment before its
	// pods are updated and waits the grace period; the health endpoint fails
	// from then on.
	// +optional
	AnnotateDeploymentToDetach *DetachAnnotation `json:"annotateDeploymentToDetach,omitempty"`
	// Partition is how many nodes are kept at the old template, as with a
	// StatefulSet's or Kruise Advanced DaemonSet's partition. Nodes are
	// updated in name order, so the last nodes by name stay old.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Partition *int32 `json:"partition,omitempty"`
	// Paused stops the rollout: no further node starts updating; nodes
	// already in progress finish and are reattached.
	// +optional
	Paused bool `json:"paused,omitempty"`
}

// DetachAnnotation is an annotation edgeplane puts on an object while a node
// is detached, and how long to wait after putting it.
type DetachAnnotation struct {
	// Key of the annotation.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +required
	Key string `json:"key"`
	// Value of the annotation; empty by default.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Value string `json:"value,omitempty"`
	// GracePeriodSeconds to wait after annotating before any pod is replaced.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`
}

// TimestampFormat names how a detachment timestamp is written.
// +kubebuilder:validation:Enum=RFC3339
type TimestampFormat string

// TimestampFormatRFC3339 is the only format node-detacher writes.
const TimestampFormatRFC3339 TimestampFormat = "RFC3339"

// DetachmentTimestamp waits for a timestamp annotation on the node.
type DetachmentTimestamp struct {
	// Key of the node annotation that holds the detachment time.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +required
	Key string `json:"key"`
	// Format of the timestamp.
	// +kubebuilder:default=RFC3339
	// +optional
	Format TimestampFormat `json:"format,omitempty"`
	// GracePeriodSeconds to wait after the timestamp.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	GracePeriodSeconds int32 `json:"gracePeriodSeconds,omitempty"`
}

// NodePhase is where a node is in a rollout.
// +kubebuilder:validation:Enum=Ready;Detaching;Updating;Reattaching
type NodePhase string

// Node phases, in rollout order.
const (
	// NodePhaseReady: not being updated; the health endpoint depends only on
	// its replicas' readiness.
	NodePhaseReady NodePhase = "Ready"
	// NodePhaseDetaching: marked for update; the health endpoint fails and the
	// detach annotations are set; waiting for the grace period.
	NodePhaseDetaching NodePhase = "Detaching"
	// NodePhaseUpdating: the node's Deployment has the new template; waiting
	// for its pods to be ready.
	NodePhaseUpdating NodePhase = "Updating"
	// NodePhaseReattaching: pods are ready; the detach annotations were just
	// removed (shown for the pass that reattached the node, and for a node an
	// older manager left in this phase).
	NodePhaseReattaching NodePhase = "Reattaching"
)

// NodeStatus is one node's part of the rollout.
type NodeStatus struct {
	// Node name.
	Node string `json:"node"`
	// Deployment is the name of the node's Deployment.
	Deployment string `json:"deployment,omitempty"`
	// Phase of the node in the rollout.
	Phase NodePhase `json:"phase"`
	// Revision of the template the node's Deployment runs.
	Revision string `json:"revision,omitempty"`
	// Replicas the node's Deployment has.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Ready replicas on the node.
	// +optional
	Ready int32 `json:"ready,omitempty"`
	// DetachStartedAt is when the node was marked for detachment.
	// +optional
	DetachStartedAt *metav1.Time `json:"detachStartedAt,omitempty"`
}

// IngressDaemonSetStatus is the observed state of an IngressDaemonSet.
type IngressDaemonSetStatus struct {
	// ObservedGeneration is the generation the status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// UpdateRevision is the hash of the current template.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`
	// DesiredNodes is how many nodes match.
	// +optional
	DesiredNodes int32 `json:"desiredNodes,omitempty"`
	// CurrentNodes is how many matching nodes have a Deployment.
	// +optional
	CurrentNodes int32 `json:"currentNodes,omitempty"`
	// UpdatedNodes is how many nodes' Deployments run updateRevision.
	// +optional
	UpdatedNodes int32 `json:"updatedNodes,omitempty"`
	// ReadyNodes is how many nodes have every replica ready.
	// +optional
	ReadyNodes int32 `json:"readyNodes,omitempty"`
	// AvailableNodes is how many nodes have every replica ready and are not
	// detached, i.e. whose health endpoint answers 200.
	// +optional
	AvailableNodes int32 `json:"availableNodes,omitempty"`
	// ReplicasPerNode mirrors spec.replicasPerNode for the printer column.
	// +optional
	ReplicasPerNode int32 `json:"replicasPerNode,omitempty"`
	// Nodes holds one entry per node that has or should have a Deployment,
	// sorted by node name.
	// +listType=map
	// +listMapKey=node
	// +optional
	Nodes []NodeStatus `json:"nodes,omitempty"`
	// Conditions: Ready, Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// IngressDaemonSet runs replicasPerNode replicas of a pod template on every
// matching node, serves a per-node health endpoint for an external load
// balancer, and rolls template changes out node by node, detaching each node
// before touching its pods.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=ids,categories={edgeplane}
// +kubebuilder:printcolumn:name="NODES",type="integer",JSONPath=".status.desiredNodes"
// +kubebuilder:printcolumn:name="READY",type="integer",JSONPath=".status.readyNodes"
// +kubebuilder:printcolumn:name="UP-TO-DATE",type="integer",JSONPath=".status.updatedNodes"
// +kubebuilder:printcolumn:name="REPLICAS/NODE",type="integer",JSONPath=".spec.replicasPerNode"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="REVISION",type="string",JSONPath=".status.updateRevision",priority=1
type IngressDaemonSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec IngressDaemonSetSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status IngressDaemonSetStatus `json:"status,omitempty"`
}

// IngressDaemonSetList is a list of IngressDaemonSets.
//
// +kubebuilder:object:root=true
type IngressDaemonSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IngressDaemonSet `json:"items"`
}

// GetConditions implements status.Object.
func (i *IngressDaemonSet) GetConditions() []metav1.Condition { return i.Status.Conditions }

// SetConditions implements status.Object.
func (i *IngressDaemonSet) SetConditions(c []metav1.Condition) { i.Status.Conditions = c }

// GetObservedGeneration implements status.Object.
func (i *IngressDaemonSet) GetObservedGeneration() int64 { return i.Status.ObservedGeneration }

// SetObservedGeneration implements status.Object.
func (i *IngressDaemonSet) SetObservedGeneration(g int64) { i.Status.ObservedGeneration = g }

func init() {
	register(&IngressDaemonSet{}, &IngressDaemonSetList{})
}
