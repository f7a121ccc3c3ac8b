package v1alpha1

// Condition types and reasons of FloatIPPool and FloatIP.
const (
	// FloatIPTypeReady says whether a pool's spec is consistent and its IPs can
	// be handed out (FloatIPPool), or whether an IP is held as recorded (FloatIP).
	FloatIPTypeReady = "Ready"
	// FloatIPReasonAvailable: the pool is consistent.
	FloatIPReasonAvailable = "Available"
	// FloatIPReasonExhausted: the pool is consistent but has no free IP.
	FloatIPReasonExhausted = "Exhausted"
	// FloatIPReasonInvalidRanges: ranges or excludeIPs cannot be parsed, are
	// unsorted or overlap each other.
	FloatIPReasonInvalidRanges = "InvalidRanges"
	// FloatIPReasonOverlap: the pool shares IPs with another pool that was
	// admitted first (its claim is in the FloatIPPoolLedger); that pool keeps
	// them and this one hands out nothing until the other's claim goes.
	FloatIPReasonOverlap = "OverlapsPool"
	// FloatIPReasonLedgerFull: admitting the pool would take the
	// FloatIPPoolLedger past its bounds (MaxFloatIPPoolClaims pools,
	// MaxFloatIPPoolClaimEntries ranges and excludeIPs entries); it hands
	// out nothing until other pools go or shrink.
	FloatIPReasonLedgerFull = "LedgerFull"
	// FloatIPReasonPendingAdmission (Ready Unknown): the manager has not
	// admitted the pool's current ranges into the FloatIPPoolLedger yet; it
	// hands out nothing until then.
	FloatIPReasonPendingAdmission = "PendingAdmission"
	// FloatIPReasonOrphanedAllocations: IPs in use left the pool's ranges;
	// they are kept (never silently dropped) and listed in the message.
	FloatIPReasonOrphanedAllocations = "AllocationsOutsideRanges"

	// FloatIPTypeRolloutDeadlock warns that a Deployment using this pool with
	// a retaining release policy (Immutable or Never) and few replicas would
	// deadlock on a default rolling update (galaxy's FAQ): new pods wait for
	// IPs old pods hold.
	FloatIPTypeRolloutDeadlock = "RolloutDeadlock"
	// FloatIPReasonNoDeadlock: no such Deployment.
	FloatIPReasonNoDeadlock = "NoDeadlock"
	// FloatIPReasonSurgeWithoutHeadroom: a Deployment surges but the pool
	// cannot give it an extra IP.
	FloatIPReasonSurgeWithoutHeadroom = "SurgeWithoutHeadroom"

	// FloatIPTypeInUse is True while IPs of the pool are allocated or
	// reserved; a pool that is in use keeps its finalizer when deleted.
	FloatIPTypeInUse = "InUse"
	// FloatIPReasonHasAllocations: IPs are allocated or reserved.
	FloatIPReasonHasAllocations = "HasAllocations"
	// FloatIPReasonEmpty: no IP is allocated or reserved.
	FloatIPReasonEmpty = "Empty"

	// FloatIPReasonHeld: the FloatIP is Allocated or Reserved as recorded.
	FloatIPReasonHeld = "Held"
	// FloatIPReasonReleasing: the FloatIP is being released.
	FloatIPReasonReleasing = "Releasing"
)

// Well-known names.
const (
	// FloatIPPoolFinalizer holds a pool while IPs of it are in use.
	FloatIPPoolFinalizer = "networking.edgeplane.io/finalizer"

	// LabelFloatIPPool carries the pool name on every FloatIP.
	LabelFloatIPPool = "networking.edgeplane.io/pool"

	// LabelFloatIPReserved marks an admin-reserved FloatIP, the name galaxy
	// uses (any value). Such an IP is never handed out nor garbage collected.
	LabelFloatIPReserved = "reserved"
)

// Legacy (galaxy-ipam) names, honoured exactly.
const (
	// ResourceENIIP is the extended resource a pod requests to get float IPs.
	ResourceENIIP = "tke.cloud.tencent.com/eni-ip"
	// AnnotationReleasePolicy is galaxy's per-pod release policy: "",
	// "immutable" or "never".
	AnnotationReleasePolicy = "k8s.v1.cni.galaxy.io/release-policy"
	// AnnotationENIIPPool names the pool a pod shares IPs from; it forces
	// the Never policy.
	AnnotationENIIPPool = "tke.cloud.tencent.com/eni-ip-pool"
	// AnnotationCNIArgs carries request_ip_range in and common.ipinfos out.
	AnnotationCNIArgs = "k8s.v1.cni.galaxy.io/args"
	// AnnotationMultusNetworks is Multus' network selection annotation; a
	// float-IP interface request may name its networks.
	AnnotationMultusNetworks = "k8s.v1.cni.cncf.io/networks"
)

// AnnotationFloatIPInterfaces asks for float IPs on several pod interfaces,
// each from its own pool (edgeplane's own; galaxy had no such request):
// a JSON list of {"interface": "net1", "pool": "storage"} or
// {"network": "[<namespace>/]<name>", "pool": "storage"} entries (a network
// is a Multus NetworkAttachmentDefinition of the pod's
// k8s.v1.cni.cncf.io/networks annotation, on the interface Multus gives it),
// or the short form "eth0=public,net1=storage". The extender allocates all of
// the pod's IPs or none.
const AnnotationFloatIPInterfaces = "networking.edgeplane.io/float-ip-interfaces"

// Kind names.
const (
	FloatIPPoolKind = "FloatIPPool"
	FloatIPKind     = "FloatIP"
)
