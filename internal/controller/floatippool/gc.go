package floatippool

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ipam"
)

// indexPodKey indexes FloatIPs by the "<namespace>/<pod>" their key names.
const indexPodKey = "floatip.podkey"

// podKeyOf returns the "<namespace>/<pod>" a FloatIP's key names, or "".
func podKeyOf(f *networkingv1alpha1.FloatIP) string {
	k, err := ipam.ParseKey(f.Spec.Key)
	if err != nil || k.IsReservation() {
		return ""
	}
	return k.Namespace + "/" + k.PodName
}

// Event reasons on FloatIPs.
const (
	reasonReleased = "Released"
	reasonReserved = "Reserved"
	reasonExpired  = "ReservationExpired"
)

// GCReconciler applies the release policy to FloatIPs whose pod is gone
// (matched by UID), finished, or stuck terminating on a deleted node, and
// expires reservations past their TTL. It runs on pod and FloatIP events
// and re-checks every held IP each SweepInterval, so a manager that was down
// catches up.
type GCReconciler struct {
	Client   client.Client
	Live     client.Reader
	Recorder events.EventRecorder
	// SweepInterval re-checks held IPs (default 1 minute, galaxy's resync).
	SweepInterval time.Duration
	// Clock is the time of status updates and reservation expiry; nil
	// means the real clock.
	Clock clock.PassiveClock
}

func (r *GCReconciler) now() time.Time {
	if r.Clock != nil {
		return r.Clock.Now()
	}
	return time.Now()
}

func (r *GCReconciler) sweep() time.Duration {
	if r.SweepInterval > 0 {
		return r.SweepInterval
	}
	return time.Minute
}

// Reconcile checks one FloatIP.
func (r *GCReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	var f networkingv1alpha1.FloatIP
	if err := r.Client.Get(ctx, req.NamespacedName, &f); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if f.DeletionTimestamp != nil || isAdminReserved(&f) {
		return ctrl.Result{}, nil
	}
	key, err := ipam.ParseKey(f.Spec.Key)
	if err != nil {
		log.FromContext(ctx).Info("FloatIP has a key that does not parse; leaving it alone", "floatip", f.Name, "key", f.Spec.Key)
		return ctrl.Result{}, nil
	}
	if key.IsReservation() || (f.Status.Phase == networkingv1alpha1.FloatIPReserved && f.Status.PodUID == "") {
		return r.expire(ctx, &f)
	}

	gone, err := r.podGone(ctx, &f, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !gone {
		return ctrl.Result{RequeueAfter: r.sweep()}, nil
	}
	in, err := r.releaseInput(ctx, &f, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.apply(ctx, &f, key, ipam.Decide(in))
}

// podGone reports whether the pod holding f no longer needs it: not found,
// another UID, finished, or terminating on a node that no longer exists.
func (r *GCReconciler) podGone(ctx context.Context, f *networkingv1alpha1.FloatIP, key ipam.Key) (bool, error) {
	var pod corev1.Pod
	podKey := client.ObjectKey{Namespace: key.Namespace, Name: key.PodName}
	// The cache answers the common case (the holder is alive); anything
	// that would release the IP is confirmed with a live read, so a lagging
	// cache never frees an IP in use (galaxy's lister-and-API rule).
	if err := r.Client.Get(ctx, podKey, &pod); err == nil && pod.DeletionTimestamp == nil &&
		(f.Status.PodUID == "" || string(pod.UID) == f.Status.PodUID) &&
		pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
		return false, nil
	}
	err := r.Live.Get(ctx, podKey, &pod)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("getting pod %s/%s: %w", key.Namespace, key.PodName, err)
	}
	if f.Status.PodUID != "" && string(pod.UID) != f.Status.PodUID {
		// A recreated pod of the same name: the old holder is gone. Its
		// Keep-policy IP waits for the new pod's bind; a released one is
		// freed now.
		return true, nil
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true, nil
	}
	if pod.DeletionTimestamp != nil && pod.Spec.NodeName != "" {
		var node corev1.Node
		if err := r.Live.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, &node); apierrors.IsNotFound(err) {
			return true, nil
		}
	}
	return false, nil
}

// holderMayBeGone reports whether a pod update can change podGone's answer
// for the FloatIPs the pod holds: it started or stopped terminating,
// finished (or, by a status write, stopped being finished), or is another
// pod (UID). Binding the pod and its progress while it runs cannot; the
// floatip controller skips those updates, which were most of its work
// during a wave of pods (created, deleted and recreated pods always count).
func holderMayBeGone(old, cur *corev1.Pod) bool {
	finished := func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	}
	return old.UID != cur.UID || (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) || finished(old) != finished(cur)
}

