// Package decide decides, without any I/O, what an IngressDaemonSet's
// rollout does next on each node: create its Deployment, mark it detaching,
// update it, reattach it, or wait. The reconciler reads nodes and Deployments
// into Node values, calls Plan, and executes the steps.
//
// A node moves Ready → Detaching → Updating → Reattaching → Ready. Its phase
// and the time it started detaching live on its Deployment (labels), so a
// restarted manager resumes exactly where the previous one stopped.
//
// Reattaching is one write: the detach annotations and the phase label go
// together, and the node serves again at once (its replicas are all ready),
// so the node it frees in the budget can start in the same pass.
package decide

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1alpha1 "github.com/edgeplane/edgeplane/apis/apps/v1alpha1"
)

// Node is what the planner knows about one matching node.
type Node struct {
	// Name of the node.
	Name string
	// HasDeployment is false when the node has no Deployment yet.
	HasDeployment bool
	// Revision of the template the node's Deployment runs.
	Revision string
	// Phase of the node in the rollout (empty means Ready).
	Phase appsv1alpha1.NodePhase
	// DetachStartedAt is when the node entered Detaching (zero if unknown).
	DetachStartedAt time.Time
	// Available: every replica of the node's Deployment is ready.
	Available bool
	// PartlyReady: some but not every replica is ready (status current):
	// the node still serves, with fewer replicas than it wants, as every
	// node does for a moment when replicasPerNode is raised. An unavailable
	// node that is neither PartlyReady nor StatusStale serves nothing.
	PartlyReady bool
	// StatusStale: the Deployment controller has not observed the node's
	// Deployment's latest spec yet (status.observedGeneration < generation),
	// so its status describes an older spec: Available and RolledOut are
	// then false because they are unknown, not because a replica is known
	// to be down. Every write moves a Deployment's generation, edgeplane's
	// own included (the per-node strategy, replicas and labels it applies
	// to every node at once, the detach annotations).
	StatusStale bool
	// RolledOut: the Deployment controller has finished rolling the node's
	// Deployment to its current template (all replicas updated and ready).
	RolledOut bool
	// DetachmentTimestamp is the raw value of the node's detachment
	// timestamp annotation (waitForDetachmentByAnnotatedTimestamp.key), and
	// HasDetachmentTimestamp whether the annotation exists.
	DetachmentTimestamp    string
	HasDetachmentTimestamp bool
}

// Params are the rollout settings, already defaulted (see ParamsFrom).
type Params struct {
	// UpdateRevision is the revision of the current template.
	UpdateRevision string
	// MaxNodes is how many nodes may be in the rollout, or unavailable, at
	// once: maxUnavailableNodes in detach mode, else maxDegradedNodes.
	MaxNodes int
	// DetachGrace is how long a node stays Detaching before its pods are
	// touched.
	DetachGrace time.Duration
	// WaitForTimestamp: also wait until the node's detachment timestamp plus
	// TimestampGrace.
	WaitForTimestamp bool
	TimestampGrace   time.Duration
	// Partition is how many outdated nodes are kept at their old revision.
	Partition int
	// Paused: no node starts updating.
	Paused bool
	// Now is the current time.
	Now time.Time
}

// Action is what to do to one node now.
type Action string

// Actions, in rollout order.
const (
	// Create the node's Deployment at the update revision.
	Create Action = "Create"
	// Detach: mark the node Detaching (health endpoint fails), set the
	// detach annotations and record the time.
	Detach Action = "Detach"
	// Update: put the update revision's template into the node's Deployment
	// and mark it Updating.
	Update Action = "Update"
	// Reattach: remove the detach annotations and the phase: the node is
	// Ready again. It does not count against the budget any more.
	Reattach Action = "Reattach"
	// Finish: mark a node left Reattaching (by an older pass) Ready.
	Finish Action = "Finish"
)

// Step is one action on one node.
type Step struct {
	Node   string
	Action Action
}

// Plan is what to do now and when to look again.
type Plan struct {
	// Steps, in node-name order.
	Steps []Step
	// RequeueAfter is when a wait ends (zero: nothing waits on time; watch
	// events on Deployments and nodes bring the next pass).
	RequeueAfter time.Duration
	// Waiting says, per node, why a node in the rollout cannot move on.
	Waiting map[string]string
	// InvalidTimestamps names nodes whose detachment timestamp cannot be
	// parsed, with the parse error.
	InvalidTimestamps map[string]string
	// Busy is how many nodes count against MaxNodes after this plan.
	Busy int
	// Outdated is how many nodes run another revision and are not in the
	// rollout yet (after this plan), HeldByPartition how many of those the
	// partition keeps.
	Outdated        int
	HeldByPartition int
}

