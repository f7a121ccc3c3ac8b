package burstpolicy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	schedulingv1alpha1 "github.com/edgeplane/edgeplane/apis/scheduling/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/runtime/expect"
)

// writeWorkers bounds the parallel pod writes.
const writeWorkers = 32

// retryAfter is how long a policy waits before it is reconciled again after
// one of its pod writes conflicted or failed.
const retryAfter = time.Second

// writeJob is one pod patch: the pod as the plan saw it, the pod to write,
// and the expectation that stands for the write until it returns.
type writeJob struct {
	policy types.NamespacedName
	w      *podWrite
	want   *corev1.Pod
	exp    expect.Ticket
}

// podWriter writes pod patches in the background, writeWorkers at a time,
// in the order they were planned. A reconcile pass hands its writes over
// and returns at once: the writes it dispatched are expectations (see
// freshPods), so the next pass, which may start while they are still being
// written, neither writes them again nor counts their pods as held local.
// Without it a pass would wait for its slowest write, and pods that became
// unschedulable meanwhile would wait for that whole pass.
type podWriter struct {
	jobs chan writeJob
	// wake reconciles a policy again after a write of it failed.
	wake chan event.GenericEvent

	mu   sync.Mutex
	errs map[types.NamespacedName][]error
	// pending counts the writes in flight per policy.
	pending map[types.NamespacedName]int
}

// queued counts n more writes of policy in flight.
func (pw *podWriter) queued(policy types.NamespacedName, n int) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.pending == nil {
		pw.pending = map[types.NamespacedName]int{}
	}
	pw.pending[policy] += n
}

// landed counts one write of policy done and reports whether it was the
// last one in flight.
func (pw *podWriter) landed(policy types.NamespacedName) bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.pending[policy]--
	if pw.pending[policy] > 0 {
		return false
	}
	delete(pw.pending, policy)
	return true
}

// inFlight counts the writes of policy in flight.
func (pw *podWriter) inFlight(policy types.NamespacedName) int {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.pending[policy]
}

// wakeAfter reconciles policy again after d.
func (pw *podWriter) wakeAfter(ctx context.Context, policy types.NamespacedName, d time.Duration) {
	send := func() {
		ev := event.GenericEvent{Object: &schedulingv1alpha1.BurstPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: policy.Namespace, Name: policy.Name}}}
		select {
		case pw.wake <- ev:
		case <-ctx.Done():
		}
	}
	if d <= 0 {
		go send()
		return
	}
	time.AfterFunc(d, send)
}

func newPodWriter() *podWriter {
	return &podWriter{jobs: make(chan writeJob, 4096), wake: make(chan event.GenericEvent, 1024)}
}

// Start runs the workers until ctx ends (a manager.Runnable).
func (pw *podWriter) Start(ctx context.Context, r *Reconciler) error {
	var wg sync.WaitGroup
	for range writeWorkers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-pw.jobs:
					pw.write(ctx, r, j)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

func (pw *podWriter) write(ctx context.Context, r *Reconciler, j writeJob) {
	err := r.patchPod(ctx, j)
	last := pw.landed(j.policy)
	switch {
	case err == nil, apierrors.IsNotFound(err): // a pod gone: its deletion brings the policy back too
		if last {
			pw.wakeAfter(ctx, j.policy, 0) // the held-back status can be written
		}
		return
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("Pod changed while being patched; will retry", "pod", client.ObjectKeyFromObject(j.w.pod))
	default:
		pw.mu.Lock()
		if pw.errs == nil {
			pw.errs = map[types.NamespacedName][]error{}
		}
		pw.errs[j.policy] = append(pw.errs[j.policy], err)
		pw.mu.Unlock()
	}
	pw.wakeAfter(ctx, j.policy, retryAfter)
}

// takeErrors returns and forgets the failed writes of a policy.
func (pw *podWriter) takeErrors(policy types.NamespacedName) error {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	errs := pw.errs[policy]
	delete(pw.errs, policy)
	return errors.Join(errs...)
}

// patchPod writes one job as a merge patch with optimistic locking and
// settles its expectation; on success it emits the job's pod Events.
func (r *Reconciler) patchPod(ctx context.Context, j writeJob) error {
	q := j.want
	err := r.Client.Patch(ctx, q, client.MergeFromWithOptions(j.w.pod, client.MergeFromWithOptimisticLock{}))
	if err != nil {
		r.freshPods().failed(j.w.pod.UID, j.exp)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err
		}
		return fmt.Errorf("patching pod %s: %w", j.w.pod.Name, err)
	}
	r.freshPods().written(j.w.pod.UID, j.exp, q)
	if r.Recorder != nil {
		for _, ev := range j.w.events {
			r.Recorder.Eventf(q, nil, ev.eventType, ev.reason, actionBurst, "%s", ev.note)
		}
	}
	return nil
}
