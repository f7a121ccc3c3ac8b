package burstpolicy

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/burstpolicy/decide"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

const (
	actionRebalance = "Rebalance"
	// rebalanceRetry is how often a short floor is looked at again while
	// nothing else brings the policy back (local room frees up elsewhere in
	// the cluster, or a PodDisruptionBudget refused the eviction).
	rebalanceRetry = 30 * time.Second
	// evictionTTL bounds how long an eviction counts as in flight without
	// the cache showing it.
	evictionTTL = time.Minute
	// evictionTimeout bounds one eviction request.
	evictionTimeout = 10 * time.Second
)

// maxEvictions bounds the policies whose last eviction is remembered: far
// above the policies one manager rebalances within evictionTTL.
const maxEvictions = 1 << 12

// evictions remembers, per policy, the pod last evicted until the cache
// shows it terminating or gone and shows its replacement (one eviction at a
// time), on runtime/expect.
type evictions struct {
	w *expect.Writes[types.NamespacedName, eviction]
}

// eviction is a policy's last eviction: the pod, and how many of the
// policy's pods were live (not terminating) when it was evicted. The
// evicted pod can leave the cache before its replacement enters it; until
// as many other live pods are seen, the replacement is still to come, and
// the floor only looks short.
type eviction struct {
	uid  types.UID
	live int
}

// evictions returns the evictions of rebalancing in flight.
func (r *Reconciler) evictions() evictions {
	return evictions{r.evicted.Get(evictionTTL, maxEvictions, r.Clock)}
}

// record remembers the eviction of uid, one of live pods of policy.
func (e evictions) record(policy types.NamespacedName, uid types.UID, live int) {
	e.w.Record(policy, eviction{uid: uid, live: live}, "")
}

// inFlight reports whether the last eviction of policy is not complete in
// pods (the cache): its pod still runs there, or its replacement is not
// there yet. It forgets the eviction once it is complete (or evictionTTL
// passed: a workload scaled down meanwhile never shows the replacement).
func (e evictions) inFlight(policy types.NamespacedName, pods []*corev1.Pod) bool {
	ev, ok := e.w.Get(policy)
	if !ok {
		return false
	}
	others := 0
	for i := range pods {
		if !pods[i].DeletionTimestamp.IsZero() {
			continue
		}
		if pods[i].UID == ev.uid {
			return true
		}
		others++
	}
	if others < ev.live {
		return true
	}
	e.w.Forget(policy)
	return false
}

