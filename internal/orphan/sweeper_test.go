package orphan

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/edgeplane/edgeplane/internal/testsupport/promtext"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// metricValue reads one counter or gauge series. Tests use a kind label of
// their own, because the metrics are process-wide.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatalf("reading metric: %v", err)
	}
	if out.Counter != nil {
		return out.Counter.GetValue()
	}
	return out.Gauge.GetValue()
}

// fakeCloud records calls in order and deletes what it is told to.
type fakeCloud struct {
	mu        sync.Mutex
	calls     []string
	objects   []CloudObject
	owners    sets.Set[types.UID]
	listErr   error
	ownersErr error
	// deleteErr fails the deletion of the object with that ID.
	deleteErr map[string]error
	deleted   []string
}

func (f *fakeCloud) listCloud(context.Context) ([]CloudObject, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "ListCloud")
	if f.listErr != nil {
		return nil, f.listErr
	}
	return append([]CloudObject(nil), f.objects...), nil
}

func (f *fakeCloud) listOwners(context.Context) (sets.Set[types.UID], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "ListOwners")
	if f.ownersErr != nil {
		return nil, f.ownersErr
	}
	return f.owners.Clone(), nil
}

func (f *fakeCloud) delete(_ context.Context, obj CloudObject) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "Delete "+obj.ID)
	if err := f.deleteErr[obj.ID]; err != nil {
		return err
	}
	f.deleted = append(f.deleted, obj.ID)
	return nil
}

func newSweeper(t *testing.T, kind string, cloud *fakeCloud, mode Mode, clk *clocktesting.FakeClock) *Sweeper {
	t.Helper()
	s, err := New(Config{
		Kind:        kind,
		ListCloud:   cloud.listCloud,
		ListOwners:  cloud.listOwners,
		Delete:      cloud.delete,
		Mode:        mode,
		GracePeriod: 10 * time.Minute,
		Interval:    5 * time.Minute,
		Clock:       clk,
	})
	if err != nil {
		t.Fatalf("New(): %v", err)
	}
	return s
}

func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Object.ID)
	}
	return out
}

// mixedCloud holds one object for each path through decide.
func mixedCloud() *fakeCloud {
	old := epoch.Add(-time.Hour)
	return &fakeCloud{
		owners: sets.New[types.UID]("live"),
		objects: []CloudObject{
			{ID: "owned", OwnerUID: "live", HasClusterIdentity: true, CreatedAt: old},
			{ID: "orphan", OwnerUID: "gone", HasClusterIdentity: true, CreatedAt: old},
			{ID: "young", OwnerUID: "gone", HasClusterIdentity: true, CreatedAt: epoch.Add(-time.Minute)},
			{ID: "foreign", OwnerUID: "gone", CreatedAt: old},
			{ID: "untagged", HasClusterIdentity: true, CreatedAt: old},
			{ID: "attached", OwnerUID: "gone", HasClusterIdentity: true, CreatedAt: old, ReportOnly: "associated with i-0abc"},
		},
	}
}

func TestSweepModes(t *testing.T) {
	type want struct {
		calls    []string
		listed   int
		pending  []string
		reported []string
		deleted  []string
		// metrics after the sweep
		foundReport, foundDelete, deletedTotal, current float64
	}
	cases := map[string]struct {
		mode Mode
		want want
	}{
		"DeleteRemovesOnlyProvableOrphans": {
			mode: ModeDelete,
			want: want{
				calls:        []string{"ListCloud", "ListOwners", "Delete orphan"},
				listed:       6,
				pending:      []string{"young"},
				reported:     []string{"foreign", "untagged", "attached"},
				deleted:      []string{"orphan"},
				foundReport:  3,
				foundDelete:  1,
				deletedTotal: 1,
				current:      3,
			},
		},
		"ReportNeverDeletes": {
			mode: ModeReport,
			want: want{
				calls:       []string{"ListCloud", "ListOwners"},
				listed:      6,
				pending:     []string{"young"},
				reported:    []string{"orphan", "foreign", "untagged", "attached"},
				foundReport: 4,
				current:     4,
			},
		},
		"OffListsNothing": {
			mode: ModeOff,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind := "modes-" + name
			cloud := mixedCloud()
			s := newSweeper(t, kind, cloud, tc.mode, clocktesting.NewFakeClock(epoch))

			report, err := s.Sweep(context.Background())
			if err != nil {
				t.Fatalf("Sweep(): %v", err)
			}
			got := want{
				calls:        cloud.calls,
				listed:       report.Listed,
				pending:      ids(report.Pending),
				reported:     ids(report.Reported),
				deleted:      ids(report.Deleted),
				foundReport:  metricValue(t, orphansFound.WithLabelValues(kind, "Report")),
				foundDelete:  metricValue(t, orphansFound.WithLabelValues(kind, "Delete")),
				deletedTotal: metricValue(t, orphansDeleted.WithLabelValues(kind)),
				current:      metricValue(t, orphansCurrent.WithLabelValues(kind)),
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("sweep (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want.deleted, cloud.deleted); diff != "" {
				t.Errorf("deleted in the cloud (-want +got):\n%s", diff)
			}
			if report.Mode != tc.mode || report.Kind != kind || !report.StartedAt.Equal(epoch) {
				t.Errorf("report header = %q %q %v, want %q %q %v", report.Kind, report.Mode, report.StartedAt, kind, tc.mode, epoch)
			}
			if len(report.Found()) != len(tc.want.reported)+len(tc.want.deleted) {
				t.Errorf("Found() = %v, want the reported and deleted orphans", ids(report.Found()))
			}
		})
	}
}

