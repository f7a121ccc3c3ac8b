package floatippool

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	networkingv1alpha1 "github.com/edgeplane/edgeplane/apis/networking/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/controller/floatippool/ledger"
	"github.com/edgeplane/edgeplane/internal/status"
)

// setFIPReady sets a FloatIP's Ready condition from its phase.
func setFIPReady(f *networkingv1alpha1.FloatIP) {
	if f.Status.Phase == networkingv1alpha1.FloatIPReleasing {
		status.SetReady(f, metav1.ConditionFalse, networkingv1alpha1.FloatIPReasonReleasing, "The IP is being released")
		return
	}
	status.SetReady(f, metav1.ConditionTrue, networkingv1alpha1.FloatIPReasonHeld, fmt.Sprintf("The IP is %s", strings.ToLower(string(f.Status.Phase))))
}

// stampFIPWrite sets f's Ready condition from its phase and stamps its
// status (observedGeneration and the conditions') with the generation the
// write about to be sent produces. A FloatIP has no status subresource: its
// create is generation 1 and every later change of its spec or status one
// more. The write must be based on f's version (a create, an update, a patch
// with an optimistic lock); a write of someone else in between fails it.
func stampFIPWrite(f *networkingv1alpha1.FloatIP) {
	g := f.Generation
	f.Generation = g + 1
	setFIPReady(f)
	f.Status.ObservedGeneration = f.Generation
	f.Generation = g
}

// holdBy records pod on node (for interface iface, "" the primary one) as
// f's holder, at now.
func holdBy(f *networkingv1alpha1.FloatIP, pod *corev1.Pod, nodeName, iface string, now metav1.Time) {
	f.Status.Phase = networkingv1alpha1.FloatIPAllocated
	f.Status.PodNamespace, f.Status.PodName, f.Status.PodUID, f.Status.NodeName = pod.Namespace, pod.Name, string(pod.UID), nodeName
	f.Status.Interface = iface
	f.Status.UpdateTime = &now
}

// heldBy reports whether f already records pod on node for iface.
func heldBy(f *networkingv1alpha1.FloatIP, pod *corev1.Pod, nodeName, iface string) bool {
	return f.Status.Phase == networkingv1alpha1.FloatIPAllocated && f.Status.PodNamespace == pod.Namespace && f.Status.PodName == pod.Name &&
		f.Status.PodUID == string(pod.UID) && f.Status.NodeName == nodeName && f.Status.Interface == iface &&
		f.Status.ObservedGeneration == f.Generation
}

// poolCounts are the numbers in a pool's status.
type poolCounts struct {
	total, allocated, reserved int64
	// outside are IPs in use that are not in the pool's ranges (any more).
	outside []string
}

// countPool counts the FloatIPs of a pool.
func countPool(v *poolView, fips []networkingv1alpha1.FloatIP) poolCounts {
	c := poolCounts{}
	if v.set != nil {
		c.total = v.set.Size()
	}
	for i := range fips {
		f := &fips[i]
		if f.Spec.Pool != v.name() {
			continue
		}
		if f.Status.Phase == networkingv1alpha1.FloatIPAllocated && !isAdminReserved(f) {
			c.allocated++
		} else {
			c.reserved++
		}
		if ip, err := netip.ParseAddr(f.Spec.IP); err == nil && v.set != nil && !v.set.Contains(ip.Unmap()) {
			c.outside = append(c.outside, f.Spec.IP)
		}
	}
	slices.Sort(c.outside)
	return c
}

