// Package orphan runs the periodic reverse reconciliation that finds cloud
// objects edgeplane created whose owning CR no longer exists, and reports or
// deletes them.
//
// Each cloud-backed kind configures one Sweeper with three functions: list
// its cloud objects, list the UIDs of its live CRs, delete one cloud object.
// The Sweeper owns the ordering (cloud first, then CRs, as Karpenter's garbage
// collector does: a CR created between the two listings is then seen, so a
// fresh cloud object is never mistaken for an orphan), the grace period, the
// mode, the safety downgrades (see decide) and the metrics. It runs inside a
// controller-runtime manager as a leader-elected Runnable.
package orphan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Config configures a Sweeper. Kind, ListCloud, ListOwners, Mode, Interval
// and (in ModeDelete) Delete are required.
type Config struct {
	// Kind names the kind of cloud object swept, for logs and the metrics'
	// kind label (for example "aws-elastic-ip").
	Kind string

	// ListCloud lists the cloud objects edgeplane may have created for this
	// cluster. Filter by this cluster's identity tag where the cloud allows
	// it; untagged objects that are returned are only ever reported.
	ListCloud func(ctx context.Context) ([]CloudObject, error)

	// ListOwners returns the UIDs of all CRs that may own a cloud object,
	// including ones being deleted (their finalizer releases the cloud side).
	// It is called after ListCloud. Read from the API server or a synced
	// cache; an error aborts the sweep, so a failed list never turns every
	// cloud object into an orphan.
	ListOwners func(ctx context.Context) (sets.Set[types.UID], error)

	// Delete deletes one orphaned cloud object. It must be idempotent (treat
	// "not found" as success) and should release what the object is
	// attached to first if the cloud requires it.
	Delete func(ctx context.Context, obj CloudObject) error

	// Mode is what the sweep does with orphans; the zero value is invalid.
	Mode Mode

	// GracePeriod protects cloud objects younger than it; it should exceed
	// the cloud's read-after-create lag plus the time from creating a cloud
	// object to the CR's UID being visible.
	GracePeriod time.Duration

	// Interval is the time between the starts of two sweeps.
	Interval time.Duration

	// MaxDeletions caps the Delete calls of one sweep (0: no cap): the
	// orphans past it are held back to the next sweep, counted in
	// edgeplane_orphan_deletions_held_total and still counted as present.
	MaxDeletions int

	// Clock is the time source; nil means the real clock.
	Clock clock.WithTicker

	// Turns, when set, is shared with the process's other sweepers: a
	// periodic sweep waits for its turn (nil: it runs on its tick).
	Turns *Turns
}

// Finding is one cloud object the sweep judged not owned.
type Finding struct {
	Object   CloudObject
	Decision Decision
	// Error is why deleting the object failed; empty otherwise.
	Error string
}

// Report is the outcome of one sweep, for logs and for commands that print
// orphans.
type Report struct {
	Kind      string
	Mode      Mode
	StartedAt time.Time
	Duration  time.Duration
	// Listed is how many cloud objects were listed.
	Listed int
	// Pending holds unowned objects still within the grace period.
	Pending []Finding
	// Reported holds orphans that were reported and left in place.
	Reported []Finding
	// Deleted holds orphans that were deleted.
	Deleted []Finding
	// Failed holds orphans whose deletion failed.
	Failed []Finding
	// Held holds orphans to delete that the sweep's deletion cap held back
	// to the next sweep.
	Held []Finding
}

// Found returns every orphan past its grace period: reported, deleted,
// failed to delete or held back.
func (r Report) Found() []Finding {
	out := make([]Finding, 0, len(r.Reported)+len(r.Deleted)+len(r.Failed)+len(r.Held))
	out = append(out, r.Reported...)
	out = append(out, r.Deleted...)
	out = append(out, r.Failed...)
	return append(out, r.Held...)
}

// Sweeper finds and handles orphaned cloud objects of one kind.
type Sweeper struct {
	cfg   Config
	clock clock.WithTicker

	// mu serialises sweeps; firstSeen is only touched under it.
	mu sync.Mutex
	// firstSeen records when an unowned object without a creation time was
	// first seen, so its grace period can still be enforced. It is in
	// memory only: after a restart or leader change the grace period starts
	// again, which delays deletion but never hastens it.
	firstSeen map[string]time.Time
}

var _ manager.LeaderElectionRunnable = &Sweeper{}

