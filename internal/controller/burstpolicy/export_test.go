package burstpolicy

import "context"

// WithWriter gives r the queue of the background pod writer, as
// SetupWithManager does, but not its workers: the test runs the queued
// writes itself with RunQueuedWrites, so it knows when they have landed.
func WithWriter(r *Reconciler) *Reconciler {
	r.writer = newPodWriter()
	return r
}

// RunQueuedWrites writes the queued pod writes one after the other, as the
// writer's workers would, and returns how many there were.
func RunQueuedWrites(ctx context.Context, r *Reconciler) int {
	for n := 0; ; n++ {
		select {
		case j := <-r.writer.jobs:
			r.writer.write(ctx, r, j)
		default:
			return n
		}
	}
}
