package v1alpha1

// Condition types of IngressDaemonSet. Every IngressDaemonSet has all three.
const (
	// TypeReady is True when every matching node has a Deployment at the
	// update revision with every replica ready and no node is detached.
	TypeReady = "Ready"
	// TypeProgressing is True while a rollout (or a node joining) is under
	// way, False when it is complete or paused.
	TypeProgressing = "Progressing"
	// TypeDegraded is True when something keeps the rollout from finishing
	// that a person should look at (bad detachment timestamp, pods not
	// becoming ready, a Deployment edgeplane does not own in the way).
	TypeDegraded = "Degraded"
)

// Reasons of the Ready condition.
const (
	// ReasonAllNodesReady: every node runs the update revision, all replicas ready.
	ReasonAllNodesReady = "AllNodesReady"
	// ReasonNodesNotReady: some node's replicas are not all ready.
	ReasonNodesNotReady = "NodesNotReady"
	// ReasonRolloutInProgress: some node runs an old revision or is detached.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonSelectorMismatch: spec.selector does not select the template's
	// labels; nothing is created.
	ReasonSelectorMismatch = "SelectorMismatch"
	// ReasonNoMatchingNodes: no node matches; nothing to run (Ready is True).
	ReasonNoMatchingNodes = "NoMatchingNodes"
)

// Reasons of the Progressing condition.
const (
	// ReasonRollingUpdate: nodes are being updated.
	ReasonRollingUpdate = "RollingUpdate"
	// ReasonRolloutComplete: every node runs the update revision.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRolloutPaused: updateStrategy.rollingUpdate.paused is set.
	ReasonRolloutPaused = "RolloutPaused"
	// ReasonPartitioned: the rollout stopped at the partition.
	ReasonPartitioned = "Partitioned"
)

// Reasons of the Degraded condition.
const (
	// ReasonAsExpected: nothing is wrong.
	ReasonAsExpected = "AsExpected"
	// ReasonInvalidDetachmentTimestamp: a node's detachment timestamp
	// annotation cannot be parsed; the node waits.
	ReasonInvalidDetachmentTimestamp = "InvalidDetachmentTimestamp"
	// ReasonDeploymentConflict: a Deployment with a per-node name exists but
	// is not owned by this IngressDaemonSet.
	ReasonDeploymentConflict = "DeploymentConflict"
	// ReasonApplyFailed: creating or updating a generated object failed.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonHealthCheckerFieldsIgnored: spec.healthChecker sets fields (stored
	// before admission refused them); the platform's health checker runs
	// without them.
	ReasonHealthCheckerFieldsIgnored = "HealthCheckerFieldsIgnored"
	// ReasonHealthCheckerTolerationsNotAllowed: the template tolerates taints
	// the platform does not let the health checker tolerate; it runs without
	// those tolerations, so not on nodes tainted so.
	ReasonHealthCheckerTolerationsNotAllowed = "HealthCheckerTolerationsNotAllowed"
)

// Reasons used before anything is known.
const (
	// ReasonReconciling: the first pass has not finished.
	ReasonReconciling = "Reconciling"
)

// Event reasons, one per rollout step a user cares about.
const (
	EventNodeDetaching       = "NodeDetaching"
	EventNodeUpdating        = "NodeUpdating"
	EventNodeReattaching     = "NodeReattaching"
	EventNodeReattached      = "NodeReattached"
	EventNodeAdded           = "NodeAdded"
	EventNodeRemoved         = "NodeRemoved"
	EventRolloutComplete     = "RolloutComplete"
	EventDeploymentConflict  = "DeploymentConflict"
	EventInvalidDetachmentTS = "InvalidDetachmentTimestamp"
	// EventHealthCheckerFieldsIgnored and
	// EventHealthCheckerTolerationsNotAllowed (Warning) say what of the spec
	// the platform's health checker does not take, when that changes.
	EventHealthCheckerFieldsIgnored         = ReasonHealthCheckerFieldsIgnored
	EventHealthCheckerTolerationsNotAllowed = ReasonHealthCheckerTolerationsNotAllowed
	// EventLegacyHealthCheckerRemoved: a health-checker DaemonSet an earlier
	// version created in the IngressDaemonSet's namespace was deleted.
	EventLegacyHealthCheckerRemoved = "LegacyHealthCheckerRemoved"
)

// Labels and annotations edgeplane puts on the objects it generates.
const (
	// LabelIngressDaemonSet names the owning IngressDaemonSet on every
	// generated object and pod (shortened with a hash when too long).
	LabelIngressDaemonSet = "apps.edgeplane.io/ingressdaemonset"
	// LabelNode names the node of a per-node Deployment and its pods
	// (shortened with a hash when too long).
	LabelNode = "apps.edgeplane.io/node"
	// LabelHealthCheckPort is the port of a health-checker DaemonSet.
	LabelHealthCheckPort = "apps.edgeplane.io/health-check-port"
	// LabelIngressDaemonSetNamespace, on a health-checker DaemonSet (which
	// lives in the platform's namespace), is its IngressDaemonSet's namespace.
	LabelIngressDaemonSetNamespace = "apps.edgeplane.io/ingressdaemonset-namespace"
	// LabelIngressDaemonSetUID, on a health-checker DaemonSet, is its
	// IngressDaemonSet's UID: a DaemonSet of an earlier object of the same
	// name is not its.
	LabelIngressDaemonSetUID = "apps.edgeplane.io/ingressdaemonset-uid"
	// AnnotationIngressDaemonSet, on a health-checker DaemonSet, is its
	// IngressDaemonSet as namespace/name, in full (the label may be
	// shortened). An owner reference cannot cross namespaces, so this and
	// the IngressDaemonSet's finalizer stand in for garbage collection.
	AnnotationIngressDaemonSet = "apps.edgeplane.io/ingressdaemonset"

	// AnnotationNode is the full node name of a per-node Deployment.
	AnnotationNode = "apps.edgeplane.io/node"
	// AnnotationRevision is the template revision a per-node Deployment runs.
	AnnotationRevision = "apps.edgeplane.io/revision"
	// LabelPhase, on a per-node Deployment, is the node's rollout phase
	// (absent means Ready); the health endpoint fails while it is set to
	// anything but Ready. It is a label, not an annotation, because a
	// Deployment's generation moves with every annotation change.
	LabelPhase = "apps.edgeplane.io/phase"
	// LabelDetachStartedAt, on a per-node Deployment, is when the node was
	// marked Detaching, in Unix milliseconds.
	LabelDetachStartedAt = "apps.edgeplane.io/detach-started-at"
	// AnnotationNodeDetachKeys lists (comma separated) the node annotation
	// keys edgeplane set on the node for the detachment, so they are removed
	// on reattach even if the spec changed meanwhile.
	AnnotationNodeDetachKeys = "apps.edgeplane.io/node-detach-key"
	// AnnotationDeploymentDetachKey is the user annotation key edgeplane set
	// on the Deployment for the detachment.
	AnnotationDeploymentDetachKey = "apps.edgeplane.io/deployment-detach-key"
)

// Finalizer holds an IngressDaemonSet until the node annotations it set are
// removed and its health-checker DaemonSets (in the platform's namespace,
// beyond garbage collection's reach) are deleted.
const Finalizer = "apps.edgeplane.io/finalizer"