// livePods counts the pods that are not terminating.
func livePods(pods []*corev1.Pod) int {
	n := 0
	for i := range pods {
		if pods[i].DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// rebalance moves one burst pod home when spec.rebalance says so and the
// floor is short (decide.RebalanceStep), evicting it through the Eviction
// API once a local node has room for its replacement (decide.FitsLocally).
// It records the state in status.rebalance and returns when to look again.
func (r *Reconciler) rebalance(ctx context.Context, p *schedulingv1alpha1.BurstPolicy, localReplicas int32, pods []*corev1.Pod, states []decide.PodState, live map[string]*corev1.Pod) (time.Duration, error) {
	rb := p.Spec.Rebalance
	if rb == nil || !rb.Enabled {
		p.Status.Rebalance = nil
		return 0, nil
	}
	key := client.ObjectKeyFromObject(p)
	now := r.now()
	// p is this pass's own copy (the status patch diffs it against the
	// policy as read), so its status is changed in place.
	if p.Status.Rebalance == nil {
		p.Status.Rebalance = &schedulingv1alpha1.RebalanceStatus{}
	}
	st := p.Status.Rebalance
	in := decide.RebalanceInput{
		LocalReplicas:    localReplicas,
		After:            decide.DefaultRebalanceAfter,
		Pods:             states,
		EvictionInFlight: r.evictions().inFlight(key, pods),
	}
	if rb.After != nil {
		in.After = rb.After.Duration
	}
	for i := range pods {
		if !pods[i].DeletionTimestamp.IsZero() {
			in.Terminating++
		}
	}
	if st.FloorShortSince != nil {
		in.ShortSince = st.FloorShortSince.Time
	}
	res := decide.RebalanceStep(in, now)
	st.FloorShortSince = nil
	if !res.ShortSince.IsZero() {
		st.FloorShortSince = &metav1.Time{Time: res.ShortSince}
	}
	st.Message = res.Waiting
	switch {
	case res.ShortSince.IsZero():
		return 0, nil
	case len(res.Candidates) == 0 && res.RequeueAfter > 0:
		return res.RequeueAfter, nil
	case len(res.Candidates) == 0:
		return rebalanceRetry, nil
	}

	// The cache keeps no containers of bound pods (see
	// internal/manager/cache.go); the fit check needs the whole candidate,
	// which nodeRooms keeps from its uncached listing.
	rooms, full, err := r.nodeRooms(ctx, p.Namespace, res.Candidates)
	if err != nil {
		return 0, err
	}
	virtualSel := decide.VirtualNodeSelector(p.Spec.VirtualNodes)
	tolerations := decide.VirtualNodeTolerations(p.Spec.VirtualNodes)
	why := ""
	for _, name := range res.Candidates {
		cached, pod := live[name], full[name]
		if cached == nil || pod == nil || pod.UID != cached.UID || !pod.DeletionTimestamp.IsZero() {
			continue
		}
		node, no := decide.FitsLocally(pod, rooms, virtualSel, tolerations)

		if node == "" {
			why = no
			continue
		}
		return r.evict(ctx, p, pod, node, livePods(pods), st, now)
	}
	st.Message = fmt.Sprintf("the local floor is short, but no burst pod fits locally: %s", why)
	return rebalanceRetry, nil
}

// evict evicts the burst pod so that its replacement runs on a local node.
func (r *Reconciler) evict(ctx context.Context, p *schedulingv1alpha1.BurstPolicy, pod *corev1.Pod, node string, live int, st *schedulingv1alpha1.RebalanceStatus, now time.Time) (time.Duration, error) {
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}},
	}
	// The API server retries an eviction for a while when a budget is not
	// processed yet; the reconcile does not wait that long.
	evCtx, cancel := context.WithTimeout(ctx, evictionTimeout)
	err := r.Client.SubResource("eviction").Create(evCtx, pod, ev)
	cancel()
	switch {
	case err == nil:
	case apierrors.IsTooManyRequests(err), errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err):
		st.Message = fmt.Sprintf("the eviction of burst pod %s was refused: %v", pod.Name, err)
		if r.Recorder != nil {
			r.Recorder.Eventf(p, pod, corev1.EventTypeWarning, schedulingv1alpha1.EventReasonRebalanceBlocked, actionRebalance,
				"Could not evict burst pod %s to move it home: %v", pod.Name, err)
		}
		return rebalanceRetry, nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return time.Second, nil
	default:
		return 0, fmt.Errorf("evicting burst pod %s: %w", pod.Name, err)
	}
	r.evictions().record(client.ObjectKeyFromObject(p), pod.UID, live)
	st.LastEvictedPod = pod.Name
	st.LastEvictionTime = &metav1.Time{Time: now}
	st.Message = fmt.Sprintf("evicted burst pod %s; waiting for its replacement to be placed", pod.Name)
	log.FromContext(ctx).Info("Evicted a burst pod to move it home", "pod", pod.Name, "from", pod.Spec.NodeName, "room on", node)
	if r.Recorder != nil {
		note := fmt.Sprintf("Evicted burst pod %s from %s: BurstPolicy %s keeps %d replicas local and node %s has room; its replacement is planned local",
			pod.Name, pod.Spec.NodeName, p.Name, p.Spec.LocalReplicas, node)
		r.Recorder.Eventf(p, pod, corev1.EventTypeNormal, schedulingv1alpha1.EventReasonRebalanceEvicted, actionRebalance, "%s", note)
		r.Recorder.Eventf(pod, nil, corev1.EventTypeNormal, schedulingv1alpha1.EventReasonRebalanceEvicted, actionRebalance, "%s", note)
	}
	return 0, nil
}

// nodeRooms reads the nodes (cached) and what the pods bound to them
// request, and returns the candidates (pods of namespace by name) as the
// listing has them. It runs only when a burst pod is about to move home.
// The pods are read uncached, a page at a time, because the manager's cache
// keeps no containers of bound pods (internal/manager/cache.go): rebalancing
// is rare and opt-in, while a copy of every pod's requests would be held
// always.
func (r *Reconciler) nodeRooms(ctx context.Context, namespace string, candidates []string) ([]decide.NodeRoom, map[string]*corev1.Pod, error) {
	nodes := &corev1.NodeList{}
	if err := r.Client.List(ctx, nodes); err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	full := make(map[string]*corev1.Pod, len(candidates))
	for _, name := range candidates {
		full[name] = nil
	}
	rooms := make([]decide.NodeRoom, 0, len(nodes.Items))
	index := map[string]int{}
	for i := range nodes.Items {
		index[nodes.Items[i].Name] = len(rooms)
		rooms = append(rooms, decide.NodeRoom{Node: &nodes.Items[i], Requested: corev1.ResourceList{}, HostPorts: map[int32]bool{}})
	}
	opts := []client.ListOption{client.Limit(nodeRoomsPageSize)}
	for {
		pods := &corev1.PodList{}
		if err := r.Reader.List(ctx, pods, opts...); err != nil {
			return nil, nil, fmt.Errorf("listing pods: %w", err)
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if _, want := full[pod.Name]; want && pod.Namespace == namespace {
				full[pod.Name] = pod.DeepCopy()
			}
			j, ok := index[pod.Spec.NodeName]
			if !ok || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			rooms[j].Add(pod)
		}
		if pods.Continue == "" {
			return rooms, full, nil
		}
		opts = []client.ListOption{client.Limit(nodeRoomsPageSize), client.Continue(pods.Continue)}
	}
}

// nodeRoomsPageSize bounds the pods nodeRooms holds at once.
const nodeRoomsPageSize = 500
