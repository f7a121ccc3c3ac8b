package decide

import (
	"fmt"
	"sort"
	"time"
)

// DefaultRebalanceAfter is spec.rebalance.after when it is unset.
const DefaultRebalanceAfter = time.Minute

// RebalanceInput is what RebalanceStep needs to know about a policy's pods.
type RebalanceInput struct {
	// LocalReplicas is the effective local floor.
	LocalReplicas int32
	// After is how long the floor must have been short first.
	After time.Duration
	// Pods are the governed pods that are not terminating.
	Pods []PodState
	// Terminating counts governed pods that are terminating.
	Terminating int
	// EvictionInFlight: an eviction of ours is not visible in the cache yet.
	EvictionInFlight bool
	// ShortSince is the recorded start of the floor's shortage (zero: none).
	ShortSince time.Time
}

// RebalanceResult says what to do now.
type RebalanceResult struct {
	// ShortSince is the shortage's start to record (zero: the floor is kept).
	ShortSince time.Time
	// Candidates are the burst pods that may be evicted now, in order of
	// preference (newest first); the caller evicts the first that fits on a
	// local node, and only that one. Empty: nothing to do now.
	Candidates []string
	// RequeueAfter is when the shortage becomes old enough; 0 if not waiting.
	RequeueAfter time.Duration
	// Waiting says what rebalancing waits for ("" when it does not).
	Waiting string
}

// RebalanceStep decides whether a burst pod should move home now. The floor
// is short when fewer than LocalReplicas pods of the current revision (that
// of the newest pod) run on local nodes while a pod runs on a virtual node. It acts only when:
//   - no rollout is under way (all live pods share one revision),
//   - every governed pod is placed and none is terminating, and no eviction
//     of ours is in flight (one eviction at a time: the next waits until the
//     replacement of the last one is placed),
//   - the floor has been short for After.
func RebalanceStep(in RebalanceInput, now time.Time) RebalanceResult {
	var local, virtual int32
	revs := map[string]bool{}
	var burst []PodState
	pending := 0
	current := currentRevision(in.Pods)
	for _, s := range in.Pods {
		revs[s.Revision] = true
		switch s.Placement {
		case Local:
			if s.Revision == current {
				local++
			}
		case Virtual:
			virtual++
			burst = append(burst, s)
		case Pending:
			pending++
		}
	}
	var res RebalanceResult
	if in.LocalReplicas <= 0 || virtual == 0 || local >= in.LocalReplicas {
		return res // the floor is kept (or there is nothing to move)
	}
	res.ShortSince = in.ShortSince
	if res.ShortSince.IsZero() {
		res.ShortSince = now
	}
	switch {
	case len(revs) > 1:
		res.Waiting = "a rollout is under way"
		return res
	case in.EvictionInFlight || in.Terminating > 0:
		res.Waiting = "a pod is terminating"
		return res
	case pending > 0:
		res.Waiting = fmt.Sprintf("%d pods are not placed yet", pending)
		return res
	}
	if left := res.ShortSince.Add(in.After).Sub(now); left > 0 {
		res.RequeueAfter = left
		res.Waiting = fmt.Sprintf("the local floor is short (%d of %d local); moving a burst pod home in %s", local, in.LocalReplicas, left.Round(time.Second))
		return res
	}
	sort.SliceStable(burst, func(i, j int) bool {
		if !burst[i].Created.Equal(burst[j].Created) {
			return burst[i].Created.After(burst[j].Created)
		}
		return burst[i].Name > burst[j].Name
	})
	for _, s := range burst {
		res.Candidates = append(res.Candidates, s.Name)
	}
	return res
}

// currentRevision is the revision of the newest pod.
func currentRevision(pods []PodState) string {
	var newest PodState
	for i, s := range pods {
		if i == 0 || s.Created.After(newest.Created) || (s.Created.Equal(newest.Created) && s.Name > newest.Name) {
			newest = s
		}
	}
	return newest.Revision
}
