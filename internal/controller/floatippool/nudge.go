package floatippool

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// AnnotationRetry is written on a pending float-IP pod when an IP becomes
// free. kube-scheduler parks a pod the extender refused among the
// unschedulable ones until a cluster event it watches happens (or five
// minutes pass); a FloatIP changing is not such an event, but an update of
// the pod itself is, so the pod is retried at once.
const AnnotationRetry = "networking.edgeplane.io/floatip-retry"

// maxNudges bounds the pods touched per freed IP.
const maxNudges = 50

// fieldPodNodeName is the pod field (and cache index) of unscheduled pods;
// the cache indexes only those, so look up "" only.
const fieldPodNodeName = "spec.nodeName"

// waitingPods are the unscheduled pods that ask for float IPs, in the order
// given, at most maxNudges of them.
func waitingPods(pods []corev1.Pod) []types.NamespacedName {
	var out []types.NamespacedName
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || !ipam.WantsFloatIP(p) {
			continue
		}
		out = append(out, types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
		if len(out) == maxNudges {
			break
		}
	}
	return out
}

// nudgeWaitingPods makes kube-scheduler retry the pods that may now get the
// freed IP. Best effort: a failure only delays the pod until the
// scheduler's own retry.
func (r *GCReconciler) nudgeWaitingPods(ctx context.Context, namespace string) {
	nudgeWaitingPods(ctx, r.Client, r.now(), namespace)
}

// nudgeWaitingPods patches the unscheduled float-IP pods of namespace (all
// when empty) with AnnotationRetry set to now.
func nudgeWaitingPods(ctx context.Context, c client.Client, now time.Time, namespace string) {
	// Only unscheduled pods, in namespace (all when empty); read-only, so
	// the cache's objects are not copied.
	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingFields{fieldPodNodeName: ""}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).V(1).Info("Cannot list pods waiting for float IPs", "error", err.Error())
		return
	}
	nudgePods(ctx, c, now, waitingPods(list.Items))
}

// nudgePods patches each pod with AnnotationRetry set to now; a pod gone
// since is skipped.
func nudgePods(ctx context.Context, c client.Client, now time.Time, pods []types.NamespacedName) {
	if len(pods) == 0 {
		return
	}
	stamp := strconv.FormatInt(now.UnixNano(), 10)
	patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+AnnotationRetry+`":"`+stamp+`"}}}`))
	for _, key := range pods {
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = key.Namespace, key.Name
		if err := c.Patch(ctx, pod, patch); err != nil && client.IgnoreNotFound(err) != nil {
			log.FromContext(ctx).V(1).Info("Cannot nudge a pod waiting for a float IP", "pod", key, "error", err.Error())
		}
	}
}