// Missing-timestamp waits are re-checked at this pace in case a node event is missed.
const timestampPoll = 5 * time.Second

// ParamsFrom derives Params from a rolling-update spec (nil means defaults).
func ParamsFrom(ru *appsv1alpha1.RollingUpdate, updateRevision string, now time.Time) Params {
	p := Params{UpdateRevision: updateRevision, MaxNodes: 1, Now: now}
	if ru == nil {
		return p
	}
	if DetachMode(ru) {
		p.MaxNodes = int(*ru.MaxUnavailableNodes)
	} else if ru.MaxDegradedNodes != nil {
		p.MaxNodes = int(*ru.MaxDegradedNodes)
	}
	grace := int32(0)
	for _, a := range []*appsv1alpha1.DetachAnnotation{ru.AnnotateNodeToDetach, ru.AnnotateDeploymentToDetach} {
		if a != nil && a.GracePeriodSeconds > grace {
			grace = a.GracePeriodSeconds
		}
	}
	p.DetachGrace = time.Duration(grace) * time.Second
	if w := ru.WaitForDetachmentByAnnotatedTimestamp; w != nil {
		p.WaitForTimestamp = true
		p.TimestampGrace = time.Duration(w.GracePeriodSeconds) * time.Second
	}
	if ru.Partition != nil {
		p.Partition = int(*ru.Partition)
	}
	p.Paused = ru.Paused
	return p
}

// DetachMode reports whether the rollout detaches whole nodes (maxUnavailableNodes ≥ 1).
func DetachMode(ru *appsv1alpha1.RollingUpdate) bool {
	return ru != nil && ru.MaxUnavailableNodes != nil && *ru.MaxUnavailableNodes >= 1
}

// ParseDetachmentTimestamp parses a node's detachment timestamp annotation
// (RFC3339, the only format node-detacher writes). Surrounding spaces are
// tolerated.
func ParseDetachmentTimestamp(value string) (time.Time, error) {
	v := strings.TrimSpace(value)
	if v == "" {
		return time.Time{}, fmt.Errorf("empty detachment timestamp")
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("detachment timestamp %q is not RFC3339: %w", value, err)
	}
	return t, nil
}

// inRollout reports whether a node is somewhere between Detaching and Reattaching.
func inRollout(n Node) bool {
	return n.Phase != "" && n.Phase != appsv1alpha1.NodePhaseReady
}

// servesNothing reports whether a node is known to serve nothing: no replica ready,
// with a current status.
func servesNothing(n Node) bool {
	return !n.Available && !n.PartlyReady && !n.StatusStale
}

