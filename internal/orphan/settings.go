package orphan

import (
	"flag"
	"fmt"
	"time"
)

// Settings are what every cloud kind's orphan sweep is configured with: one
// struct, embedded in the kinds' options (so o.OrphanMode reads as before),
// and one set of flags named after the kind.
type Settings struct {
	// OrphanMode says what the sweep does with the orphans it finds.
	OrphanMode Mode
	// OrphanGracePeriod: addresses younger (or seen owned more recently)
	// than this are left alone.
	OrphanGracePeriod time.Duration
	// OrphanInterval is the time between two sweeps.
	OrphanInterval time.Duration
	// OrphanMaxDeletions caps the orphans one sweep deletes; the rest wait
	// for the next sweep. A bound on what a mistake (a listing that misses
	// live owners, a wrong cluster identity) can destroy in one pass.
	OrphanMaxDeletions int
}

// DefaultMaxDeletions is the default per-sweep deletion cap: far above the
// leaks of a healthy cluster (a handful per sweep), far below a whole
// account's addresses.
const DefaultMaxDeletions = 100

// DefaultSettings sweeps in delete mode (which only ever touches addresses
// provably this cluster's) every 5 minutes, after a grace period of grace.
func DefaultSettings(grace time.Duration) Settings {
	return Settings{OrphanMode: ModeDelete, OrphanGracePeriod: grace, OrphanInterval: 5 * time.Minute, OrphanMaxDeletions: DefaultMaxDeletions}
}

// BindFlags registers --<kind>-orphan-mode, -orphan-grace-period,
// -orphan-interval and -orphan-max-deletions; what names the kind's
// addresses in the help text.
func (s *Settings) BindFlags(fs *flag.FlagSet, kind, what string) {
	fs.Var(&s.OrphanMode, kind+"-orphan-mode", "Orphan sweep of "+what+": off, report or delete (delete only touches addresses tagged with this cluster's identity and an owner's UID; others are reported).")
	fs.DurationVar(&s.OrphanGracePeriod, kind+"-orphan-grace-period", s.OrphanGracePeriod, "How long an unowned address is left alone before the sweep acts.")
	fs.DurationVar(&s.OrphanInterval, kind+"-orphan-interval", s.OrphanInterval, "Time between two orphan sweeps.")
	fs.IntVar(&s.OrphanMaxDeletions, kind+"-orphan-max-deletions", s.OrphanMaxDeletions, "Most orphans one sweep deletes; the rest wait for the next sweep (edgeplane_orphan_deletions_held_total counts them).")
}

// Validate reports settings the sweep cannot run with, naming the flags.
func (s Settings) Validate(kind string) error {
	if _, err := ParseMode(string(s.OrphanMode)); err != nil {
		return fmt.Errorf("--%s-orphan-mode: %w", kind, err)
	}
	if s.OrphanInterval <= 0 {
		return fmt.Errorf("--%s-orphan-interval must be positive, got %s", kind, s.OrphanInterval)
	}
	if s.OrphanGracePeriod < 0 {
		return fmt.Errorf("--%s-orphan-grace-period must not be negative, got %s", kind, s.OrphanGracePeriod)
	}
	if s.OrphanMaxDeletions < 1 {
		return fmt.Errorf("--%s-orphan-max-deletions must be at least 1, got %d", kind, s.OrphanMaxDeletions)
	}
	return nil
}
