package orphan

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	grace := 10 * time.Minute
	owners := sets.New[types.UID]("live-uid")
	tagged := func(uid types.UID) CloudObject {
		return CloudObject{ID: "eip-1", OwnerUID: uid, HasClusterIdentity: true}
	}

	cases := map[string]struct {
		obj    CloudObject
		bornAt time.Time
		mode   Mode
		want   Decision
	}{
		"OffKeepsEverything": {
			obj: tagged("gone-uid"), bornAt: now.Add(-time.Hour), mode: ModeOff,
			want: Decision{ActionKeep, "orphan sweep is off"},
		},
		"OwnedIsKept": {
			obj: tagged("live-uid"), bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionKeep, "owned by a live object"},
		},
		"OwnedWithoutClusterIdentityIsKept": {
			obj: CloudObject{ID: "eip-1", OwnerUID: "live-uid"}, bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionKeep, "owned by a live object"},
		},
		"YoungOrphanIsKept": {
			obj: tagged("gone-uid"), bornAt: now.Add(-9 * time.Minute), mode: ModeDelete,
			want: Decision{ActionKeep, "unowned for 9m0s, within the 10m0s grace period"},
		},
		"OrphanExactlyAtGraceIsDeleted": {
			obj: tagged("gone-uid"), bornAt: now.Add(-grace), mode: ModeDelete,
			want: Decision{ActionDelete, "orphaned: no object with UID gone-uid exists"},
		},
		"OldOrphanIsDeleted": {
			obj: tagged("gone-uid"), bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionDelete, "orphaned: no object with UID gone-uid exists"},
		},
		"OldOrphanIsReportedInReportMode": {
			obj: tagged("gone-uid"), bornAt: now.Add(-time.Hour), mode: ModeReport,
			want: Decision{ActionReport, "orphaned: no object with UID gone-uid exists (mode report)"},
		},
		"MissingClusterIdentityDowngradesToReport": {
			obj: CloudObject{ID: "eip-1", OwnerUID: "gone-uid"}, bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionReport, "orphaned, but lacks this cluster's identity tag, so it is never deleted"},
		},
		"MissingOwnerUIDDowngradesToReport": {
			obj: tagged(""), bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionReport, "orphaned, but lacks an owner UID tag, so it is never deleted"},
		},
		"ReportOnlyDowngradesToReport": {
			obj:    CloudObject{ID: "eip-1", OwnerUID: "gone-uid", HasClusterIdentity: true, ReportOnly: "associated with i-0abc"},
			bornAt: now.Add(-time.Hour), mode: ModeDelete,
			want: Decision{ActionReport, "orphaned, but not deletable: associated with i-0abc"},
		},
		"YoungUntaggedIsKept": {
			obj: CloudObject{ID: "eip-1"}, bornAt: now.Add(-time.Minute), mode: ModeDelete,
			want: Decision{ActionKeep, "unowned for 1m0s, within the 10m0s grace period"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := decide(tc.obj, owners, tc.bornAt, now, grace, tc.mode)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decide() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	cases := map[string]struct {
		in      string
		want    Mode
		wantErr bool
	}{
		"Off":             {in: "off", want: ModeOff},
		"Report":          {in: "report", want: ModeReport},
		"Delete":          {in: "delete", want: ModeDelete},
		"CaseAndSpace":    {in: " Delete ", want: ModeDelete},
		"Unknown":         {in: "purge", wantErr: true},
		"EmptyIsNotAMode": {in: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMode(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseMode(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseMode(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestModeIsAFlag(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mode := ModeReport
	fs.Var(&mode, "orphan-mode", "")

	if err := fs.Parse([]string{"--orphan-mode=delete"}); err != nil {
		t.Fatalf("Parse(): %v", err)
	}
	if mode != ModeDelete {
		t.Errorf("mode = %q, want %q", mode, ModeDelete)
	}
	if err := fs.Parse([]string{"--orphan-mode=purge"}); err == nil {
		t.Error("Parse(--orphan-mode=purge) error = nil, want an error")
	}
	if mode != ModeDelete {
		t.Errorf("mode after a bad value = %q, want it unchanged (%q)", mode, ModeDelete)
	}
}
