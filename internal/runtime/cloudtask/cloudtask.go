// Package cloudtask keeps on a cloud-backed object what an allocation made
// by an asynchronous cloud task with an idempotency token needs to survive
// restarts: the attempt counter that is part of the token, and the task of
// the current attempt. Tencent Cloud's AllocateAddresses is such a call: it
// answers with the address's ID and a task (DescribeTaskResult says how it
// ended), and the same ClientToken returns the same address however often
// it is sent. A retried allocation is therefore safe, but an allocation
// whose address was lost (its task FAILED, or the address was released
// behind the controller's back) must be made under a new token: Forget
// counts the attempt up.
//
// The annotations are the ones AnycastIPBinding has kept since its first
// release, so that kind can keep its objects as they are when it moves
// here.
package cloudtask

import (
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations kept on the object.
const (
	// AnnotationAttempt counts the allocations whose address was lost; it
	// is part of the ClientToken, so the next allocation is a new one.
	AnnotationAttempt = "networking.edgeplane.io/allocation-attempt"
	// AnnotationAllocateTask is the allocation task of an attempt,
	// "<attempt>/<task ID>".
	AnnotationAllocateTask = "networking.edgeplane.io/allocate-task"
)

// maxToken is the longest ClientToken Tencent Cloud takes (64 ASCII
// characters).
const maxToken = 64

// Attempt is the object's allocation attempt (0 until one was lost).
func Attempt(obj client.Object) int {
	n, _ := strconv.Atoi(obj.GetAnnotations()[AnnotationAttempt])
	return max(n, 0)
}

// ClientToken is the idempotency token of an allocation for the object
// with uid at attempt: "<prefix>-<uid>", then "-<attempt>" from the first
// lost allocation on. A kind prefix of at most 20 characters keeps it
// within Tencent Cloud's 64 (a UID has 36).
func ClientToken(prefix string, uid types.UID, attempt int) string {
	t := prefix + "-" + string(uid)
	if attempt > 0 {
		t += "-" + strconv.Itoa(attempt)
	}
	if len(t) > maxToken {
		// Never expected (UIDs are 36 characters): keep the distinguishing
		// end rather than fail the allocation.
		t = t[len(t)-maxToken:]
	}
	return t
}

// Token is the ClientToken of the object's current attempt.
func Token(prefix string, obj client.Object) string {
	return ClientToken(prefix, obj.GetUID(), Attempt(obj))
}

// RecordAllocation records the allocation task of the current attempt.
func RecordAllocation(obj client.Object, task uint64) {
	meta.AddAnnotations(obj, map[string]string{AnnotationAllocateTask: strconv.Itoa(Attempt(obj)) + "/" + strconv.FormatUint(task, 10)})
}

// AllocationTask is the recorded allocation task of the current attempt
// (ok false when none is recorded, or it is an earlier attempt's).
func AllocationTask(obj client.Object) (task uint64, ok bool) {
	a, t, found := strings.Cut(obj.GetAnnotations()[AnnotationAllocateTask], "/")
	if !found {
		return 0, false
	}
	attempt, err1 := strconv.Atoi(a)
	task, err2 := strconv.ParseUint(t, 10, 64)
	if err1 != nil || err2 != nil || attempt != Attempt(obj) {
		return 0, false
	}
	return task, true
}

// Forget drops the lost address (the external name, crossplane's
// create-pending/succeeded/failed annotations, the allocation task and any
// further keys named) and counts the attempt up, so the next create
// allocates a new address, at once. The reconciler persists the changed
// annotations with the pass.
func Forget(obj client.Object, keys ...string) {
	anns := obj.GetAnnotations()
	next := make(map[string]string, len(anns)+1)
	drop := map[string]bool{meta.AnnotationKeyExternalName: true, meta.AnnotationKeyExternalCreatePending: true,
		meta.AnnotationKeyExternalCreateSucceeded: true, meta.AnnotationKeyExternalCreateFailed: true, AnnotationAllocateTask: true}
	for _, k := range keys {
		drop[k] = true
	}
	for k, v := range anns {
		if !drop[k] {
			next[k] = v
		}
	}
	next[AnnotationAttempt] = strconv.Itoa(Attempt(obj) + 1)
	obj.SetAnnotations(next)
}

// Overdue reports whether a task started at startedAt should have ended by
// now, given the interval it is polled at: two intervals, as a task is
// checked at the first poll after it ends. A start time with whole-second
// resolution (a Kubernetes timestamp) is taken as the end of its second.
func Overdue(startedAt, now time.Time, poll time.Duration) bool {
	if startedAt.Nanosecond() == 0 {
		startedAt = startedAt.Add(time.Second)
	}
	return now.Sub(startedAt) >= 2*poll
}
