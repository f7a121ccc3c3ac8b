package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FloatIPPhase is where a FloatIP is in its life.
// +kubebuilder:validation:Enum=Allocated;Reserved;Releasing
type FloatIPPhase string

const (
	// FloatIPAllocated: a pod holds the IP.
	FloatIPAllocated FloatIPPhase = "Allocated"
	// FloatIPReserved: the IP is kept for a workload, a pool or an admin, and
	// no pod uses it now.
	FloatIPReserved FloatIPPhase = "Reserved"
	// FloatIPReleasing: the IP is being given back to its pool.
	FloatIPReleasing FloatIPPhase = "Releasing"
)

// FloatIPSpec is the desired state of a FloatIP.
//
// +kubebuilder:validation:XValidation:rule="self.ip == oldSelf.ip",message="ip is immutable"
// +kubebuilder:validation:XValidation:rule="self.pool == oldSelf.pool",message="pool is immutable"
type FloatIPSpec struct {
	// IP is the allocated address. The object's name is derived from it
	// (dots, or colons of the expanded IPv6 form, become dashes), which is
	// what makes allocation exclusive: two allocators creating the same IP
	// cannot both succeed.
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="ip must be an IP address"
	IP string `json:"ip"`

	// Pool is the FloatIPPool the IP belongs to.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Pool string `json:"pool"`

	// Key is galaxy's allocation key: dp_<ns>_<deployment>_<pod>,
	// sts_<ns>_<statefulset>_<pod>, <kind>_<ns>_<owner>_<pod>,
	// NULL_<ns>_NULL_<pod>, each optionally prefixed pool__<pool>_; a key
	// ending in "_" (dp_<ns>_<deployment>_ or pool__<pool>_) is a reservation
	// that the next pod of that workload or pool claims. Empty: an
	// admin-reserved IP that is never handed out.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Key string `json:"key,omitempty"`

	// ReleasePolicy decides what happens to the IP when its pod goes away.
	// +optional
	// +kubebuilder:default=Default
	ReleasePolicy ReleasePolicy `json:"releasePolicy,omitempty"`

	// ReservedTTL releases the IP once it has been Reserved (no pod using
	// it) for this long. Unset: reserved until released by hand.
	// +optional
	ReservedTTL *metav1.Duration `json:"reservedTTL,omitempty"`
}

// FloatIPStatus is the observed state of a FloatIP.
type FloatIPStatus struct {
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Phase: Allocated, Reserved or Releasing.
	// +optional
	Phase FloatIPPhase `json:"phase,omitempty"`

	// PodNamespace and PodName name the pod that holds the IP.
	// +optional
	PodNamespace string `json:"podNamespace,omitempty"`
	// +optional
	PodName string `json:"podName,omitempty"`
	// PodUID is the UID of the pod that holds the IP; a pod with another UID
	// (a recreated pod of the same name) only gets the IP after this one is
	// gone.
	// +optional
	PodUID string `json:"podUID,omitempty"`
	// NodeName is the node the holding pod was bound to.
	// +optional
	NodeName string `json:"nodeName,omitempty"`
	// Interface is the pod network interface (CNI_IFNAME) the IP is for,
	// from the pod's networking.edgeplane.io/float-ip-interfaces request.
	// Empty: the pod's primary interface (eth0 unless the IPAM plugin's
	// network config names another), as for every galaxy pod.
	// +optional
	// +kubebuilder:validation:MaxLength=15
	Interface string `json:"interface,omitempty"`
	// UpdateTime is when the allocation last changed hands or phase.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`

	// Conditions: Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=fip,categories={edgeplane}
// +kubebuilder:selectablefield:JSONPath=".spec.key"
// +kubebuilder:selectablefield:JSONPath=".spec.pool"
// +kubebuilder:selectablefield:JSONPath=".status.podUID"
// +kubebuilder:printcolumn:name="IP",type="string",JSONPath=".spec.ip"
// +kubebuilder:printcolumn:name="POOL",type="string",JSONPath=".spec.pool"
// +kubebuilder:printcolumn:name="POD",type="string",JSONPath=".status.podName"
// +kubebuilder:printcolumn:name="PHASE",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="AGE",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="KEY",type="string",JSONPath=".spec.key",priority=1
// +kubebuilder:printcolumn:name="NODE",type="string",JSONPath=".status.nodeName",priority=1
// +kubebuilder:printcolumn:name="INTERFACE",type="string",JSONPath=".status.interface",priority=1
// +kubebuilder:validation:XValidation:rule="self.spec.ip.contains(':') || self.metadata.name == self.spec.ip.replace('.', '-')",message="name must be the IP with dots replaced by dashes (e.g. 10-0-0-5)"

// A FloatIP is one IP of a FloatIPPool that is allocated to a pod or kept
// for a workload. Creating it allocates the IP; deleting it releases it.
//
// It has no status subresource, so that allocating writes the IP and its
// holder (status) at once. Every change of spec or status is therefore one
// generation more; a writer stamps status.observedGeneration with the
// generation its write produces.
type FloatIP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FloatIPSpec `json:"spec"`
	// Status defaults to observedGeneration 0, so that an object no
	// controller has seen yet reads as in progress to kstatus, not as current.
	// +kubebuilder:default={observedGeneration: 0}
	Status FloatIPStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FloatIPList is a list of FloatIPs.
type FloatIPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FloatIP `json:"items"`
}

// GetConditions returns the status conditions.
func (f *FloatIP) GetConditions() []metav1.Condition { return f.Status.Conditions }

// SetConditions sets the status conditions.
func (f *FloatIP) SetConditions(c []metav1.Condition) { f.Status.Conditions = c }

// GetObservedGeneration returns status.observedGeneration.
func (f *FloatIP) GetObservedGeneration() int64 { return f.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (f *FloatIP) SetObservedGeneration(g int64) { f.Status.ObservedGeneration = g }

func init() {
	register(&FloatIP{}, &FloatIPList{})
}