// Compute decides the next steps for nodes under p. It never returns more
// than p.MaxNodes nodes that are in the rollout or unavailable, counting the
// ones it starts, unless that many were already so before; and it starts no
// node that serves anything while p.MaxNodes nodes are in the rollout.
//
// Outdated nodes start in this order (as a DaemonSet replaces its pods:
// unavailable old pods first, for free, the others within maxUnavailable):
//
//  1. A node that serves nothing (down) starts without budget: it counts
//     against the budget already, detaching it costs nothing, and the new
//     template may be what brings it back.
//  2. A partly ready node starts while fewer than p.MaxNodes nodes are in
//     the rollout. It counts against the budget already, so starting it
//     does not add to the nodes unavailable; but it still serves, so it is
//     not free: a moment in which every node is partly ready (the new
//     replica of a replicasPerNode increase starting everywhere) must not
//     detach every node at once. Bounding it by the nodes in the rollout
//     rather than by all the unavailable ones keeps a rollout going when
//     more than p.MaxNodes nodes stay partly ready.
//  3. A fully available node starts while fewer than p.MaxNodes nodes are
//     in the rollout or unavailable.
//
// A node whose Deployment status is stale counts against the budget (it may
// be unavailable) but is not started until its status is current: a stale
// status says nothing about what the node serves.
func Compute(nodes []Node, p Params) Plan {
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	plan := Plan{Waiting: map[string]string{}, InvalidTimestamps: map[string]string{}}
	wait := func(d time.Duration) {
		if d <= 0 {
			d = time.Second
		}
		if plan.RequeueAfter == 0 || d < plan.RequeueAfter {
			plan.RequeueAfter = d
		}
	}

	var candidates []Node
	// rolling is how many nodes are in the rollout (Detaching or Updating)
	// after this plan.
	rolling := 0
	for _, n := range nodes {
		switch {
		case !n.HasDeployment:
			// A new node: nothing on it serves yet, so create it at the
			// update revision right away. It counts as busy until available.
			plan.Steps = append(plan.Steps, Step{n.Name, Create})
			plan.Busy++
		case n.Phase == appsv1alpha1.NodePhaseDetaching:
			if n.Revision == p.UpdateRevision {
				// The template went back to what this node runs: nothing to replace.
				plan.Steps = append(plan.Steps, Step{n.Name, Reattach})
				if !n.Available {
					plan.Busy++
				}
				continue
			}
			plan.Busy++
			rolling++
			if reason, after, ok := detachDone(n, p, &plan); !ok {
				plan.Waiting[n.Name] = reason
				if after > 0 {
					wait(after)
				}
				continue
			}
			plan.Steps = append(plan.Steps, Step{n.Name, Update})
		case n.Phase == appsv1alpha1.NodePhaseUpdating:
			switch {
			case n.Revision != p.UpdateRevision:
				// The template changed again mid-update: the node is
				// detached already, so apply the newest one.
				plan.Steps = append(plan.Steps, Step{n.Name, Update})
				plan.Busy++
				rolling++
			case n.RolledOut:
				// Every replica updated and ready: reattached by this step.
				plan.Steps = append(plan.Steps, Step{n.Name, Reattach})
			default:
				plan.Busy++
				rolling++
				plan.Waiting[n.Name] = "waiting for the node's replicas to be updated and ready"
			}
		case n.Phase == appsv1alpha1.NodePhaseReattaching:
			plan.Steps = append(plan.Steps, Step{n.Name, Finish})
			if !n.Available {
				plan.Busy++
			}
		default: // Ready
			if !n.Available {
				plan.Busy++
			}
			if n.Revision != p.UpdateRevision {
				candidates = append(candidates, n)
			}
		}
	}

	// Partition keeps the last nodes by name at their old revision.
	eligible := candidates
	if p.Partition > 0 {
		keep := min(p.Partition, len(candidates))
		eligible = candidates[:len(candidates)-keep]
		plan.HeldByPartition = keep
	}
	plan.Outdated = len(candidates)
	if p.Paused {
		return finish(plan)
	}
	// Down outdated nodes first, without budget. A node whose status is
	// stale is not known to be down (its pods may all be serving): starting
	// it for free could take down every such node at once, so it waits for
	// its status, counted as busy meanwhile.
	started := map[string]bool{}
	start := func(n Node) {
		plan.Steps = append(plan.Steps, Step{n.Name, Detach})
		started[n.Name] = true
		rolling++
	}
	for _, n := range eligible {
		switch {
		case n.StatusStale:
			plan.Waiting[n.Name] = "waiting for the Deployment controller to observe the node's Deployment"
		case servesNothing(n):
			start(n)
		}
	}
	// Then partly ready ones (busy already), within the nodes in the rollout.
	for _, n := range eligible {
		if !n.Available && n.PartlyReady && !n.StatusStale && !started[n.Name] && rolling < p.MaxNodes {
			start(n)
		}
	}
	// Then available ones, within the nodes in the rollout or unavailable.
	for _, n := range eligible {
		if n.Available && !n.StatusStale && !started[n.Name] && plan.Busy < p.MaxNodes {
			start(n)
			plan.Busy++
		}
	}
	plan.Outdated -= len(started)
	return finish(plan)
}

func finish(plan Plan) Plan {
	slices.SortStableFunc(plan.Steps, func(a, b Step) int { return strings.Compare(a.Node, b.Node) })
	return plan
}

// detachDone reports whether a Detaching node may be updated; if not, why
// and after how long to look again (zero: on the next event).
func detachDone(n Node, p Params, plan *Plan) (string, time.Duration, bool) {
	if !n.DetachStartedAt.IsZero() {
		if left := n.DetachStartedAt.Add(p.DetachGrace).Sub(p.Now); left > 0 {
			return fmt.Sprintf("detach grace period: %s left", left.Round(time.Second)), left, false
		}
	}
	if !p.WaitForTimestamp {
		return "", 0, true
	}
	if !n.HasDetachmentTimestamp {
		return "waiting for the node's detachment timestamp annotation", timestampPoll, false
	}
	ts, err := ParseDetachmentTimestamp(n.DetachmentTimestamp)
	if err != nil {
		plan.InvalidTimestamps[n.Name] = err.Error()
		return "the node's detachment timestamp annotation is invalid", timestampPoll, false
	}
	if left := ts.Add(p.TimestampGrace).Sub(p.Now); left > 0 {
		return fmt.Sprintf("detachment timestamp grace period: %s left", left.Round(time.Second)), left, false
	}
	return "", 0, true
}