// releaseInput reads the workload the decision needs.
func (r *GCReconciler) releaseInput(ctx context.Context, f *networkingv1alpha1.FloatIP, key ipam.Key) (ipam.ReleaseInput, error) {
	in := ipam.ReleaseInput{Key: key, Policy: f.Spec.ReleasePolicy}
	if in.Policy == networkingv1alpha1.ReleasePolicyDefault || in.Policy == "" || key.Pool != "" {
		return in, nil
	}
	switch key.AppType() {
	case ipam.AppDeployment:
		var dep appsv1.Deployment
		if err := r.Live.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.AppName}, &dep); err == nil {
			in.Workload = ipam.Workload{Exists: true, Replicas: replicasOf(dep.Spec.Replicas)}
		} else if !apierrors.IsNotFound(err) {
			return in, fmt.Errorf("getting deployment %s/%s: %w", key.Namespace, key.AppName, err)
		}
		var list networkingv1alpha1.FloatIPList
		if err := r.Client.List(ctx, &list); err != nil {
			return in, fmt.Errorf("listing FloatIPs: %w", err)
		}
		prefix := key.ReservationKey()
		for _, o := range list.Items {
			if len(o.Spec.Key) >= len(prefix) && o.Spec.Key[:len(prefix)] == prefix {
				in.HeldByPrefix++
			}
		}
	case ipam.AppNone:
	case ipam.AppStatefulSet:
		var sts appsv1.StatefulSet
		if err := r.Live.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.AppName}, &sts); err == nil {
			in.Workload = ipam.Workload{Exists: true, Replicas: replicasOf(sts.Spec.Replicas)}
		} else if !apierrors.IsNotFound(err) {
			return in, fmt.Errorf("getting statefulset %s/%s: %w", key.Namespace, key.AppName, err)
		}
	default:
		if w := f.Annotations[AnnotationWorkload]; w != "" {
			wl, err := customWorkload(ctx, r.Live, r.Client.RESTMapper(), w, key.Namespace, key.AppName)
			if err != nil {
				return in, err
			}
			in.Workload = wl
		}
	}
	return in, nil
}

func replicasOf(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(*r)
}

// apply carries out a release decision.
func (r *GCReconciler) apply(ctx context.Context, f *networkingv1alpha1.FloatIP, key ipam.Key, action ipam.Action) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("floatip", f.Name, "key", f.Spec.Key)
	if action == ipam.ActionRelease {
		return r.release(ctx, f, "pod "+key.Namespace+"/"+key.PodName+" is gone")
	}
	// Reserve and Keep: forget the pod, keep the IP; Reserve hands it to the
	// workload's reservation key in the same write.
	before := f.DeepCopy()
	now := metav1.NewTime(r.now())
	if action == ipam.ActionReserve {
		f.Spec.Key = key.ReservationKey()
	}
	f.Status.Phase = networkingv1alpha1.FloatIPReserved
	f.Status.PodUID, f.Status.NodeName = "", ""
	if action == ipam.ActionReserve {
		f.Status.PodName, f.Status.PodNamespace, f.Status.Interface = "", "", ""
	}
	f.Status.UpdateTime = &now
	stampFIPWrite(f)
	if err := r.Client.Patch(ctx, f, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil // a bind got there first
		}
		return ctrl.Result{}, fmt.Errorf("marking FloatIP %s reserved: %w", f.Name, err)
	}
	logger.Info("Kept FloatIP for its workload", "action", string(action))
	r.event(f, corev1.EventTypeNormal, reasonReserved, "Reserve", "Kept %s for %s after its pod went away", f.Spec.IP, f.Spec.Key)
	if action == ipam.ActionReserve {
		// The workload's next pod may claim the reservation now.
		r.nudgeWaitingPods(ctx, key.Namespace)
	}
	return r.expire(ctx, f)
}

// release deletes the FloatIP (the exact version checked).
func (r *GCReconciler) release(ctx context.Context, f *networkingv1alpha1.FloatIP, why string) (ctrl.Result, error) {
	rv := f.ResourceVersion
	if err := r.Client.Delete(ctx, f, client.Preconditions{UID: &f.UID, ResourceVersion: &rv}); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("releasing FloatIP %s: %w", f.Name, err)
	}
	log.FromContext(ctx).Info("Released FloatIP", "floatip", f.Name, "ip", f.Spec.IP, "why", why)
	r.event(f, corev1.EventTypeNormal, reasonReleased, "Release", "Released %s: %s", f.Spec.IP, why)
	r.nudgeWaitingPods(ctx, "") // any namespace's pod may take the freed IP
	return ctrl.Result{}, nil
}

// expire releases a reservation past its TTL, or asks to be called when it is due.
func (r *GCReconciler) expire(ctx context.Context, f *networkingv1alpha1.FloatIP) (ctrl.Result, error) {
	if f.Spec.ReservedTTL == nil || f.Spec.ReservedTTL.Duration <= 0 {
		return ctrl.Result{}, nil
	}
	since := f.CreationTimestamp.Time
	if f.Status.UpdateTime != nil {
		since = f.Status.UpdateTime.Time
	}
	due := since.Add(f.Spec.ReservedTTL.Duration)
	if wait := due.Sub(r.now()); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.event(f, corev1.EventTypeNormal, reasonExpired, "Release", "Released %s: reserved and unused for %s", f.Spec.IP, f.Spec.ReservedTTL.Duration)
	return r.release(ctx, f, "reservation expired")
}

func (r *GCReconciler) event(f *networkingv1alpha1.FloatIP, typ, reason, action, note string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(f, nil, typ, reason, action, note, args...)
	}
}
