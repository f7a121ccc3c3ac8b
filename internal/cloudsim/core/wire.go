package core

import (
	"context"
	"net/http"
	"time"
)

// Sleep waits for d (wall clock) or until ctx is done, whichever is first.
// Injected latency is wall-clock on purpose: it is about what the client
// experiences on the wire, not about emulated time.
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// HoldAndDrop implements the "drop" half of commit-then-drop: the change has
// been applied, and now the response is withheld until the client gives up
// (ctx done) or hold elapses (0 means MaxDropHold), after which the
// connection is closed without a response. It never returns: it aborts the
// handler with http.ErrAbortHandler, which net/http turns into a silent
// connection close.
func HoldAndDrop(ctx context.Context, hold time.Duration) {
	if hold <= 0 {
		hold = MaxDropHold
	}
	Sleep(ctx, hold)
	panic(http.ErrAbortHandler)
}
