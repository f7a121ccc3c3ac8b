package cloud

import (
	"flag"
	"fmt"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// CredentialBackoff bounds how often an account whose credentials were
// rejected is tried again. Zero fields take DefaultCredentialBackoff's.
type CredentialBackoff struct {
	// Initial is the first window after a rejection; each further
	// rejection doubles it.
	Initial time.Duration
	// Max caps the window.
	Max time.Duration
}

// DefaultCredentialBackoff: a revoked key is tried again after 30 s, then
// at most every 10 minutes.
func DefaultCredentialBackoff() CredentialBackoff {
	return CredentialBackoff{Initial: 30 * time.Second, Max: 10 * time.Minute}
}

// BindFlags registers the backoff's two flags, <controller>-credentials-backoff
// and <controller>-credentials-max-backoff, for the account's cloud (named
// in the help).
func (b *CredentialBackoff) BindFlags(fs *flag.FlagSet, controller, cloud string) {
	fs.DurationVar(&b.Initial, controller+"-credentials-backoff", b.Initial,
		"After "+cloud+" rejects an account's credentials, how long its calls are held back before one is tried again (doubling per rejection).")
	fs.DurationVar(&b.Max, controller+"-credentials-max-backoff", b.Max, "Longest hold-back of a rejected account's calls.")
}

func (b CredentialBackoff) orDefault() CredentialBackoff {
	d := DefaultCredentialBackoff()
	if b.Initial <= 0 {
		b.Initial = d.Initial
	}
	if b.Max < b.Initial {
		b.Max = max(d.Max, b.Initial)
	}
	return b
}

// CredentialsRejectedError is returned, without any call to the cloud, while
// an account's credentials are known to be rejected. It unwraps to the
// cloud's last rejection, so the providers' classifiers (IsAuthError) see
// the real error code.
type CredentialsRejectedError struct {
	// Err is the cloud's last answer (AuthFailure, SignatureDoesNotMatch,
	// AuthFailure.SecretIdNotFound, …).
	Err error
	// RetryAt is when the next call may go out.
	RetryAt time.Time
}

func (e *CredentialsRejectedError) Error() string {
	return fmt.Sprintf("the cloud rejected this account's credentials (no call until %s): %v", e.RetryAt.UTC().Format(time.RFC3339), e.Err)
}

func (e *CredentialsRejectedError) Unwrap() error { return e.Err }

// CredentialGate keeps an account's calls away from the cloud while its
// credentials are rejected: after a rejection every call fails at once with
// a CredentialsRejectedError until the backoff window has passed; then one
// call (the probe) goes out. A rejected probe doubles the window; any other
// outcome reopens the gate. One gate serves every resource of the account,
// so a revoked key costs at most one cloud call per window however many
// resources use it. Safe for concurrent use.
type CredentialGate struct {
	backoff CredentialBackoff
	clock   clock.PassiveClock

	mu      sync.Mutex
	window  time.Duration
	last    error // the last rejection; nil while the gate is open
	retryAt time.Time
	probing bool
}

// NewCredentialGate returns an open gate on clk; nil means the real clock.
func NewCredentialGate(b CredentialBackoff, clk clock.PassiveClock) *CredentialGate {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &CredentialGate{backoff: b.orDefault(), clock: clk}
}

// Admit asks to make a call. It returns an error (and makes no call
// possible) while the gate is closed; probe is true when this call is the
// one that tests the credentials again.
func (g *CredentialGate) Admit() (probe bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		return false, nil
	}
	if g.probing || g.clock.Now().Before(g.retryAt) {
		credentialHolds.Inc()
		return false, &CredentialsRejectedError{Err: g.last, RetryAt: g.retryAt}
	}
	g.probing = true
	return true, nil
}

// Done reports an admitted call's outcome: rejected is the cloud's error
// when it refused the credentials, nil for any other outcome.
func (g *CredentialGate) Done(probe bool, rejected error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if probe {
		g.probing = false
	}
	if rejected == nil {
		g.last, g.window = nil, 0
		return
	}
	// A call admitted before the gate closed adds nothing: the window
	// grows once per rejected probe.
	if g.last != nil && !probe {
		return
	}
	g.window = nextWindow(g.window, g.backoff)
	g.last = rejected
	g.retryAt = g.clock.Now().Add(g.window)
}

// Rejected returns the last rejection and when the next call may go out;
// nil while the credentials are not known to be rejected.
func (g *CredentialGate) Rejected() *CredentialsRejectedError {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.last == nil {
		return nil
	}
	return &CredentialsRejectedError{Err: g.last, RetryAt: g.retryAt}
}

// nextWindow doubles the window within the backoff's bounds.
func nextWindow(cur time.Duration, b CredentialBackoff) time.Duration {
	if cur <= 0 {
		return b.Initial
	}
	return min(cur*2, b.Max)
}
