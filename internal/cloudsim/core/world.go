// Package core is the state and behaviour of the cloud emulator, independent
// of any wire protocol: EC2 and Tencent Cloud address state machines, ENIs,
// instances, tags, quotas, Tencent async tasks, per-action token buckets,
// fault injection and the admin snapshot. The protocol front-ends
// (internal/cloudsim/ec2, internal/cloudsim/tencent) parse requests, call
// into a World and render the result.
//
// Everything that varies between runs is drawn from one seeded random source
// and one injectable Clock, so a fixed seed, clock and request order give
// byte-identical responses.
package core

import (
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"sync"
	"time"
)

// Options configure a World.
type Options struct {
	// Seed makes IDs, IPs, request IDs and fault decisions reproducible.
	Seed uint64
	// Clock defaults to the wall clock.
	Clock Clock
	// Settings are normalised (defaults filled in) by New.
	Settings Settings
	// Fixtures are applied at start and again on every Reset that keeps
	// fixtures.
	Fixtures *Fixtures
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// World is the emulated cloud account. All methods are safe for concurrent
// use; one mutex serialises every operation, which keeps the state machines
// simple and the behaviour deterministic for a given request order.
type World struct {
	mu       sync.Mutex
	clock    Clock
	seed     uint64
	rng      *rand.Rand
	settings Settings
	limits   *rateLimits
	faults   []*FaultSpec
	ec2      *ec2State
	tc       *tcState
	stats    map[string]int64
	initial  *Fixtures
	log      *slog.Logger
}

// New builds a World and applies opts.Fixtures.
func New(opts Options) (*World, error) {
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := opts.Settings.Normalize(); err != nil {
		return nil, fmt.Errorf("validating emulator settings: %w", err)
	}
	w := &World{
		clock:    opts.Clock,
		seed:     opts.Seed,
		settings: opts.Settings,
		initial:  opts.Fixtures,
		log:      opts.Logger,
	}
	if err := w.Reset(true); err != nil {
		return nil, err
	}
	return w, nil
}

// Reset drops every resource, task, fault, statistic and token bucket and
// rewinds the random source to the seed. With keepFixtures the start-up
// fixtures are applied again. Settings are kept.
func (w *World) Reset(keepFixtures bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.resetLocked(); err != nil {
		return err
	}
	if keepFixtures && w.initial != nil {
		if _, err := w.applyFixturesLocked(w.initial); err != nil {
			return fmt.Errorf("re-applying start-up fixtures: %w", err)
		}
	}
	return nil
}

func (w *World) resetLocked() error {
	w.rng = rand.New(rand.NewPCG(w.seed, w.seed^0x9e3779b97f4a7c15))
	w.limits = newRateLimits()
	w.faults = nil
	w.stats = map[string]int64{}
	ec2, err := newEC2State(&w.settings)
	if err != nil {
		return err
	}
	tc, err := newTCState(&w.settings)
	if err != nil {
		return err
	}
	w.ec2, w.tc = ec2, tc
	return nil
}

// Clock returns the world's clock.
func (w *World) Clock() Clock { return w.clock }

// Now is the world's current time.
func (w *World) Now() time.Time { return w.clock.Now() }

// Settings returns a copy of the current settings.
func (w *World) Settings() Settings {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.settings
}

// UpdateSettings applies fn to a copy of the settings, normalises it and
// installs it. Token buckets are rebuilt so new limits apply at once;
// address pools and existing resources are kept.
func (w *World) UpdateSettings(fn func(*Settings)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.settings
	// Copy the maps so a failed validation leaves the live settings alone.
	s.RateLimitOverrides = maps.Clone(s.RateLimitOverrides)
	s.EC2PublicIPv4Pools = maps.Clone(s.EC2PublicIPv4Pools)
	s.TencentCredentials = maps.Clone(s.TencentCredentials)
	s.EC2Credentials = maps.Clone(s.EC2Credentials)
	fn(&s)
	if err := s.Normalize(); err != nil {
		return fmt.Errorf("validating emulator settings: %w", err)
	}
	w.settings = s
	w.limits = newRateLimits()
	if err := w.ec2.syncPools(&w.settings); err != nil {
		return err
	}
	return nil
}

// TencentSecretKey looks up the secret key for a SecretId.
func (w *World) TencentSecretKey(secretID string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.settings.TencentCredentials[secretID]
	return k, ok
}

// EC2Credential looks up an access key ID.
func (w *World) EC2Credential(accessKeyID string) (EC2Credential, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.settings.EC2Credentials[accessKeyID]
	return c, ok
}

// Admission is the outcome of Admit: the fault decision and the request ID
// to answer with.
type Admission struct {
	Decision
	RequestID string
}

// Admit runs the checks every request passes before it is executed: the
// token bucket for bucketKey (empty means provider/action) and the fault
// injector. A non-nil error is the response to send (RequestLimitExceeded
// or an injected error); Admission.RequestID is valid either way.
func (w *World) Admit(provider, action, bucketKey string) (Admission, *APIError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a := Admission{RequestID: w.requestID()}
	if bucketKey == "" {
		bucketKey = provider + "/" + action
	}
	if !w.allow(bucketKey) {
		if provider == ProviderEC2 {
			return a, Errf(503, EC2RequestLimitExceeded, "Request limit exceeded.")
		}
		return a, Errf(200, TCRequestLimitExceeded, "Your current request times equals to `%s` in a second, which exceeds the frequency limit. Please reduce the frequency of calls.", action)
	}
	a.Decision = w.decide(provider, action)
	if a.Err != nil {
		return a, a.Err
	}
	return a, nil
}

// RequestID returns a fresh request ID (for errors raised before Admit).
func (w *World) RequestID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.requestID()
}

// Record counts one answered request by provider, action and result code
// ("OK" for success). The counts are part of the snapshot, so tests can
// assert for example that throttling really happened.
func (w *World) Record(provider, action, code string) {
	if code == "" {
		code = "OK"
	}
	w.mu.Lock()
	w.stats[provider+"/"+action+"/"+code]++
	w.mu.Unlock()
}

// Stats returns a copy of the request counters.
func (w *World) Stats() map[string]int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.stats)
}