// computePoolStatus sets a pool's counts and conditions. deadlocked lists
// the Deployments (ns/name) that would deadlock on a rolling update.
func computePoolStatus(pool *networkingv1alpha1.FloatIPPool, v *poolView, fips []networkingv1alpha1.FloatIP, deadlocked []string) {
	c := countPool(v, fips)
	pool.Status.Total = c.total
	pool.Status.Allocated = c.allocated
	pool.Status.Reserved = c.reserved
	pool.Status.Available = max(c.total-c.allocated-c.reserved+int64(len(c.outside)), 0)
	if !v.hasRanges() {
		pool.Status.Available = 0
	}

	switch {
	case errors.Is(v.err, ledger.ErrNotAdmitted):
		status.SetReady(pool, metav1.ConditionUnknown, networkingv1alpha1.FloatIPReasonPendingAdmission, v.err.Error())
	case v.err != nil:
		reason := networkingv1alpha1.FloatIPReasonInvalidRanges
		var conflict *ledger.ConflictError
		var full *ledger.FullError
		switch {
		case errors.As(v.err, &conflict):
			reason = networkingv1alpha1.FloatIPReasonOverlap
		case errors.As(v.err, &full):
			reason = networkingv1alpha1.FloatIPReasonLedgerFull
		}
		status.SetStalled(pool, reason, v.err.Error())
	case len(c.outside) > 0:
		status.SetReady(pool, metav1.ConditionFalse, networkingv1alpha1.FloatIPReasonOrphanedAllocations,
			fmt.Sprintf("IPs in use are outside the ranges and were kept: %s", strings.Join(limit(c.outside, 20), ", ")))
	case v.hasRanges() && pool.Status.Available == 0:
		status.SetReady(pool, metav1.ConditionTrue, networkingv1alpha1.FloatIPReasonExhausted, "Every IP of the pool is allocated or reserved")
	case v.hasRanges():
		status.SetReady(pool, metav1.ConditionTrue, networkingv1alpha1.FloatIPReasonAvailable, fmt.Sprintf("%d of %d IPs available", pool.Status.Available, c.total))
	default:
		status.SetReady(pool, metav1.ConditionTrue, networkingv1alpha1.FloatIPReasonAvailable, "Sharing group: IPs come from the pools with ranges")
	}

	if c.allocated+c.reserved > 0 {
		status.Set(pool, metav1.Condition{Type: networkingv1alpha1.FloatIPTypeInUse, Status: metav1.ConditionTrue,
			Reason: networkingv1alpha1.FloatIPReasonHasAllocations, Message: fmt.Sprintf("%d IPs allocated, %d reserved", c.allocated, c.reserved)})
	} else {
		status.Set(pool, metav1.Condition{Type: networkingv1alpha1.FloatIPTypeInUse, Status: metav1.ConditionFalse,
			Reason: networkingv1alpha1.FloatIPReasonEmpty, Message: "No IP is allocated or reserved"})
	}

	if len(deadlocked) > 0 {
		status.Set(pool, metav1.Condition{Type: networkingv1alpha1.FloatIPTypeRolloutDeadlock, Status: metav1.ConditionTrue,
			Reason: networkingv1alpha1.FloatIPReasonSurgeWithoutHeadroom,
			Message: fmt.Sprintf("A rolling update of %s would deadlock: the new pod waits for an IP an old pod keeps (retaining release policy, maxUnavailable 0); set maxUnavailable to at least 1 or use the Recreate strategy",
				strings.Join(limit(deadlocked, 10), ", "))})
	} else {
		status.Set(pool, metav1.Condition{Type: networkingv1alpha1.FloatIPTypeRolloutDeadlock, Status: metav1.ConditionFalse,
			Reason: networkingv1alpha1.FloatIPReasonNoDeadlock, Message: "No Deployment using the pool would deadlock on a rolling update"})
	}
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
}

// RolloutDeadlocks reports whether a Deployment whose pods keep their IPs
// (Immutable, Never or a pool) deadlocks on a rolling update: galaxy caps a
// retaining Deployment at replicas IPs, so a surge pod can only get an IP
// that an old pod gives back, and with maxUnavailable 0 no old pod goes
// before the surge pod is ready. That is the default strategy (25%/25%) for
// replicas <= 3 (galaxy's FAQ).
func RolloutDeadlocks(dep *appsv1.Deployment, retaining bool) bool {
	if !retaining || dep.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return false
	}
	replicas := 1
	if dep.Spec.Replicas != nil {
		replicas = int(*dep.Spec.Replicas)
	}
	if replicas == 0 {
		return false
	}
	surge, unavailable := intstr.FromString("25%"), intstr.FromString("25%")
	if ru := dep.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge = *ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			unavailable = *ru.MaxUnavailable
		}
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(&surge, replicas, true)
	if err != nil {
		return false
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(&unavailable, replicas, false)
	if err != nil {
		return false
	}
	return s > 0 && u == 0
}
