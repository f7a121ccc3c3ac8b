package orphan

import "context"

// Turns makes the periodic sweeps that share it take turns: one sweep of
// any kind at a time. Every kind's sweeper starts with the manager and
// ticks at the same interval, so without turns all sweeps run at the same
// moments, each holding its cloud listing and a page of owners at once: in
// the 5,000-node envelope about 20 MB of live heap for a second or so every
// 5 minutes, the first manager's resident-set peak (docs/operations.md).
// Taking turns they hold the largest one, and the last finishes a few
// seconds later. A direct Sweep call does not take a turn.
type Turns struct{ held chan struct{} }

// NewTurns returns the turns one process's sweepers share.
func NewTurns() *Turns { return &Turns{held: make(chan struct{}, 1)} }

// take runs fn in its turn, or returns ctx's error if ctx ends while it
// waits. A nil Turns runs fn at once.
func (t *Turns) take(ctx context.Context, fn func() error) error {
	if t == nil {
		return fn()
	}
	select {
	case t.held <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.held }()
	return fn()
}
