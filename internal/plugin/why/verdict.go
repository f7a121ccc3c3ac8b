// Package why builds `kubectl edgeplane why`: from a pod, a node or an
// edgeplane object to what governs it (its PodElasticIP, FloatIPs,
// BurstPolicy, AnycastIPBinding, IngressDaemonSet, provider config), with
// their conditions, recent Events and, where credentials allow, the cloud's
// view of the address, and one verdict: the reason it is not served, or
// that it is.
//
// Gathering (gather.go) reads the API server and the clouds; deciding
// (decide.go) is pure and table-tested; printing (print.go) is text or JSON.
package why

// Ref names an object.
type Ref struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Link is one object on the way from the asked-for object to the cause.
type Link struct {
	Ref
	// Role says how it relates to the object asked about.
	Role string `json:"role"`
	// Ready, Reason and Message are its Ready condition as `kubectl
	// edgeplane status` reads it (NoStatus, Progressing included).
	Ready   string `json:"ready,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Detail is what it holds: an address, pool usage, replicas.
	Detail string `json:"detail,omitempty"`
}

// Event is a recent Event on the object or a link.
type Event struct {
	Object  Ref    `json:"object"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Verdict is the answer.
type Verdict struct {
	Object Ref `json:"object"`
	// Served says edgeplane serves the object as asked (its addresses are
	// bound, its pods placed, it is Ready).
	Served bool `json:"served"`
	// Reason is a stable CamelCase reason: the governing object's, or one
	// of this package's Reason* constants.
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// Chain lists what governs the object, the cause's link last when the
	// object is not served.
	Chain []Link `json:"chain,omitempty"`
	// Cloud is the cloud's view of the object's address, or why it was not
	// read.
	Cloud  string  `json:"cloud,omitempty"`
	Events []Event `json:"events,omitempty"`
}

// Reasons of this package, for states no object's condition names.
const (
	// ReasonServed: everything that governs the object is Ready.
	ReasonServed = "Served"
	// ReasonNotGoverned: no edgeplane object governs it.
	ReasonNotGoverned = "NotGoverned"
	// ReasonTranslationPending: the object asks for an address (annotation
	// or label) but the translator has not made its CR yet.
	ReasonTranslationPending = "TranslationPending"
	// ReasonNoFreeFloatIP: every pool the pod may use has no free IP.
	ReasonNoFreeFloatIP = "NoFreeFloatIP"
	// ReasonFloatIPNotAllocated: the pod wants float IPs and holds none
	// yet; the scheduler extender allocates them when it places the pod.
	ReasonFloatIPNotAllocated = "FloatIPNotAllocated"
	// ReasonLocalFloorHeld: the pod is one of the replicas its BurstPolicy
	// keeps on local nodes, and no local node has room: it waits instead of
	// bursting.
	ReasonLocalFloorHeld = "LocalFloorHeld"
	// ReasonBurstDecisionPending: the pod waits at the BurstPolicy's
	// scheduling gate for the controller's decision.
	ReasonBurstDecisionPending = "BurstDecisionPending"
	// ReasonNodeNotBound: the node's anycast address is not bound yet (the
	// node keeps its taint until it is).
	ReasonNodeNotBound = "NodeNotBound"
	// ReasonUnschedulable: the pod is Pending and the scheduler found no
	// node; no edgeplane object explains it.
	ReasonUnschedulable = "Unschedulable"
)