func TestSweepRecordsLastRun(t *testing.T) {
	const kind = "last-run"
	cloud := mixedCloud()
	clk := clocktesting.NewFakeClock(epoch)
	s := newSweeper(t, kind, cloud, ModeReport, clk)
	// Make the sweep take 3s of fake time.
	s.cfg.ListCloud = func(ctx context.Context) ([]CloudObject, error) {
		clk.Step(3 * time.Second)
		return cloud.listCloud(ctx)
	}

	report, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatalf("Sweep(): %v", err)
	}
	if report.Duration != 3*time.Second {
		t.Errorf("Duration = %s, want 3s", report.Duration)
	}
	if got := metricValue(t, lastSweep.WithLabelValues(kind)); got != float64(epoch.Unix()) {
		t.Errorf("last sweep timestamp = %v, want %v", got, epoch.Unix())
	}
	if got := metricValue(t, lastSweepDuration.WithLabelValues(kind)); got != 3 {
		t.Errorf("last sweep duration = %v, want 3", got)
	}
	// A sweep without errors exports the error counters at zero.
	for _, c := range []*prometheus.CounterVec{sweepErrors, orphanDeleteErrors} {
		if !hasSeries(c, kind) {
			t.Errorf("no %s series for kind %q after a clean sweep", describe(c), kind)
		}
	}
}

// hasSeries reports whether c holds a series with label kind.
func hasSeries(c prometheus.Collector, kind string) bool {
	ch := make(chan prometheus.Metric, 100)
	go func() { c.Collect(ch); close(ch) }()
	found := false
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			continue
		}
		found = found || promtext.Labels(&pb)["kind"] == kind
	}
	return found
}

func describe(c prometheus.Collector) string {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return (<-ch).String()
}

func TestSweepContinuesPastFailedDelete(t *testing.T) {
	const kind = "delete-failure"
	old := epoch.Add(-time.Hour)
	cloud := &fakeCloud{
		owners: sets.New[types.UID](),
		objects: []CloudObject{
			{ID: "a", OwnerUID: "gone-a", HasClusterIdentity: true, CreatedAt: old},
			{ID: "b", OwnerUID: "gone-b", HasClusterIdentity: true, CreatedAt: old},
			{ID: "c", OwnerUID: "gone-c", HasClusterIdentity: true, CreatedAt: old},
		},
		deleteErr: map[string]error{"b": errors.New("InvalidAddress.Locked")},
	}
	s := newSweeper(t, kind, cloud, ModeDelete, clocktesting.NewFakeClock(epoch))

	report, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatalf("Sweep() error = %v, want nil: a failed delete must not fail the sweep", err)
	}
	if diff := cmp.Diff([]string{"ListCloud", "ListOwners", "Delete a", "Delete b", "Delete c"}, cloud.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "c"}, ids(report.Deleted)); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Finding{{
		Object:   cloud.objects[1],
		Decision: Decision{ActionDelete, "orphaned: no object with UID gone-b exists"},
		Error:    "InvalidAddress.Locked",
	}}, report.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		m    prometheus.Metric
		want float64
	}{
		"deleted_total":       {orphansDeleted.WithLabelValues(kind), 2},
		"delete_errors_total": {orphanDeleteErrors.WithLabelValues(kind), 1},
		"found_total":         {orphansFound.WithLabelValues(kind, "Delete"), 3},
		"objects":             {orphansCurrent.WithLabelValues(kind), 1},
	} {
		if got := metricValue(t, tc.m); got != tc.want {
			t.Errorf("%s = %v, want %v", name, got, tc.want)
		}
	}
}

