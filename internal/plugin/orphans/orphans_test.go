package orphans

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func tags(kind, uid string) map[string]string {
	t := map[string]string{TagCluster: "prod"}
	if kind != "" {
		t[TagOwnerKind] = kind
	}
	if uid != "" {
		t[TagOwnerUID] = uid
	}
	return t
}

// cloud is one provider config's addresses, in every state.
var cloud = []Address{
	{ID: "eipalloc-0000000001", PublicIP: "54.0.0.1", Tags: tags("PodElasticIP", "uid-live")},
	{ID: "eipalloc-0000000002", PublicIP: "54.0.0.2", Tags: tags("PodElasticIP", "uid-gone")},
	{ID: "eipalloc-0000000003", PublicIP: "54.0.0.3", Tags: tags("PodElasticIP", "uid-gone-2"), AttachedTo: "i-0abc"},
	{ID: "eip-young", PublicIP: "43.0.0.4", Tags: tags("AnycastIPBinding", "uid-gone-3"), Created: now.Add(-time.Minute)},
	{ID: "eip-old", PublicIP: "43.0.0.5", Tags: tags("AnycastIPBinding", "uid-gone-4"), Created: now.Add(-48 * time.Hour)},
	{ID: "eip-untagged-owner", PublicIP: "43.0.0.6", Tags: tags("", ""), Created: now.Add(-48 * time.Hour)},
	{ID: "eip-unknown-kind", PublicIP: "43.0.0.7", Tags: tags("SomethingElse", "uid-x"), Created: now.Add(-48 * time.Hour)},
	{ID: "eip-unserved-kind", PublicIP: "43.0.0.8", Tags: tags("Unserved", "uid-y"), Created: now.Add(-48 * time.Hour)},
}

func run(t *testing.T, grace time.Duration) []Finding {
	t.Helper()
	fs, err := judge(context.Background(), judgeInput{
		Key: "ClusterProviderConfig/default", Provider: "aws", Identity: "prod", Grace: grace,
		Clock:     clocktesting.NewFakeClock(now),
		ListCloud: func(context.Context) ([]Address, error) { return cloud, nil },
		Served: func(context.Context) map[string]bool {
			return map[string]bool{"PodElasticIP": true, "AnycastIPBinding": true, "Unserved": false}
		},
		Owners: func(_ context.Context, served map[string]bool) (sets.Set[types.UID], error) {
			if !served["PodElasticIP"] {
				t.Error("owners listed before the served kinds were known")
			}
			return sets.New[types.UID]("uid-live"), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestJudge(t *testing.T) {
	fs := run(t, time.Hour)
	got := map[string]string{}
	for _, f := range fs {
		got[f.AddressID] = f.Action + ": " + f.Reason
	}
	want := map[string]string{
		// eipalloc-0000000001 is owned: not listed.
		"eipalloc-0000000002": "Keep: unowned for 0s, within the 1h0m0s grace period", // AWS gives no creation time
		"eipalloc-0000000003": "Keep: unowned for 0s, within the 1h0m0s grace period",
		"eip-young":           "Keep: unowned for 1m0s, within the 1h0m0s grace period",
		"eip-old":             "Report: orphaned: no object with UID uid-gone-4 exists (mode report)",
		"eip-untagged-owner":  "Report: orphaned, but lacks an owner UID tag, so it is never deleted",
		"eip-unknown-kind":    "Report: orphaned, but not deletable: owner kind SomethingElse is not a cloud-backed kind this plugin knows",
		"eip-unserved-kind":   "Report: orphaned, but not deletable: owner kind Unserved is not served by this cluster, so its owners cannot be listed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}

	// Without a grace period every unowned address is reported.
	fs = run(t, 0)
	for _, f := range fs {
		if f.Action != "Report" {
			t.Errorf("%s: %s, want Report with no grace period", f.AddressID, f.Action)
		}
	}
	var b bytes.Buffer
	if err := PrintTable(&b, fs, false, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.golden", b.Bytes())
	b.Reset()
	if err := PrintTable(&b, run(t, time.Hour), true, now); err != nil {
		t.Fatal(err)
	}
	golden(t, "table-wide.golden", b.Bytes())
}

func TestJudgeFailedListing(t *testing.T) {
	_, err := judge(context.Background(), judgeInput{
		Key: "x", Provider: "aws", Identity: "prod",
		ListCloud: func(context.Context) ([]Address, error) { return cloud, nil },
		Served:    func(context.Context) map[string]bool { return map[string]bool{"PodElasticIP": true} },
		Owners: func(context.Context, map[string]bool) (sets.Set[types.UID], error) {
			return nil, errors.New("forbidden")
		},
	})
	if err == nil {
		t.Fatal("a failed owner listing must fail the report, never turn every address into an orphan")
	}
}

func TestCloudObjectIdentity(t *testing.T) {
	a := Address{ID: "a", Tags: map[string]string{TagCluster: "other", TagOwnerKind: "PodElasticIP", TagOwnerUID: "u"}}
	if o := cloudObject(a, "prod", "", map[string]bool{"PodElasticIP": true}); o.HasClusterIdentity {
		t.Error("another cluster's address has this cluster's identity")
	}
}

// TestCloudObjectTenantNamespace: in a tenant's account only its
// namespace's addresses may be judged deletable, as in the manager's sweep.
func TestCloudObjectTenantNamespace(t *testing.T) {
	served := map[string]bool{"PodElasticIP": true}
	tags := func(ns string) map[string]string {
		m := map[string]string{TagCluster: "prod", TagOwnerKind: "PodElasticIP", TagOwnerUID: "u"}
		if ns != "" {
			m[TagNamespace] = ns
		}
		return m
	}
	for name, tc := range map[string]struct {
		tags       map[string]string
		namespace  string
		reportOnly bool
	}{
		"cluster config, any namespace":         {tags: tags("team-b")},
		"cluster config, before namespace tags": {tags: tags("")},
		"tenant config, its namespace":          {tags: tags("team-a"), namespace: "team-a"},
		"tenant config, another tenant's":       {tags: tags("team-b"), namespace: "team-a", reportOnly: true},
		"tenant config, before namespace tags":  {tags: tags(""), namespace: "team-a", reportOnly: true},
	} {
		t.Run(name, func(t *testing.T) {
			o := cloudObject(Address{ID: "a", Tags: tc.tags}, "prod", tc.namespace, served)
			if got := o.ReportOnly != ""; got != tc.reportOnly {
				t.Fatalf("report only = %v (%q), want %v", got, o.ReportOnly, tc.reportOnly)
			}
		})
	}
}

func TestPrintEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := PrintTable(&b, nil, false, now); err != nil || b.String() != "No orphaned cloud addresses found.\n" {
		t.Errorf("empty = %q, %v", b.String(), err)
	}
}

func TestParseTencentTime(t *testing.T) {
	if got := parseTencentTime("2026-01-02T03:04:05Z"); !got.Equal(now) {
		t.Errorf("RFC 3339: %v", got)
	}
	if got := parseTencentTime("2026-01-02 11:04:05"); !got.Equal(now) {
		t.Errorf("Beijing time: %v", got)
	}
	if got := parseTencentTime("yesterday"); !got.IsZero() {
		t.Errorf("garbage: %v", got)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