// New validates cfg and returns a Sweeper.
func New(cfg Config) (*Sweeper, error) {
	var errs []error
	if cfg.Kind == "" {
		errs = append(errs, errors.New("kind is required"))
	}
	if cfg.ListCloud == nil {
		errs = append(errs, errors.New("ListCloud is required"))
	}
	if cfg.ListOwners == nil {
		errs = append(errs, errors.New("ListOwners is required"))
	}
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		errs = append(errs, err)
	}
	if cfg.Delete == nil && cfg.Mode == ModeDelete {
		errs = append(errs, errors.New("a Delete function is required in delete mode"))
	}
	if cfg.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval must be positive, got %s", cfg.Interval))
	}
	if cfg.GracePeriod < 0 {
		errs = append(errs, fmt.Errorf("grace period must not be negative, got %s", cfg.GracePeriod))
	}
	if cfg.MaxDeletions < 0 {
		errs = append(errs, fmt.Errorf("max deletions must not be negative, got %d", cfg.MaxDeletions))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("configuring %q orphan sweeper: %w", cfg.Kind, err)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Sweeper{cfg: cfg, clock: clk, firstSeen: map[string]time.Time{}}, nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: only the
// leader sweeps, so two replicas never race to delete the same object.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable. It sweeps at once and then every
// Interval until ctx is done. A failed sweep is logged and retried at the
// next interval; it never stops the manager.
func (s *Sweeper) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("orphan-sweeper").WithValues("kind", s.cfg.Kind)
	ctx = log.IntoContext(ctx, logger)
	if s.cfg.Mode == ModeOff {
		logger.Info("Orphan sweep is off")
		return nil
	}
	logger.Info("Starting orphan sweeps", "mode", s.cfg.Mode, "interval", s.cfg.Interval, "gracePeriod", s.cfg.GracePeriod)

	// Create the ticker before the first sweep so no tick is missed.
	ticker := s.clock.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	for {
		if err := s.cfg.Turns.take(ctx, func() error { _, err := s.Sweep(ctx); return err }); err != nil && ctx.Err() == nil {
			logger.Error(err, "Orphan sweep failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C():
		}
	}
}

// Sweep lists cloud objects, then owners, and reports or deletes the orphans
// according to the mode. A failed deletion is logged, counted and recorded in
// the report without stopping the sweep; only a failed listing (or ctx being
// done) returns an error.
func (s *Sweeper) Sweep(ctx context.Context) (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	kind := s.cfg.Kind
	logger := log.FromContext(ctx).WithValues("kind", kind)
	start := s.clock.Now()
	report := Report{Kind: kind, Mode: s.cfg.Mode, StartedAt: start}
	if s.cfg.Mode == ModeOff {
		return report, nil
	}
	// The error counters exist at zero from the first sweep on, so that an
	// alert's rate() or increase() sees the first error as a change.
	sweepErrors.WithLabelValues(kind)
	orphanDeleteErrors.WithLabelValues(kind)
	orphanDeletionsHeld.WithLabelValues(kind)

	objs, err := s.cfg.ListCloud(ctx)
	if err != nil {
		sweepErrors.WithLabelValues(kind).Inc()
		return report, fmt.Errorf("listing %s cloud objects: %w", kind, err)
	}
	owners, err := s.cfg.ListOwners(ctx)
	if err != nil {
		sweepErrors.WithLabelValues(kind).Inc()
		return report, fmt.Errorf("listing owners of %s cloud objects: %w", kind, err)
	}
	report.Listed = len(objs)

	unowned := sets.New[string]()
	attempts := 0 // Delete calls this sweep, against MaxDeletions
	for _, obj := range objs {
		if err := ctx.Err(); err != nil {
			return report, fmt.Errorf("sweeping %s cloud objects: %w", kind, err)
		}
		bornAt := obj.CreatedAt
		if obj.OwnerUID == "" || !owners.Has(obj.OwnerUID) {
			unowned.Insert(obj.ID)
			if bornAt.IsZero() {
				if _, ok := s.firstSeen[obj.ID]; !ok {
					s.firstSeen[obj.ID] = start
				}
				bornAt = s.firstSeen[obj.ID]
			}
		}

		f := Finding{Object: obj, Decision: decide(obj, owners, bornAt, start, s.cfg.GracePeriod, s.cfg.Mode)}
		objLog := logger.WithValues("id", obj.ID, "ownerUID", obj.OwnerUID, "description", obj.Description, "reason", f.Decision.Reason)
		switch f.Decision.Action {
		case ActionKeep:
			if unowned.Has(obj.ID) {
				report.Pending = append(report.Pending, f)
			}
		case ActionReport:
			orphansFound.WithLabelValues(kind, string(ActionReport)).Inc()
			objLog.Info("Found orphaned cloud object")
			report.Reported = append(report.Reported, f)
		case ActionDelete:
			orphansFound.WithLabelValues(kind, string(ActionDelete)).Inc()
			if s.cfg.MaxDeletions > 0 && attempts >= s.cfg.MaxDeletions {
				orphanDeletionsHeld.WithLabelValues(kind).Inc()
				report.Held = append(report.Held, f)
				continue
			}
			attempts++
			if err := s.cfg.Delete(ctx, obj); err != nil {
				orphanDeleteErrors.WithLabelValues(kind).Inc()
				objLog.Error(err, "Failed to delete orphaned cloud object")
				f.Error = err.Error()
				report.Failed = append(report.Failed, f)
				continue
			}
			orphansDeleted.WithLabelValues(kind).Inc()
			objLog.Info("Deleted orphaned cloud object")
			report.Deleted = append(report.Deleted, f)
			unowned.Delete(obj.ID)
		}
	}
	// Forget objects that are gone or owned again.
	for id := range s.firstSeen {
		if !unowned.Has(id) {
			delete(s.firstSeen, id)
		}
	}

	if len(report.Held) > 0 {
		logger.Info("Held back orphan deletions: this sweep reached its deletion cap; the next sweep carries on",
			"held", len(report.Held), "maxDeletions", s.cfg.MaxDeletions)
	}
	report.Duration = s.clock.Since(start)
	orphansCurrent.WithLabelValues(kind).Set(float64(len(report.Reported) + len(report.Failed) + len(report.Held)))
	lastSweep.WithLabelValues(kind).Set(float64(start.Unix()))
	lastSweepDuration.WithLabelValues(kind).Set(report.Duration.Seconds())
	logger.V(1).Info("Finished orphan sweep", "listed", report.Listed, "pending", len(report.Pending),
		"reported", len(report.Reported), "deleted", len(report.Deleted), "failed", len(report.Failed), "held", len(report.Held))
	return report, nil
}
