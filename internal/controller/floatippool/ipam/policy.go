package ipam

import networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"

// Action is what happens to an IP when its pod goes away.
type Action string

const (
	// ActionRelease deletes the FloatIP: the IP goes back to the pool.
	ActionRelease Action = "Release"
	// ActionReserve renames the key to the workload's (or pool's)
	// reservation key, so the next pod of the workload claims it.
	ActionReserve Action = "Reserve"
	// ActionKeep keeps the key (the pod of the same name gets the IP back)
	// and forgets the old pod's UID and node.
	ActionKeep Action = "Keep"
)

// Workload is what the release decision knows about a key's workload.
type Workload struct {
	// Exists: the workload object was found.
	Exists bool
	// Replicas is its desired replica count (spec.replicas, or the pool's
	// size for a pool with a size).
	Replicas int64
	// HasScale: a custom kind's CRD has a scale subresource with a
	// specReplicasPath (required by galaxy for Immutable).
	HasScale bool
}

// ReleaseInput is everything the decision looks at.
type ReleaseInput struct {
	Key    Key
	Policy networkingv1alpha1.ReleasePolicy
	// Workload of the key; ignored for Default.
	Workload Workload
	// HeldByPrefix is the number of IPs whose key has the key's reservation
	// prefix (used by Deployments with Immutable).
	HeldByPrefix int64
}

// Decide applies galaxy's release table:
//
//	| Workload                  | Default | Immutable                                                    | Never                    |
//	| Deployment                | release | missing or 0 replicas → release; held > replicas → release;  | reserve (pool: pool key) |
//	|                           |         | else reserve                                                 |                          |
//	| StatefulSet / custom+scale| release | missing → release; index ≥ replicas → release; else keep     | keep                     |
//	| unsupported kind or name  | release | release                                                      | release                  |
//
// A pool key is always Never (reserve to the pool prefix).
func Decide(in ReleaseInput) Action {
	policy := in.Policy
	if in.Key.Pool != "" {
		policy = networkingv1alpha1.ReleasePolicyNever
	}
	if policy == "" || policy == networkingv1alpha1.ReleasePolicyDefault {
		return ActionRelease
	}
	if in.Key.Pool != "" {
		return ActionReserve
	}
	switch in.Key.AppType() {
	case AppDeployment:
		if policy == networkingv1alpha1.ReleasePolicyNever {
			return ActionReserve
		}
		if !in.Workload.Exists || in.Workload.Replicas <= 0 {
			return ActionRelease
		}
		if in.HeldByPrefix > in.Workload.Replicas {
			return ActionRelease
		}
		return ActionReserve
	case AppNone:
		return ActionRelease
	}
	// StatefulSet and custom kinds: need an indexed pod name.
	idx := PodIndex(in.Key.PodName)
	if idx < 0 {
		return ActionRelease
	}
	if policy == networkingv1alpha1.ReleasePolicyNever {
		return ActionKeep
	}
	if in.Key.AppType() != AppStatefulSet && !in.Workload.HasScale {
		return ActionRelease
	}
	if !in.Workload.Exists || int64(idx) >= in.Workload.Replicas {
		return ActionRelease
	}
	return ActionKeep
}

// Supported says whether galaxy accepts a retaining policy for this key at
// allocation time, with the reason if not (galaxy's NotStatefulWorkload and
// NoReplicas errors).
func Supported(key Key, policy networkingv1alpha1.ReleasePolicy, hasScale bool) (bool, string) {
	if key.Pool != "" || policy == "" || policy == networkingv1alpha1.ReleasePolicyDefault {
		return true, ""
	}
	switch key.AppType() {
	case AppDeployment, AppStatefulSet:
		return true, ""
	case AppNone:
		return false, "NotStatefulWorkload: a pod without an owner cannot use a retaining release policy"
	}
	if PodIndex(key.PodName) < 0 {
		return false, "NotStatefulWorkload: pod name of a custom workload must end in -<index> for a retaining release policy"
	}
	if policy == networkingv1alpha1.ReleasePolicyImmutable && !hasScale {
		return false, "NoReplicas: immutable needs the workload's CRD to have a scale subresource with specReplicasPath"
	}
	return true, ""
}
