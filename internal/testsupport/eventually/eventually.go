// Package eventually waits, in tests, for a state the system under test
// reaches on its own (a controller's reconcile, a scheduler's placement).
package eventually

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Timeout only keeps a broken run from hanging: nothing that waits here
// asserts a duration.
const Timeout = 3 * time.Minute

// That checks cond every 200 ms until it holds, and fails tb with what and
// cond's last detail if ctx ends or Timeout passes first.
func That(ctx context.Context, tb testing.TB, what string, cond func() (ok bool, detail string)) {
	tb.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, Timeout, true, func(context.Context) (bool, error) {
		var ok bool
		ok, last = cond()
		return ok, nil
	})
	if err != nil {
		tb.Fatalf("waiting for %s: %v; last seen: %s", what, err, last)
	}
}