func TestSweepListFailures(t *testing.T) {
	cases := map[string]struct {
		listErr, ownersErr error
		wantCalls          []string
	}{
		"CloudListFails": {
			listErr:   errors.New("RequestLimitExceeded"),
			wantCalls: []string{"ListCloud"},
		},
		// An empty owner set would make everything an orphan: a failed owner
		// list must abort before any deletion.
		"OwnerListFails": {
			ownersErr: errors.New("apiserver unavailable"),
			wantCalls: []string{"ListCloud", "ListOwners"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind := "list-failure-" + name
			cloud := mixedCloud()
			cloud.listErr, cloud.ownersErr = tc.listErr, tc.ownersErr
			s := newSweeper(t, kind, cloud, ModeDelete, clocktesting.NewFakeClock(epoch))

			report, err := s.Sweep(context.Background())
			if err == nil {
				t.Fatal("Sweep() error = nil, want an error")
			}
			if !errors.Is(err, tc.listErr) && !errors.Is(err, tc.ownersErr) {
				t.Errorf("Sweep() error = %v, want it to wrap the list error", err)
			}
			if diff := cmp.Diff(tc.wantCalls, cloud.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			if len(report.Found()) != 0 {
				t.Errorf("Found() = %v, want none", ids(report.Found()))
			}
			if got := metricValue(t, sweepErrors.WithLabelValues(kind)); got != 1 {
				t.Errorf("sweep_errors_total = %v, want 1", got)
			}
		})
	}
}

// TestSweepGraceWithoutCreationTime covers clouds that do not report a
// creation time: the grace period runs from when the sweep first saw the
// object unowned, and restarts if the object is owned again in between.
func TestSweepGraceWithoutCreationTime(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	cloud := &fakeCloud{
		owners:  sets.New[types.UID](),
		objects: []CloudObject{{ID: "eip", OwnerUID: "gone", HasClusterIdentity: true}},
	}
	s := newSweeper(t, "no-creation-time", cloud, ModeDelete, clk)

	steps := []struct {
		advance     time.Duration
		owned       bool
		wantPending []string
		wantDeleted []string
	}{
		{advance: 0, wantPending: []string{"eip"}},
		{advance: 6 * time.Minute, wantPending: []string{"eip"}},
		// Owned again: the first-seen time is forgotten.
		{advance: 2 * time.Minute, owned: true},
		{advance: 1 * time.Minute, wantPending: []string{"eip"}},
		{advance: 9 * time.Minute, wantPending: []string{"eip"}},
		{advance: 1 * time.Minute, wantDeleted: []string{"eip"}},
	}
	for i, step := range steps {
		clk.Step(step.advance)
		cloud.owners = sets.New[types.UID]()
		if step.owned {
			cloud.owners.Insert("gone")
		}
		report, err := s.Sweep(context.Background())
		if err != nil {
			t.Fatalf("step %d: Sweep(): %v", i, err)
		}
		if diff := cmp.Diff(step.wantPending, ids(report.Pending)); diff != "" {
			t.Errorf("step %d: pending (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(step.wantDeleted, ids(report.Deleted)); diff != "" {
			t.Errorf("step %d: deleted (-want +got):\n%s", i, diff)
		}
	}
}

func TestStartSweepsEveryInterval(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	cloud := mixedCloud()
	s := newSweeper(t, "start", cloud, ModeReport, clk)
	swept := make(chan time.Time, 10)
	list := s.cfg.ListCloud
	s.cfg.ListCloud = func(ctx context.Context) ([]CloudObject, error) {
		swept <- clk.Now()
		return list(ctx)
	}
	if !s.NeedLeaderElection() {
		t.Error("NeedLeaderElection() = false, want true")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()

	if at := receive(t, swept, "the first sweep"); !at.Equal(epoch) {
		t.Errorf("first sweep at %v, want at once (%v)", at, epoch)
	}
	clk.Step(5 * time.Minute)
	if at := receive(t, swept, "the second sweep"); !at.Equal(epoch.Add(5 * time.Minute)) {
		t.Errorf("second sweep at %v, want one interval later", at)
	}
	cancel()
	if err := receive(t, done, "Start() to return after the context was cancelled"); err != nil {
		t.Errorf("Start() = %v, want nil", err)
	}
	if len(swept) != 0 {
		t.Errorf("%d extra sweeps without a tick", len(swept))
	}
}

func TestStartDoesNothingWhenOff(t *testing.T) {
	cloud := mixedCloud()
	s := newSweeper(t, "start-off", cloud, ModeOff, clocktesting.NewFakeClock(epoch))
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("Start() = %v, want nil", err)
	}
	if len(cloud.calls) != 0 {
		t.Errorf("calls = %v, want none", cloud.calls)
	}
}

func TestNewValidates(t *testing.T) {
	valid := func() Config {
		c := mixedCloud()
		return Config{
			Kind: "eip", ListCloud: c.listCloud, ListOwners: c.listOwners, Delete: c.delete,
			Mode: ModeDelete, GracePeriod: time.Minute, Interval: time.Minute,
		}
	}
	cases := map[string]struct {
		change  func(*Config)
		wantErr bool
	}{
		"Valid":                     {change: func(*Config) {}},
		"OffNeedsNoDelete":          {change: func(c *Config) { c.Mode, c.Delete = ModeOff, nil }},
		"ZeroGraceIsAllowed":        {change: func(c *Config) { c.GracePeriod = 0 }},
		"MissingKind":               {change: func(c *Config) { c.Kind = "" }, wantErr: true},
		"MissingListCloud":          {change: func(c *Config) { c.ListCloud = nil }, wantErr: true},
		"MissingListOwners":         {change: func(c *Config) { c.ListOwners = nil }, wantErr: true},
		"ReportNeedsNoDelete":       {change: func(c *Config) { c.Mode, c.Delete = ModeReport, nil }},
		"MissingDeleteInDeleteMode": {change: func(c *Config) { c.Delete = nil }, wantErr: true},
		"ZeroMode":                  {change: func(c *Config) { c.Mode = "" }, wantErr: true},
		"ZeroInterval":              {change: func(c *Config) { c.Interval = 0 }, wantErr: true},
		"NegativeGrace":             {change: func(c *Config) { c.GracePeriod = -time.Second }, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := valid()
			tc.change(&cfg)
			_, err := New(cfg)
			if (err != nil) != tc.wantErr {
				t.Errorf("New() error = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}

// receive waits for a value from ch, failing the test after 10 s (what
// names what was waited for).
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// TestSweepCapsDeletions: a sweep deletes at most MaxDeletions orphans; the
// rest are held back to the next sweep, counted, and still count as orphans
// present (so the orphan alert sees them). A failed deletion uses up its
// place: the cap bounds the calls, not the successes.
func TestSweepCapsDeletions(t *testing.T) {
	const kind = "capped"
	old := epoch.Add(-time.Hour)
	cloud := &fakeCloud{owners: sets.New[types.UID]("live"), deleteErr: map[string]error{"b": errors.New("InvalidAddress.Locked")}}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		cloud.objects = append(cloud.objects, CloudObject{ID: id, OwnerUID: types.UID("gone-" + id), HasClusterIdentity: true, CreatedAt: old})
	}
	cloud.objects = append(cloud.objects, CloudObject{ID: "owned", OwnerUID: "live", HasClusterIdentity: true, CreatedAt: old})
	s := newSweeper(t, kind, cloud, ModeDelete, clocktesting.NewFakeClock(epoch))
	s.cfg.MaxDeletions = 2

	report, err := s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ListCloud", "ListOwners", "Delete a", "Delete b"}, cloud.calls); diff != "" {
		t.Errorf("calls of the first sweep (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"c", "d", "e"}, ids(report.Held)); diff != "" {
		t.Errorf("held back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, ids(report.Found())); diff != "" {
		t.Errorf("found (-want +got):\n%s", diff)
	}
	if got := heldTotal(t, kind); got != 3 {
		t.Errorf("deletions_held_total = %v after the first sweep, want 3", got)
	}
	if got := metricValue(t, orphansCurrent.WithLabelValues(kind)); got != 4 {
		t.Errorf("objects = %v, want 4 (one failed, three held back)", got)
	}

	// The next sweep takes the next ones (b, which failed, comes first again).
	cloud.objects = slices.DeleteFunc(cloud.objects, func(o CloudObject) bool { return o.ID == "a" })
	cloud.calls, cloud.deleteErr = nil, nil
	report, err = s.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c"}, ids(report.Deleted)); diff != "" {
		t.Errorf("deleted by the second sweep (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d", "e"}, ids(report.Held)); diff != "" {
		t.Errorf("held back by the second sweep (-want +got):\n%s", diff)
	}
	if got := heldTotal(t, kind); got != 5 {
		t.Errorf("deletions_held_total = %v after the second sweep, want 5", got)
	}

	// Report mode deletes nothing, so holds nothing back.
	r := newSweeper(t, kind+"-report", cloud, ModeReport, clocktesting.NewFakeClock(epoch))
	r.cfg.MaxDeletions = 1
	if report, err := r.Sweep(context.Background()); err != nil || len(report.Held) != 0 || len(report.Reported) != 4 {
		t.Errorf("report mode: held %v, reported %v, err %v; want nothing held, 4 reported", ids(report.Held), ids(report.Reported), err)
	}
}

// heldTotal reads edgeplane_orphan_deletions_held_total for kind from the
// registry the manager serves.
func heldTotal(t *testing.T, kind string) float64 {
	t.Helper()
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "edgeplane_orphan_deletions_held_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if promtext.Labels(m)["kind"] == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no edgeplane_orphan_deletions_held_total series for kind %q", kind)
	return 0
}
